/*
 * fake_lsock.c - see fake_lsock.h. Implements the lsock.h calls the event
 * layer makes (lsock_events, lsock_events_told, lsock_watchers, lsock_hold,
 * lsock_release), and tells the watchers
 * with the sock layer's own lsock_watchers_tell.
 */
#include "fake_lsock.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "event/event.h"
#include "fake_runtime.h"
#include "runtime/runtime.h"
#include "sock/lsock.h"

struct lsock {
    uint32_t ev;
    struct lsock_watcher *watchers;
};

unsigned long fake_lsock_checks;

uint32_t lsock_events(const struct lsock *s)
{
    fake_lsock_checks++;
    return s->ev;
}

uint32_t lsock_events_told(const struct lsock *s)
{
    return s->ev; /* fake_lsock_set tells at once */
}

/* Fake sockets are freed by the test itself, never under a wait. */
void lsock_hold(struct lsock *s)
{
    (void)s;
}

void lsock_release(struct lsock *s)
{
    (void)s;
}

struct stack_loop *lsock_loop(const struct lsock *s)
{
    (void)s;
    return fake_loop(0);
}

struct lsock_watcher **lsock_watchers(struct lsock *s)
{
    return &s->watchers;
}

struct lsock_watcher *fake_lsock_watchers(struct lsock *s)
{
    return s->watchers;
}

void fake_lsock_set(struct lsock *s, uint32_t ev)
{
    fake_lock();
    s->ev = ev;
    lsock_watchers_tell(s->watchers);
    fake_unlock();
}

static int listen_loopback(uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 16) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

int fake_sock_open(struct lsock **out, bool kernel_half, uint16_t *port)
{
    struct lsock *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return -1;
    int fd = kernel_half ? listen_loopback(port) : socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        free(s);
        return -1;
    }
    fake_sock_map(fd, s, kernel_half);
    *out = s;
    return fd;
}

void fake_sock_close(int fd, struct lsock *s)
{
    fake_lock();
    ev_forget_sock(s);
    fake_unlock();
    fake_sock_unmap(fd);
    close(fd);
    free(s);
}
