/*
 * conf.c - lstack.conf file -> struct lstack_conf.
 *
 * Owns: reading the file, running libconfig on it, walking its settings
 * against the key table (unknown keys, wrong types, lists), the checks that
 * involve several keys (host/mask/gateway), mandatory keys, the error
 * report, and the init_fail a file with errors still gives (from the lines
 * that parsed: the caller applies it to the failure). Per-value checks live in conf_check.c, value syntax in
 * conf_values.c. Contracts in conf.h.
 */
#include "conf/conf.h"

#include "conf/conf_check.h"
#include "conf/conf_keys.h"
#include "conf/conf_report.h"
#include "conf/conf_values.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <libconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A config bigger than this is a mistake (and libconfig lines are 16 bit). */
#define CONF_FILE_MAX (1024 * 1024)

/* One parse: where messages point to, what was found. */
struct walk {
    const char *name;          /* file name used in messages */
    const char *text;          /* the text libconfig parsed */
    struct conf_report *r;
    struct lstack_conf *out;
    const config_setting_t **seen; /* by key index: the setting, or NULL */
    bool *valid;               /* by key index: checked and stored */
};

const char *lstack_conf_path(void)
{
    const char *p = getenv(LSTACK_CONF_ENV);

    return p != NULL && *p != '\0' ? p : LSTACK_CONF_DEFAULT_PATH;
}

void lstack_conf_free(struct lstack_conf *c)
{
    for (int i = 0; i < c->dpdk_argc && i < LSTACK_CONF_MAX_DPDK_ARGS; i++) {
        free(c->dpdk_argv[i]);
        c->dpdk_argv[i] = NULL;
    }
    c->dpdk_argc = 0;
}

static const char *where_file(const struct walk *w, const config_setting_t *s)
{
    const char *f = config_setting_source_file(s);

    return f != NULL ? f : w->name;
}

static const char *type_name(int type)
{
    switch (type) {
    case CONFIG_TYPE_INT:
        return "integer";
    case CONFIG_TYPE_INT64:
        return "64-bit integer";
    case CONFIG_TYPE_FLOAT:
        return "float";
    case CONFIG_TYPE_STRING:
        return "string";
    case CONFIG_TYPE_BOOL:
        return "boolean";
    case CONFIG_TYPE_ARRAY:
        return "array";
    case CONFIG_TYPE_LIST:
        return "list";
    case CONFIG_TYPE_GROUP:
        return "group";
    }
    return "unknown type";
}

/* The setting's value as shown in messages. Returns buf. */
static const char *show_setting(const config_setting_t *s, char *buf, size_t len)
{
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        snprintf(buf, len, "%lld", config_setting_get_int64(s));
        break;
    case CONFIG_TYPE_FLOAT:
        snprintf(buf, len, "%g", config_setting_get_float(s));
        break;
    case CONFIG_TYPE_BOOL:
        snprintf(buf, len, "%s", config_setting_get_bool(s) ? "true" : "false");
        break;
    case CONFIG_TYPE_STRING:
        conf_report_show(config_setting_get_string(s), buf, len);
        break;
    case CONFIG_TYPE_ARRAY:
        snprintf(buf, len, "[...]");
        break;
    case CONFIG_TYPE_LIST:
        snprintf(buf, len, "(...)");
        break;
    default:
        snprintf(buf, len, "{...}");
        break;
    }
    return buf;
}

static void report_shown(struct walk *w, const config_setting_t *s, const char *key,
                         const char *shown, const char *problem, const char *allowed)
{
    conf_report_add(w->r, "%s:%d: key '%s': value '%s': %s; allowed: %s", where_file(w, s),
                    config_setting_source_line(s), key, shown, problem, allowed);
}

static void report_bad(struct walk *w, const config_setting_t *s, const char *key,
                       const char *problem, const char *allowed)
{
    char shown[96];

    report_shown(w, s, key, show_setting(s, shown, sizeof(shown)), problem, allowed);
}

static void report_type(struct walk *w, const config_setting_t *s, const char *key,
                        const char *expected, const char *allowed)
{
    char problem[128];

    snprintf(problem, sizeof(problem), "wrong type %s, expected %s",
             type_name(config_setting_type(s)), expected);
    report_bad(w, s, key, problem, allowed);
}

/* dpdk_args: a list or array of non-empty strings, copied into argv.
 * Returns true if stored. */
