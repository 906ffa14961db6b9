/*
 * log.c - lstack's log (see log.h): each message to stderr and to syslog,
 * under the level `stackctl set loglevel` sets; errno preserved. Any
 * thread; works before EAL and the stack start, so it can say why they
 * failed.
 * Design: docs/design.md#logging-is-lstacks-own-stderr-and-syslog
 */
#include "common/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

static int log_level = LOG_INFO;

void lstack_log_set_level(int level)
{
    if (level < LOG_ERR)
        level = LOG_ERR;
    if (level > LOG_DEBUG)
        level = LOG_DEBUG;
    log_level = level;
}

int lstack_log_get_level(void)
{
    return log_level;
}

const char *lstack_log_level_name(int level)
{
    switch (level) {
    case LOG_ERR:
        return "error";
    case LOG_WARNING:
        return "warning";
    case LOG_INFO:
        return "info";
    case LOG_DEBUG:
        return "debug";
    default:
        return "?";
    }
}

void lstack_log(int level, const char *fmt, ...)
{
    int saved = errno;
    if (level > log_level) {
        errno = saved;
        return;
    }
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "lstack: %s: %s\n", lstack_log_level_name(level), msg);
    syslog(LOG_USER | level, "lstack: %s", msg);
    errno = saved;
}
