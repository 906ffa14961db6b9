/*
 * ltran_eal.c - ltran's EAL: a primary process that lets lstack processes
 * attach as secondaries, and leaves nothing behind when it stops.
 *
 * Owns: the options ltran adds (--proc-type=primary, --file-prefix,
 * --single-file-segments: one hugepage file per segment list,
 * --base-virtaddr unless given: see LTRAN_BASE_VIRTADDR) and the
 * removal of the run directory (/var/run/dpdk/<prefix>) and of the
 * hugepage files <hugetlbfs mount>/<prefix>map_* at exit.
 * Design: docs/design.md#ltrans-eal-memory-is-file-backed
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <mntent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "ltran.h"

/* Where ltran's hugepage memory is mapped, so that each client maps it at
 * the same address: far from where a process's libraries, heap and stacks
 * go (near 0x7f.. and 0x55..), above AddressSanitizer's shadow (which ends
 * below 0x100080000000: EAL's default, 0x100000000, lies inside it, so an
 * ASan-built ltran mapped its memory among the libraries and clients could
 * not follow: "Cannot get a virtual area at requested address"), and clear
 * of the sanitizers' allocator space (0x600000000000..0x640000000000). */
#define LTRAN_BASE_VIRTADDR "0x300000000000"

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
    rmdir(dir);
}

/* Unlink <dir>/<prefix>map_* in every hugetlbfs mount. */
static void remove_hugepage_files(const char *prefix)
{
    FILE *m = setmntent("/proc/mounts", "r");
    if (m == NULL)
        return;
    char want[64];
    snprintf(want, sizeof(want), "%smap_", prefix);
    struct mntent *e;
    while ((e = getmntent(m)) != NULL) {
        if (strcmp(e->mnt_type, "hugetlbfs") != 0)
            continue;
        DIR *d = opendir(e->mnt_dir);
        if (d == NULL)
            continue;
        struct dirent *f;
        while ((f = readdir(d)) != NULL)
            if (strncmp(f->d_name, want, strlen(want)) == 0)
                unlinkat(dirfd(d), f->d_name, 0);
        closedir(d);
    }
    endmntent(m);
}

int ltran_eal_init(const struct ltran_conf *c, char *err, size_t errlen)
{
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "--file-prefix=%s", c->file_prefix);
    char *argv[LTRAN_MAX_EAL_ARGS + 6];
    int n = 0;
    argv[n++] = "ltran";
    for (int i = 0; i < c->argc; i++)
        argv[n++] = c->args[i];
    argv[n++] = "--proc-type=primary";
    argv[n++] = prefix;
    bool single = false, base = false;
    for (int i = 0; i < c->argc; i++) {
        single |= strcmp(c->args[i], "--single-file-segments") == 0;
        base |= strncmp(c->args[i], "--base-virtaddr", 15) == 0;
    }
    if (!single)
        argv[n++] = "--single-file-segments";
    if (!base)
        argv[n++] = "--base-virtaddr=" LTRAN_BASE_VIRTADDR;
    argv[n] = NULL;
    /* A run directory that exists already may be another ltran's: never
     * removed on failure (only one that this start made). */
    char rundir[300];
    snprintf(rundir, sizeof(rundir), "/var/run/dpdk/%s", c->file_prefix);
    bool existed = access(rundir, F_OK) == 0;
    if (rte_eal_init(n, argv) < 0) {
        int e = rte_errno;
        snprintf(err, errlen, "DPDK EAL init failed: %s (forward_kit_args; is another ltran running with "
                              "file_prefix \"%s\"? hugepages? a hugetlbfs mount, or --huge-dir?)", rte_strerror(e), c->file_prefix);
        if (!existed)
            remove_dir(rundir);
        return -1;
    }
    return 0;
}

void ltran_eal_cleanup(const char *file_prefix)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
    rte_eal_cleanup();
    remove_dir(dir);
    remove_hugepage_files(file_prefix);
}
