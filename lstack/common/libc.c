/*
 * libc.c - resolve the real libc functions behind the interposed calls
 * (see libc.h). A constructor resolves them before main() and before any
 * constructor of the application; it does nothing else (no init, no I/O
 * unless a symbol is missing), so a process that is not bound pays one
 * dlsym per call in calls.def and nothing more.
 */
#include "common/libc.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct libc_calls libc;

static const struct {
    const char *name;
    size_t offset;
} libc_syms[] = {
#define LSTACK_CALL(ret, name, params, args) {#name, offsetof(struct libc_calls, name)},
#define LSTACK_CALL_VA(ret, name, ...) {#name, offsetof(struct libc_calls, name)},
#include "common/calls.def"
#undef LSTACK_CALL
#undef LSTACK_CALL_VA
};

/* Stand-in for a call libc does not have: fails with ENOSYS. Only its
 * address is stored, under the real call's type, and a caller passes at most
 * seven word-sized arguments, which this function ignores. */
static long missing_call(void)
{
    errno = ENOSYS;
    return -1;
}

int libc_resolve(void)
{
    int rc = 0;
    for (size_t i = 0; i < sizeof(libc_syms) / sizeof(libc_syms[0]); i++) {
        void *fn = dlsym(RTLD_NEXT, libc_syms[i].name);
        if (fn == NULL) {
            fprintf(stderr, "lstack: libc has no %s: calls to it fail with ENOSYS\n", libc_syms[i].name);
            long (*stub)(void) = missing_call;
            memcpy(&fn, &stub, sizeof(fn));
            rc = -1;
        }
        memcpy((char *)&libc + libc_syms[i].offset, &fn, sizeof(fn));
    }
    return rc;
}

__attribute__((constructor(101))) static void libc_init(void)
{
    libc_resolve();
}
