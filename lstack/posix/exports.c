/*
 * exports.c - the symbols liblstack.so exports: one per line of calls.def,
 * generated here. Everything else in the library is hidden
 * (-fvisibility=hidden), and a test checks the exported set equals the list.
 * Variadic calls take their one optional word (an int or a pointer; fcntl
 * and ioctl never take more) as a long.
 */
#include <stdarg.h>

#include "posix/calls.h"

#define LSTACK_EXPORT __attribute__((visibility("default")))

#define LSTACK_CALL(ret, name, params, args)                                                       \
    LSTACK_EXPORT ret name params                                                                  \
    {                                                                                              \
        return lstack_##name args;                                                                 \
    }
#define LSTACK_CALL_VA(ret, name, ...)
#include "common/calls.def"
#undef LSTACK_CALL
#undef LSTACK_CALL_VA

/* The variadic three by hand: their third argument is optional. */
static long va_word(va_list ap)
{
    return va_arg(ap, long);
}

LSTACK_EXPORT int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    long arg = va_word(ap);
    va_end(ap);
    return lstack_fcntl(fd, cmd, arg);
}

LSTACK_EXPORT int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    long arg = va_word(ap);
    va_end(ap);
    return lstack_fcntl64(fd, cmd, arg);
}

LSTACK_EXPORT int ioctl(int fd, unsigned long req, ...)
{
    va_list ap;
    va_start(ap, req);
    long arg = va_word(ap);
    va_end(ap);
    return lstack_ioctl(fd, req, arg);
}
