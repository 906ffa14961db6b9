/*
 * ctl_info.c - the commands that do not touch a stack: config (the
 * configuration in effect, kept as lstack_conf_format text since start-up)
 * and loglevel (read or set lstack's log level at run time).
 *
 * config sends one record per line of that text: "key" records carry the
 * value as written in lstack.conf ("raw") and typed for scripts ("value": a
 * number, a decoded string, or the raw text of a list).
 * Design: docs/design.md#show-config-reports-the-configuration-in-effect
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>

#include "common/log.h"
#include "ctl/ctl_priv.h"

/* Decode a libconfig string literal (quotes included) into out; false if
 * raw is not one simple string. */
static bool unquote(const char *raw, char *out, size_t outlen)
{
    size_t n = strlen(raw), w = 0;
    if (n < 2 || raw[0] != '"' || raw[n - 1] != '"')
        return false;
    for (size_t i = 1; i + 1 < n && w + 1 < outlen; i++) {
        char c = raw[i];
        if (c == '"')
            return false; /* two strings: not a simple value */
        if (c == '\\' && i + 2 < n) {
            char e = raw[++i];
            if (e == 'n')
                c = '\n';
            else if (e == 't')
                c = '\t';
            else if (e == 'x' && i + 2 < n) {
                char hex[3] = {raw[i + 1], raw[i + 2], '\0'};
                c = (char)strtol(hex, NULL, 16);
                i += 2;
            } else
                c = e;
        }
        out[w++] = c;
    }
    out[w] = '\0';
    return true;
}

static bool is_int(const char *s)
{
    if (*s == '-')
        s++;
    if (*s == '\0')
        return false;
    for (; *s != '\0'; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

static void put_line(struct ctl_buf *b, char *line)
{
    if (line[0] == '\0')
        return;
    if (line[0] == '#') {
        ctl_rec_begin(b, "comment");
        ctl_rec_str(b, "text", line);
        ctl_rec_end(b);
        return;
    }
    char *eq = strstr(line, " = ");
    if (eq == NULL)
        return;
    *eq = '\0';
    const char *raw = eq + 3;
    ctl_rec_begin(b, "key");
    ctl_rec_str(b, "key", line);
    ctl_rec_str(b, "raw", raw);
    char *dec = malloc(strlen(raw) + 1);
    if (is_int(raw)) {
        ctl_buf_printf(b, ",\"value\":%s", raw);
    } else if (dec != NULL && unquote(raw, dec, strlen(raw) + 1)) {
        ctl_rec_str(b, "value", dec);
    } else {
        ctl_rec_str(b, "value", raw);
    }
    free(dec);
    ctl_rec_end(b);
}

void ctl_cmd_config(struct ctl_out *o, const struct ctl_obj *req)
{
    (void)req;
    if (ctl_srv.conf_text == NULL) {
        ctl_out_error(o, "the configuration text could not be kept (out of memory at start-up)");
        return;
    }
    ctl_rec_begin(&o->buf, "config");
    ctl_rec_str(&o->buf, "path", ctl_srv.conf_path);
    ctl_rec_str(&o->buf, "log_level_now", lstack_log_level_name(lstack_log_get_level()));
    ctl_rec_end(&o->buf);
    char *text = strdup(ctl_srv.conf_text);
    if (text == NULL) {
        ctl_out_error(o, "out of memory");
        return;
    }
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save))
        put_line(&o->buf, line);
    free(text);
    ctl_rec_begin(&o->buf, "end");
    ctl_rec_end(&o->buf);
}

static int level_parse(const char *name)
{
    static const int levels[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
        if (strcasecmp(name, lstack_log_level_name(levels[i])) == 0)
            return levels[i];
    return -1;
}

void ctl_cmd_loglevel(struct ctl_out *o, const struct ctl_obj *req)
{
    int old = lstack_log_get_level();
    const char *want = ctl_obj_str(req, "level");
    if (want != NULL) {
        int level = level_parse(want);
        if (level < 0) {
            ctl_out_error(o, "unknown log level '%s' (error, warning, info, debug)", want);
            return;
        }
        lstack_log_set_level(level);
        LSTACK_INFO("log level %s -> %s (stackctl, uid %u)", lstack_log_level_name(old),
                    lstack_log_level_name(level), (unsigned)o->peer_uid);
    }
    ctl_rec_begin(&o->buf, "loglevel");
    ctl_rec_str(&o->buf, "old", lstack_log_level_name(old));
    ctl_rec_str(&o->buf, "level", lstack_log_level_name(lstack_log_get_level()));
    ctl_rec_end(&o->buf);
    ctl_rec_begin(&o->buf, "end");
    ctl_rec_end(&o->buf);
}
