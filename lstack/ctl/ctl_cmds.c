/*
 * ctl_cmds.c - the commands that read the stacks: connections, stats, nic.
 * System side (no lwIP, no DPDK header): the paging of the stack's pcb
 * walk is ctl_conns.c, the counters come from the host (stack_get_stats
 * and its own), the stack's fds from ctl_stack_fds.c, the port description
 * from the nic's describe op (through stack_describe_nic).
 *
 * Lock discipline: take the host lock, copy plain numbers out, release,
 * then format (the server sends). connections is a reply in pieces (see
 * struct ctl_out): one page (at most CTL_PAGE pcbs, one lock hold) per
 * piece, the next piece only once the peer took the last, so a dump never
 * holds more than a page in memory and several dumps take turns; it
 * reports the longest hold in its end record (lock_max_us), so a test can
 * check the promise. stats adds the process's fds (ctl_proc_fds.c) to its
 * "app" record.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/app_counters.h"
#include "ctl/ctl_conns.h"
#include "ctl/ctl_proc_fds.h"

#include "ctl/ctl_stack_fds.h"
#include "ctl/ctl_stats_sum.h"
#include "ctl/ctl_priv.h"
#include "stack/stack.h"

/* ---- connections ---- */

static void put_addr(struct ctl_buf *b, const char *key, uint32_t addr, uint16_t port)
{
    char ip[INET_ADDRSTRLEN], s[INET_ADDRSTRLEN + 8];
    inet_ntop(AF_INET, &addr, ip, sizeof(ip));
    snprintf(s, sizeof(s), "%s:%u", ip, ntohs(port));
    ctl_rec_str(b, key, s);
}

static void put_conn(struct ctl_buf *b, int stack, const struct ctl_conn *c)
{
    const struct stack_tcp_view *p = &c->pcb;
    ctl_rec_begin(b, c->listener ? "listen" : "conn");
    ctl_rec_i64(b, "stack", stack);
    ctl_rec_i64(b, "fd", c->fd);
    put_addr(b, "local", p->laddr, htons(p->lport));
    if (c->listener) {
        ctl_rec_str(b, "state", ctl_tcp_state_name(p->state));
        ctl_rec_i64(b, "backlog", c->backlog);
        ctl_rec_u64(b, "accept_q", c->accept_q);
        ctl_rec_end(b);
        return;
    }
    put_addr(b, "remote", p->raddr, htons(p->rport));
    ctl_rec_str(b, "state", ctl_tcp_state_name(p->state));
    ctl_rec_u64(b, "recv_q", c->recv_q);
    ctl_rec_u64(b, "unsent", p->unsent);
    ctl_rec_u64(b, "unacked", p->unacked);
    ctl_rec_u64(b, "cwnd", p->cwnd);
    ctl_rec_u64(b, "ssthresh", p->ssthresh);
    ctl_rec_u64(b, "snd_wnd", p->snd_wnd);
    ctl_rec_u64(b, "rcv_wnd", p->rcv_wnd);
    ctl_rec_u64(b, "snd_buf", p->snd_buf);
    ctl_rec_u64(b, "snd_queuelen", p->snd_queuelen);
    ctl_rec_u64(b, "mss", p->mss);
    ctl_rec_u64(b, "rtt_ms", p->rtt_ms);
    ctl_rec_u64(b, "rttvar_ms", p->rttvar_ms);
    ctl_rec_u64(b, "rto_ms", p->rto_ms);
    ctl_rec_u64(b, "rexmit", p->rexmit);
    ctl_rec_end(b);
}

/* Read the filter arguments. Returns 0, or -1 after an error record. */
static int read_filter(struct ctl_out *o, const struct ctl_obj *req, struct ctl_conn_filter *f)
{
    f->state = -1;
    f->port = -1;
    const char *state = ctl_obj_str(req, "state");
    if (state != NULL && (f->state = ctl_tcp_state_parse(state)) < 0) {
        ctl_out_error(o, "unknown TCP state '%s'", state);
        return -1;
    }
    int64_t port;
    if (ctl_obj_get(req, "port") != NULL) {
        if (!ctl_obj_i64(req, "port", &port) || port < 0 || port > 65535) {
            ctl_out_error(o, "port must be 0..65535");
            return -1;
        }
        f->port = (int)port;
    }
    return 0;
}

