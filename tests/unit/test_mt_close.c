/*
 * test_mt_close.c - many application threads: some poll() stack sockets
 * while others close them. Linux allows it: the closed socket's
 * file lives until poll returns. lstack's poll looks at the sockets under
 * the stack lock round after round; a socket closed by another thread
 * between two rounds must still be there to look at (lsock_hold), or the
 * poller reads freed memory (it crashed: the freed lsock's pcb field held
 * glibc's tcache key). Two stacks back to back on the memory port
 * (fake_runtime.c polls both); the real event layer and sock layer. TAP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conf/conf.h"
#include "event/event.h"
#include "fake_runtime.h"
#include "pair_conf.h"
#include "posix/sock_fd.h"
#include "runtime/runtime.h"
#include "sock/lsock.h"
#include "stack/stack.h"
#include "test_event.h"

enum { NCONN = 48, NPOLL = 4, NCLOSE = 4, PORT = 7000 };

static struct stack *stacks[2];
static int fds[NCONN];
static struct lsock *conns[NCONN];
static struct lsock *accepted_[NCONN]; /* stack B's side, closed at the end */
static int open_[NCONN];           /* atomic: 1 while conns[i] is open */
static int done;                   /* atomic: the closers finished */
static unsigned long polls_total;  /* atomic */
static unsigned long hup_seen;     /* atomic: a socket closed during a poll reported POLLHUP */

static void *poller(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
        struct pollfd p[NCONN];
        int idx[NCONN];
        nfds_t n = 0;
        for (int i = 0; i < NCONN; i++)
            if (__atomic_load_n(&open_[i], __ATOMIC_ACQUIRE)) {
                p[n] = (struct pollfd){.fd = fds[i], .events = POLLIN};
                idx[n++] = i;
            }
        if (n == 0)
            break;
        int rc = ev_ppoll(p, n, 2, NULL, &sockfd_lookup);
        __atomic_add_fetch(&polls_total, 1, __ATOMIC_RELAXED);
        for (nfds_t j = 0; rc > 0 && j < n; j++)
            if ((p[j].revents & POLLHUP) && !__atomic_load_n(&open_[idx[j]], __ATOMIC_ACQUIRE))
                __atomic_add_fetch(&hup_seen, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void *closer(void *arg)
{
    int k = (int)(long)arg;
    for (int i = k; i < NCONN; i += NCLOSE) {
        usleep(1000);
        fake_lock();
        __atomic_store_n(&open_[i], 0, __ATOMIC_RELEASE);
        fake_sock_unmap(fds[i]); /* what sock_close does first: fdt_clear */
        ev_forget_sock(conns[i]);
        lsock_close(conns[i]);
        fake_unlock();
    }
    return NULL;
}

static bool connect_all(uint32_t b_addr, struct lsock *srv)
{
    for (int i = 0; i < NCONN; i++) {
        fake_lock();
        int rc = lsock_new(stacks[0], &conns[i]);
        rc = rc == 0 ? lsock_connect(conns[i], b_addr, htons(PORT)) : rc;
        fake_unlock();
        if (rc != -EINPROGRESS)
            return false;
    }
    /* Poll both stacks until every connection is up and accepted (the
     * accepted side stays open: the test closes the client side only). */
    int accepted = 0;
    double t0 = now_ms();
    while (accepted < NCONN && now_ms() - t0 < 5000) {
        fake_lock();
        fake_poll();
        struct lsock *c = NULL;
        while (accepted < NCONN && lsock_accept(srv, &c) == 0 && c != NULL) {
            accepted_[accepted++] = c;
            c = NULL;
        }
        fake_unlock();
    }
    for (int i = 0; i < NCONN; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        fake_sock_map(fds[i], conns[i], false);
        open_[i] = 1;
    }
    return accepted == NCONN;
}

int main(void)
{
    struct lstack_conf ca, cb;
    char err[512];
    if (pair_conf(&ca, "198.18.0.2", "198.18.0.1", "tcp_conn_count = 128;") != 0 ||
        pair_conf(&cb, "198.18.0.1", "198.18.0.2", "tcp_conn_count = 128;") != 0) {
        check(false, "configs parse");
        return test_done();
    }
    if (!check(pair_open(&ca, &cb, &stacks[0], &stacks[1], err, sizeof(err)) == 0, "two stacks")) {
        printf("# %s\n", err);
        return test_done();
    }
    fake_rt_stacks(stacks, 2);
    lsock_stack_open(stacks[0], fake_loop(0));
    lsock_stack_open(stacks[1], fake_loop(1));
    struct lsock *srv = NULL;
    fake_lock();
    int rc = lsock_new(stacks[1], &srv);
    rc = rc == 0 ? lsock_bind(srv, cb.host_addr, htons(PORT)) : rc;
    rc = rc == 0 ? lsock_listen(srv, 128) : rc;
    fake_unlock();
    check(rc == 0, "listener on stack B");
    check(connect_all(cb.host_addr, srv), "48 connections from stack A, accepted on B");

    pthread_t p[NPOLL], c[NCLOSE];
    for (int i = 0; i < NPOLL; i++)
        pthread_create(&p[i], NULL, poller, NULL);
    for (int i = 0; i < NCLOSE; i++)
        pthread_create(&c[i], NULL, closer, (void *)(long)i);
    for (int i = 0; i < NCLOSE; i++)
        pthread_join(c[i], NULL);
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < NPOLL; i++)
        pthread_join(p[i], NULL);
    printf("# %lu polls; %lu times a socket closed during a poll reported POLLHUP\n", polls_total, hup_seen);
    check(polls_total > 0, "4 threads polled while 4 others closed every socket (no crash)");

    struct stack_stats st;
    fake_lock();
    stack_get_stats(stacks[0], &st);
    fake_unlock();
    check(st.sockets == 0, "every closed socket gave its room back on stack A");

    fake_lock();
    for (int i = 0; i < NCONN; i++)
        lsock_close(accepted_[i]);
    lsock_close(srv);
    fake_unlock();
    for (int i = 0; i < NCONN; i++)
        close(fds[i]);
    fake_rt_stacks(NULL, 0);
    stack_close(stacks[0]);
    stack_close(stacks[1]);
    lstack_conf_free(&ca);
    lstack_conf_free(&cb);
    return test_done();
}
