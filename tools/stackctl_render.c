/*
 * stackctl_render.c - show connections, show config, show nic and set
 * loglevel: records in, an aligned table (default) or one JSON document
 * (--json) out. Stats are in stackctl_stats.c.
 *
 * The JSON documents wrap the records the process sent (minus "type") in
 * arrays and objects, so a field the process adds shows up without a
 * stackctl change; the tables pick the columns a person needs.
 * Design: docs/design.md#stackctl-tables-are-laid-out-after-the-last-row
 */
#include <stdlib.h>
#include <string.h>

#include "stackctl.h"

static const char *const skip_type[] = {"type", NULL};

/* A field's text for a table cell ("-" if absent or a negative fd). */
static const char *cell(const struct ctl_obj *o, const char *key)
{
    const struct ctl_field *f = ctl_obj_get(o, key);
    if (f == NULL || (strcmp(key, "fd") == 0 && f->val[0] == '-'))
        return "-";
    return f->val;
}

static uint64_t num(const struct ctl_obj *o, const char *key)
{
    uint64_t v = 0;
    ctl_obj_u64(o, key, &v);
    return v;
}

/* {"pid":..,"prog":.. from the hello. */
static void json_head(struct ctl_buf *b, const struct ctl_obj *hello)
{
    int64_t pid = 0;
    ctl_obj_i64(hello, "pid", &pid);
    ctl_buf_printf(b, "{\"pid\":%lld,\"prog\":", (long long)pid);
    ctl_json_str(b, ctl_obj_str(hello, "prog"));
}

static void json_out(struct ctl_buf *b, FILE *out)
{
    if (b->p != NULL)
        fputs(b->p, out);
    fputc('\n', out);
}

/* Append o to a JSON array under construction (items: count so far). */
static void json_item(struct ctl_buf *arr, uint64_t *items, const struct ctl_obj *o)
{
    if ((*items)++ > 0)
        ctl_buf_add(arr, ",", 1);
    ctl_obj_json(arr, o, skip_type);
}

static int failed(struct ctl_buf *bufs, int n, int status)
{
    for (int i = 0; i < n; i++)
        ctl_buf_free(&bufs[i]);
    return status;
}

/* ---- connections ---- */

static const char *const listen_head[] = {"STACK", "FD", "LOCAL", "BACKLOG", "ACCEPT_Q", NULL};
static const char *const conn_head[] = {"STACK", "FD", "LOCAL", "REMOTE", "STATE", "RECV_Q", "UNSENT",
                                        "UNACKED", "CWND", "SND_WND", "RCV_WND", "RTT_MS", "RTO_MS", "REXMIT",
                                        NULL};
static const char *const conn_keys[] = {"stack", "fd", "local", "remote", "state", "recv_q", "unsent",
                                        "unacked", "cwnd", "snd_wnd", "rcv_wnd", "rtt_ms", "rto_ms", "rexmit"};

static void conns_summary(const struct ctl_obj *end, uint64_t unread, uint64_t unsent, uint64_t unacked,
                          FILE *out)
{
    uint64_t conns = num(end, "connections"), listeners = num(end, "listeners");
    fprintf(out, "\n%llu connection%s, %llu listener%s; unread %llu B, unsent %llu B, unacked %llu B\n",
            (unsigned long long)conns, conns == 1 ? "" : "s", (unsigned long long)listeners,
            listeners == 1 ? "" : "s", (unsigned long long)unread, (unsigned long long)unsent,
            (unsigned long long)unacked);
    fprintf(out, "(read in %llu page%s of at most %llu; longest stack lock hold %.3f ms)\n",
            (unsigned long long)num(end, "pages"), num(end, "pages") == 1 ? "" : "s",
            (unsigned long long)num(end, "page_size"), (double)num(end, "lock_max_us") / 1000.0);
}