static bool apply_strlist(struct walk *w, const struct lstack_conf_key *k,
                          const config_setting_t *s)
{
    char allowed[256], problem[128];
    int type = config_setting_type(s);
    int n;
    bool ok = true;

    lstack_conf_key_allowed(k, allowed, sizeof(allowed));
    if (type != CONFIG_TYPE_LIST && type != CONFIG_TYPE_ARRAY) {
        report_type(w, s, k->name, "a list of strings", allowed);
        return false;
    }
    n = config_setting_length(s);
    if (n < k->min || n > k->max) {
        snprintf(problem, sizeof(problem), "has %d elements", n);
        report_bad(w, s, k->name, problem, allowed);
        return false;
    }
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        char elem[80];
        const char *str;

        snprintf(elem, sizeof(elem), "%s[%d]", k->name, i);
        if (config_setting_type(e) != CONFIG_TYPE_STRING) {
            report_type(w, e, elem, "string", allowed);
            ok = false;
            continue;
        }
        str = config_setting_get_string(e);
        if (*str == '\0' || strlen(str) > LSTACK_CONF_ARG_MAX) {
            report_bad(w, e, elem, *str == '\0' ? "is empty" : "is too long", allowed);
            ok = false;
        }
    }
    if (!ok)
        return false;
    lstack_conf_free(w->out);
    for (int i = 0; i < n; i++) {
        const char *str = config_setting_get_string(config_setting_get_elem(s, (unsigned)i));

        w->out->dpdk_argv[i] = strdup(str);
        if (w->out->dpdk_argv[i] == NULL) {
            w->out->dpdk_argc = i;
            conf_report_add(w->r, "%s:%d: key '%s': out of memory", where_file(w, s),
                            config_setting_source_line(s), k->name);
            return false;
        }
    }
    w->out->dpdk_argc = n;
    return true;
}

/* libconfig 1.5 reads an integer literal without the L suffix through
 * atoi: a value beyond 32 bits wraps silently (5000000000 -> 705032704).
 * Re-read the literal of setting s (name = value, on its source line) from
 * the text into *lit, so that the caller can catch a literal beyond 32
 * bits. Returns false if it cannot be found (e.g. the setting comes from
 * an @include file: then libconfig's value is all there is). */
static bool literal_int(const struct walk *w, const config_setting_t *s, long long *lit)
{
    const char *p = w->text;
    const char *name = config_setting_name(s);
    size_t nlen = strlen(name);
    char *end;

    if (config_setting_source_file(s) != NULL)
        return false;
    for (int line = 1; line < (int)config_setting_source_line(s) && p != NULL; line++) {
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    if (p == NULL)
        return false;
    p = strstr(p, name);
    if (p == NULL)
        return false;
    p += nlen;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p != '=' && *p != ':')
        return false;
    p++;
    while (*p == ' ' || *p == '\t')
        p++;
    *lit = strtoll(p, &end, 0);
    return end != p;
}

/* Turn setting s into a raw value for k, or report the wrong type or a
 * wrapped integer. */
static bool read_raw(struct walk *w, const struct lstack_conf_key *k, const config_setting_t *s,
                     struct conf_raw *raw)
{
    char allowed[256];
    int type = config_setting_type(s);

    memset(raw, 0, sizeof(*raw));
    if (k->kind == LSTACK_KIND_INT || k->kind == LSTACK_KIND_BOOL) {
        if (type == CONFIG_TYPE_INT || type == CONFIG_TYPE_INT64) {
            long long lit;

            raw->is_int = true;
            raw->i = config_setting_get_int64(s);
            if (type == CONFIG_TYPE_INT && literal_int(w, s, &lit) &&
                (lit < INT_MIN || lit > INT_MAX)) {
                char shown[32];

                lstack_conf_key_allowed(k, allowed, sizeof(allowed));
                snprintf(shown, sizeof(shown), "%lld", lit);
                report_shown(w, s, k->name, shown, "is out of range", allowed);
                return false;
            }
            return true;
        }
        if (type == CONFIG_TYPE_BOOL && k->kind == LSTACK_KIND_BOOL) {
            raw->is_int = true;
            raw->i = config_setting_get_bool(s) ? 1 : 0;
            return true;
        }
    } else if (type == CONFIG_TYPE_STRING) {
        raw->s = config_setting_get_string(s);
        return true;
    }
    lstack_conf_key_allowed(k, allowed, sizeof(allowed));
    report_type(w, s, k->name,
                k->kind == LSTACK_KIND_BOOL ? "integer 0/1 or boolean"
                                            : lstack_conf_kind_name(k->kind),
                allowed);
    return false;
}

