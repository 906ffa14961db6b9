/*
 * conf_policy.c - which init_fail policy applies: the LSTACK_INIT_FAIL
 * environment variable, else what the file said (see lstack_conf_load for
 * the policy of a file that failed to parse). Contracts in conf.h.
 *
 * The variable takes the key's own values and is checked against the key's
 * row of the table, so a value means the same in the file and in the
 * environment. It exists for the failures the file cannot speak for: a file
 * that cannot be read, and a syntax error before its init_fail line.
 *
 * Design: docs/design.md#lstack_init_fail-is-validated-and-passed-in
 */
#include "conf/conf.h"

#include "conf/conf_check.h"
#include "conf/conf_keys.h"
#include "conf/conf_report.h"

#include <stdio.h>

int lstack_init_fail_resolve(const char *env, enum lstack_init_fail file,
                             enum lstack_init_fail *policy, bool *from_env, char *err,
                             size_t errlen)
{
    const struct lstack_conf_key *k = &lstack_conf_keys[LSTACK_CONF_KEY_init_fail];
    struct conf_raw raw = { .s = env };
    struct conf_value v;
    char why[256], allowed[256], shown[96];

    *policy = file;
    *from_env = false;
    if (errlen > 0)
        err[0] = '\0';
    if (env == NULL || *env == '\0')
        return 0;
    if (conf_check_value(k, &raw, &v, why, sizeof(why), allowed, sizeof(allowed)) != CONF_OK) {
        snprintf(err, errlen, "%s: value '%s': %s; allowed: %s", LSTACK_INIT_FAIL_ENV,
                 conf_report_show(env, shown, sizeof(shown)), why, allowed);
        return -1;
    }
    *policy = (enum lstack_init_fail)v.i;
    *from_env = true;
    return 0;
}
