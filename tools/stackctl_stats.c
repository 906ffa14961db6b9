/*
 * stackctl_stats.c - show stats: one reading as a per-stack table (or a
 * JSON document), or, with --watch/-r, per-second rates between readings,
 * one line per interval (vmstat style, or one JSON object per line).
 *
 * Rates are computed here from two readings and the process's own clock
 * (the "time" record), so a slow stackctl or a late reply does not skew
 * them. Gauges (sockets, mbufs, the process's fds) are shown as they are,
 * not as rates.
 * Rejected: rates computed by the process (it would have to keep a reading
 * per client between requests).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stackctl.h"

static const char *const skip_type[] = {"type", NULL};
static const char *const gauges[] = {"sockets", "mbuf_total", "mbuf_free", "mbuf_in_use", "fds_open",
                                     "fds_limit", "fds_stack", "fds_hugepage", "frag_mbufs_held",
                                     "frag_mbufs_max", NULL};

static bool is_gauge(const char *name)
{
    for (const char *const *g = gauges; *g != NULL; g++)
        if (strcmp(*g, name) == 0)
            return true;
    return false;
}

/* Add every numeric field of o (but "stack") to s. */
static void sample_add(struct sc_sample *s, const struct ctl_obj *o)
{
    for (int i = 0; i < o->n && s->n < SC_SAMPLE_MAX; i++) {
        uint64_t v;
        if (o->f[i].kind != CTL_NUM || strcmp(o->f[i].key, "stack") == 0 || !ctl_obj_u64(o, o->f[i].key, &v))
            continue;
        snprintf(s->name[s->n], sizeof(s->name[0]), "%s", o->f[i].key);
        s->val[s->n++] = v;
    }
}

uint64_t sc_sample_get(const struct sc_sample *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->name[i], name) == 0)
            return s->val[i];
    return 0;
}

int sc_read_sample(struct sc_src *src, struct sc_sample *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    struct ctl_obj o;
    int r, status = SC_OK;
    while ((r = src->next(src->ctx, &o, err, errlen, &status)) > 0) {
        const char *type = ctl_obj_str(&o, "type");
        if (strcmp(type, "time") == 0)
            ctl_obj_u64(&o, "t_us", &s->t_us);
        else if (strcmp(type, "total") == 0 || strcmp(type, "app") == 0)
            sample_add(s, &o);
    }
    return r == 0 ? SC_OK : status;
}

/* ---- one reading ---- */

#define MAX_STACKS 16

static void print_table(struct sc_sample *st, int nst, const struct sc_sample *total, const struct sc_sample *app,
                        FILE *out)
{
    const char *head[MAX_STACKS + 3];
    char names[MAX_STACKS][sizeof("STACK -2147483648")];
    int h = 0;
    head[h++] = "COUNTER";
    for (int i = 0; i < nst; i++) {
        snprintf(names[i], sizeof(names[i]), "STACK %d", i);
        head[h++] = names[i];
    }
    head[h++] = "TOTAL";
    head[h] = NULL;
    char align[MAX_STACKS + 3];
    memset(align, 'r', sizeof(align));
    align[0] = 'l';
    struct sc_table t;
    sc_table_init(&t, head, align);
    for (int k = 0; k < total->n; k++) {
        char cells[MAX_STACKS + 2][24];
        const char *row[MAX_STACKS + 2];
        row[0] = total->name[k];
        for (int i = 0; i < nst; i++) {
            snprintf(cells[i], sizeof(cells[i]), "%llu", (unsigned long long)sc_sample_get(&st[i], total->name[k]));
            row[1 + i] = cells[i];
        }
        snprintf(cells[nst], sizeof(cells[nst]), "%llu", (unsigned long long)total->val[k]);
        row[1 + nst] = cells[nst];
        sc_table_row(&t, row);
    }
    sc_table_print(&t, out);
    sc_table_free(&t);
    static const char *const app_head[] = {"APPLICATION (process-wide)", "VALUE", NULL};
    sc_table_init(&t, app_head, "lr");
    for (int k = 0; k < app->n; k++) {
        char v[24];
        snprintf(v, sizeof(v), "%llu", (unsigned long long)app->val[k]);
        const char *row[] = {app->name[k], v};
        sc_table_row(&t, row);
    }
    fputc('\n', out);
    sc_table_print(&t, out);
    sc_table_free(&t);
}