/* the request's "stack" (stackctl --stack N): *si = N, or -1
 * when absent (every stack). Returns 0, or -1 after an error record (not a
 * number, or no such stack in this process). */
static int read_stack(struct ctl_out *o, const struct ctl_obj *req, int *si)
{
    *si = -1;
    if (ctl_obj_get(req, "stack") == NULL)
        return 0;
    int64_t v;
    if (!ctl_obj_i64(req, "stack", &v) || v < 0 || v > 1023) {
        ctl_out_error(o, "stack must be 0..1023");
        return -1;
    }
    int count = 0;
    while (ctl_srv.host->stack(count) != NULL)
        count++;
    if (v >= count) {
        ctl_out_error(o, "no stack %lld: this process has %d (0..%d)", (long long)v, count, count - 1);
        return -1;
    }
    *si = (int)v;
    return 0;
}

/* A dump in progress: which stack, where in its pcb lists, the totals. */
struct dump {
    struct ctl_conn_filter f;
    struct ctl_cursor cur;
    int si;                   /* the stack being walked */
    int only;                 /* --stack: the one stack to walk, -1: all */
    uint64_t conns, listeners, pages, lock_max_us;
    struct ctl_conn page[CTL_PAGE];
};

static void dump_end(struct ctl_out *o, const struct dump *d)
{
    o->more = NULL;
    ctl_rec_begin(&o->buf, "end");
    ctl_rec_u64(&o->buf, "connections", d->conns);
    ctl_rec_u64(&o->buf, "listeners", d->listeners);
    ctl_rec_u64(&o->buf, "pages", d->pages);
    ctl_rec_u64(&o->buf, "page_size", CTL_PAGE);
    ctl_rec_u64(&o->buf, "lock_max_us", d->lock_max_us);
    ctl_rec_end(&o->buf);
}

/* The next page (one lock hold), or the end record after the last stack. */
static void dump_more(struct ctl_out *o)
{
    struct dump *d = o->job;
    const struct ctl_host *h = ctl_srv.host;
    struct stack *s = d->only >= 0 && d->si != d->only ? NULL : h->stack(d->si);
    int n = 0;
    uint64_t held = 0;
    if (s != NULL) {
        h->lock(d->si);
        uint64_t t0 = ctl_now_us();
        n = ctl_conns_page(s, &d->f, &d->cur, d->page, CTL_PAGE);
        held = ctl_now_us() - t0;
        h->unlock(d->si);
    }
    if (s == NULL) {
        dump_end(o, d);
        return;
    }
    d->pages++;
    d->lock_max_us = held > d->lock_max_us ? held : d->lock_max_us;
    for (int i = 0; i < n; i++) {
        put_conn(&o->buf, d->si, &d->page[i]);
        if (d->page[i].listener)
            d->listeners++;
        else
            d->conns++;
    }
    if (d->cur.done) {
        d->si++;
        memset(&d->cur, 0, sizeof(d->cur));
    }
}

void ctl_cmd_connections(struct ctl_out *o, const struct ctl_obj *req)
{
    struct dump *d = calloc(1, sizeof(*d));
    if (d == NULL) {
        ctl_out_error(o, "out of memory");
        return;
    }
    if (read_filter(o, req, &d->f) != 0 || read_stack(o, req, &d->only) != 0) {
        free(d);
        return;
    }
    d->si = d->only >= 0 ? d->only : 0;
    o->job = d;
    o->job_free = free;
    o->more = dump_more;
    dump_more(o);
}

/* ---- stats ---- */

