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
#include "posix/sock_fd.h"
#include "runtime/runtime.h"
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
bool fake_low_power;
bool fake_child;
unsigned long fake_polls;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct stack *stacks[4];
static unsigned nstacks;
static unsigned (*hook_fn)(void *);
static void *hook_arg;

void fake_rt_stacks(struct stack **s, unsigned n)
{
    nstacks = 0;
    for (unsigned i = 0; i < n && i < 4; i++)
        stacks[nstacks++] = s[i];
}

void fake_rt_hook(unsigned (*hook)(void *arg), void *arg)
{
    hook_fn = hook;
    hook_arg = arg;
}

void rt_lock(void)
{
    pthread_mutex_lock(&mu);
}

void rt_unlock(void)
{
    pthread_mutex_unlock(&mu);
}

bool rt_lock_contended(void)
{
    return false;
}

unsigned rt_poll(void)
{
    unsigned frames = 0;
    fake_polls++;
    for (unsigned i = 0; i < nstacks; i++)
        frames += stack_poll(stacks[i]);
    if (hook_fn != NULL)
        frames += hook_fn(hook_arg);
    return frames;
}

void rt_flush(void)
{
}

/* run-to-wakeup's sleepers: the event layer's unit tests run the polling
 * loop only. */
int rt_sleep_arm(void)
{
    return -ENOSYS;
}

void rt_sleep_disarm(void)
{
}

void rt_sleep_drain(int fd)
{
    (void)fd;
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

bool rt_can_wake(void)
{
    return fake_wake_fd >= 0;
}

int rt_sleep_begin(void)
{
    if (fake_wake_fd < 0)
        return -ENOTSUP;
    if (fake_wake_eagain)
        return -EAGAIN;
    __atomic_fetch_add(&fake_sleeps, 1, __ATOMIC_RELAXED);
    return fake_wake_fd;
}

void rt_sleep_end(void)
{
    __atomic_fetch_add(&fake_sleep_ends, 1, __ATOMIC_RELAXED);
    uint64_t v;
    if (read(fake_wake_fd, &v, sizeof(v)) == (ssize_t)sizeof(v) && fake_wake_nlat < FAKE_WAKE_LAT) {
        double written;
        __atomic_load(&fake_wake_written_ms, &written, __ATOMIC_ACQUIRE);
        fake_wake_lat_ms[fake_wake_nlat++] = mono_ms() - written;
    }
}

bool rt_low_power(void)
{
    return fake_low_power;
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
        socks[fd].s = s;
        socks[fd].kernel_half = kernel_half;
    }
}

void fake_sock_unmap(int fd)
{
    fake_sock_map(fd, NULL, false);
}

struct lsock *sockfd_lsock(int fd, bool *kernel_half)
{
    if (fd < 0 || fd >= FAKE_FDS || socks[fd].s == NULL)
        return NULL;
    if (kernel_half != NULL)
        *kernel_half = socks[fd].kernel_half;
    return socks[fd].s;
}
