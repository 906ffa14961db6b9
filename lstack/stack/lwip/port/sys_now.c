/*
 * sys_now.c - lwIP's clock (sys_now, milliseconds) for lstack's build.
 *
 * lwIP asks for the time on every sys_check_timeouts, i.e. every poll
 * round: the answer is the copy's own TSC clock (common/tsc_clock.c,
 * compiled into the library: no system call per round; the design and the
 * rejected ones are there). The result never goes backwards.
 * Which thread: the stack's owner only.
 */
#include "common/tsc_clock.h"
#include "lwip/opt.h"
#include "lwip/sys.h"

static struct tsc_clock clock_of_copy; /* each copy of the library has its own */

u32_t sys_now(void)
{
    return (u32_t)(tsc_clock_ns(&clock_of_copy) / 1000000u);
}
