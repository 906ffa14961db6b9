/*
 * ctl_proto.h - the control protocol between stackctl and a process that
 * runs lstack (the preload or lstackd): JSON lines over a unix stream socket.
 *
 * Owns: the protocol name and version, the record writer (a growable buffer
 * of JSON text) and the reader of one record (a flat JSON object). Pure: no
 * socket, no lstack state; the server (ctl_server.c), stackctl and the unit
 * tests share it.
 * Design: docs/design.md#the-control-protocol-is-flat-json-lines
 */
#ifndef LSTACK_CTL_PROTO_H
#define LSTACK_CTL_PROTO_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A conversation (one request per connection):
 *   server -> {"type":"hello","proto":"lstack-ctl","version":1,"pid":..,...}
 *   client -> {"version":1,"cmd":"stats", ...arguments...}
 *   server -> zero or more records {"type":"<kind>", ...}
 *   server -> {"type":"end", ...} or {"type":"error","error":"<why>"}
 * A server that will not or cannot serve the peer (SO_PEERCRED refusal, too
 * many peers at once, the process out of fds) sends one error record instead
 * of the hello, and closes. Every line is one flat JSON object: string, number, true,
 * false or null values, no nesting (a record that needs a list sends one
 * record per element). Unknown fields are ignored by both sides, so a field
 * can be added without a version change; renaming or removing one, or
 * changing a meaning, bumps CTL_PROTO_VERSION, and each side refuses a
 * version it does not speak with a clear error.
 */

#define CTL_PROTO_NAME "lstack-ctl"
#define CTL_PROTO_VERSION 1
#define CTL_REQ_MAX 4096          /* longest request line, newline included */
#define CTL_LINE_MAX (1u << 20)   /* longest reply line */
#define CTL_OBJ_MAX_FIELDS 64     /* most fields in one record */

/* ---- writing ---- */

/* A growable text buffer. On allocation failure it stops growing and sets
 * oom (the text is then incomplete: the caller reports an error). */
struct ctl_buf {
    char *p;      /* NUL-terminated when non-NULL */
    size_t len;
    size_t cap;
    bool oom;
};

void ctl_buf_init(struct ctl_buf *b);
void ctl_buf_free(struct ctl_buf *b);
/* Empty the buffer, keeping its memory. */
void ctl_buf_reset(struct ctl_buf *b);
void ctl_buf_add(struct ctl_buf *b, const char *s, size_t n);
void ctl_buf_puts(struct ctl_buf *b, const char *s);
void ctl_buf_printf(struct ctl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* s as a JSON string literal (quotes included). Bytes below 0x20 are
 * escaped; others are copied (text is UTF-8 or ASCII). NULL writes null. */
void ctl_json_str(struct ctl_buf *b, const char *s);

/* One record: ctl_rec_begin, fields, ctl_rec_end (which adds "}\n"). */
void ctl_rec_begin(struct ctl_buf *b, const char *type);
void ctl_rec_str(struct ctl_buf *b, const char *key, const char *val);
void ctl_rec_u64(struct ctl_buf *b, const char *key, uint64_t val);
void ctl_rec_i64(struct ctl_buf *b, const char *key, int64_t val);
void ctl_rec_bool(struct ctl_buf *b, const char *key, bool val);
void ctl_rec_end(struct ctl_buf *b);

/* ---- reading ---- */

enum ctl_kind { CTL_STR, CTL_NUM, CTL_BOOL, CTL_NULL };

/* One field. key and val are NUL-terminated and point into the parsed line:
 * CTL_STR the decoded string, CTL_NUM the number as written, CTL_BOOL
 * "true" or "false", CTL_NULL "null". */
struct ctl_field {
    const char *key;
    enum ctl_kind kind;
    const char *val;
};

struct ctl_obj {
    int n;
    struct ctl_field f[CTL_OBJ_MAX_FIELDS];
};

/* Parse one flat JSON object from the NUL-terminated line (a trailing
 * newline is fine). The line is rewritten in place (strings decoded, every
 * token NUL-terminated) and o points into it: keep the line while o is used.
 * Returns 0, or -1 with a reason in err (nesting, bad syntax, too many
 * fields, trailing text). */
int ctl_obj_parse(char *line, struct ctl_obj *o, char *err, size_t errlen);

/* The first field named key, or NULL. */
const struct ctl_field *ctl_obj_get(const struct ctl_obj *o, const char *key);

/* The string value of key, or NULL if absent or not a string. */
const char *ctl_obj_str(const struct ctl_obj *o, const char *key);

/* The value of key as an unsigned / signed integer. false if absent, not a
 * number, not whole or out of range. */
bool ctl_obj_u64(const struct ctl_obj *o, const char *key, uint64_t *out);
bool ctl_obj_i64(const struct ctl_obj *o, const char *key, int64_t *out);

/* Write f's value as JSON (a string quoted, the rest as written). */
void ctl_field_json(struct ctl_buf *b, const struct ctl_field *f);

/* Write o as a JSON object without the fields named in skip (a NULL-ended
 * list, may be NULL), on one line, no newline. */
void ctl_obj_json(struct ctl_buf *b, const struct ctl_obj *o, const char *const *skip);

#endif
