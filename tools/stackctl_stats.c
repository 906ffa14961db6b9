/*
 * stackctl_stats.c - show stats: one reading as a per-stack table (or a
 * JSON document), or, with --watch/-r, per-second rates between readings,
 * one line per interval (vmstat style, or one JSON object per line).
 *
 * Rates are computed here from two readings and the process's own clock
 * (the "time" record), so a slow stackctl or a late reply does not skew
 * them. Gauges (sockets, mbufs, the process's fds) are shown as they are,
 * not as rates. The poll-round counters are also read as VPP's `show
 * runtime` reads its own (busy %, frames per busy round, cycles per frame,
 * rounds/s: lstack/ctl/ctl_rounds.h), since the start or over the interval.
 * Design: docs/design.md#rates-are-computed-by-stackctl
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl/ctl_rounds.h"
#include "stackctl.h"

static const char *const skip_type[] = {"type", NULL};
/* Values shown as they are, not as rates: the stack counters whose kind
 * says so (stack_stats.def), and the process's fds of the app record. */
#define IS_COUNT 0
#define IS_GAUGE 1
#define IS_PORT 0
#define IS_LEVEL 1
static const char *const gauges[] = {
    "fds_open", "fds_limit", "fds_stack", "fds_hugepage",
#define STACK_STAT(name, kind, help) IS_##kind ? #name : NULL,
#define STACK_STAT_AT(name, field, kind, help) IS_##kind ? #name : NULL,
#include "stack/stack_stats.def"
#undef STACK_STAT
#undef STACK_STAT_AT
};
#define NGAUGES (sizeof(gauges) / sizeof(gauges[0]))

static bool is_gauge(const char *name)
{
    for (size_t i = 0; i < NGAUGES; i++)
        if (gauges[i] != NULL && strcmp(gauges[i], name) == 0)
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

/* The poll-round counters of s. */
static void sample_rounds(const struct sc_sample *s, struct ctl_rounds *c)
{
    c->rounds = sc_sample_get(s, "polls");
    c->busy = sc_sample_get(s, "rounds_busy");
    c->rx_frames = sc_sample_get(s, "rounds_rx_frames");
    c->tx_frames = sc_sample_get(s, "rounds_tx_frames");
    c->busy_cycles = sc_sample_get(s, "rounds_busy_cycles");
    c->idle_cycles = sc_sample_get(s, "rounds_idle_cycles");
    c->tsc_hz = sc_sample_get(s, "tsc_hz");
    c->lock_waits = sc_sample_get(s, "lock_waits");
    c->lock_wait_cycles = sc_sample_get(s, "lock_wait_cycles");
}

/* ,"key":v (null when v is NAN). */
static void json_num(struct ctl_buf *b, const char *key, double v, const char *fmt)
{
    ctl_buf_printf(b, ",\"%s\":", key);
    if (isnan(v))
        ctl_buf_puts(b, "null");
    else
        ctl_buf_printf(b, fmt, v);
}

/* The runtime of c as a JSON object: {"rounds":..,"busy_pct":..,...}. */
static void json_runtime(struct ctl_buf *b, const struct ctl_rounds *c, const struct ctl_rounds_view *r)
{
    ctl_buf_printf(b, "{\"rounds\":%llu,\"rounds_busy\":%llu,\"frames\":%llu,\"tsc_hz\":%llu",
                   (unsigned long long)c->rounds, (unsigned long long)c->busy,
                   (unsigned long long)(c->rx_frames + c->tx_frames), (unsigned long long)c->tsc_hz);
    json_num(b, "rounds_per_s", r->rounds_per_s, "%.1f");
    json_num(b, "busy_pct", r->busy_pct, "%.3f");
    json_num(b, "frames_per_busy_round", r->frames_per_busy_round, "%.3f");
    json_num(b, "cycles_per_frame", r->cycles_per_frame, "%.1f");
    json_num(b, "busy_us", r->busy_us, "%.1f");
    json_num(b, "idle_us", r->idle_us, "%.1f");
    ctl_buf_printf(b, ",\"lock_waits\":%llu", (unsigned long long)c->lock_waits);
    json_num(b, "lock_wait_us", r->lock_wait_us, "%.1f");
    json_num(b, "lock_wait_pct", r->lock_wait_pct, "%.3f");
    ctl_buf_puts(b, "}");
}

/* v with fmt into cell, "-" when NAN. */
static void cell_num(char *cell, size_t len, double v, const char *fmt)
{
    if (isnan(v))
        snprintf(cell, len, "-");
    else
        snprintf(cell, len, fmt, v);
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
    /* The rounds as VPP's show runtime reads them, since the start. */
    head[0] = "RUNTIME (since start)";
    sc_table_init(&t, head, align);
    struct ctl_rounds_view rt[MAX_STACKS + 1];
    for (int i = 0; i <= nst; i++) {
        struct ctl_rounds c;
        sample_rounds(i < nst ? &st[i] : total, &c);
        ctl_rounds_derive(&c, 0, i < nst ? 1u : (unsigned)(nst > 0 ? nst : 1), &rt[i]);
    }
    static const struct {
        const char *name, *fmt;
        size_t off;
        double scale;
    } rows[] = {
        {"rounds/s", "%.0f", offsetof(struct ctl_rounds_view, rounds_per_s), 1},
        {"busy %", "%.2f", offsetof(struct ctl_rounds_view, busy_pct), 1},
        {"frames/busy round", "%.2f", offsetof(struct ctl_rounds_view, frames_per_busy_round), 1},
        {"cycles/frame", "%.0f", offsetof(struct ctl_rounds_view, cycles_per_frame), 1},
        {"busy ms", "%.1f", offsetof(struct ctl_rounds_view, busy_us), 1e-3},
        {"idle ms", "%.1f", offsetof(struct ctl_rounds_view, idle_us), 1e-3},
        {"lock wait ms", "%.1f", offsetof(struct ctl_rounds_view, lock_wait_us), 1e-3},
        {"lock wait %", "%.2f", offsetof(struct ctl_rounds_view, lock_wait_pct), 1},
    };
    for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
        char cells[MAX_STACKS + 2][24];
        const char *row[MAX_STACKS + 2];
        row[0] = rows[k].name;
        for (int i = 0; i <= nst; i++) {
            double v = *(const double *)((const char *)&rt[i] + rows[k].off) * rows[k].scale;
            cell_num(cells[i], sizeof(cells[i]), v, rows[k].fmt);
            row[1 + i] = cells[i];
        }
        sc_table_row(&t, row);
    }
    fputc('\n', out);
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
        ctl_buf_printf(&doc, ",\"stacks\":[%s],\"runtime\":{\"total\":", stacks.p ? stacks.p : "");
        struct ctl_rounds c;
        struct ctl_rounds_view rt;
        sample_rounds(&total, &c);
        ctl_rounds_derive(&c, 0, (unsigned)(nst > 0 ? nst : 1), &rt);
        json_runtime(&doc, &c, &rt);
        ctl_buf_puts(&doc, ",\"stacks\":[");
        for (int i = 0; i < nst; i++) {
            sample_rounds(&st[i], &c);
            ctl_rounds_derive(&c, 0, 1, &rt);
            if (i > 0)
                ctl_buf_puts(&doc, ",");
            json_runtime(&doc, &c, &rt);
        }
        ctl_buf_puts(&doc, "]}}");
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
    for (size_t i = 0; i < NGAUGES; i++)
        if (gauges[i] != NULL)
            ctl_buf_printf(&j, "%s\"%s\":%llu", n++ ? "," : "", gauges[i],
                           (unsigned long long)sc_sample_get(b, gauges[i]));
    ctl_buf_puts(&j, "},\"runtime\":");
    struct ctl_rounds ra, rb, d;
    struct ctl_rounds_view rt;
    sample_rounds(a, &ra);
    sample_rounds(b, &rb);
    ctl_rounds_diff(&ra, &rb, &d);
    ctl_rounds_derive(&d, secs, 1, &rt);
    json_runtime(&j, &d, &rt);
    ctl_buf_puts(&j, "}");
    fprintf(out, "%s\n", j.p);
    ctl_buf_free(&j);
}

