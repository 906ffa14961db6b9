/*
 * libc.h - the real libc functions behind every interposed call (the kernel
 * side of every layer: posix, event, ctl and runtime call the kernel through
 * it; it sits in common/ so that none of them depends on the POSIX layer for it).
 *
 * libc.<name> is the next definition of <name> after liblstack.so (dlsym
 * RTLD_NEXT), resolved once by a constructor before any other code of the
 * process runs. Variadic calls are resolved with a fixed third argument
 * (fcntl's and ioctl's third argument is one word: an int or a pointer).
 * Any thread.
 */
#ifndef LSTACK_LIBC_H
#define LSTACK_LIBC_H

#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

struct libc_calls {
#define LSTACK_CALL(ret, name, params, args) ret(*name) params;
#define LSTACK_CALL_VA(ret, name, ...) ret(*name)(__VA_ARGS__, ...);
#include "common/calls.def"
#undef LSTACK_CALL
#undef LSTACK_CALL_VA
};

extern struct libc_calls libc;

/* Resolve the table (idempotent; the constructor calls it). Returns 0, or -1
 * if a call could not be found (it is then left pointing at a stub that
 * fails with ENOSYS, and the reason goes to stderr). */
int libc_resolve(void);

#endif
