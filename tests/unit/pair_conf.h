/*
 * pair_conf.h - the lstack.conf of one side of two stacks wired back to back
 * over the memory port (nic_mem_pair), shared by the unit tests that need a
 * TCP peer without DPDK: host and gateway are each other's address.
 */
#ifndef LSTACK_TEST_PAIR_CONF_H
#define LSTACK_TEST_PAIR_CONF_H

#include "conf/conf.h"

/* Parse a config for host (gateway gw) plus extra lines (may be NULL or "").
 * Returns 0, or -1 after printing the parser's report as a TAP comment. */
int pair_conf(struct lstack_conf *c, const char *host, const char *gw, const char *extra);

#endif
