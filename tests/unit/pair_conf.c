/*
 * pair_conf.c - see pair_conf.h.
 */
#include "pair_conf.h"

#include <stdio.h>

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
