/*
 * mode_rtc.c - stack_thread_mode = "run-to-completion" (the default): the
 * application's threads run the stack. Whichever holds the context's lock
 * inside a wait polls the queue (event/wait.c's loop); nothing else starts
 * or stops. A call that queued frames that should leave now (connect,
 * shutdown, close) sends the tx batch, without a poll round: receiving is
 * for the waiting thread.
 */
#include "event/event.h"
#include "runtime/stack_ctx.h"
#include "stack/stack.h"

static int rtc_start(struct stack_ctx *c, const struct lstack_conf *conf, char *err, size_t errlen)
{
    (void)c;
    (void)conf;
    (void)err;
    (void)errlen;
    return 0;
}

static void rtc_stop(struct stack_ctx *c)
{
    (void)c;
}

static void rtc_flush(struct stack_ctx *c)
{
    stack_flush_tx(c->stack);
}

const struct stack_mode stack_mode_rtc = {
    .name = "run-to-completion",
    .wait = &ev_wait_polling,
    .start = rtc_start,
    .stop = rtc_stop,
    .flush = rtc_flush,
};
