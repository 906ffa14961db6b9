/*
 * tap.h - the TAP output of the unit tests (meson's protocol 'tap'): one
 * "ok N - what" or "not ok N - what" line per check, the plan at the end.
 * Header-only; each test executable includes it from one file.
 */
#ifndef LSTACK_TEST_TAP_H
#define LSTACK_TEST_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_failures, tap_count;

/* One check: cond true passes. name says what behaviour it asserts. */
static inline void check(int cond, const char *name)
{
    tap_count++;
    printf("%s %d - %s\n", cond ? "ok" : "not ok", tap_count, name);
    if (!cond)
        tap_failures++;
}

/* A check whose name is formatted, so that it says what it saw. */
static inline void checkf(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void checkf(int cond, const char *fmt, ...)
{
    char name[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof(name), fmt, ap);
    va_end(ap);
    check(cond, name);
}

/* Print the plan and a summary; main's exit status (0: all passed). */
static inline int tap_done(void)
{
    printf("1..%d\n", tap_count);
    printf("# %d passed, %d failed\n", tap_count - tap_failures, tap_failures);
    return tap_failures != 0;
}

#endif