int sc_show_connections(struct sc_src *src, bool json, FILE *out, char *err, size_t errlen)
{
    struct ctl_buf b[2]; /* JSON arrays: listeners, connections */
    ctl_buf_init(&b[0]);
    ctl_buf_init(&b[1]);
    uint64_t items[2] = {0, 0}, unread = 0, unsent = 0, unacked = 0;
    struct sc_table lt, ct;
    sc_table_init(&lt, listen_head, "rrlrr");
    sc_table_init(&ct, conn_head, "rrlllrrrrrrrrr");
    struct ctl_obj o;
    int r, status = SC_OK;
    while ((r = src->next(src->ctx, &o, err, errlen, &status)) > 0) {
        const char *type = ctl_obj_str(&o, "type");
        bool listener = strcmp(type, "listen") == 0;
        if (!listener && strcmp(type, "conn") != 0)
            continue;
        if (json) {
            json_item(&b[listener ? 0 : 1], &items[listener ? 0 : 1], &o);
        } else if (listener) {
            const char *row[] = {cell(&o, "stack"), cell(&o, "fd"), cell(&o, "local"), cell(&o, "backlog"),
                                 cell(&o, "accept_q")};
            sc_table_row(&lt, row);
        } else {
            const char *row[sizeof(conn_keys) / sizeof(conn_keys[0])];
            for (size_t i = 0; i < sizeof(conn_keys) / sizeof(conn_keys[0]); i++)
                row[i] = cell(&o, conn_keys[i]);
            sc_table_row(&ct, row);
        }
        unread += num(&o, "recv_q");
        unsent += num(&o, "unsent");
        unacked += num(&o, "unacked");
    }
    if (r == 0 && json) {
        struct ctl_buf doc;
        ctl_buf_init(&doc);
        json_head(&doc, src->hello);
        ctl_buf_printf(&doc, ",\"listeners\":[%s],\"connections\":[%s],\"summary\":", b[0].p ? b[0].p : "",
                       b[1].p ? b[1].p : "");
        ctl_obj_json(&doc, &o, skip_type);
        ctl_buf_puts(&doc, "}");
        json_out(&doc, out);
        ctl_buf_free(&doc);
    } else if (r == 0) {
        fprintf(out, "LISTENERS\n");
        sc_table_print(&lt, out);
        fprintf(out, "\nCONNECTIONS\n");
        sc_table_print(&ct, out);
        conns_summary(&o, unread, unsent, unacked, out);
    }
    sc_table_free(&lt);
    sc_table_free(&ct);
    return failed(b, 2, r == 0 ? SC_OK : status);
}

/* ---- config ---- */

int sc_show_config(struct sc_src *src, bool json, FILE *out, char *err, size_t errlen)
{
    struct ctl_buf keys, text;
    ctl_buf_init(&keys);
    ctl_buf_init(&text);
    uint64_t nkeys = 0;
    const char *path = "?", *level = "?";
    char pathbuf[4096] = "", levelbuf[32] = "";
    struct ctl_obj o;
    int r, status = SC_OK;
    while ((r = src->next(src->ctx, &o, err, errlen, &status)) > 0) {
        const char *type = ctl_obj_str(&o, "type");
        if (strcmp(type, "config") == 0) {
            snprintf(pathbuf, sizeof(pathbuf), "%s", cell(&o, "path"));
            snprintf(levelbuf, sizeof(levelbuf), "%s", cell(&o, "log_level_now"));
            path = pathbuf;
            level = levelbuf;
        } else if (strcmp(type, "comment") == 0) {
            ctl_buf_printf(&text, "%s\n", cell(&o, "text"));
        } else if (strcmp(type, "key") == 0) {
            ctl_buf_printf(&text, "%s = %s\n", cell(&o, "key"), cell(&o, "raw"));
            const struct ctl_field *v = ctl_obj_get(&o, "value");
            if (nkeys++ > 0)
                ctl_buf_add(&keys, ",", 1);
            ctl_json_str(&keys, cell(&o, "key"));
            ctl_buf_add(&keys, ":", 1);
            if (v != NULL)
                ctl_field_json(&keys, v);
            else
                ctl_buf_puts(&keys, "null");
        }
    }
    if (r == 0 && json) {
        struct ctl_buf doc;
        ctl_buf_init(&doc);
        json_head(&doc, src->hello);
        ctl_buf_puts(&doc, ",\"lstack\":");
        ctl_json_str(&doc, cell(src->hello, "lstack"));
        ctl_buf_puts(&doc, ",\"path\":");
        ctl_json_str(&doc, path);
        ctl_buf_puts(&doc, ",\"log_level_now\":");
        ctl_json_str(&doc, level);
        ctl_buf_printf(&doc, ",\"keys\":{%s}}", keys.p ? keys.p : "");
        json_out(&doc, out);
        ctl_buf_free(&doc);
    } else if (r == 0) {
        int64_t pid = 0;
        ctl_obj_i64(src->hello, "pid", &pid);
        fprintf(out, "# process %lld (%s), lstack %s, configuration read at start-up from %s\n", (long long)pid,
                cell(src->hello, "prog"), cell(src->hello, "lstack"), path);
        fprintf(out, "# log level now: %s\n", level);
        fputs(text.p != NULL ? text.p : "", out);
    }
    struct ctl_buf bufs[2] = {keys, text};
    return failed(bufs, 2, r == 0 ? SC_OK : status);
}

/* ---- nic ---- */

#define MAX_GROUPS 16

/* One stack's groups, as JSON members. */
struct nic_doc {
    int stack;
    int ngroups;
    char group[MAX_GROUPS][32];
    struct ctl_buf members[MAX_GROUPS];
    uint64_t count[MAX_GROUPS];
};

