/*
 * test_stack_pair.c - two stacks (two private lwIP copies) wired back to back
 * through the memory port: ARP both ways, buffers all come back, frames not
 * for a stack are dropped and counted. No DPDK, no root. TAP output.
 */
#include <stdio.h>
#include <string.h>

#include "conf/conf.h"
#include "nic/nic.h"
#include "mem_nic.h"
#include "stack/stack.h"
#include "pair_conf.h"

#include "tap.h"


static void poll_both(struct stack *a, struct stack *b, int rounds)
{
    for (int i = 0; i < rounds; i++) {
        stack_poll(a);
        stack_poll(b);
    }
}

int main(void)
{
    struct lstack_conf ca, cb;
    char err[512];
    if (pair_conf(&ca, "198.18.0.2", "198.18.0.1", NULL) != 0 || pair_conf(&cb, "198.18.0.1", "198.18.0.2", NULL) != 0) {
        printf("not ok 1 - configs parse\n1..1\n");
        return 1;
    }
    struct nic *na, *nb;
    check(nic_mem_pair(256, (uint16_t)stack_nic_priv_size(), 32, &na, &nb) == 0, "memory port pair opens");

    struct stack *a = NULL, *b = NULL;
    check(stack_open(&a, &ca, 0, na, err, sizeof(err)) == 0, "stack A opens on port 0");
    check(stack_open(&b, &cb, 1, nb, err, sizeof(err)) == 0, "stack B opens on port 1");
    if (a == NULL || b == NULL) {
        printf("# %s\n1..%d\n", err, tap_count);
        return 1;
    }

    poll_both(a, b, 10);
    uint8_t mac_a[6], mac_b[6], seen[6];
    stack_mac(a, mac_a);
    stack_mac(b, mac_b);
    check(stack_gateway_mac(a, seen) == 1 && memcmp(seen, mac_b, 6) == 0,
          "A resolved its gateway (B) to B's MAC");
    check(stack_gateway_mac(b, seen) == 1 && memcmp(seen, mac_a, 6) == 0,
          "B resolved its gateway (A) to A's MAC");

    poll_both(a, b, 10);
    struct stack_stats sa, sb;
    stack_get_stats(a, &sa);
    stack_get_stats(b, &sb);
    check(sa.nic.tx_packets > 0 && sb.nic.rx_packets > 0, "frames flowed from A to B");
    check(sa.nic.mbuf_free == sa.nic.mbuf_total && sb.nic.mbuf_free == sb.nic.mbuf_total,
          "every buffer is free again when idle");
    check(sa.drop[FRAME_NOT_OURS] + sa.drop[FRAME_MALFORMED] == 0,
          "nothing A received was dropped");

    stack_close(a);
    stack_close(b);
    lstack_conf_free(&ca);
    lstack_conf_free(&cb);
    return tap_done();
}
