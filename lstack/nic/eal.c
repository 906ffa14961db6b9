/*
 * eal.c - bring DPDK's EAL up once per process, and down again.
 *
 * Owns: the "EAL is initialised" flag and the caller's CPU affinity and
 * signal mask around rte_eal_init (EAL pins the calling thread to its main
 * lcore and starts its own threads, which inherit the mask in force).
 * The memory options lstack adds to dpdk_args (few fds, no hugepage file
 * left behind) are chosen by eal_args.c and reported to the caller.
 * Design: docs/design.md#eal-starts-lazily-not-in-a-constructor
 * EAL is not cleaned up while a memif port's close, given up on after its
 * wait, is still queued on the interrupt thread (memif_port.c says why);
 * only the run-time directory goes then.
 */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "nic/eal_args.h"
#include "nic/nic.h"
#include "nic/nic_priv.h"

static int eal_state; /* 0 never, 1 up, 2 cleaned up */
static bool eal_private_mem; /* --in-memory or --no-huge: the kernel frees it all at exit */

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

/* Write the options of added[0..n) to out, space-separated ("" if none). */
static void describe_added(const char *const *added, int n, char *out, size_t outlen)
{
    size_t w = 0;
    out[0] = '\0';
    for (int i = 0; i < n && w < outlen; i++) {
        int k = snprintf(out + w, outlen - w, "%s%s", i > 0 ? " " : "", added[i]);
        if (k < 0)
            break;
        w += (size_t)k;
    }
}

int nic_eal_init(int argc, char **argv, char *added, size_t addedlen, char *err, size_t errlen)
{
    added[0] = '\0';
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
    const char *extra[EAL_ARGS_MAX_ADDED];
    int nextra = eal_args_memory(argc, argv, extra);
    char *args[argc + EAL_ARGS_MAX_ADDED + 1];
    memcpy(args, argv, sizeof(char *) * (size_t)argc);
    int n = argc;
    for (int i = 0; i < nextra; i++)
        args[n++] = (char *)extra[i]; /* rte_eal_init does not write the strings */
    args[n] = NULL;
    describe_added(extra, nextra, added, addedlen);
    eal_private_mem = false;
    for (int i = 0; i < n; i++)
        if (strcmp(args[i], "--in-memory") == 0 || strcmp(args[i], "--no-huge") == 0)
            eal_private_mem = true;
    int rc = rte_eal_init(n, args);
    int saved = rte_errno;

    pthread_sigmask(SIG_SETMASK, &mask, NULL);
    if (have_cpus)
        sched_setaffinity(0, sizeof(cpus), &cpus);

    if (rc < 0) {
        eal_state = 2; /* EAL refuses a second attempt */
        const char *dir = rte_eal_get_runtime_dir();
        if (dir != NULL && dir[0] != '\0' && !eal_args_secondary(argc, argv))
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
    bool primary = rte_eal_process_type() == RTE_PROC_PRIMARY;
    if (memif_port_shut_pending())
        fprintf(stderr, "lstack: warning: DPDK EAL left up: a memif port's close has not run on EAL's interrupt "
                        "thread yet, and rte_eal_cleanup would close it beside that thread\n");
    else
        rte_eal_cleanup();
    if (primary) /* a secondary's run directory is its primary's (ltran) */
        remove_runtime_dir(dir);
    eal_state = 2;
}

/* At process exit, rte_eal_cleanup is left out where it has nothing to give
 * back: DPDK 22.11's cleanup unmaps EAL's memory while its interrupt thread
 * keeps walking its interrupt sources, some of whose handles live in that
 * memory (seen: memif-race, SIGSEGV in rte_intr_fd_get on eal-intr-thread
 * under rte_eal_cleanup, about 1 run in 8). A primary with private memory
 * (--in-memory, --no-huge: what lstack uses on a direct port) has no file
 * another process could need, and the kernel frees its memory at exit; only
 * the run-time directory is removed. Secondaries (ltran's clients) and
 * primaries with shared files still clean up. */
void nic_eal_exit(void)
{
    if (eal_state != 1)
        return;
    if (!eal_private_mem || rte_eal_process_type() != RTE_PROC_PRIMARY) {
        nic_eal_cleanup();
        return;
    }
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
    remove_runtime_dir(dir);
    eal_state = 2;
}