static void nic_flush(struct nic_doc *d, struct ctl_buf *ports, uint64_t *nports)
{
    if (d->ngroups == 0)
        return;
    if ((*nports)++ > 0)
        ctl_buf_add(ports, ",", 1);
    ctl_buf_printf(ports, "{\"stack\":%d", d->stack);
    for (int g = 0; g < d->ngroups; g++) {
        ctl_buf_add(ports, ",", 1);
        ctl_json_str(ports, d->group[g]);
        ctl_buf_printf(ports, ":{%s}", d->members[g].p ? d->members[g].p : "");
        ctl_buf_free(&d->members[g]);
        d->count[g] = 0;
    }
    ctl_buf_add(ports, "}", 1);
    d->ngroups = 0;
}

static void nic_add(struct nic_doc *d, const struct ctl_obj *o)
{
    const char *group = cell(o, "group");
    int g = 0;
    while (g < d->ngroups && strcmp(d->group[g], group) != 0)
        g++;
    if (g == d->ngroups) {
        if (g == MAX_GROUPS)
            return;
        snprintf(d->group[g], sizeof(d->group[g]), "%s", group);
        ctl_buf_init(&d->members[g]);
        d->ngroups++;
    }
    const struct ctl_field *v = ctl_obj_get(o, "value");
    if (d->count[g]++ > 0)
        ctl_buf_add(&d->members[g], ",", 1);
    ctl_json_str(&d->members[g], cell(o, "name"));
    ctl_buf_add(&d->members[g], ":", 1);
    if (v != NULL)
        ctl_field_json(&d->members[g], v);
    else
        ctl_buf_puts(&d->members[g], "null");
}

int sc_show_nic(struct sc_src *src, bool json, FILE *out, char *err, size_t errlen)
{
    static const char *const head[] = {"STACK", "GROUP", "NAME", "VALUE", NULL};
    struct sc_table t;
    sc_table_init(&t, head, "rlll");
    struct nic_doc d = {.stack = -1};
    struct ctl_buf ports;
    ctl_buf_init(&ports);
    uint64_t nports = 0;
    struct ctl_obj o;
    int r, status = SC_OK;
    while ((r = src->next(src->ctx, &o, err, errlen, &status)) > 0) {
        if (strcmp(ctl_obj_str(&o, "type"), "nic") != 0)
            continue;
        int64_t stack = 0;
        ctl_obj_i64(&o, "stack", &stack);
        if (json) {
            if (stack != d.stack)
                nic_flush(&d, &ports, &nports);
            d.stack = (int)stack;
            nic_add(&d, &o);
        } else {
            const char *row[] = {cell(&o, "stack"), cell(&o, "group"), cell(&o, "name"), cell(&o, "value")};
            sc_table_row(&t, row);
        }
    }
    nic_flush(&d, &ports, &nports);
    for (int g = 0; g < d.ngroups; g++)
        ctl_buf_free(&d.members[g]);
    if (r == 0 && json) {
        struct ctl_buf doc;
        ctl_buf_init(&doc);
        json_head(&doc, src->hello);
        ctl_buf_printf(&doc, ",\"ports\":[%s]}", ports.p ? ports.p : "");
        json_out(&doc, out);
        ctl_buf_free(&doc);
    } else if (r == 0 && t.nrows == 0) {
        fprintf(out, "the port of this process has nothing to describe (not a DPDK port)\n");
    } else if (r == 0) {
        sc_table_print(&t, out);
    }
    sc_table_free(&t);
    return failed(&ports, 1, r == 0 ? SC_OK : status);
}

/* ---- loglevel ---- */

int sc_show_loglevel(struct sc_src *src, bool json, FILE *out, char *err, size_t errlen)
{
    struct ctl_obj o;
    int r, status = SC_OK;
    char old[32] = "?", now[32] = "?";
    while ((r = src->next(src->ctx, &o, err, errlen, &status)) > 0) {
        if (strcmp(ctl_obj_str(&o, "type"), "loglevel") != 0)
            continue;
        snprintf(old, sizeof(old), "%s", cell(&o, "old"));
        snprintf(now, sizeof(now), "%s", cell(&o, "level"));
    }
    if (r != 0)
        return status;
    if (json) {
        struct ctl_buf doc;
        ctl_buf_init(&doc);
        json_head(&doc, src->hello);
        ctl_buf_puts(&doc, ",\"old\":");
        ctl_json_str(&doc, old);
        ctl_buf_puts(&doc, ",\"level\":");
        ctl_json_str(&doc, now);
        ctl_buf_puts(&doc, "}");
        json_out(&doc, out);
        ctl_buf_free(&doc);
    } else {
        fprintf(out, "log level of %s (%s): %s -> %s\n", cell(src->hello, "pid"), cell(src->hello, "prog"), old,
                now);
    }
    return SC_OK;
}
