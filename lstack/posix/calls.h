/*
 * calls.h - lstack_<name>: lstack's implementation of each interposed call
 * of calls.def. The exported <name> (posix/exports.c) calls it. Same
 * contract as the POSIX call. Defined in posix/socket_calls.c,
 * posix/io_calls.c, posix/fd_calls.c, posix/event_calls.c, runtime/fork.c.
 */
#ifndef LSTACK_CALLS_H
#define LSTACK_CALLS_H

#include "common/libc.h"

#define LSTACK_CALL(ret, name, params, args) ret lstack_##name params;
#define LSTACK_CALL_VA(ret, name, ...) ret lstack_##name(__VA_ARGS__, long arg);
#include "common/calls.def"
#undef LSTACK_CALL
#undef LSTACK_CALL_VA

#endif
