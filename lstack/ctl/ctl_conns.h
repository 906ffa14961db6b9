/*
 * ctl_conns.h - the TCP connections of a stack, read page by page from its
 * private lwIP copy for `stackctl show connections`. No lwIP or DPDK type
 * crosses this header: the stack walks its pcbs (stack_tcp_walk), the
 * paging is in ctl_conns.c, the formatting in ctl_cmds.c.
 * Design: docs/design.md#connection-dumps-walk-lwips-lists-with-a-key-cursor
 */
#ifndef LSTACK_CTL_CONNS_H
#define LSTACK_CTL_CONNS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Order and paging: listeners (lwIP's tcp_listen_pcbs), then active
 * connections (tcp_active_pcbs), then TIME_WAIT (tcp_tw_pcbs); inside each
 * list by (local address, local port, remote address, remote port). A page
 * is the next `max` connections after the cursor in that order, found by
 * one walk of the lists under the stack lock. Between pages the lock is
 * released and the lists may change: a connection that exists for the whole
 * dump is reported exactly once; one that comes or goes meanwhile may or
 * may not be.
 */

#include "stack/stack.h"

/* One pcb (as the stack gives it: addresses in network byte order, ports
 * in host order) and its socket. */
struct ctl_conn {
    struct stack_tcp_view pcb; /* state: lwIP's enum tcp_state (see ctl_tcp_state_name) */
    bool listener;
    int fd;                 /* the application's fd, -1 if none (not accepted yet, closed) */
    /* listener */
    int backlog;            /* as given to listen() */
    uint32_t accept_q;      /* established, not accepted yet */
    /* connection */
    uint64_t recv_q;        /* bytes received, not read by the application */
};

/* Which connections a page holds. state -1: any; port -1: any (else a port
 * in host order, local or remote). */
struct ctl_conn_filter {
    int state;
    int port;
};

/* Where the dump stands; zero-initialise before the first page. */
struct ctl_cursor {
    bool started;
    bool done;              /* the last page has been taken */
    uint64_t hi, lo;        /* key of the last connection reported */
};

/* Under the stack lock: fill out[0..max) with the next connections of s
 * that pass f after cur, in the order above; advance cur. Returns how many
 * (fewer than max: the dump is complete, cur->done is set). */
int ctl_conns_page(struct stack *s, const struct ctl_conn_filter *f, struct ctl_cursor *cur,
                   struct ctl_conn *out, int max);

/* "ESTABLISHED", "TIME_WAIT", ... for lwIP's state number; "?" otherwise. */
const char *ctl_tcp_state_name(int state);

/* The state number of a name (case-insensitive, '-' and '_' alike), or -1. */
int ctl_tcp_state_parse(const char *name);

#endif
