/*
 * dpdk_load.c - load the DPDK side (liblstack_dpdk.so) when the stack starts.
 *
 * liblstack.so does not link DPDK: every process under LD_PRELOAD would
 * otherwise load some fifty DPDK libraries and run their constructors, bound
 * or not. The DPDK side is $LSTACK_DPDK_LIB, else liblstack_dpdk.so found
 * the way the dynamic loader finds a library liblstack.so dlopens: along its
 * RUNPATH ($ORIGIN/lstack when installed, the build directory in a build
 * tree). It is loaded RTLD_LOCAL: its symbols never mix with the
 * application's.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime_priv.h"

#define DPDK_LIB_NAME "liblstack_dpdk.so"

int dpdk_load(struct dpdk_calls *d, char *err, size_t errlen)
{
    const char *env = getenv("LSTACK_DPDK_LIB");
    const char *path = env != NULL && env[0] != '\0' ? env : DPDK_LIB_NAME;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        snprintf(err, errlen, "cannot load the DPDK side %s: %s%s", path, dlerror(),
                 path == env ? "" : " (searched liblstack.so's RUNPATH; set LSTACK_DPDK_LIB)");
        return -1;
    }
    void *init = dlsym(h, "nic_eal_init");
    void *cleanup = dlsym(h, "nic_eal_cleanup");
    void *ex = dlsym(h, "nic_eal_exit");
    void *open = dlsym(h, "nic_dpdk_open");
    void *lopen = dlsym(h, "nic_ltran_open");
    void *appc = dlsym(h, "nic_app_cpus");
    void *qopen = dlsym(h, "nic_dpdk_open_queues");
    void *ho = dlsym(h, "nic_handover_api");
    if (init == NULL || cleanup == NULL || ex == NULL || open == NULL || lopen == NULL || appc == NULL ||
        qopen == NULL || ho == NULL) {
        snprintf(err, errlen,
                 "%s lacks nic_eal_init/nic_eal_cleanup/nic_eal_exit/nic_dpdk_open/nic_ltran_open/"
                 "nic_app_cpus/nic_dpdk_open_queues/nic_handover_api",
                 path);
        dlclose(h);
        return -1;
    }
    /* POSIX: dlsym results convert to function pointers of the real type. */
    memcpy(&d->eal_init, &init, sizeof(init));
    memcpy(&d->eal_cleanup, &cleanup, sizeof(cleanup));
    memcpy(&d->eal_exit, &ex, sizeof(ex));
    memcpy(&d->open, &open, sizeof(open));
    memcpy(&d->ltran_open, &lopen, sizeof(lopen));
    memcpy(&d->app_cpus, &appc, sizeof(appc));
    memcpy(&d->open_queues, &qopen, sizeof(qopen));
    d->handover = ho;
    return 0;
}