/* One stats record: every counter of stack_stats.def, in its order. */
static void put_stats(struct ctl_buf *b, const char *type, int stack, const struct stack_stats *st)
{
    ctl_rec_begin(b, type);
    if (stack >= 0)
        ctl_rec_i64(b, "stack", stack);
#define STACK_STAT(name, kind, help) ctl_rec_u64(b, #name, st->name);
#define STACK_STAT_AT(name, field, kind, help) ctl_rec_u64(b, #name, st->field);
#include "stack/stack_stats.def"
#undef STACK_STAT
#undef STACK_STAT_AT
    ctl_rec_end(b);
}

/* fds_stack / fds_hugepage: the fds the stack holds now (ctl_stack_fds.c); left
 * out when /proc/self/fd cannot be read (at the fd limit, say). */
static void put_fds_stack(struct ctl_buf *b)
{
    int own[5];
    size_t nown = ctl_server_fds(own, sizeof(own) / sizeof(own[0]));
    struct ctl_stack_fd_count n;
    if (ctl_stack_fds_count(ctl_srv.host->census, own, nown, &n) != 0)
        return;
    ctl_rec_u64(b, "fds_stack", n.stack);
    ctl_rec_u64(b, "fds_hugepage", n.hugepage);
}

void ctl_cmd_stats(struct ctl_out *o, const struct ctl_obj *req)
{
    int only;
    if (read_stack(o, req, &only) != 0)
        return;
    struct stack_stats total;
    memset(&total, 0, sizeof(total));
    ctl_rec_begin(&o->buf, "time");
    ctl_rec_u64(&o->buf, "t_us", ctl_now_us());
    ctl_rec_end(&o->buf);
    for (int si = only >= 0 ? only : 0;; si++) {
        struct stack_stats x;
        const struct ctl_host *h = ctl_srv.host;
        struct stack *s = only >= 0 && si != only ? NULL : h->stack(si);
        if (s == NULL)
            break;
        h->lock(si);
        if (h->stats != NULL)
            h->stats(si, &x);
        else
            stack_get_stats(s, &x);
        h->unlock(si);
        put_stats(&o->buf, "stack", si, &x);
        ctl_stats_sum(&total, &x);
    }
    put_stats(&o->buf, "total", -1, &total);
    /* The application's calls: on stack sockets, the stacks' own counts
     * summed; on kernel fds, the process's. */
    ctl_rec_begin(&o->buf, "app");
    ctl_rec_u64(&o->buf, "reads", total.app_reads);
    ctl_rec_u64(&o->buf, "writes", total.app_writes);
    ctl_rec_u64(&o->buf, "epoll_waits", total.app_epoll_waits);
    ctl_rec_u64(&o->buf, "wakeups", total.app_wakeups);
    ctl_rec_u64(&o->buf, "kernel_calls", __atomic_load_n(&app_kernel_calls, __ATOMIC_RELAXED));
    ctl_put_process_fds(&o->buf);

    put_fds_stack(&o->buf);
    ctl_rec_end(&o->buf);
    ctl_rec_begin(&o->buf, "end");
    ctl_rec_end(&o->buf);
}

/* ---- nic ---- */

struct nic_ctx {
    struct ctl_buf *b;
    int stack;
};

static void put_item(void *arg, const struct nic_item *it)
{
    struct nic_ctx *c = arg;
    ctl_rec_begin(c->b, "nic");
    ctl_rec_i64(c->b, "stack", c->stack);
    ctl_rec_str(c->b, "group", it->group);
    ctl_rec_str(c->b, "name", it->name);
    if (it->text != NULL)
        ctl_rec_str(c->b, "value", it->text);
    else
        ctl_rec_u64(c->b, "value", it->num);
    ctl_rec_end(c->b);
}

void ctl_cmd_nic(struct ctl_out *o, const struct ctl_obj *req)
{
    (void)req;
    for (int si = 0;; si++) {
        struct nic_ctx c = {.b = &o->buf, .stack = si};
        struct stack *s = ctl_srv.host->stack(si);
        if (s == NULL)
            break;
        ctl_srv.host->lock(si);
        stack_describe_nic(s, put_item, &c);
        ctl_srv.host->unlock(si);
    }
    ctl_rec_begin(&o->buf, "end");
    ctl_rec_end(&o->buf);
}
