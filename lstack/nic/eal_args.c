/*
 * eal_args.c - which EAL memory options lstack adds to dpdk_args (by
 * default --in-memory --single-file-segments: one memfd per segment list,
 * no file left behind); nic/eal.c applies the rule and reports it.
 *
 * A direct-port lstack has no secondary processes, so the shared state that
 * file-backed memory allows is never used there.
 * Design: docs/design.md#default-eal-memory-options-single-file-segments
 */
#include <stdbool.h>
#include <string.h>

#include "nic/eal_args.h"

/*
 * Owns the rule; nic/eal.c applies it and reports what it added. DPDK 22.11
 * holds an fd per hugepage it maps unless it is told otherwise, and each of
 * those counts against the host's fd limit (redis sizes maxclients from that
 * limit without knowing about them). The rule, first match wins:
 *   --no-huge                 nothing (anonymous memory, no hugepage fd);
 *   --huge-unlink[=...]       nothing: hugepage files, as asked (one fd per
 *                             page: DPDK refuses --single-file-segments
 *                             together with --huge-unlink);
 *   --legacy-mem              --huge-unlink, unless --in-memory or
 *                             --single-file-segments is there (EAL then
 *                             judges the combination itself);
 *   anything else             whichever of --in-memory and
 *                             --single-file-segments is missing: memory in
 *                             one memfd per segment list (one fd for 2 MiB
 *                             pages on one NUMA node), no file anywhere,
 *                             nothing left behind even after kill -9.
 */

static bool has(int argc, char *const *argv, const char *opt)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], opt) == 0)
            return true;
    return false;
}

/* --huge-unlink, or --huge-unlink=MODE. */
static bool has_huge_unlink(int argc, char *const *argv)
{
    static const char opt[] = "--huge-unlink";
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], opt, sizeof(opt) - 1) == 0 &&
            (argv[i][sizeof(opt) - 1] == '\0' || argv[i][sizeof(opt) - 1] == '='))
            return true;
    return false;
}

bool eal_args_secondary(int argc, char *const *argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--proc-type=secondary") == 0)
            return true;
        if (strcmp(argv[i], "--proc-type") == 0 && i + 1 < argc && strcmp(argv[i + 1], "secondary") == 0)
            return true;
    }
    return false;
}

int eal_args_memory(int argc, char *const *argv, const char *added[EAL_ARGS_MAX_ADDED])
{
    if (eal_args_secondary(argc, argv))
        return 0;
    bool in_memory = has(argc, argv, "--in-memory");
    bool single = has(argc, argv, "--single-file-segments");
    int n = 0;
    if (has(argc, argv, "--no-huge") || has_huge_unlink(argc, argv))
        return 0;
    if (has(argc, argv, "--legacy-mem")) {
        if (!in_memory && !single)
            added[n++] = "--huge-unlink";
        return n;
    }
    if (!in_memory)
        added[n++] = "--in-memory";
    if (!single)
        added[n++] = "--single-file-segments";
    return n;
}
