/*
 * test_fdtable_lsan.c - LeakSanitizer sees what the fd table holds: the
 * object of an owned fd (a stack socket, an epoll instance) is referenced
 * from the table only, an anonymous mapping LSan does not scan unless it is
 * registered as a root region. Without that, a process that exits with an
 * epoll fd open (redis on SHUTDOWN) was reported as leaking its lepoll.
 *
 * Meaningful in a sanitizer build (meson -Db_sanitize=address,...); any
 * other build skips it (TAP plan 1..0).
 */
#include <stdlib.h>
#include <string.h>

#include "common/sanitizer.h"
#include "posix/fd_ops.h"
#include "posix/fdtable.h"
#include "tap.h"

#if LSTACK_ASAN

static const struct fd_ops probe_ops = {.kind = "lsan-probe"};

/* Record fd as owned with a fresh object; no other copy of the pointer
 * survives the call (not inline: its frame is gone when LSan scans). */
__attribute__((noinline)) static int own_fd_with_object(int fd)
{
    char *obj = malloc(64);
    if (obj == NULL)
        return -1;
    memset(obj, 0x5a, 64);
    return fdt_set(fd, &probe_ops, obj);
}

int main(void)
{
    const int fd = 1000;
    check(own_fd_with_object(fd) == 0, "fd 1000 recorded as owned, with a heap object");
    int leaks = __lsan_do_recoverable_leak_check();
    check(leaks == 0, "the object held by the fd table only is not reported as a leak");
    if (leaks != 0)
        printf("# LeakSanitizer reported it (see stderr): the fd table is not a root region\n");
    struct fd_entry *e = fdt_get(fd);
    if (e != NULL) {
        free(e->obj);
        fdt_clear(fd);
    }
    return tap_done();
}
#else
int main(void)
{
    printf("1..0 # SKIP not a LeakSanitizer build\n");
    return 0;
}
#endif
