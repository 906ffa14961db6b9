/*
 * test_futex_lock.c - the stack lock's futex lock (common/futex_lock.h):
 * mutual exclusion under contention (4 threads, a non-atomic counter that
 * ends exact only if no two increments overlap), trylock on a held and a
 * free lock, and a waiter that sleeps in the kernel instead of spinning
 * (its thread CPU time stays far below the 200 ms it waited).
 */
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "common/futex_lock.h"
#include "tap.h"

enum { THREADS = 4, ROUNDS = 200000 };

static struct futex_lock lk = FUTEX_LOCK_INIT;
static volatile uint64_t counter;

static void *hammer(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        futex_lock(&lk);
        uint64_t v = counter; /* read, yield the chance to interleave, write */
        if ((i & 1023) == 0)
            sched_yield();
        counter = v + 1;
        futex_unlock(&lk);
    }
    return NULL;
}

static double thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double waiter_cpu_ms, waiter_wall_ms;

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *waiter(void *arg)
{
    (void)arg;
    double c0 = thread_cpu_ms(), w0 = mono_ms();
    futex_lock(&lk);
    waiter_cpu_ms = thread_cpu_ms() - c0;
    waiter_wall_ms = mono_ms() - w0;
    futex_unlock(&lk);
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, hammer, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    checkf(counter == (uint64_t)THREADS * ROUNDS, "4 threads x %d locked increments: counter %llu", ROUNDS,
           (unsigned long long)counter);
    check(lk.state == 0, "the lock is free after the last unlock");

    check(futex_trylock(&lk), "trylock takes a free lock");
    check(!futex_trylock(&lk), "trylock refuses a held lock");
    pthread_t w;
    pthread_create(&w, NULL, waiter, NULL);
    struct timespec d = {.tv_sec = 0, .tv_nsec = 200000000};
    nanosleep(&d, NULL);
    futex_unlock(&lk);
    pthread_join(w, NULL);
    checkf(waiter_wall_ms >= 150 && waiter_cpu_ms < 50,
           "a waiter sleeps until the unlock (waited %.0f ms, used %.1f ms of CPU)", waiter_wall_ms, waiter_cpu_ms);
    check(lk.state == 0, "the lock is free after the waiter's unlock");
    return tap_done();
}
