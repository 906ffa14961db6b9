/*
 * ctl_path.c - control socket naming (see ctl_path.h): the run directory
 * ($LSTACK_RUN_DIR or /var/run/lstack), <unix_prefix>lstack.<pid>.sock,
 * checking a unix_prefix, and parsing a socket name back into its prefix
 * and pid. Pure string work; shared by the server, stackctl and the tests.
 */
#include "ctl/ctl_path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

const char *ctl_run_dir(void)
{
    const char *d = getenv(CTL_RUN_DIR_ENV);
    return d != NULL && d[0] != '\0' ? d : CTL_RUN_DIR_DEFAULT;
}

static bool prefix_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

bool ctl_prefix_ok(const char *prefix)
{
    size_t n = strlen(prefix);
    if (n >= CTL_PREFIX_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!prefix_char(prefix[i]))
            return false;
    return true;
}

int ctl_sock_path(char *out, size_t len, const char *dir, const char *prefix, pid_t pid)
{
    if (!ctl_prefix_ok(prefix) || pid <= 0)
        return -1;
    int n = snprintf(out, len, "%s/%s%s%ld%s", dir, prefix, CTL_SOCK_STEM, (long)pid, CTL_SOCK_SUFFIX);
    struct sockaddr_un un;
    if (n < 0 || (size_t)n >= len || (size_t)n >= sizeof(un.sun_path))
        return -1;
    return 0;
}

bool ctl_sock_name_parse(const char *name, char prefix[CTL_PREFIX_MAX], pid_t *pid)
{
    size_t n = strlen(name);
    size_t suf = strlen(CTL_SOCK_SUFFIX), stem = strlen(CTL_SOCK_STEM);
    if (n <= suf || strcmp(name + n - suf, CTL_SOCK_SUFFIX) != 0)
        return false;
    size_t end = n - suf; /* one past the pid's last digit */
    size_t start = end;
    while (start > 0 && name[start - 1] >= '0' && name[start - 1] <= '9')
        start--;
    if (start == end || end - start > 9 || name[start] == '0' || start < stem)
        return false;
    if (strncmp(name + start - stem, CTL_SOCK_STEM, stem) != 0)
        return false;
    size_t plen = start - stem;
    if (plen >= CTL_PREFIX_MAX)
        return false;
    memcpy(prefix, name, plen);
    prefix[plen] = '\0';
    if (!ctl_prefix_ok(prefix))
        return false;
    *pid = (pid_t)strtol(name + start, NULL, 10);
    return true;
}
