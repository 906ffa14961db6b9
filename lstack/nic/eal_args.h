/*
 * eal_args.h - the memory options lstack adds to dpdk_args before
 * rte_eal_init (see eal_args.c for the rules and why).
 */
#ifndef LSTACK_EAL_ARGS_H
#define LSTACK_EAL_ARGS_H

/* At most this many options are added. */
#define EAL_ARGS_MAX_ADDED 2

/* Decide which EAL memory options to add to argv[1..argc) (argv[0] is a
 * program name and is not looked at). Stores pointers to constant strings
 * in added[0..n) and returns n (0..EAL_ARGS_MAX_ADDED). Options are matched
 * as written in full; values of other options are not parsed. Pure: no
 * DPDK, no allocation, any thread. */
int eal_args_memory(int argc, char *const *argv, const char *added[EAL_ARGS_MAX_ADDED]);

/* true if argv[1..argc) asks for a secondary process (--proc-type=secondary
 * or --proc-type secondary: use_ltran = 1). Pure. */
#include <stdbool.h>
bool eal_args_secondary(int argc, char *const *argv);

#endif