/* Check and store one known key. Returns true if stored. */
static bool apply(struct walk *w, const struct lstack_conf_key *k, const config_setting_t *s)
{
    struct conf_raw raw;
    struct conf_value v;
    char why[256], allowed[256];

    if (k->kind == LSTACK_KIND_STRLIST)
        return apply_strlist(w, k, s);
    if (!read_raw(w, k, s, &raw))
        return false;
    if (conf_check_value(k, &raw, &v, why, sizeof(why), allowed, sizeof(allowed)) != CONF_OK) {
        report_bad(w, s, k->name, why, allowed);
        return false;
    }
    conf_store(k, &v, w->out);
    return true;
}

/* Report addr (key id, network order) unless it is a host address of the
 * subnet of host/mask: not its network nor broadcast address, and, when
 * not_host (addr is another key's, the gateway's), not host itself. */
static void check_in_subnet(struct walk *w, enum lstack_conf_key_id id, uint32_t addr,
                            uint32_t host, uint32_t mask, bool not_host)
{
    const char *name = lstack_conf_keys[id].name;
    const config_setting_t *s = w->seen[id];
    uint32_t h = ntohl(addr), m = ntohl(mask);
    uint32_t net = ntohl(host) & m, bcast = net | ~m;
    /* A /31 has no network nor broadcast address (RFC 3021). */
    uint32_t first = m == 0xfffffffeu ? net : net + 1;
    uint32_t last = m == 0xfffffffeu ? bcast : bcast - 1;
    char a[3][INET_ADDRSTRLEN], problem[160], allowed[160];
    uint32_t be[3] = { htonl(net), htonl(first), htonl(last) };
    int prefix = lstack_mask_prefix(mask);

    for (int i = 0; i < 3; i++)
        inet_ntop(AF_INET, &be[i], a[i], sizeof(a[i]));
    if ((h & m) != net)
        snprintf(problem, sizeof(problem), "is outside host_addr's subnet %s/%d", a[0], prefix);
    else if (h < first)
        snprintf(problem, sizeof(problem), "is the network address of %s/%d", a[0], prefix);
    else if (h > last)
        snprintf(problem, sizeof(problem), "is the broadcast address of %s/%d", a[0], prefix);
    else if (not_host && addr == host)
        snprintf(problem, sizeof(problem), "is host_addr itself");
    else
        return;
    if (not_host) {
        char ex[INET_ADDRSTRLEN];

        inet_ntop(AF_INET, &host, ex, sizeof(ex));
        snprintf(allowed, sizeof(allowed), "%s..%s except host_addr %s", a[1], a[2], ex);
    } else {
        snprintf(allowed, sizeof(allowed), "%s..%s", a[1], a[2]);
    }
    report_bad(w, s, name, problem, allowed);
}

/* Checks that involve several keys. Each runs only if its keys are valid,
 * so a bad mask does not also produce a confusing gateway error. */
static void check_cross(struct walk *w)
{
    bool host = w->valid[LSTACK_CONF_KEY_host_addr];
    bool mask = w->valid[LSTACK_CONF_KEY_mask_addr];
    bool gw = w->valid[LSTACK_CONF_KEY_gateway_addr];

    if (host && mask)
        check_in_subnet(w, LSTACK_CONF_KEY_host_addr, w->out->host_addr, w->out->host_addr,
                        w->out->mask_addr, false);
    if (host && mask && gw)
        check_in_subnet(w, LSTACK_CONF_KEY_gateway_addr, w->out->gateway_addr,
                        w->out->host_addr, w->out->mask_addr, true);
}

/* The application-thread affinity keys against each other and the mode:
 * a key set to something the code would not act on is an error at its line
 * (app_bind_numa = 1 in run-to-completion; app_exclude_cpus without
 * app_bind_numa = 1). A key left out has its default, which is always
 * consistent, so only a key the file sets is reported. */
