/*
 * sanitizer.h - what lstack tells AddressSanitizer, LeakSanitizer and
 * ThreadSanitizer about memory they cannot understand on their own;
 * nothing in other builds.
 *
 * LSTACK_ASAN is 1 in an ASan build (gcc -fsanitize=address defines
 * __SANITIZE_ADDRESS__; clang says so through __has_feature), else 0.
 * Design: docs/design.md#sanitizer-builds-are-detected-by-the-compiler
 */
#ifndef LSTACK_SANITIZER_H
#define LSTACK_SANITIZER_H

#if defined(__SANITIZE_ADDRESS__)
#define LSTACK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LSTACK_ASAN 1
#endif
#endif
#ifndef LSTACK_ASAN
#define LSTACK_ASAN 0
#endif

#if LSTACK_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/lsan_interface.h>

/*
 *  - LSTACK_POISON / LSTACK_UNPOISON (ASan): bytes of a block lstack
 *    recycles itself that nobody may touch (a memory-port frame past its
 *    length or back in the spare list, a free block of lwIP's arena), so that
 *    an access is reported like one to freed heap memory;
 *  - LSTACK_LSAN_ROOT (LSan): memory lstack maps itself (the fd table, lwIP's
 *    arena) that holds the only pointers to heap objects: LSan scans heap,
 *    globals, stacks and TLS, not anonymous mappings, and would report those
 *    objects as leaked.
 */
#define LSTACK_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define LSTACK_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#define LSTACK_LSAN_ROOT(p, n) __lsan_register_root_region((p), (n))
#else
#define LSTACK_POISON(p, n) ((void)(p), (void)(n))
#define LSTACK_UNPOISON(p, n) ((void)(p), (void)(n))
#define LSTACK_LSAN_ROOT(p, n) ((void)(p), (void)(n))
#endif

#if defined(__SANITIZE_THREAD__)
#define LSTACK_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LSTACK_TSAN 1
#endif
#endif
#ifndef LSTACK_TSAN
#define LSTACK_TSAN 0
#endif

/*
 *  - LSTACK_TSAN_RELEASE / LSTACK_TSAN_ACQUIRE (TSan): the hand-off of
 *    memory through a lock-free structure TSan does not see into (DPDK's
 *    rte_ring, whose header code is kept out of the instrumentation with
 *    LSTACK_NO_TSAN): what the producer wrote before the release is the
 *    consumer's after the acquire on the same address.
 */
#if LSTACK_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define LSTACK_TSAN_ACQUIRE(p) __tsan_acquire((void *)(p))
#define LSTACK_TSAN_RELEASE(p) __tsan_release((void *)(p))
#define LSTACK_NO_TSAN __attribute__((no_sanitize_thread))
#else
#define LSTACK_TSAN_ACQUIRE(p) ((void)(p))
#define LSTACK_TSAN_RELEASE(p) ((void)(p))
#define LSTACK_NO_TSAN
#endif

#endif
