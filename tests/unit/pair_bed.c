/*
 * pair_bed.c - see pair_bed.h.
 */
#include "pair_bed.h"

#include <stdio.h>

#include "pair_conf.h"
#include "pair_pump.h"
#include "stack/stack.h"

int pair_bed_open(struct pair_bed *bed, const char *extra_a, const char *extra_b)
{
    char err[512];
    if (pair_conf(&bed->ca, "198.18.0.2", "198.18.0.1", extra_a) != 0 ||
        pair_conf(&bed->cb, "198.18.0.1", "198.18.0.2", extra_b) != 0) {
        printf("# a config of the pair bed does not parse (the parser's report above)\n");
        return -1;
    }
    bed->addr_a = bed->ca.host_addr;
    bed->addr_b = bed->cb.host_addr;
    if (pair_open_ports(&bed->ca, &bed->cb, &bed->a, &bed->b, &bed->na, &bed->nb, err, sizeof(err)) != 0) {
        printf("# %s\n", err);
        return -1;
    }
    stack_mac(bed->a, bed->mac_a);
    stack_mac(bed->b, bed->mac_b);
    return 0;
}

void pair_bed_close(struct pair_bed *bed)
{
    pair_pump(bed->a, bed->b, 50);
    stack_close(bed->a);
    stack_close(bed->b);
    lstack_conf_free(&bed->ca);
    lstack_conf_free(&bed->cb);
}
