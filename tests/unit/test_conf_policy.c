/*
 * test_conf_policy.c - the init_fail policy of a configuration that failed
 * (lstack_conf_load / lstack_conf_parse leave the init_fail of a line that
 * parsed) and of the LSTACK_INIT_FAIL variable (lstack_init_fail_resolve).
 * Part of the conf unit test (test_conf.c runs these); one behaviour each.
 */
#include "conf/conf.h"

#include <stdio.h>
#include <string.h>

#include "test_conf.h"

/* text fails to parse and leaves init_fail = want. */
static bool fails_leaving(const char *text, enum lstack_init_fail want, const char *what)
{
    struct lstack_conf c;
    char err[4096];
    int rc = lstack_conf_parse(text, "conf", &c, err, sizeof(err));
    bool ok = rc == -1 && c.init_fail == want;

    if (!ok)
        printf("#   %s: rc %d, init_fail %d (want -1, %d); report: %s\n", what, rc, (int)c.init_fail,
               (int)want, err);
    lstack_conf_free(&c);
    return ok;
}

static bool t_exit_with_unknown_key(void)
{
    return fails_leaving("init_fail = \"exit\"\n" TEST_CONF_MANDATORY "tcp_con_count = 100\n",
                         LSTACK_INIT_FAIL_EXIT, "init_fail exit kept");
}

static bool t_exit_after_bad_key(void)
{
    return fails_leaving(TEST_CONF_MANDATORY "tcp_conn_count = 0\ninit_fail = \"exit\"\n",
                         LSTACK_INIT_FAIL_EXIT, "init_fail exit kept (line after the bad one)");
}

static bool t_default_without_line(void)
{
    return fails_leaving(TEST_CONF_MANDATORY "tcp_con_count = 100\n",
                         LSTACK_INIT_FAIL_KERNEL, "kernel (the default)");
}

static bool t_bad_init_fail_value(void)
{
    return fails_leaving("init_fail = \"EXIT\"\n" TEST_CONF_MANDATORY,
                         LSTACK_INIT_FAIL_KERNEL, "a bad init_fail is no policy: kernel");
}

static bool t_syntax_error_after(void)
{
    return fails_leaving("init_fail = \"exit\"\n" TEST_CONF_MANDATORY "tcp_conn_count = = 5\n",
                         LSTACK_INIT_FAIL_EXIT, "exit from the lines before the syntax error");
}

static bool t_syntax_error_before(void)
{
    return fails_leaving("tcp_conn_count = = 5\n" TEST_CONF_MANDATORY "init_fail = \"exit\"\n",
                         LSTACK_INIT_FAIL_KERNEL, "a line after the error did not parse: kernel");
}

static bool t_syntax_error_same_line(void)
{
    return fails_leaving(TEST_CONF_MANDATORY "init_fail = \"exit\" x\n",
                         LSTACK_INIT_FAIL_KERNEL, "the broken line itself gives nothing: kernel");
}

static bool t_unreadable_default(void)
{
    struct lstack_conf c;
    char err[1024];
    int rc = lstack_conf_load("/nonexistent/lstack.conf", &c, err, sizeof(err));

    return expect(rc == -1, "fails") && expect(c.init_fail == LSTACK_INIT_FAIL_KERNEL, "kernel");
}

static bool t_others_default(void)
{
    struct lstack_conf c;
    char err[1024];
    int rc = lstack_conf_parse("tcp_conn_count = 7\nnic_read_number = 9\n" TEST_CONF_MANDATORY
                               "init_fail = \"exit\"\nno_such_key = 1\n",
                               "conf", &c, err, sizeof(err));
    bool ok = expect(rc == -1, "fails");

    ok &= expect(c.tcp_conn_count == 1500 && c.nic_read_number == 128, "other keys: defaults");
    ok &= expect(c.dpdk_argc == 0 && c.host_addr == 0, "mandatory keys: none");
    lstack_conf_free(&c);
    return ok;
}

/* lstack_init_fail_resolve(env, file) -> rc, policy, from_env. */
static bool resolves(const char *env, enum lstack_init_fail file, int want_rc,
                     enum lstack_init_fail want, bool want_env, char *err, size_t errlen)
{
    enum lstack_init_fail p = (enum lstack_init_fail)-1;
    bool from = !want_env;
    int rc = lstack_init_fail_resolve(env, file, &p, &from, err, errlen);

    if (rc != want_rc || p != want || from != want_env)
        printf("#   env '%s', file %d: rc %d policy %d from_env %d (%s)\n", env != NULL ? env : "(unset)",
               (int)file, rc, (int)p, (int)from, err);
    return rc == want_rc && p == want && from == want_env;
}

static bool t_env_unset(void)
{
    char err[256];

    return resolves(NULL, LSTACK_INIT_FAIL_EXIT, 0, LSTACK_INIT_FAIL_EXIT, false, err, sizeof(err)) &&
           expect(err[0] == '\0', "no message");
}

static bool t_env_empty(void)
{
    char err[256];

    return resolves("", LSTACK_INIT_FAIL_EXIT, 0, LSTACK_INIT_FAIL_EXIT, false, err, sizeof(err));
}

static bool t_env_exit_wins(void)
{
    char err[256];

    return resolves("exit", LSTACK_INIT_FAIL_KERNEL, 0, LSTACK_INIT_FAIL_EXIT, true, err, sizeof(err));
}

static bool t_env_kernel_wins(void)
{
    char err[256];

    return resolves("kernel", LSTACK_INIT_FAIL_EXIT, 0, LSTACK_INIT_FAIL_KERNEL, true, err, sizeof(err));
}

static bool t_env_bad(void)
{
    char err[256];
    bool ok = resolves("Exit", LSTACK_INIT_FAIL_EXIT, -1, LSTACK_INIT_FAIL_EXIT, false, err, sizeof(err));

    return ok && expect_has(err, "LSTACK_INIT_FAIL: value 'Exit': is not a known value; allowed: "
                                 "\"kernel\" or \"exit\"");
}

const struct conf_test conf_policy_tests[] = {
    { "failed conf: init_fail exit kept beside an unknown key", t_exit_with_unknown_key },
    { "failed conf: init_fail exit kept on a line after a bad value", t_exit_after_bad_key },
    { "failed conf: no init_fail line, kernel", t_default_without_line },
    { "failed conf: a bad init_fail value, kernel", t_bad_init_fail_value },
    { "syntax error after init_fail exit: exit", t_syntax_error_after },
    { "syntax error before init_fail exit: kernel", t_syntax_error_before },
    { "syntax error on the init_fail line: kernel", t_syntax_error_same_line },
    { "unreadable file: kernel", t_unreadable_default },
    { "failed conf: every other key at its default", t_others_default },
    { "LSTACK_INIT_FAIL unset: the file's policy", t_env_unset },
    { "LSTACK_INIT_FAIL empty: the file's policy", t_env_empty },
    { "LSTACK_INIT_FAIL=exit wins over the file's kernel", t_env_exit_wins },
    { "LSTACK_INIT_FAIL=kernel wins over the file's exit", t_env_kernel_wins },
    { "LSTACK_INIT_FAIL bad value: an error naming it, the file's policy", t_env_bad },
};
const size_t conf_policy_ntests = sizeof(conf_policy_tests) / sizeof(conf_policy_tests[0]);
