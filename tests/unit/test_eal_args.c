/*
 * test_eal_args.c - the memory options lstack adds to dpdk_args
 * (nic/eal_args.c), one behaviour per test. Pure: no DPDK. TAP output.
 */
#include <stdio.h>
#include <string.h>

#include "nic/eal_args.h"
#include "tap.h"

/* The options added to the given dpdk_args (NULL-terminated, without the
 * program name), space-separated, into out. */
static const char *added_for(char *out, size_t outlen, const char *const *args)
{
    char *argv[32] = {"lstack"};
    int argc = 1;
    while (args[argc - 1] != NULL && argc < 31) {
        argv[argc] = (char *)args[argc - 1];
        argc++;
    }
    const char *added[EAL_ARGS_MAX_ADDED];
    int n = eal_args_memory(argc, argv, added);
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        snprintf(out + strlen(out), outlen - strlen(out), "%s%s", i ? " " : "", added[i]);
    return out;
}

/* One case: args -> expected additions; prints what it got when it fails. */
static void expect(const char *name, const char *const *args, const char *want)
{
    char got[256];
    added_for(got, sizeof(got), args);
    check(strcmp(got, want) == 0, name);
    if (strcmp(got, want) != 0)
        printf("#   added \"%s\", expected \"%s\"\n", got, want);
}

int main(void)
{
    expect("no memory option: in-memory with single-file segments",
           (const char *[]){"--no-pci", "-l", "0", "--vdev=net_af_packet0,iface=x", NULL},
           "--in-memory --single-file-segments");
    expect("--in-memory alone: single-file segments added",
           (const char *[]){"--in-memory", "--no-pci", NULL}, "--single-file-segments");
    expect("--single-file-segments alone: --in-memory added",
           (const char *[]){"--no-pci", "--single-file-segments", NULL}, "--in-memory");
    expect("--in-memory and --single-file-segments: nothing added",
           (const char *[]){"--single-file-segments", "--in-memory", NULL}, "");
    expect("--huge-unlink: file-backed as asked, nothing added",
           (const char *[]){"--huge-dir", "/mnt/h", "--huge-unlink", NULL}, "");
    expect("--huge-unlink=never: nothing added", (const char *[]){"--huge-unlink=never", NULL}, "");
    expect("--huge-unlinkx is not --huge-unlink", (const char *[]){"--huge-unlinkx", NULL},
           "--in-memory --single-file-segments");
    expect("--no-huge: nothing added", (const char *[]){"--no-huge", "-m", "256", NULL}, "");
    expect("--legacy-mem: hugepage files unlinked", (const char *[]){"--legacy-mem", "--socket-mem", "512", NULL},
           "--huge-unlink");
    expect("--legacy-mem with --in-memory: left to EAL", (const char *[]){"--legacy-mem", "--in-memory", NULL}, "");
    expect("Gazelle's sample options: in-memory with single-file segments",
           (const char *[]){"--socket-mem", "2048,0,0,0", "--huge-dir", "/mnt/hugepages-lstack", "--proc-type",
                            "primary", NULL},
           "--in-memory --single-file-segments");
    expect("--proc-type=secondary (use_ltran): nothing added, the memory is the primary's",
           (const char *[]){"-l", "0", "--proc-type=secondary", "--file-prefix=ltran", NULL}, "");
    expect("--proc-type secondary (two words): nothing added",
           (const char *[]){"--proc-type", "secondary", NULL}, "");
    expect("--proc-type primary: memory options added", (const char *[]){"--proc-type", "primary", NULL},
           "--in-memory --single-file-segments");
    {
        char *argv[] = {"--no-huge", NULL};
        const char *added[EAL_ARGS_MAX_ADDED];
        int n = eal_args_memory(1, argv, added);
        check(n == 2, "argv[0] is the program name, not an option");
        if (n != 2)
            printf("#   %d options added for argv {\"--no-huge\"}, expected 2\n", n);
    }
    return tap_done();
}
