/*
 * ltran_conf.c - parse ltran.conf by the key table (ltran_keys.def).
 *
 * Owns: defaults, ranges and the report of bad values. Every problem is
 * named with file:line and the key; all of them are reported, not the first.
 * Design: docs/design.md#ltranconf-has-its-own-small-parser
 */
#include <errno.h>
#include <libconfig.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ltran_conf.h"

enum kind { K_STR, K_ARGS, K_INT, K_MAC, K_ENUM_DPDK };

struct key {
    const char *name;
    enum kind kind;
    const char *def;
    long min, max;
    size_t off;
    bool has_field;
    const char *help;
};

#define FIELD(m) offsetof(struct ltran_conf, m), true
#define NO_FIELD 0, false
#define LTRAN_KEY(name, kind, def, min, max, field, help) {#name, K_##kind, def, min, max, field, help},
static const struct key keys[] = {
#include "ltran_keys.def"
};
#undef LTRAN_KEY

struct report {
    char *buf;
    size_t len, used;
    int count;
};

__attribute__((format(printf, 2, 3))) static void bad(struct report *r, const char *fmt, ...)
{
    r->count++;
    if (r->used >= r->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->buf + r->used, r->len - r->used, fmt, ap);
    va_end(ap);
    if (n > 0)
        r->used += (size_t)n;
    if (r->used < r->len - 1) {
        r->buf[r->used++] = '\n';
        r->buf[r->used] = '\0';
    }
}

static int parse_mac(const char *s, uint8_t mac[6])
{
    unsigned v[6];
    char tail;
    if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
        return -1;
    for (int i = 0; i < 6; i++)
        mac[i] = (uint8_t)v[i];
    return 0;
}

/* Apply text (a default or the file's string) of key k. where: "file:line". */
static void apply_text(const struct key *k, const char *text, struct ltran_conf *c, const char *where,
                       struct report *r)
{
    char *field = (char *)c + k->off;
    switch (k->kind) {
    case K_STR:
        if (strlen(text) < (size_t)k->min || strlen(text) > (size_t)k->max) {
            bad(r, "%s: %s: \"%s\": length must be %ld..%ld", where, k->name, text, k->min, k->max);
            return;
        }
        if (strcmp(k->name, "file_prefix") == 0 && strpbrk(text, "/ \t") != NULL) {
            bad(r, "%s: %s: \"%s\": no '/' or blank in a file prefix", where, k->name, text);
            return;
        }
        snprintf(field, (size_t)k->max + 1, "%s", text);
        return;
    case K_ARGS: {
        if (strlen(text) >= sizeof(c->args_buf)) {
            bad(r, "%s: %s: longer than %zu bytes", where, k->name, sizeof(c->args_buf) - 1);
            return;
        }
        snprintf(c->args_buf, sizeof(c->args_buf), "%s", text);
        c->argc = 0;
        char *save = NULL;
        for (char *w = strtok_r(c->args_buf, " \t\n", &save); w != NULL; w = strtok_r(NULL, " \t\n", &save)) {
            if (c->argc == LTRAN_MAX_EAL_ARGS) {
                bad(r, "%s: %s: more than %d words", where, k->name, LTRAN_MAX_EAL_ARGS);
                return;
            }
            if (strcmp(w, "--in-memory") == 0 || strncmp(w, "--file-prefix", 13) == 0 ||
                strncmp(w, "--proc-type", 11) == 0) {
                bad(r, "%s: %s: \"%s\": ltran sets this itself (secondary processes attach to it; "
                       "file_prefix names the prefix)", where, k->name, w);
                continue;
            }
            c->args[c->argc++] = w;
        }
        if (c->argc < k->min)
            bad(r, "%s: %s: empty: give at least the port (e.g. --vdev=net_af_packet0,iface=IF)", where, k->name);
        return;
    }
    case K_INT: {
        char *end;
        errno = 0;
        long v = strtol(text, &end, 0);
        if (errno != 0 || *end != '\0' || end == text || v < k->min || v > k->max) {
            bad(r, "%s: %s: \"%s\": must be an integer %ld..%ld", where, k->name, text, k->min, k->max);
            return;
        }
        if (strcmp(k->name, "client_ring_size") == 0 && (v & (v - 1)) != 0) {
            bad(r, "%s: %s: %ld: must be a power of two", where, k->name, v);
            return;
        }
        int iv = (int)v;
        memcpy(field, &iv, sizeof(iv));
        return;
    }
    case K_MAC:
        if (text[0] == '\0') {
            c->has_mac = false;
            return;
        }
        if (parse_mac(text, c->mac) != 0) {
            bad(r, "%s: %s: \"%s\": not a MAC (xx:xx:xx:xx:xx:xx)", where, k->name, text);
            return;
        }
        c->has_mac = true;
        return;
    case K_ENUM_DPDK:
        if (strcmp(text, "dpdk") != 0)
            bad(r, "%s: %s: \"%s\": only \"dpdk\"", where, k->name, text);
        return;
    }
}

