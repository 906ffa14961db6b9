/*
 * eal.c - bring DPDK's EAL up once per process, and down again.
 *
 * Owns: the "EAL is initialised" flag and the caller's CPU affinity and
 * signal mask around rte_eal_init (EAL pins the calling thread to its main
 * lcore and starts its own threads, which inherit the mask in force).
 * Rejected: initialising in a library constructor (Gazelle does; it breaks
 * `daemonize yes` because a forked child would share DPDK state).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <stdbool.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "nic/nic.h"

static int eal_state; /* 0 never, 1 up, 2 cleaned up */

/* Remove the files EAL leaves in its run-time directory, then the directory. */
static void remove_runtime_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
    rmdir(dir);
}

/* True unless the arguments already say how hugepage files are handled
 * (--in-memory, --no-huge, --huge-unlink[=...]). lstack has no secondary
 * processes, so by default hugepage files are unlinked as soon as they are
 * mapped: none is left behind, even after kill -9. */
static bool needs_huge_unlink(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--in-memory") == 0 || strcmp(argv[i], "--no-huge") == 0 ||
            strncmp(argv[i], "--huge-unlink", 13) == 0)
            return false;
    }
    return true;
}

int nic_eal_init(int argc, char **argv, char *err, size_t errlen)
{
    if (eal_state != 0) {
        snprintf(err, errlen, "DPDK EAL can be initialised only once per process");
        errno = EALREADY;
        return -1;
    }
    cpu_set_t cpus;
    sigset_t mask;
    int have_cpus = sched_getaffinity(0, sizeof(cpus), &cpus) == 0;
    pthread_sigmask(SIG_SETMASK, NULL, &mask);

    /* rte_eal_init may permute argv (getopt): give it a copy. */
    char *args[argc + 2];
    memcpy(args, argv, sizeof(char *) * (size_t)argc);
    int n = argc;
    if (needs_huge_unlink(argc, argv))
        args[n++] = (char *)"--huge-unlink";
    args[n] = NULL;
    int rc = rte_eal_init(n, args);
    int saved = rte_errno;

    pthread_sigmask(SIG_SETMASK, &mask, NULL);
    if (have_cpus)
        sched_setaffinity(0, sizeof(cpus), &cpus);

    if (rc < 0) {
        eal_state = 2; /* EAL refuses a second attempt */
        const char *dir = rte_eal_get_runtime_dir();
        if (dir != NULL && dir[0] != '\0')
            remove_runtime_dir(dir); /* created before the failure */
        snprintf(err, errlen, "DPDK EAL init failed: %s (check dpdk_args and hugepages)",
                 rte_strerror(saved));
        errno = saved > 0 && saved < 4096 ? saved : EINVAL;
        return -1;
    }
    eal_state = 1;
    return 0;
}

void nic_eal_cleanup(void)
{
    if (eal_state != 1)
        return;
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
    rte_eal_cleanup();
    remove_runtime_dir(dir);
    eal_state = 2;
}