int sc_show_stats(struct sc_src *src, bool json, FILE *out, char *err, size_t errlen)
{
    static struct sc_sample st[MAX_STACKS], total, app;
    int nst = 0;
    memset(&total, 0, sizeof(total));
    memset(&app, 0, sizeof(app));
    struct ctl_buf doc, stacks;
    ctl_buf_init(&doc);
    ctl_buf_init(&stacks);
    int64_t pid = 0;
    ctl_obj_i64(src->hello, "pid", &pid);
    ctl_buf_printf(&doc, "{\"pid\":%lld,\"prog\":", (long long)pid);
    ctl_json_str(&doc, ctl_obj_str(src->hello, "prog"));
    struct ctl_obj o;
    int r, status = SC_OK;
    while ((r = src->next(src->ctx, &o, err, errlen, &status)) > 0) {
        const char *type = ctl_obj_str(&o, "type");
        if (strcmp(type, "time") == 0) {
            ctl_buf_printf(&doc, ",\"t_us\":%s", ctl_obj_get(&o, "t_us") ? ctl_obj_get(&o, "t_us")->val : "0");
        } else if (strcmp(type, "stack") == 0 && nst < MAX_STACKS) {
            memset(&st[nst], 0, sizeof(st[nst]));
            sample_add(&st[nst++], &o);
            if (stacks.len > 0)
                ctl_buf_add(&stacks, ",", 1);
            ctl_obj_json(&stacks, &o, skip_type);
        } else if (strcmp(type, "total") == 0 || strcmp(type, "app") == 0) {
            sample_add(type[0] == 't' ? &total : &app, &o);
            ctl_buf_printf(&doc, ",\"%s\":", type);
            ctl_obj_json(&doc, &o, skip_type);
        }
    }
    if (r == 0 && json) {
        ctl_buf_printf(&doc, ",\"stacks\":[%s]}", stacks.p ? stacks.p : "");
        fprintf(out, "%s\n", doc.p);
    } else if (r == 0) {
        print_table(st, nst, &total, &app, out);
    }
    ctl_buf_free(&doc);
    ctl_buf_free(&stacks);
    return r == 0 ? SC_OK : status;
}

/* ---- rates ---- */

static double rate(const struct sc_sample *a, const struct sc_sample *b, const char *name, double secs)
{
    uint64_t x = sc_sample_get(a, name), y = sc_sample_get(b, name);
    return y >= x && secs > 0 ? (double)(y - x) / secs : 0.0; /* a counter never goes back */
}

/* Per-second drops of every kind, summed. */
static double drop_rate(const struct sc_sample *a, const struct sc_sample *b, double secs)
{
    double d = 0;
    for (int i = 0; i < b->n; i++)
        if (strncmp(b->name[i], "drop_", 5) == 0 || strncmp(b->name[i], "port_", 5) == 0)
            d += rate(a, b, b->name[i], secs);
    return d;
}

static void rates_json(const struct sc_sample *a, const struct sc_sample *b, double secs, FILE *out)
{
    struct ctl_buf j;
    ctl_buf_init(&j);
    ctl_buf_printf(&j, "{\"t_us\":%llu,\"interval_s\":%.6f,\"rates\":{", (unsigned long long)b->t_us, secs);
    int n = 0;
    for (int i = 0; i < b->n; i++) {
        if (is_gauge(b->name[i]))
            continue;
        ctl_buf_printf(&j, "%s\"%s\":%.3f", n++ ? "," : "", b->name[i], rate(a, b, b->name[i], secs));
    }
    ctl_buf_puts(&j, "},\"gauges\":{");
    n = 0;
    for (const char *const *g = gauges; *g != NULL; g++)
        ctl_buf_printf(&j, "%s\"%s\":%llu", n++ ? "," : "", *g, (unsigned long long)sc_sample_get(b, *g));
    ctl_buf_puts(&j, "}}");
    fprintf(out, "%s\n", j.p);
    ctl_buf_free(&j);
}

static const char *const rate_head[] = {"TIME", "RX_PPS", "RX_KBPS", "TX_PPS", "TX_KBPS", "DROPS/S",
                                        "ACCEPT/S", "RESET/S", "READ/S", "WRITE/S", "EPOLL/S", "WAKEUP/S",
                                        "KERNEL/S", "SOCKETS", "MBUF_USED"};

void sc_print_rates(const struct sc_sample *a, const struct sc_sample *b, bool json, bool header, FILE *out)
{
    double secs = b->t_us > a->t_us ? (double)(b->t_us - a->t_us) / 1e6 : 0.0;
    if (json) {
        rates_json(a, b, secs, out);
        return;
    }
    if (header) {
        fprintf(out, "%-8s", rate_head[0]);
        for (size_t i = 1; i < sizeof(rate_head) / sizeof(rate_head[0]); i++)
            fprintf(out, " %10s", rate_head[i]);
        fputc('\n', out);
    }
    char now[16];
    time_t t = time(NULL);
    struct tm tm;
    strftime(now, sizeof(now), "%H:%M:%S", localtime_r(&t, &tm));
    double v[] = {
        rate(a, b, "rx_packets", secs),     rate(a, b, "rx_bytes", secs) / 1000.0,
        rate(a, b, "tx_packets", secs),     rate(a, b, "tx_bytes", secs) / 1000.0,
        drop_rate(a, b, secs),              rate(a, b, "conn_accepted", secs),
        rate(a, b, "conn_reset", secs),     rate(a, b, "reads", secs),
        rate(a, b, "writes", secs),         rate(a, b, "epoll_waits", secs),
        rate(a, b, "wakeups", secs),        rate(a, b, "kernel_calls", secs),
    };
    fprintf(out, "%-8s", now);
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        fprintf(out, " %10.0f", v[i]);
    fprintf(out, " %10llu %10llu\n", (unsigned long long)sc_sample_get(b, "sockets"),
            (unsigned long long)sc_sample_get(b, "mbuf_in_use"));
}