static void check_affinity(struct walk *w)
{
    const struct lstack_conf *c = w->out;
    const config_setting_t *bind = w->seen[LSTACK_CONF_KEY_app_bind_numa];
    const config_setting_t *excl = w->seen[LSTACK_CONF_KEY_app_exclude_cpus];
    bool mode_ok = w->seen[LSTACK_CONF_KEY_stack_thread_mode] == NULL ||
                   w->valid[LSTACK_CONF_KEY_stack_thread_mode];

    if (bind != NULL && w->valid[LSTACK_CONF_KEY_app_bind_numa] && c->app_bind_numa && mode_ok &&
        c->stack_thread_mode != LSTACK_MODE_RUN_TO_WAKEUP)
        report_bad(w, bind, "app_bind_numa",
                   "needs stack_thread_mode = \"run-to-wakeup\" (in run-to-completion the "
                   "application thread polls the stack itself)",
                   "0 with run-to-completion; 0 or 1 with run-to-wakeup");
    if (excl != NULL && w->valid[LSTACK_CONF_KEY_app_exclude_cpus] &&
        !lstack_cpu_mask_empty(&c->app_exclude_cpus) &&
        (w->seen[LSTACK_CONF_KEY_app_bind_numa] == NULL || w->valid[LSTACK_CONF_KEY_app_bind_numa]) &&
        !c->app_bind_numa)
        report_bad(w, excl, "app_exclude_cpus",
                   "has no effect without app_bind_numa = 1",
                   "\"\" with app_bind_numa = 0; a CPU list with app_bind_numa = 1");
}

static void walk_root(struct walk *w, const config_t *cfg)
{
    const config_setting_t *root = config_root_setting(cfg);
    int n = config_setting_length(root);

    for (int i = 0; i < n; i++) {
        const config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
        const char *name = config_setting_name(s);
        const struct lstack_conf_key *k = lstack_conf_key_find(name);
        char shown[96];

        if (k == NULL) {
            const struct lstack_conf_key *near = lstack_conf_key_suggest(name);

            if (near != NULL)
                conf_report_add(w->r, "%s:%d: unknown key '%s' (value '%s'); did you mean '%s'?",
                                where_file(w, s), config_setting_source_line(s), name,
                                show_setting(s, shown, sizeof(shown)), near->name);
            else
                conf_report_add(w->r,
                                "%s:%d: unknown key '%s' (value '%s'); the keys are listed "
                                "in docs/config.md",
                                where_file(w, s), config_setting_source_line(s), name,
                                show_setting(s, shown, sizeof(shown)));
            continue;
        }
        w->seen[k - lstack_conf_keys] = s;
        w->valid[k - lstack_conf_keys] = apply(w, k, s);
    }
    for (size_t i = 0; i < lstack_conf_nkeys; i++) {
        const struct lstack_conf_key *k = &lstack_conf_keys[i];

        if ((k->flags & LSTACK_KEY_MANDATORY) && w->seen[i] == NULL)
            conf_report_add(w->r, "%s: missing mandatory key '%s' (%s)", w->name, k->name,
                            k->help);
    }
    check_cross(w);
    check_affinity(w);
}

/* After a syntax error on line `line` of text: the init_fail of the lines
 * before it, when those parse on their own and give a valid init_fail.
 * Returns true and sets *policy if so. */
static bool init_fail_before(const char *text, int line, const char *include_dir,
                             enum lstack_init_fail *policy)
{
    const struct lstack_conf_key *k = &lstack_conf_keys[LSTACK_CONF_KEY_init_fail];
    const char *end = text;
    const char *value;
    struct conf_raw raw = { 0 };
    struct conf_value v;
    char why[256], allowed[256];
    bool found = false;
    config_t cfg;
    char *head;

    for (int l = 1; l < line && end != NULL; l++) {
        end = strchr(end, '\n');
        if (end != NULL)
            end++;
    }
    if (end == NULL || end == text)
        return false;
    head = strndup(text, (size_t)(end - text));
    if (head == NULL)
        return false;
    config_init(&cfg);
    if (include_dir != NULL)
        config_set_include_dir(&cfg, include_dir);
    if (config_read_string(&cfg, head) == CONFIG_TRUE &&
        config_lookup_string(&cfg, k->name, &value) == CONFIG_TRUE) {
        raw.s = value;
        if (conf_check_value(k, &raw, &v, why, sizeof(why), allowed, sizeof(allowed)) == CONF_OK) {
            *policy = (enum lstack_init_fail)v.i;
            found = true;
        }
    }
    config_destroy(&cfg);
    free(head);
    return found;
}

