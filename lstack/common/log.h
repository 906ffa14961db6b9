/*
 * log.h - lstack's one logging path: stderr and syslog, filtered by level.
 *
 * Owns the process-wide log level. Messages go to stderr (prefixed
 * "lstack: <level>: ") and to syslog with the same level. Every function here
 * preserves errno, so a caller can log and then return -1 with errno intact.
 * Any thread may call; the level is a plain int read racily, which is fine for
 * a filter (a stale level only changes whether one line is printed).
 */
#ifndef LSTACK_LOG_H
#define LSTACK_LOG_H

#include <syslog.h> /* LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG */

/* Set the highest level that is printed (LOG_ERR..LOG_DEBUG). */
void lstack_log_set_level(int level);
int lstack_log_get_level(void);

/* Name of a level ("error", "warning", "info", "debug"); "?" if unknown. */
const char *lstack_log_level_name(int level);

void lstack_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define LSTACK_ERR(...) lstack_log(LOG_ERR, __VA_ARGS__)
#define LSTACK_WARN(...) lstack_log(LOG_WARNING, __VA_ARGS__)
#define LSTACK_INFO(...) lstack_log(LOG_INFO, __VA_ARGS__)
#define LSTACK_DEBUG(...) lstack_log(LOG_DEBUG, __VA_ARGS__)

#endif
