/*
 * got_hook.h - redirect one imported function of one loaded shared object
 * (its GOT slot), leaving every other caller of that function alone.
 * DPDK side; no DPDK or lwIP type. Used by nic/quiesce.c.
 */
#ifndef LSTACK_NIC_GOT_HOOK_H
#define LSTACK_NIC_GOT_HOOK_H

#include <stddef.h>

/* In the first loaded object whose path contains object (e.g.
 * "librte_net_memif.so"), point the GOT slot of the imported function
 * symbol at replacement; *original receives what the slot held (the
 * function the object called until now). Restores the slot's page
 * protection (read-only under full RELRO). Any thread; not at the same time
 * as another got_hook call or a dlclose of that object.
 * Returns 0; -ENOENT (no such object, or it does not import symbol),
 * -ENOEXEC (its dynamic section is not what x86-64/AArch64 ELF says), or
 * the negative errno of mprotect. On error, err says which. */
int got_hook(const char *object, const char *symbol, void *replacement, void **original, char *err,
             size_t errlen);

#endif