static const char *const rate_head[] = {"TIME", "RX_PPS", "RX_KBPS", "TX_PPS", "TX_KBPS", "DROPS/S",
                                        "ACCEPT/S", "RESET/S", "READ/S", "WRITE/S", "EPOLL/S", "WAKEUP/S",
                                        "KERNEL/S", "SOCKETS", "MBUF_USED", "ROUNDS/S", "BUSY%",
                                        "FR/BUSY", "CYC/FRAME", "LOCKWAIT%"};

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
    fprintf(out, " %10llu %10llu", (unsigned long long)sc_sample_get(b, "sockets"),
            (unsigned long long)sc_sample_get(b, "mbuf_in_use"));
    struct ctl_rounds ra, rb, d;
    struct ctl_rounds_view rt;
    sample_rounds(a, &ra);
    sample_rounds(b, &rb);
    ctl_rounds_diff(&ra, &rb, &d);
    ctl_rounds_derive(&d, secs, 1, &rt);
    char cells[5][24];
    cell_num(cells[0], sizeof(cells[0]), rt.rounds_per_s, "%.0f");
    cell_num(cells[1], sizeof(cells[1]), rt.busy_pct, "%.1f");
    cell_num(cells[2], sizeof(cells[2]), rt.frames_per_busy_round, "%.2f");
    cell_num(cells[3], sizeof(cells[3]), rt.cycles_per_frame, "%.0f");
    cell_num(cells[4], sizeof(cells[4]), rt.lock_wait_pct, "%.2f");
    fprintf(out, " %10s %10s %10s %10s %10s\n", cells[0], cells[1], cells[2], cells[3], cells[4]);
}
