/*
 * ctl_stack_fds.c - count the fds the stack holds, for `stackctl show stats`
 * (fds_stack, fds_hugepage; see ctl_stack_fds.h for the threads).
 *
 * Limits: an fd some other thread of the application opened during the
 * stack's start-up counts as the stack's; an application that maps
 * hugetlbfs itself has its fds counted too.
 * Design: docs/design.md#the-fd-census-reads-procselffd
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "ctl/ctl_stack_fds.h"

/*
 * Why it matters: every fd the stack holds comes out of the fd limit the
 * application sizes itself from (redis: maxclients = limit - 32), so a user
 * needs to see how many there are. An fd is the stack's when, at request
 * time, /proc/self/fd shows it as:
 *  1. hugepage memory: a path on hugetlbfs (fstatfs), which covers DPDK's
 *     memfds and hugepage files however many appear later;
 *  2. "/memfd:lstack-...": lstack's own memfds (the lwIP copies);
 *  3. one of the fds that appeared while the host started the stack (the
 *     census, taken around EAL and port start-up: DPDK's interrupt pipe,
 *     epoll and timerfd, its telemetry socket, the port's af_packet or
 *     af_xdp socket and BPF objects, the syslog socket), while the same fd
 *     number still shows the same thing (a closed and reused number is the
 *     application's again);
 *  4. one of the control server's own fds (passed in by the caller).
 * Cost: reading /proc/self/fd and one readlinkat per fd of the process
 * (plus an fstatfs for paths), on the control thread only, never under the
 * stack lock: 2-5 us per fd, 40-100 ms at 20,000 fds on a busy 2-core
 * machine (an fstat per fd instead of readlinkat saves a third, and loses
 * the names).
 */

/* Call fn(ctx, dfd, fd, name) for every fd of the process but the
 * directory's own. Stops early when fn returns non-zero and returns that;
 * else 0, or -errno if /proc/self/fd cannot be read. */
static int each_fd(int (*fn)(void *ctx, int dfd, int fd, const char *name), void *ctx)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -errno;
    int dfd = dirfd(d), rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        int fd = atoi(e->d_name);
        if (fd != dfd)
            rc = fn(ctx, dfd, fd, e->d_name);
    }
    closedir(d);
    return rc;
}

/* What fd is, into what[CTL_FD_WHAT]. false if it is gone. */
static bool fd_what(int dfd, const char *name, char *what)
{
    ssize_t n = readlinkat(dfd, name, what, CTL_FD_WHAT - 1);
    if (n < 0)
        return false;
    what[n] = '\0';
    return true;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int cmp_mark(const void *a, const void *b)
{
    return cmp_int(&((const struct ctl_fd_mark *)a)->fd, &((const struct ctl_fd_mark *)b)->fd);
}

/* ---- census ---- */

struct grow {
    void *p;
    size_t n, cap, size;
};

/* Room for one more element; NULL if out of memory. */
static void *grow_one(struct grow *g)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 64;
        void *p = realloc(g->p, cap * g->size);
        if (p == NULL)
            return NULL;
        g->p = p;
        g->cap = cap;
    }
    return (char *)g->p + g->size * g->n++;
}

static int note_before(void *ctx, int dfd, int fd, const char *name)
{
    (void)dfd;
    (void)name;
    int *slot = grow_one(ctx);
    if (slot == NULL)
        return -ENOMEM;
    *slot = fd;
    return 0;
}

int ctl_census_begin(struct ctl_fd_census *c)
{
    ctl_census_free(c);
    struct grow g = {.size = sizeof(int)};
    int rc = each_fd(note_before, &g);
    if (rc != 0) {
        free(g.p);
        return rc;
    }
    qsort(g.p, g.n, sizeof(int), cmp_int);
    c->before = g.p;
    c->nbefore = g.n;
    return 0;
}

struct end_ctx {
    const struct ctl_fd_census *c;
    struct grow marks;
};

static int note_new(void *arg, int dfd, int fd, const char *name)
{
    struct end_ctx *x = arg;
    if (x->c->nbefore > 0 && bsearch(&fd, x->c->before, x->c->nbefore, sizeof(int), cmp_int) != NULL)
        return 0;
    char what[CTL_FD_WHAT];
    if (!fd_what(dfd, name, what))
        return 0;
    struct ctl_fd_mark *m = grow_one(&x->marks);
    if (m == NULL)
        return -ENOMEM;
    m->fd = fd;
    memcpy(m->what, what, sizeof(what));
    return 0;
}

int ctl_census_end(struct ctl_fd_census *c)
{
    if (c->before == NULL)
        return -EINVAL;
    struct end_ctx x = {.c = c, .marks = {.size = sizeof(struct ctl_fd_mark)}};
    int rc = each_fd(note_new, &x);
    free(c->before);
    c->before = NULL;
    c->nbefore = 0;
    if (rc != 0) {
        free(x.marks.p);
        return rc;
    }
    qsort(x.marks.p, x.marks.n, sizeof(struct ctl_fd_mark), cmp_mark);
    c->marks = x.marks.p;
    c->nmarks = x.marks.n;
    return 0;
}

void ctl_census_free(struct ctl_fd_census *c)
{
    free(c->before);
    free(c->marks);
    memset(c, 0, sizeof(*c));
}

/* ---- count ---- */

struct count_ctx {
    const struct ctl_fd_census *c;
    const int *own;
    size_t nown;
    struct ctl_stack_fd_count *out;
};

static bool on_hugetlbfs(int fd, const char *what)
{
    struct statfs sf;
    return what[0] == '/' && fstatfs(fd, &sf) == 0 && sf.f_type == (typeof(sf.f_type))HUGETLBFS_MAGIC;
}

static bool in_census(const struct ctl_fd_census *c, int fd, const char *what)
{
    if (c == NULL || c->nmarks == 0)
        return false;
    struct ctl_fd_mark key = {.fd = fd};
    const struct ctl_fd_mark *m = bsearch(&key, c->marks, c->nmarks, sizeof(key), cmp_mark);
    return m != NULL && strcmp(m->what, what) == 0;
}

static int count_one(void *arg, int dfd, int fd, const char *name)
{
    static const char lstack_memfd[] = "/memfd:lstack-";
    struct count_ctx *x = arg;
    char what[CTL_FD_WHAT];
    if (!fd_what(dfd, name, what))
        return 0;
    if (on_hugetlbfs(fd, what)) {
        x->out->hugepage++;
        x->out->stack++;
        return 0;
    }
    bool ours = strncmp(what, lstack_memfd, sizeof(lstack_memfd) - 1) == 0 || in_census(x->c, fd, what);
    for (size_t i = 0; !ours && i < x->nown; i++)
        ours = x->own[i] == fd;
    if (ours)
        x->out->stack++;
    return 0;
}

int ctl_stack_fds_count(const struct ctl_fd_census *c, const int *own, size_t nown, struct ctl_stack_fd_count *out)
{
    memset(out, 0, sizeof(*out));
    struct count_ctx x = {.c = c, .own = own, .nown = nown, .out = out};
    return each_fd(count_one, &x);
}