static const struct key *key_named(const char *name)
{
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (strcmp(keys[i].name, name) == 0)
            return &keys[i];
    return NULL;
}

int ltran_conf_parse(const char *text, const char *name, struct ltran_conf *out, char *err, size_t errlen)
{
    struct report r = {.buf = err, .len = errlen};
    err[0] = '\0';
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (keys[i].def != NULL && keys[i].has_field)
            apply_text(&keys[i], keys[i].def, out, "default", &r);
    config_t cfg;
    config_init(&cfg);
    if (config_read_string(&cfg, text) != CONFIG_TRUE) {
        bad(&r, "%s:%d: %s", name, config_error_line(&cfg), config_error_text(&cfg));
        config_destroy(&cfg);
        return -1;
    }
    config_setting_t *root = config_root_setting(&cfg);
    bool seen[sizeof(keys) / sizeof(keys[0])] = {false};
    for (int i = 0; i < config_setting_length(root); i++) {
        config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
        char where[300];
        snprintf(where, sizeof(where), "%s:%d", name, config_setting_source_line(s));
        const char *kn = config_setting_name(s);
        const struct key *k = key_named(kn);
        if (k == NULL) {
            bad(&r, "%s: %s: unknown key (ltran --keys lists them)", where, kn);
            continue;
        }
        seen[k - keys] = true;
        char num[32];
        const char *val;
        int t = config_setting_type(s);
        if (t == CONFIG_TYPE_STRING) {
            val = config_setting_get_string(s);
        } else if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
            snprintf(num, sizeof(num), "%lld", config_setting_get_int64(s));
            val = num;
        } else {
            bad(&r, "%s: %s: must be a %s", where, kn, k->kind == K_INT ? "number" : "string");
            continue;
        }
        if ((k->kind == K_INT) != (t != CONFIG_TYPE_STRING)) {
            bad(&r, "%s: %s: \"%s\": must be a %s", where, kn, val, k->kind == K_INT ? "number" : "quoted string");
            continue;
        }
        apply_text(k, val, out, where, &r);
    }
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (keys[i].def == NULL && !seen[i])
            bad(&r, "%s: %s: missing (mandatory)", name, keys[i].name);
    config_destroy(&cfg);
    return r.count == 0 ? 0 : -1;
}

int ltran_conf_load(const char *path, struct ltran_conf *out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    char *text = NULL;
    size_t cap = 0, len = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *t = realloc(text, cap);
            if (t == NULL) {
                free(text);
                fclose(f);
                snprintf(err, errlen, "%s: out of memory", path);
                return -1;
            }
            text = t;
        }
        size_t n = fread(text + len, 1, 4096, f);
        len += n;
        if (n < 4096)
            break;
    }
    fclose(f);
    text[len] = '\0';
    int rc = ltran_conf_parse(text, path, out, err, errlen);
    free(text);
    return rc;
}

void ltran_conf_print_keys(FILE *f)
{
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        fprintf(f, "%-20s %-28s %s\n", keys[i].name, keys[i].def ? (keys[i].def[0] ? keys[i].def : "\"\"") : "(mandatory)",
                keys[i].help);
}
