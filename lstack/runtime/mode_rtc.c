/*
 * mode_rtc.c - stack_thread_mode = "run-to-completion" (the default): the
 * application's threads run the stack. Whichever holds the context's lock
 * inside a wait polls the queue (event/wait.c's loop, through the loop's
 * poll); nothing else starts or stops. A call that queued frames that
 * should leave now (connect, shutdown, close) sends the tx batch, without a
 * poll round: receiving is for the waiting thread.
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

static unsigned rtc_poll(struct stack_loop *l)
{
    return sctx_poll(sctx_of(l));
}

static void rtc_flush(struct stack_loop *l)
{
    stack_flush_tx(sctx_of(l)->stack);
}

static const struct stack_loop_ops rtc_ops = {
    .lock = sctx_loop_lock,
    .unlock = sctx_loop_unlock,
    .contended = sctx_loop_contended,
    .poll = rtc_poll,
    .flush = rtc_flush,
    .wake_begin = sctx_wake_begin,
    .wake_end = sctx_wake_end,
    .wait = &ev_wait_polling,
};

const struct stack_mode stack_mode_rtc = {
    .name = "run-to-completion",
    .ops = &rtc_ops,
    .start = rtc_start,
    .stop = rtc_stop,
};
