/*
 * pair_bed.h - the bed of the TCP unit tests that watch the wire or play a
 * peer of their own: stacks A (198.18.0.2) and B (198.18.0.1) back to back
 * on the memory port, each the other's gateway, with their ports, addresses
 * and MACs at hand. One set-up and one tear-down instead of each test's own.
 * Main thread only, like the stacks it opens.
 */
#ifndef LSTACK_TEST_PAIR_BED_H
#define LSTACK_TEST_PAIR_BED_H

#include <stddef.h>
#include <stdint.h>

#include "conf/conf.h"

struct stack;
struct nic;

struct pair_bed {
    struct lstack_conf ca, cb;
    struct stack *a, *b;
    struct nic *na, *nb;         /* owned by the stacks */
    uint32_t addr_a, addr_b;     /* network order */
    uint8_t mac_a[6], mac_b[6];
};

/* Parse both configs (extra_a / extra_b: further lstack.conf lines, may be
 * NULL) and open the stacks on a new port pair (not pumped yet, so that a
 * tap set next sees every frame).
 * Returns 0; or -1 after printing what failed as a TAP comment, after which
 * the test is expected to fail a check and end (a stack that did open is not
 * closed). */
int pair_bed_open(struct pair_bed *bed, const char *extra_a, const char *extra_b);

/* Pump 50 rounds (closes finish), close both stacks, free both configs. */
void pair_bed_close(struct pair_bed *bed);

#endif
