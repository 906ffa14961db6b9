/*
 * pair_conf.h - the lstack.conf of one side of two stacks wired back to back
 * over the memory port (nic_mem_pair), shared by the unit tests that need a
 * TCP peer without DPDK: host and gateway are each other's address.
 */
#ifndef LSTACK_TEST_PAIR_CONF_H
#define LSTACK_TEST_PAIR_CONF_H

#include <stddef.h>

#include "conf/conf.h"

/* Parse a config for host (gateway gw) plus extra lines (may be NULL or "").
 * Returns 0, or -1 after printing the parser's report as a TAP comment. */
int pair_conf(struct lstack_conf *c, const char *host, const char *gw, const char *extra);

struct stack;

/* Open stack A (config ca, index 0) and stack B (cb, index 1) on a new
 * memory port pair of 1024 mbufs. Returns 0, or -1 with the reason in err
 * (a stack that did open is left in *a / *b for the caller to close). */
int pair_open(const struct lstack_conf *ca, const struct lstack_conf *cb, struct stack **a, struct stack **b,
              char *err, size_t errlen);

struct nic;

/* The same, and the two memory ports in *na / *nb (stack A's, stack B's)
 * for a test that watches the wire (nic_mem_set_tap) or plays a peer of
 * its own (nic_mem_inject). The stacks own the ports. */
int pair_open_ports(const struct lstack_conf *ca, const struct lstack_conf *cb, struct stack **a, struct stack **b,
                    struct nic **na, struct nic **nb, char *err, size_t errlen);

#endif