/* Parse text; include_dir (may be NULL) resolves @include. Returns 0 or
 * -1 (problems in r, *out freed and holding the defaults but for the
 * init_fail the file gave on a line that parsed: see conf.h). */
static int parse_text(const char *text, const char *name, const char *include_dir,
                      struct lstack_conf *out, struct conf_report *r)
{
    const config_setting_t *seen[LSTACK_CONF_NKEYS] = { 0 };
    bool valid[LSTACK_CONF_NKEYS] = { 0 };
    struct walk w = {
        .name = name, .text = text, .r = r, .out = out, .seen = seen, .valid = valid,
    };
    enum lstack_init_fail policy;
    config_t cfg;

    lstack_conf_defaults(out);
    policy = out->init_fail;
    config_init(&cfg);
    if (include_dir != NULL)
        config_set_include_dir(&cfg, include_dir);
    if (config_read_string(&cfg, text) != CONFIG_TRUE) {
        const char *f = config_error_file(&cfg);

        conf_report_add(r, "%s:%d: syntax error: %s", f != NULL ? f : name,
                        config_error_line(&cfg), config_error_text(&cfg));
        if (f == NULL) /* in this file, not in an @include'd one */
            init_fail_before(text, config_error_line(&cfg), include_dir, &policy);
    } else {
        walk_root(&w, &cfg);
        if (valid[LSTACK_CONF_KEY_init_fail])
            policy = out->init_fail;
    }
    config_destroy(&cfg);
    if (r->count == 0)
        return 0;
    lstack_conf_free(out);
    lstack_conf_defaults(out);
    out->init_fail = policy;
    return -1;
}

int lstack_conf_parse(const char *text, const char *name, struct lstack_conf *out, char *err,
                      size_t errlen)
{
    struct conf_report r;

    conf_report_init(&r, err, errlen);
    return parse_text(text, name, NULL, out, &r);
}

/* Read the whole file at path into a new NUL-terminated buffer (*text,
 * caller frees; *len bytes before the added NUL). Returns 0, or -1 with
 * errno set (EISDIR for a directory, EFBIG beyond CONF_FILE_MAX). */
static int read_file(const char *path, char **text, size_t *len)
{
    struct stat st;
    size_t used = 0, cap = 4096;
    char *buf = NULL;
    int fd, saved;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0)
        goto fail;
    if (S_ISDIR(st.st_mode)) {
        errno = EISDIR;
        goto fail;
    }
    buf = malloc(cap);
    if (buf == NULL)
        goto fail;
    for (;;) {
        ssize_t n;

        if (used + 1 >= cap) {
            char *bigger;

            if (cap >= CONF_FILE_MAX) {
                errno = EFBIG;
                goto fail;
            }
            bigger = realloc(buf, cap * 2);
            if (bigger == NULL)
                goto fail;
            buf = bigger;
            cap *= 2;
        }
        n = read(fd, buf + used, cap - 1 - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            goto fail;
        if (n == 0)
            break;
        used += (size_t)n;
    }
    close(fd);
    buf[used] = '\0';
    *text = buf;
    *len = used;
    return 0;
fail:
    saved = errno;
    free(buf);
    close(fd);
    errno = saved;
    return -1;
}

int lstack_conf_load(const char *path, struct lstack_conf *out, char *err, size_t errlen)
{
    struct conf_report r;
    char *text = NULL, *dir, ebuf[128];
    const char *slash;
    size_t len;
    int rc;

    conf_report_init(&r, err, errlen);
    if (read_file(path, &text, &len) != 0) {
        conf_report_add(&r, "%s: cannot read: %s", path, strerror_r(errno, ebuf, sizeof(ebuf)));
        lstack_conf_defaults(out);
        return -1;
    }
    if (strlen(text) != len) {
        conf_report_add(&r, "%s: cannot read: NUL byte at offset %zu (not a text file)", path,
                        strlen(text));
        free(text);
        lstack_conf_defaults(out);
        return -1;
    }
    /* @include "x" inside the file is looked up next to the file. */
    slash = strrchr(path, '/');
    dir = slash != NULL ? strndup(path, (size_t)(slash - path) + 1) : NULL;
    rc = parse_text(text, path, dir, out, &r);
    free(dir);
    free(text);
    return rc;
}
