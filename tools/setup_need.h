/*
 * setup_need.h - what a process needs from the host before it starts: 2 MiB
 * hugepages and, for file-backed memory, a hugetlbfs mount. Pure: EAL
 * arguments and a pool size in, a need out; no I/O. lstack-setup (the
 * set-up unit's helper) applies it.
 *
 * The estimate, when the arguments give no amount: the mbufs of the pool(s)
 * at SETUP_MBUF_BYTES each, plus SETUP_EAL_MB for EAL, the port and its
 * rings, rounded up to whole pages. An amount given with -m or --socket-mem
 * (their sum) is taken when it is larger: DPDK reserves it at start.
 */
#ifndef LSTACK_SETUP_NEED_H
#define LSTACK_SETUP_NEED_H

#include <stdbool.h>
#include <stddef.h>

#define SETUP_PAGE_MB 2
/* One mbuf in its pool: the 128-byte rte_mbuf, up to 128 bytes of private
 * area, RTE_MBUF_DEFAULT_BUF_SIZE (2176) and the mempool's per-object
 * header, rounded up. */
#define SETUP_MBUF_BYTES 2560ULL
/* EAL's own memory, the port's memzones and descriptor rings. */
#define SETUP_EAL_MB 64ULL
#define SETUP_DIR_MAX 256

struct setup_need {
    unsigned long long pages;       /* 2 MiB hugepages; 0: none (--no-huge, a secondary) */
    unsigned long long estimate_mb; /* mbufs and EAL, as estimated */
    unsigned long long explicit_mb; /* -m / --socket-mem, 0 if not given */
    bool needs_mount;               /* file-backed hugepage memory: a hugetlbfs mount */
    char huge_dir[SETUP_DIR_MAX];   /* --huge-dir, "" if not given */
};

/* The need of a process started with the EAL arguments argv[1..argc)
 * (argv[0]: the program) whose pools hold mbufs mbufs in all. in_memory:
 * the process adds --in-memory unless the arguments ask for files (lstack's
 * rule, nic/eal_args.c), so it needs no mount. Returns 0, or -1 with a
 * reason in err (a bad -m or --socket-mem value). */
int setup_need(int argc, char *const *argv, unsigned long long mbufs, bool in_memory, struct setup_need *out,
               char *err, size_t errlen);

#endif
