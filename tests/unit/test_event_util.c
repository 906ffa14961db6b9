/*
 * test_event_util.c - see test_event.h: the helpers the event layer's test
 * programs share (TAP, clock, the wrappers' close/dup, a delayed job).
 */
#include "test_event.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "posix/fd_ops.h"
#include "posix/fdtable.h"

static int failures, count;

bool check(bool cond, const char *name)
{
    count++;
    printf("%s %d - %s\n", cond ? "ok" : "not ok", count, name);
    fflush(stdout);
    if (!cond)
        failures++;
    return cond;
}

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int fd_close(int fd)
{
    struct fd_entry *e = fdt_get(fd);
    if (e != NULL && e->ops->close != NULL)
        return e->ops->close(e, fd);
    return close(fd);
}

int fd_dup(int fd)
{
    int nfd = dup(fd);
    struct fd_entry *e = fdt_get(fd);
    if (nfd >= 0 && e != NULL && e->ops->dup != NULL && e->ops->dup(e, fd, nfd) != 0) {
        close(nfd);
        return -1;
    }
    return nfd;
}

struct later {
    int delay_ms;
    void (*fn)(void *);
    void *arg;
    double ran_at; /* now_ms() just before fn */
};

static pthread_t later_thread;
static struct later later_job;

static void *later_main(void *p)
{
    struct later *l = p;
    usleep((useconds_t)l->delay_ms * 1000);
    l->ran_at = now_ms();
    l->fn(l->arg);
    return NULL;
}

void test_later(int delay_ms, void (*fn)(void *), void *arg)
{
    later_job = (struct later){delay_ms, fn, arg, 0};
    pthread_create(&later_thread, NULL, later_main, &later_job);
}

double test_since_job(void)
{
    double now = now_ms();
    pthread_join(later_thread, NULL);
    return now - later_job.ran_at;
}

int test_done(void)
{
    printf("1..%d\n", count);
    return failures != 0;
}
