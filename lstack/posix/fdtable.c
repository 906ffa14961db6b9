/*
 * fdtable.c - the fd table (see fdtable.h): one entry per fd number up to
 * the hard RLIMIT_NOFILE, in an anonymous mapping, so that a lookup on
 * every read and write is a load. An fd the table does not know is the
 * kernel's. Any thread; entries change under the callers' rules.
 * Design: docs/design.md#the-fd-table-is-a-flat-array-up-to-the-hard-limit
 */
#include "posix/fdtable.h"

#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "common/futex_lock.h"
#include "common/sanitizer.h"

#define FDT_MAX (1 << 20) /* a hard limit above this is capped: 16 MB of address space */

static struct fd_entry *fdt;
static int fdt_size;
static pthread_once_t fdt_once = PTHREAD_ONCE_INIT;

static void fdt_alloc(void)
{
    struct rlimit rl;
    long n = 65536;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && rl.rlim_max > (rlim_t)n)
        n = (long)rl.rlim_max;
    if (n > FDT_MAX)
        n = FDT_MAX;
    void *p = mmap(NULL, (size_t)n * sizeof(struct fd_entry), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return;
    /* The objects of owned fds (sockets, epoll instances) are referenced
     * from here only: LeakSanitizer must scan the table, which is no heap. */
    LSTACK_LSAN_ROOT(p, (size_t)n * sizeof(struct fd_entry));
    fdt = p;
    fdt_size = (int)n;
}

struct fd_entry *fdt_get(int fd)
{
    if (fd < 0 || fd >= fdt_size)
        return NULL;
    struct fd_entry *e = &fdt[fd];
    return __atomic_load_n(&e->ops, __ATOMIC_ACQUIRE) != NULL ? e : NULL;
}

int fdt_set(int fd, const struct fd_ops *ops, void *obj)
{
    pthread_once(&fdt_once, fdt_alloc);
    if (fd < 0 || fd >= fdt_size) {
        errno = EMFILE;
        return -1;
    }
    fdt[fd].obj = obj;
    __atomic_store_n(&fdt[fd].ops, ops, __ATOMIC_RELEASE);
    return 0;
}

void fdt_clear(int fd)
{
    if (fd < 0 || fd >= fdt_size)
        return;
    __atomic_store_n(&fdt[fd].ops, NULL, __ATOMIC_RELEASE);
    fdt[fd].obj = NULL;
}

static struct futex_lock fdt_mu;

void fdt_lock(void)
{
    futex_lock(&fdt_mu);
}

void fdt_unlock(void)
{
    futex_unlock(&fdt_mu);
}

int fdt_next(int from)
{
    for (int fd = from < 0 ? 0 : from; fd < fdt_size; fd++)
        if (fdt[fd].ops != NULL)
            return fd;
    return -1;
}
