/*
 * test_conf_affinity.c - in-memory unit tests of the application-thread
 * affinity keys: app_bind_numa, app_exclude_cpus and
 * main_thread_affinity. Their values, the CPU set syntax of
 * app_exclude_cpus (and its format back), and the checks against each
 * other and the mode, each reported at the offending key's line. One
 * behaviour per test. Run from test_conf.c.
 */
#include "conf/conf.h"
#include "conf/conf_values.h"

#include <stdio.h>
#include <string.h>

#include "test_conf.h"

#define RTW "stack_thread_mode = \"run-to-wakeup\"; "
#define EXCL_ALLOWED "\"\" (none) or CPU ids 0..1023, each once, as \"7\", \"7,9\" or \"6-8\""

static bool t_defaults(void)
{
    struct lstack_conf c;
    bool ok = extra_ok(NULL, &c);

    ok &= expect(!c.app_bind_numa, "app_bind_numa defaults to 0");
    ok &= expect(!c.main_thread_affinity, "main_thread_affinity defaults to 0");
    ok &= expect(lstack_cpu_mask_empty(&c.app_exclude_cpus), "app_exclude_cpus defaults to none");
    lstack_conf_free(&c);
    return ok;
}

static bool t_bind_with_rtw(void)
{
    struct lstack_conf c;
    bool ok = extra_ok(RTW "app_bind_numa = 1; app_exclude_cpus = \"1,4-6\"", &c);

    ok &= expect(c.app_bind_numa, "app_bind_numa = 1 stored");
    ok &= expect(lstack_cpu_mask_has(&c.app_exclude_cpus, 1) && lstack_cpu_mask_has(&c.app_exclude_cpus, 4) &&
                     lstack_cpu_mask_has(&c.app_exclude_cpus, 5) && lstack_cpu_mask_has(&c.app_exclude_cpus, 6),
                 "1, 4, 5, 6 excluded");
    ok &= expect(!lstack_cpu_mask_has(&c.app_exclude_cpus, 0) && !lstack_cpu_mask_has(&c.app_exclude_cpus, 2) &&
                     !lstack_cpu_mask_has(&c.app_exclude_cpus, 7),
                 "0, 2, 7 not excluded");
    lstack_conf_free(&c);
    return ok;
}

static bool t_bind_with_rtc(void)
{
    return extra_error("app_bind_numa = 1", "app_bind_numa", "1",
                       "needs stack_thread_mode = \"run-to-wakeup\" (in run-to-completion the "
                       "application thread polls the stack itself)",
                       "0 with run-to-completion; 0 or 1 with run-to-wakeup");
}

static bool t_exclude_without_bind(void)
{
    return extra_error(RTW "app_exclude_cpus = \"3\"", "app_exclude_cpus", "3",
                       "has no effect without app_bind_numa = 1",
                       "\"\" with app_bind_numa = 0; a CPU list with app_bind_numa = 1");
}

static bool t_exclude_empty_without_bind(void)
{
    struct lstack_conf c;
    bool ok = extra_ok("app_exclude_cpus = \"\"", &c);

    lstack_conf_free(&c);
    return ok;
}

static bool t_exclude_bad_syntax(void)
{
    return extra_error(RTW "app_bind_numa = 1; app_exclude_cpus = \"2,x\"", "app_exclude_cpus", "2,x",
                       "expected a CPU id at offset 2", EXCL_ALLOWED);
}

static bool t_exclude_out_of_range(void)
{
    return extra_error(RTW "app_bind_numa = 1; app_exclude_cpus = \"1024\"", "app_exclude_cpus", "1024",
                       "CPU 1024 is out of range", EXCL_ALLOWED);
}

static bool t_exclude_twice(void)
{
    return extra_error(RTW "app_bind_numa = 1; app_exclude_cpus = \"2,1-3\"", "app_exclude_cpus",
                       "2,1-3", "CPU 2 is listed twice", EXCL_ALLOWED);
}

