/*
 * stackctl.h - what stackctl's files share.
 *
 *   stackctl.c         arguments, help, dispatch, exit status
 *   stackctl_target.c  which process: -p / -n / the only one; connect; hello
 *   stackctl_conn.c    one request and its records over the socket
 *   stackctl_table.c   aligned text tables
 *   stackctl_render.c  show connections / config / nic, set loglevel
 *   stackctl_stats.c   show stats, once or as rates (--watch)
 *
 * Rendering reads records from a struct sc_src, so the unit tests drive it
 * with canned lines and no socket.
 */
#ifndef LSTACK_STACKCTL_H
#define LSTACK_STACKCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ctl/ctl_path.h"
#include "ctl/ctl_proto.h"

/* Exit statuses (docs/stackctl.md). */
enum {
    SC_OK = 0,
    SC_FAIL = 1,      /* the process reported an error, or the conversation broke */
    SC_USAGE = 2,     /* bad command line */
    SC_NOTARGET = 3,  /* no such process, not an lstack process, none or several found */
    SC_DENIED = 4,    /* permission denied (socket mode or the process's peer check) */
    SC_PROTO = 5,     /* protocol version mismatch, or not an lstack control socket */
};

struct sc_opts {
    pid_t pid;                /* -p, 0: not given */
    const char *name;         /* -n, NULL: not given */
    const char *prefix;       /* --prefix, NULL: any */
    int timeout_ms;           /* --timeout */
    bool json;
    const char *state;        /* show connections --state */
    int port;                 /* show connections --port, -1: any */
    int stack;                /* show connections/stats --stack, -1: every stack */
    int watch_s;              /* show stats --watch / -r: interval, 0: once */
    long count;               /* --count: reports in watch mode, 0: no end */
};

/* A process to talk to. */
struct sc_target {
    pid_t pid;
    char prog[64];
    char path[CTL_PREFIX_MAX + 256];
};

/* An open conversation: the hello has been read and checked. */
struct sc_conn {
    int fd;
    int timeout_ms;
    char *buf;                /* received bytes */
    size_t len, cap, start;   /* buf[start..len) not consumed yet */
    char *line;               /* the current record's text (parsed in place) */
    char hello_text[1024];    /* the hello line (hello points into it) */
    struct ctl_obj hello;
};

/* ---- stackctl_target.c ---- */

/* Choose the process from o (-p, -n, --prefix, or the only one running).
 * Returns SC_OK, or an SC_* status with the reason in err. */
int sc_find_target(const struct sc_opts *o, struct sc_target *t, char *err, size_t errlen);

/* Print the lstack processes found in the run dir (`stackctl list`). */
int sc_list(const struct sc_opts *o, FILE *out);

/* Connect to t, read and check the hello. Returns SC_OK or SC_* (err). */
int sc_connect(const struct sc_target *t, int timeout_ms, struct sc_conn *c, char *err, size_t errlen);

void sc_close(struct sc_conn *c);

/* ---- stackctl_conn.c ---- */

/* Send one request line (a JSON object, without the newline). */
int sc_send(struct sc_conn *c, const char *req, char *err, size_t errlen);

/* Read one line (NUL-terminated, newline dropped) into c->line.
 * 1: a line; 0: EOF; -1: error (timeout, too long, reset: err). */
int sc_read_line(struct sc_conn *c, char *err, size_t errlen);

/* A source of reply records. next: 1 and a record in *o (valid until the
 * next call), 0 at the end record (in *o too), -1 on error (the process's
 * error record or a broken conversation; message in err, status in
 * *status). */
struct sc_src {
    int (*next)(void *ctx, struct ctl_obj *o, char *err, size_t errlen, int *status);
    void *ctx;
    const struct ctl_obj *hello;
};

/* A source reading from a connection. */
void sc_src_conn(struct sc_src *s, struct sc_conn *c);

/* ---- stackctl_table.c ---- */

#define SC_TABLE_MAX_COLS 24

struct sc_table {
    int ncols;
    const char *head[SC_TABLE_MAX_COLS];
    bool right[SC_TABLE_MAX_COLS];   /* right-aligned (numbers) */
    size_t nrows, cap;
    char **cells;                    /* nrows * ncols, owned */
};

/* align: one letter per column, 'l' or 'r'. */
void sc_table_init(struct sc_table *t, const char *const *head, const char *align);
/* Add a row of ncols cells (copied; NULL prints as "-"). */
void sc_table_row(struct sc_table *t, const char *const *cells);
/* Print the header and rows, columns two spaces apart, no trailing blanks. */
void sc_table_print(const struct sc_table *t, FILE *out);
void sc_table_free(struct sc_table *t);

/* ---- stackctl_render.c ---- */

/* Each reads every record of src and prints the table (or JSON document)
 * to out. Returns SC_OK or an SC_* status (reason in err). */
int sc_show_connections(struct sc_src *src, bool json, FILE *out, char *err, size_t errlen);
int sc_show_config(struct sc_src *src, bool json, FILE *out, char *err, size_t errlen);
int sc_show_nic(struct sc_src *src, bool json, FILE *out, char *err, size_t errlen);
int sc_show_loglevel(struct sc_src *src, bool json, FILE *out, char *err, size_t errlen);

/* ---- stackctl_stats.c ---- */

#define SC_SAMPLE_MAX 80

/* One stats reply reduced to name -> value (the "total" and "app" records,
 * plus the server's clock). */
struct sc_sample {
    uint64_t t_us;
    int n;
    char name[SC_SAMPLE_MAX][32];
    uint64_t val[SC_SAMPLE_MAX];
};

/* show stats once: read src, print the per-stack table or JSON. */
int sc_show_stats(struct sc_src *src, bool json, FILE *out, char *err, size_t errlen);

/* Read src into a sample. Returns SC_OK or SC_* (err). */
int sc_read_sample(struct sc_src *src, struct sc_sample *s, char *err, size_t errlen);

/* One report of rates between two samples: a table row (header first when
 * header is true) or, with json, one JSON object on one line. */
void sc_print_rates(const struct sc_sample *a, const struct sc_sample *b, bool json, bool header, FILE *out);

/* The value of name in s (0 if absent). */
uint64_t sc_sample_get(const struct sc_sample *s, const char *name);

/* stackctl_ltran.c: `stackctl ltran [SOCKET]`: ltran's clients and
 * counters (SOCKET: $LTRAN_SOCKET, else /var/run/ltran/ltran.sock). Returns
 * an SC_* status; says why on stderr. */
int sc_ltran(const struct sc_opts *o, const char *path, FILE *out);

#endif
