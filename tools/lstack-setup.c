/*
 * lstack-setup - reserve the 2 MiB hugepages and mount the hugetlbfs that
 * lstack and ltran configurations need, before their processes start (the
 * ExecStart of lstack-setup.service, an ExecStartPre of ltran.service).
 *
 *   lstack-setup [-n] [-c LSTACK_CONF]... [-t LTRAN_CONF]...
 *
 * With neither -c nor -t: $LSTACK_CONF_PATH, else /etc/gazelle/lstack.conf.
 * Owns the host side effects: raising nr_hugepages (never lowering it) until
 * enough pages are free for every file given, and mounting hugetlbfs where a
 * file-backed configuration needs it. What each file needs is setup_need.c's
 * (pure); the files are read by lstack's and ltran's own parsers, so a file
 * this accepts is one the process accepts.
 *
 * Exit status: 0 done (or nothing to do); 1 a file is invalid, or the pages
 * or the mount could not be had (the reason on stderr); 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "conf/conf.h"
#include "ltran_conf.h"
#include "setup_need.h"

#define HP_DIR "/sys/kernel/mm/hugepages/hugepages-2048kB/"
#define MAX_FILES 16

static const char *prog = "lstack-setup";

static int usage(FILE *f, int status)
{
    fprintf(f,
            "usage: %s [-n] [-c LSTACK_CONF]... [-t LTRAN_CONF]...\n"
            "Reserve the 2 MiB hugepages and mount the hugetlbfs that the configurations need.\n"
            "  -c FILE  an lstack.conf (neither -c nor -t: $%s, else %s)\n"
            "  -t FILE  an ltran.conf\n"
            "  -n       say what is needed and what would be done; change nothing\n"
            "  -V       version\n",
            prog, LSTACK_CONF_ENV, LSTACK_CONF_DEFAULT_PATH);
    return status;
}

/* What the lstack.conf at path needs. Returns 0 or -1 (reported). */
static int lstack_need(const char *path, struct setup_need *need)
{
    static char err[8192];
    struct lstack_conf c;
    if (lstack_conf_load(path, &c, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        lstack_conf_free(&c);
        return -1;
    }
    char *argv[LSTACK_CONF_MAX_DPDK_ARGS + 1];
    argv[0] = (char *)prog;
    memcpy(argv + 1, c.dpdk_argv, sizeof(char *) * (size_t)c.dpdk_argc);
    int rc = 0;
    if (c.use_ltran) {
        memset(need, 0, sizeof(*need)); /* ltran's secondary: ltran owns the memory */
    } else {
        unsigned long long stacks =
            c.stack_thread_mode == LSTACK_MODE_RUN_TO_WAKEUP && c.num_cpus > 1 ? (unsigned long long)c.num_cpus : 1;
        rc = setup_need(c.dpdk_argc + 1, argv, stacks * c.tcp_conn_count * c.mbuf_count_per_conn, true, need, err,
                        sizeof(err));
        if (rc != 0)
            fprintf(stderr, "%s: %s: dpdk_args: %s\n", prog, path, err);
    }
    lstack_conf_free(&c);
    return rc;
}

/* What the ltran.conf at path needs. Returns 0 or -1 (reported). */
static int ltran_need(const char *path, struct setup_need *need)
{
    static char err[8192];
    static struct ltran_conf c;
    if (ltran_conf_load(path, &c, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
    }
    char *argv[LTRAN_MAX_EAL_ARGS + 1];
    argv[0] = (char *)prog;
    memcpy(argv + 1, c.args, sizeof(char *) * (size_t)c.argc);
    if (setup_need(c.argc + 1, argv, (unsigned long long)c.nb_mbufs, false, need, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: %s: forward_kit_args: %s\n", prog, path, err);
        return -1;
    }
    return 0;
}

static int read_ull(const char *file, unsigned long long *v)
{
    FILE *f = fopen(file, "r");
    int ok = f != NULL && fscanf(f, "%llu", v) == 1;
    if (f != NULL)
        fclose(f);
    return ok ? 0 : -1;
}

/* Raise nr_hugepages until need pages are free. Returns 0 or -1. */
static int reserve(unsigned long long need, bool dry)
{
    unsigned long long nr, free_pages;
    if (read_ull(HP_DIR "nr_hugepages", &nr) != 0 || read_ull(HP_DIR "free_hugepages", &free_pages) != 0) {
        fprintf(stderr, "%s: cannot read %s: no 2 MiB hugepage support in this kernel?\n", prog, HP_DIR);
        return -1;
    }
    if (free_pages >= need) {
        printf("%s: hugepages: %llu needed, %llu free of %llu: nothing to reserve\n", prog, need, free_pages, nr);
        return 0;
    }
    unsigned long long want = nr + (need - free_pages);
    if (dry) {
        printf("%s: hugepages: %llu needed, %llu free: would raise nr_hugepages %llu -> %llu\n", prog, need,
               free_pages, nr, want);
        return 0;
    }
    FILE *f = fopen(HP_DIR "nr_hugepages", "w");
    if (f == NULL || fprintf(f, "%llu\n", want) < 0 || fclose(f) != 0) {
        fprintf(stderr, "%s: cannot write %snr_hugepages: %s\n", prog, HP_DIR, strerror(errno));
        return -1;
    }
    unsigned long long got = 0;
    read_ull(HP_DIR "nr_hugepages", &got);
    printf("%s: hugepages: nr_hugepages %llu -> %llu (%llu needed)\n", prog, nr, got, need);
    if (got < want) {
        fprintf(stderr,
                "%s: only %llu of %llu hugepages could be reserved (memory short or fragmented): "
                "reserve them at boot (hugepages=%llu on the kernel command line)\n",
                prog, got, want, want);
        return -1;
    }
    return 0;
}

/* Is there a hugetlbfs mount at dir (dir NULL: anywhere)? */
static bool hugetlbfs_at(const char *dir)
{
    FILE *f = fopen("/proc/self/mounts", "r");
    char line[4096], mnt[2048], type[64];
    bool found = false;
    while (f != NULL && !found && fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "%*s %2047s %63s", mnt, type) == 2 && strcmp(type, "hugetlbfs") == 0)
            found = dir == NULL || strcmp(mnt, dir) == 0;
    if (f != NULL)
        fclose(f);
    return found;
}

/* mkdir -p dir (0755). */
static int make_dirs(const char *dir)
{
    char p[SETUP_DIR_MAX];
    snprintf(p, sizeof(p), "%s", dir);
    for (char *s = p + 1;; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            if (mkdir(p, 0755) != 0 && errno != EEXIST)
                return -1;
            *s = c;
            if (c == '\0')
                return 0;
        }
    }
}

static int mount_at(const char *dir, bool dry)
{
    if (hugetlbfs_at(dir)) {
        printf("%s: hugetlbfs already mounted on %s\n", prog, dir);
        return 0;
    }
    if (dry) {
        printf("%s: would mount hugetlbfs on %s\n", prog, dir);
        return 0;
    }
    if (dir[0] != '/' || make_dirs(dir) != 0 ||
        mount("hugetlbfs", dir, "hugetlbfs", MS_NOSUID | MS_NODEV, "pagesize=2M") != 0) {
        fprintf(stderr, "%s: cannot mount hugetlbfs on %s: %s\n", prog, dir,
                dir[0] != '/' ? "not an absolute path" : strerror(errno));
        return -1;
    }
    printf("%s: mounted hugetlbfs on %s\n", prog, dir);
    return 0;
}

static void print_need(const char *file, const struct setup_need *n)
{
    if (n->pages == 0) {
        printf("%s: %s: needs no hugepages (--no-huge, or ltran's secondary)\n", prog, file);
        return;
    }
    printf("%s: %s: needs %llu hugepages of 2 MiB (estimate %llu MiB", prog, file, n->pages, n->estimate_mb);
    if (n->explicit_mb > 0)
        printf(", -m/--socket-mem %llu MiB", n->explicit_mb);
    if (n->huge_dir[0] != '\0')
        printf(", --huge-dir %s", n->huge_dir);
    printf(")\n");
}

int main(int argc, char **argv)
{
    const char *files[MAX_FILES];
    bool is_ltran[MAX_FILES];
    int nfiles = 0;
    bool dry = false;
    int opt;
    while ((opt = getopt(argc, argv, "c:t:nVh")) != -1) {
        switch (opt) {
        case 'c':
        case 't':
            if (nfiles == MAX_FILES) {
                fprintf(stderr, "%s: at most %d files\n", prog, MAX_FILES);
                return 2;
            }
            is_ltran[nfiles] = opt == 't';
            files[nfiles++] = optarg;
            break;
        case 'n':
            dry = true;
            break;
        case 'V':
            printf("lstack-setup (lstack %s)\n", LSTACK_VERSION);
            return 0;
        case 'h':
            return usage(stdout, 0);
        default:
            return usage(stderr, 2);
        }
    }
    if (optind != argc)
        return usage(stderr, 2);
    if (nfiles == 0) {
        is_ltran[0] = false;
        files[nfiles++] = lstack_conf_path();
    }

    unsigned long long pages = 0;
    int rc = 0;
    bool any_mount = false;
    struct setup_need need[MAX_FILES];
    for (int i = 0; i < nfiles; i++) {
        if ((is_ltran[i] ? ltran_need(files[i], &need[i]) : lstack_need(files[i], &need[i])) != 0) {
            rc = 1;
            continue;
        }
        pages += need[i].pages;
        print_need(files[i], &need[i]);
        any_mount |= need[i].needs_mount;
    }
    if (rc != 0)
        return rc;
    if (pages > 0 && reserve(pages, dry) != 0)
        rc = 1;
    for (int i = 0; i < nfiles; i++)
        if (need[i].pages > 0 && need[i].huge_dir[0] != '\0' && mount_at(need[i].huge_dir, dry) != 0)
            rc = 1;
    /* File-backed memory without --huge-dir: EAL takes any hugetlbfs mount. */
    if (any_mount && !hugetlbfs_at(NULL)) {
        bool named = false;
        for (int i = 0; i < nfiles; i++)
            named |= need[i].needs_mount && need[i].huge_dir[0] != '\0';
        if (!named && mount_at("/dev/hugepages", dry) != 0)
            rc = 1;
    }
    return rc;
}