static bool t_exclude_wide_range(void)
{
    /* Wider than num_cpus's 64 entries: a set, not a list of stacks. */
    struct lstack_conf c;
    bool ok = extra_ok(RTW "app_bind_numa = 1; app_exclude_cpus = \"0-1023\"", &c);

    ok &= expect(lstack_cpu_mask_has(&c.app_exclude_cpus, 0) && lstack_cpu_mask_has(&c.app_exclude_cpus, 1023),
                 "0 and 1023 excluded");
    lstack_conf_free(&c);
    return ok;
}

static bool t_main_thread_affinity(void)
{
    struct lstack_conf c;
    bool ok = extra_ok("main_thread_affinity = 1", &c) && expect(c.main_thread_affinity, "1 stored (run-to-completion)");

    lstack_conf_free(&c);
    ok &= extra_ok(RTW "main_thread_affinity = true", &c) && expect(c.main_thread_affinity, "true stored (run-to-wakeup)");
    lstack_conf_free(&c);
    ok &= extra_error("main_thread_affinity = 2", "main_thread_affinity", "2", "is out of range", "0 or 1");
    return ok;
}

static bool t_format_round_trip(void)
{
    struct lstack_conf c, back;
    char buf[16384], err[4096];
    bool ok = extra_ok(RTW "app_bind_numa = 1; app_exclude_cpus = \"9,0-2,5\"; main_thread_affinity = 1", &c);

    lstack_conf_format(&c, buf, sizeof(buf));
    ok &= expect_has(buf, "app_exclude_cpus = \"0-2,5,9\"");
    ok &= expect_has(buf, "app_bind_numa = 1");
    ok &= expect_has(buf, "main_thread_affinity = 1");
    /* The formatted conf (mandatory keys included) parses to the same set. */
    ok &= expect(lstack_conf_parse(buf, "formatted", &back, err, sizeof(err)) == 0, err);
    ok &= expect(memcmp(&back.app_exclude_cpus, &c.app_exclude_cpus, sizeof(c.app_exclude_cpus)) == 0,
                 "same set after the round trip");
    lstack_conf_free(&back);
    lstack_conf_free(&c);
    return ok;
}

static bool t_mask_format(void)
{
    struct lstack_cpu_mask m;
    char why[128], out[64];
    bool ok = expect(lstack_parse_cpumask("", 0, 1023, &m, why, sizeof(why)) == 0, "\"\" parses");

    ok &= expect(lstack_cpu_mask_empty(&m), "\"\" is empty");
    lstack_cpu_mask_format(&m, out, sizeof(out));
    ok &= expect(strcmp(out, "") == 0, "empty formats as \"\"");
    ok &= expect(lstack_parse_cpumask("63-65,127", 0, 1023, &m, why, sizeof(why)) == 0, why);
    lstack_cpu_mask_format(&m, out, sizeof(out));
    ok &= expect_has(out, "63-65,127");
    ok &= expect(lstack_cpu_mask_format(&m, out, 4) == (int)strlen("63-65,127"), "length needed when cut");
    return ok;
}

const struct conf_test conf_affinity_tests[] = {
    { "affinity keys: defaults 0, 0, none", t_defaults },
    { "app_bind_numa 1 with run-to-wakeup, app_exclude_cpus stored", t_bind_with_rtw },
    { "app_bind_numa 1 with run-to-completion: error at its line", t_bind_with_rtc },
    { "app_exclude_cpus without app_bind_numa: error at its line", t_exclude_without_bind },
    { "app_exclude_cpus \"\" without app_bind_numa: fine", t_exclude_empty_without_bind },
    { "app_exclude_cpus: bad syntax", t_exclude_bad_syntax },
    { "app_exclude_cpus: CPU out of range", t_exclude_out_of_range },
    { "app_exclude_cpus: CPU listed twice", t_exclude_twice },
    { "app_exclude_cpus: 0-1023 is a set, not 64 stacks", t_exclude_wide_range },
    { "main_thread_affinity: 1, true, 2 rejected", t_main_thread_affinity },
    { "affinity keys: format parses back to the same", t_format_round_trip },
    { "CPU mask: empty, parse, fold ranges, cut", t_mask_format },
};
const size_t conf_affinity_ntests = sizeof(conf_affinity_tests) / sizeof(conf_affinity_tests[0]);
