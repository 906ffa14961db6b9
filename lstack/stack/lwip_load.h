/*
 * lwip_load.h - a private copy of liblwip per stack.
 *
 * lwIP keeps all its state in globals, so two stacks in one process need two
 * copies of the library. Each stack copies liblstack_lwip.so (lstack's own
 * lwIP build, lstack/stack/lwip/) into a memfd and
 * dlopens it RTLD_LOCAL: the copies share no symbol and no state. lstack
 * never links lwIP, so no copy binds to a global one.
 *
 * Design: docs/design.md#one-lwip-copy-per-stack-loaded-with-dlopen
 */
#ifndef LSTACK_LWIP_LOAD_H
#define LSTACK_LWIP_LOAD_H

#include <stddef.h>
#include <sys/types.h>

#include "lwip/etharp.h"
#include "lwip/ip4.h" /* ip4_input: unicast IPv4 frames, and datagrams another stack reassembled */
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/tcp.h" /* the raw TCP API calls in lwip_api.def */
#include "lwip/timeouts.h"
#include "port/lwip_port.h"

struct lwip_api {
    void *handle;
    int fd; /* the memfd, open as long as the copy is loaded (see lwip_load.c) */
#define LWIP_FN(ret, name, params) ret(*name) params;
#include "stack/lwip_api.def"
#undef LWIP_FN
};

/* Load a private copy of the lwIP library at path (NULL: $LSTACK_LWIP_LIB,
 * else liblstack_lwip.so along the library search path of the object this
 * code was linked into: its RUNPATH, $ORIGIN/lstack when installed) and resolve every call in lwip_api.def into *api.
 * tag names the copy (it shows in /proc/PID/maps as memfd:tag).
 * Returns 0, or -1 with a reason in err (errno preserved from the failing
 * call where there is one). Any thread; not re-entrant for the same api. */
int lwip_load(struct lwip_api *api, const char *path, const char *tag, char *err, size_t errlen);

/* Unload the copy. Every lwIP object of the stack must be gone. */
void lwip_unload(struct lwip_api *api);

#endif
