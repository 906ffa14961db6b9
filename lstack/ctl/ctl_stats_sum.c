/*
 * ctl_stats_sum.c - the "total" of several stacks' statistics (what each
 * field means when summed: ctl_stats_sum.h). Apart from ctl_cmds.c so that
 * a unit test can check the sum without a control socket.
 */
#include "ctl/ctl_stats_sum.h"

/* Each counter as its kind says (stack_stats.def). */
#define ADD_COUNT(t, x) ((t) += (x))
#define ADD_GAUGE(t, x) ((t) += (x))
#define ADD_PORT(t, x) ((t) = (x) > (t) ? (x) : (t))
#define ADD_LEVEL(t, x) ((t) = (x) > (t) ? (x) : (t))

void ctl_stats_sum(struct stack_stats *total, const struct stack_stats *x)
{
#define STACK_STAT(name, kind, help) ADD_##kind(total->name, x->name);
#define STACK_STAT_AT(name, field, kind, help) ADD_##kind(total->field, x->field);
#include "stack/stack_stats.def"
#undef STACK_STAT
#undef STACK_STAT_AT
}
