/*
 * test_setup_need.c - what lstack-setup reserves and mounts for a set of
 * EAL arguments (tools/setup_need.c): the estimate from the pool, an amount
 * asked with -m or --socket-mem, no pages for --no-huge or a secondary, a
 * mount only for file-backed memory, the --huge-dir it names.
 */
#include <string.h>

#include "setup_need.h"
#include "tap.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])))

int main(void)
{
    struct setup_need n;
    char err[256];

    /* lstack's default pool: 1500 connections x 170 mbufs. */
    char *plain[] = {"x", "--no-pci", "-l", "0", "--vdev=net_af_packet0,iface=eth1"};
    int rc = setup_need(ARGC(plain), plain, 1500ULL * 170, true, &n, err, sizeof(err));
    unsigned long long mb = (1500ULL * 170 * SETUP_MBUF_BYTES + (1 << 20) - 1) / (1 << 20) + SETUP_EAL_MB;
    checkf(rc == 0 && n.estimate_mb == mb && n.pages == (mb + 1) / 2 && n.explicit_mb == 0,
           "no amount given: the pool's mbufs and EAL, in 2 MiB pages (%llu MiB, %llu pages)", n.estimate_mb,
           n.pages);
    check(!n.needs_mount && n.huge_dir[0] == '\0', "lstack adds --in-memory: no mount needed");

    char *big[] = {"x", "-m", "4096", "-l", "0"};
    rc = setup_need(ARGC(big), big, 1000, true, &n, err, sizeof(err));
    checkf(rc == 0 && n.explicit_mb == 4096 && n.pages == 2048, "-m 4096 above the estimate: 2048 pages (%llu)",
           n.pages);

    char *small[] = {"x", "-m16", "-l", "0"};
    rc = setup_need(ARGC(small), small, 1500ULL * 170, true, &n, err, sizeof(err));
    checkf(rc == 0 && n.explicit_mb == 16 && n.pages == (mb + 1) / 2,
           "-m16 below the estimate: the estimate wins (%llu pages)", n.pages);

    char *sock[] = {"x", "--socket-mem=1024,0,1024", "-l", "0"};
    rc = setup_need(ARGC(sock), sock, 0, true, &n, err, sizeof(err));
    checkf(rc == 0 && n.explicit_mb == 2048 && n.pages == 1024, "--socket-mem=1024,0,1024: the sum, 1024 pages (%llu)",
           n.pages);

    char *sock2[] = {"x", "--socket-mem", "512,512"};
    rc = setup_need(ARGC(sock2), sock2, 0, true, &n, err, sizeof(err));
    check(rc == 0 && n.explicit_mb == 1024, "--socket-mem as a separate word");

    char *nohuge[] = {"x", "--no-huge", "-m", "512"};
    rc = setup_need(ARGC(nohuge), nohuge, 100000, true, &n, err, sizeof(err));
    check(rc == 0 && n.pages == 0 && !n.needs_mount, "--no-huge: no hugepage, no mount");

    char *sec[] = {"x", "--proc-type", "secondary"};
    rc = setup_need(ARGC(sec), sec, 100000, true, &n, err, sizeof(err));
    check(rc == 0 && n.pages == 0, "a secondary process: its primary's memory, nothing to reserve");

    char *files[] = {"x", "--huge-unlink", "--huge-dir=/mnt/huge-lstack"};
    rc = setup_need(ARGC(files), files, 1000, true, &n, err, sizeof(err));
    check(rc == 0 && n.needs_mount && strcmp(n.huge_dir, "/mnt/huge-lstack") == 0,
          "--huge-unlink: file-backed, a mount at --huge-dir=DIR");

    char *ltran[] = {"x", "--no-pci", "-l", "0", "--huge-dir", "/dev/hugepages", "--vdev=net_af_packet0,iface=eth1"};
    rc = setup_need(ARGC(ltran), ltran, 32767, false, &n, err, sizeof(err));
    check(rc == 0 && n.needs_mount && strcmp(n.huge_dir, "/dev/hugepages") == 0 && n.pages > 0,
          "ltran (no --in-memory of its own): a mount, at --huge-dir DIR");

    char *inmem[] = {"x", "--in-memory", "--huge-unlink"};
    rc = setup_need(ARGC(inmem), inmem, 1000, false, &n, err, sizeof(err));
    check(rc == 0 && !n.needs_mount, "--in-memory given: no mount");

    char *bad[] = {"x", "-m", "lots"};
    rc = setup_need(ARGC(bad), bad, 0, true, &n, err, sizeof(err));
    checkf(rc == -1 && strstr(err, "-m 'lots'") != NULL, "a bad -m value is an error naming it (%s)", err);

    char *bad2[] = {"x", "--socket-mem=1024,,0"};
    rc = setup_need(ARGC(bad2), bad2, 0, true, &n, err, sizeof(err));
    checkf(rc == -1 && strstr(err, "--socket-mem '1024,,0'") != NULL, "a bad --socket-mem value is an error (%s)",
           err);

    char *missing[] = {"x", "-m"};
    rc = setup_need(ARGC(missing), missing, 0, true, &n, err, sizeof(err));
    check(rc == -1, "-m without a value is an error");

    char *other[] = {"x", "--main-lcore", "1", "--match-allocations"};
    rc = setup_need(ARGC(other), other, 0, true, &n, err, sizeof(err));
    check(rc == 0 && n.explicit_mb == 0, "options that only start like -m are not read as -m");

    return tap_done();
}
