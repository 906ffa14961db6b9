/*
 * sys_now.c - lwIP's clock (sys_now, milliseconds) for lstack's build: the
 * copy's own TSC clock (common/tsc_clock.h, compiled into this library),
 * read on every sys_check_timeouts, i.e. every poll round. Its measured
 * rate is also what the stack converts its poll-round timings with
 * (lstack_lwip_tsc_hz, lwip_port.h; stack/round_acct.h): one TSC rate per
 * copy, no second calibration.
 * Which thread: sys_now the stack's owner only; lstack_lwip_tsc_hz any.
 * Design: docs/design.md#clocks-come-from-the-tsc
 */
#include <stdint.h>

#include "lwip/opt.h"
#include "lwip/sys.h"

#include "common/tsc_clock.h"
#include "port/lwip_port.h"

static struct tsc_clock C;

u32_t sys_now(void)
{
    /* Milliseconds of a clock that never goes backwards, wrapping at 2^32
     * as lwIP expects. */
    return (u32_t)(tsc_clock_ns(&C) / 1000000u);
}

uint64_t lstack_lwip_tsc_hz(void)
{
    return tsc_clock_hz(&C);
}
