/*
 * setup_need.c - see setup_need.h.
 */
#include "setup_need.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of option opt at argv[*i] ("--opt=V", "--opt V", and for a
 * one-letter option also "-mV"), or NULL if argv[*i] is not opt. *i moves
 * past a separate value. */
static const char *opt_value(int argc, char *const *argv, int *i, const char *opt)
{
    size_t n = strlen(opt);
    const char *a = argv[*i];
    if (strncmp(a, opt, n) != 0)
        return NULL;
    if (a[n] == '=' && opt[1] == '-')
        return a + n + 1;
    if (a[n] != '\0')
        return opt[1] != '-' ? a + n : NULL;
    if (*i + 1 >= argc)
        return "";
    return argv[++*i];
}

/* Megabytes in v: "512" (-m) or "512,0,256" (--socket-mem: the sum). */
static int parse_mb(const char *opt, const char *v, unsigned long long *out, char *err, size_t errlen)
{
    unsigned long long sum = 0;
    const char *p = v;
    do {
        char *end;
        if (*p < '0' || *p > '9') {
            snprintf(err, errlen, "%s '%s': expected megabytes, e.g. 1024 (--socket-mem: 1024,0)", opt, v);
            return -1;
        }
        unsigned long long mb = strtoull(p, &end, 10);
        if (mb > (1ULL << 30) || (*end != ',' && *end != '\0')) {
            snprintf(err, errlen, "%s '%s': expected megabytes, e.g. 1024 (--socket-mem: 1024,0)", opt, v);
            return -1;
        }
        sum += mb;
        p = *end == ',' ? end + 1 : end;
    } while (*p != '\0');
    *out = sum;
    return 0;
}

int setup_need(int argc, char *const *argv, unsigned long long mbufs, bool in_memory, struct setup_need *out,
               char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    bool no_huge = false, files = false, secondary = false, has_in_memory = false;
    for (int i = 1; i < argc; i++) {
        const char *v;
        unsigned long long mb;
        if (strcmp(argv[i], "--no-huge") == 0) {
            no_huge = true;
        } else if (strcmp(argv[i], "--in-memory") == 0) {
            has_in_memory = true;
        } else if (strncmp(argv[i], "--huge-unlink", 13) == 0 || strcmp(argv[i], "--legacy-mem") == 0) {
            files = true;
        } else if (strcmp(argv[i], "--proc-type=secondary") == 0 ||
                   (strcmp(argv[i], "--proc-type") == 0 && i + 1 < argc && strcmp(argv[i + 1], "secondary") == 0)) {
            secondary = true;
        } else if ((v = opt_value(argc, argv, &i, "--huge-dir")) != NULL) {
            snprintf(out->huge_dir, sizeof(out->huge_dir), "%s", v);
        } else if ((v = opt_value(argc, argv, &i, "--socket-mem")) != NULL) {
            if (parse_mb("--socket-mem", v, &mb, err, errlen) != 0)
                return -1;
            out->explicit_mb += mb;
        } else if ((v = opt_value(argc, argv, &i, "-m")) != NULL) {
            if (parse_mb("-m", v, &mb, err, errlen) != 0)
                return -1;
            out->explicit_mb += mb;
        }
    }
    if (no_huge || secondary)
        return 0;
    out->estimate_mb = (mbufs * SETUP_MBUF_BYTES + (1ULL << 20) - 1) / (1ULL << 20) + SETUP_EAL_MB;
    unsigned long long mb = out->explicit_mb > out->estimate_mb ? out->explicit_mb : out->estimate_mb;
    out->pages = (mb + SETUP_PAGE_MB - 1) / SETUP_PAGE_MB;
    out->needs_mount = !has_in_memory && (files || !in_memory);
    return 0;
}
