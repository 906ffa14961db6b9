/*
 * arch/cc.h - lwIP's platform header for lstack's own lwIP build (Linux,
 * x86-64 or any little- or big-endian 64-bit glibc target).
 *
 * Owns: byte order, the diagnostic and assert hooks, the random source.
 * lwIP's diagnostics go to the function the stack installed with
 * lstack_lwip_configure (lwip_port.h), so they reach lstack's log, never
 * stdout. A failed LWIP_ASSERT is an lwIP invariant broken (memory the stack
 * can no longer trust): it is logged with file and line, then the process
 * aborts, as any C library does on a broken invariant; asserts are compiled
 * in debug, sanitizer and fuzzing builds only (LWIP_NOASSERT otherwise,
 * lwip/meson.build says why). LWIP_ERROR (bad arguments) never asserts:
 * lwIP returns its error code, in every build.
 */
#ifndef LSTACK_LWIP_ARCH_CC_H
#define LSTACK_LWIP_ARCH_CC_H

/* glibc's <endian.h> defines BYTE_ORDER, LITTLE_ENDIAN and BIG_ENDIAN with
 * the values lwIP's arch.h expects. */
#include <endian.h>
#include <stdint.h>

/* htons and friends are libc's (lwIP's own would clash with <netinet/in.h>). */
#define LWIP_DONT_PROVIDE_BYTEORDER_FUNCTIONS 1

/* One instruction instead of lwIP's portable shifts. */
#define lwip_htons(x) ((u16_t)__builtin_bswap16((u16_t)(x)))
#define lwip_htonl(x) ((u32_t)__builtin_bswap32((u32_t)(x)))
#if BYTE_ORDER == BIG_ENDIAN
#undef lwip_htons
#undef lwip_htonl
#define lwip_htons(x) ((u16_t)(x))
#define lwip_htonl(x) ((u32_t)(x))
#endif

void lstack_lwip_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void lstack_lwip_assert_fail(const char *msg, const char *file, int line) __attribute__((noreturn));
uint32_t lstack_lwip_rand(void);

/* LWIP_PLATFORM_DIAG(x): x is a parenthesised printf argument list. */
#define LWIP_PLATFORM_DIAG(x) do { lstack_lwip_diag x; } while (0)
#define LWIP_PLATFORM_ASSERT(x) lstack_lwip_assert_fail((x), __FILE__, __LINE__)
#define LWIP_RAND() lstack_lwip_rand()

#endif
