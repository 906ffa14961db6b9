/*
 * gate.c - is this process the one to accelerate?
 *
 * Bound when GAZELLE_BIND_PROCNAME equals the basename of the program: the
 * name it was started as (argv[0], e.g. "redis-server", which on Debian is a
 * symlink to redis-check-rdb) or the executable's real file name. Decided
 * once, in a constructor, before the application can rewrite argv (Redis
 * overwrites argv[0] with its process title). The constructor does nothing
 * else: an unbound process (a shell, cat, a child that exec's) is never
 * initialised and every call goes to libc.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/runtime_priv.h"

#define BIND_ENV "GAZELLE_BIND_PROCNAME"

extern char *program_invocation_short_name;

static bool bound;

bool rt_gate_bound(void)
{
    return bound;
}

static const char *base(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

__attribute__((constructor(102))) static void gate_init(void)
{
    int saved = errno;
    const char *want = getenv(BIND_ENV);
    if (want != NULL && want[0] != '\0') {
        if (program_invocation_short_name != NULL && strcmp(program_invocation_short_name, want) == 0) {
            bound = true;
        } else {
            char exe[PATH_MAX];
            ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
            if (n > 0) {
                exe[n] = '\0';
                bound = strcmp(base(exe), want) == 0;
            }
        }
    }
    rt_state_v = bound ? RT_UNINIT : RT_PASSIVE;
    errno = saved;
}
