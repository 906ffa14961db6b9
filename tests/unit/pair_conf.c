/*
 * pair_conf.c - see pair_conf.h.
 */
#include "pair_conf.h"

#include <stdio.h>

#include "nic/nic.h"
#include "mem_nic.h"
#include "stack/stack.h"

int pair_conf(struct lstack_conf *c, const char *host, const char *gw, const char *extra)
{
    char text[1024], err[1024];
    snprintf(text, sizeof(text),
             "dpdk_args = [\"--no-pci\"];\nhost_addr = \"%s\";\nmask_addr = \"255.255.255.0\";\n"
             "gateway_addr = \"%s\";\n%s\n",
             host, gw, extra != NULL ? extra : "");
    if (lstack_conf_parse(text, "pair.conf", c, err, sizeof(err)) != 0) {
        printf("# %s\n", err);
        return -1;
    }
    return 0;
}

int pair_open_ports(const struct lstack_conf *ca, const struct lstack_conf *cb, struct stack **a, struct stack **b,
                    struct nic **na, struct nic **nb, char *err, size_t errlen)
{
    if (nic_mem_pair(1024, (uint16_t)stack_nic_priv_size(), 32, na, nb) != 0) {
        snprintf(err, errlen, "memory port pair does not open");
        return -1;
    }
    if (stack_open(a, ca, 0, *na, err, errlen) != 0 || stack_open(b, cb, 1, *nb, err, errlen) != 0)
        return -1;
    return 0;
}

int pair_open(const struct lstack_conf *ca, const struct lstack_conf *cb, struct stack **a, struct stack **b,
              char *err, size_t errlen)
{
    struct nic *na, *nb;
    return pair_open_ports(ca, cb, a, b, &na, &nb, err, errlen);
}
