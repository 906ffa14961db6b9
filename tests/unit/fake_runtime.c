/*
 * fake_runtime.c - see fake_runtime.h. The real fd table
 * (lstack/posix/fdtable.c) is linked beside it.
 */
#include "fake_runtime.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "common/libc.h"
#include "common/stack_loop.h"
#include "event/event.h"
#include "posix/sock_fd.h"
#include "runtime/runtime.h"
#include "sock/lsock.h"
#include "stack/stack.h"

/* Nothing interposes in the test binary: these names are glibc's. */
struct libc_calls libc = {
    .close = close,
    .epoll_ctl = epoll_ctl,
    .epoll_wait = epoll_wait,
    .epoll_pwait = epoll_pwait,
    .poll = poll,
    .ppoll = ppoll,
    .select = select,
    .pselect = pselect,
};

volatile int rt_state_v = RT_READY;
bool fake_child;
unsigned long fake_polls;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct stack *stacks[4];
static unsigned nstacks;
static unsigned (*hook_fn)(void *);
static void *hook_arg;

void fake_lock(void)
{
    pthread_mutex_lock(&mu);
}

void fake_unlock(void)
{
    pthread_mutex_unlock(&mu);
}

unsigned fake_poll(void)
{
    unsigned frames = 0;
    __atomic_add_fetch(&fake_polls, 1, __ATOMIC_RELAXED);
    for (unsigned i = 0; i < nstacks; i++)
        frames += stack_poll(stacks[i]);
    if (hook_fn != NULL)
        frames += hook_fn(hook_arg);
    return frames;
}

/* ---- the loops ---- */

static void loop_lock_fn(struct stack_loop *l)
{
    (void)l;
    fake_lock();
}

static void loop_unlock_fn(struct stack_loop *l)
{
    (void)l;
    fake_unlock();
}

static bool loop_contended(struct stack_loop *l)
{
    (void)l;
    return false;
}

/* A wait polls every loop of the group: loop 0's poll is the round of
 * everything, the others' nothing. */
static unsigned loop_poll(struct stack_loop *l)
{
    return l->index == 0 ? fake_poll() : 0;
}

static void loop_flush_fn(struct stack_loop *l)
{
    (void)l;
}

static int wake_begin(struct stack_loop *l);
static void wake_end(struct stack_loop *l);

static const struct stack_loop_ops fake_ops = {
    .lock = loop_lock_fn,
    .unlock = loop_unlock_fn,
    .contended = loop_contended,
    .poll = loop_poll,
    .flush = loop_flush_fn,
    .wake_begin = wake_begin,
    .wake_end = wake_end,
    .wait = &ev_wait_polling,
};

enum { FAKE_LOOPS = 4 };
static struct stack_loop loops[FAKE_LOOPS];
static struct stack_loop *loop_ptrs[FAKE_LOOPS];

struct stack_loop *fake_loop(unsigned i)
{
    if (loops[0].ops == NULL) {
        for (unsigned k = 0; k < FAKE_LOOPS; k++) {
            loop_ptrs[k] = &loops[k];
            loops[k] = (struct stack_loop){.ops = &fake_ops, .index = k, .count = FAKE_LOOPS, .all = loop_ptrs};
        }
    }
    return &loops[i];
}

void fake_rt_stacks(struct stack **s, unsigned n)
{
    nstacks = 0;
    for (unsigned i = 0; i < n && i < 4; i++)
        stacks[nstacks++] = s[i];
}

void fake_rt_hook(unsigned (*hook)(void *), void *arg)
{
    hook_fn = hook;
    hook_arg = arg;
}

void fake_set_low_power(bool on)
{
    for (unsigned i = 0; i < FAKE_LOOPS; i++)
        fake_loop(i)->low_power = on;
}

bool rt_is_child(void)
{
    return fake_child;
}

int fake_wake_fd = -1;
bool fake_wake_eagain;
unsigned long fake_sleeps, fake_sleep_ends;
double fake_wake_written_ms;
double fake_wake_lat_ms[FAKE_WAKE_LAT];
unsigned fake_wake_nlat;

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void fake_set_wake_fd(int fd)
{
    fake_wake_fd = fd;
    for (unsigned i = 0; i < FAKE_LOOPS; i++)
        fake_loop(i)->can_wake = fd >= 0;
}

static int wake_begin(struct stack_loop *l)
{
    (void)l;
    if (fake_wake_fd < 0)
        return -ENOTSUP;
    if (fake_wake_eagain)
        return -EAGAIN;
    __atomic_fetch_add(&fake_sleeps, 1, __ATOMIC_RELAXED);
    return fake_wake_fd;
}

static void wake_end(struct stack_loop *l)
{
    (void)l;
    __atomic_fetch_add(&fake_sleep_ends, 1, __ATOMIC_RELAXED);
    uint64_t v;
    if (read(fake_wake_fd, &v, sizeof(v)) == (ssize_t)sizeof(v) && fake_wake_nlat < FAKE_WAKE_LAT) {
        double written;
        __atomic_load(&fake_wake_written_ms, &written, __ATOMIC_ACQUIRE);
        fake_wake_lat_ms[fake_wake_nlat++] = mono_ms() - written;
    }
}

uint64_t rt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- fd -> lsock ---- */

enum { FAKE_FDS = 4096 };

static struct {
    struct lsock *s;
    bool kernel_half;
} socks[FAKE_FDS];

void fake_sock_map(int fd, struct lsock *s, bool kernel_half)
{
    if (fd >= 0 && fd < FAKE_FDS) {
        __atomic_store_n(&socks[fd].kernel_half, kernel_half, __ATOMIC_RELAXED);
        __atomic_store_n(&socks[fd].s, s, __ATOMIC_RELEASE);
    }
}

void fake_sock_unmap(int fd)
{
    fake_sock_map(fd, NULL, false);
}

static bool fake_is_sock(int fd)
{
    return !fake_child && fd >= 0 && fd < FAKE_FDS && __atomic_load_n(&socks[fd].s, __ATOMIC_ACQUIRE) != NULL;
}

/* The lookup and the hold under the fake lock, as the POSIX layer's under
 * the fd table's lock: a test that unmaps and closes a socket does so under
 * it too. */
struct lsock *sockfd_hold(int fd, bool *kernel_half)
{
    if (!fake_is_sock(fd))
        return NULL;
    fake_lock();
    struct lsock *s = socks[fd].s;
    if (s != NULL) {
        *kernel_half = socks[fd].kernel_half;
        lsock_hold(s);
    }
    fake_unlock();
    return s;
}

const struct ev_fd_lookup sockfd_lookup = {.is_sock = fake_is_sock, .hold = sockfd_hold};
