/*
 * test_conf.h - shared by the files of the conf unit test: test_conf.c
 * (helpers, fixtures, main), test_conf_values.c (value parsers, addresses),
 * test_conf_kinds.c (key kinds, lists, report, format, path) and
 * test_conf_policy.c (init_fail of a failed conf, LSTACK_INIT_FAIL) and
 * test_conf_affinity.c (app_bind_numa, app_exclude_cpus, main_thread_affinity).
 */
#ifndef LSTACK_TEST_CONF_H
#define LSTACK_TEST_CONF_H

#include "conf/conf.h"

#include <stdbool.h>
#include <stddef.h>

/* The four mandatory keys, valid, one per line. */
#define TEST_CONF_MANDATORY                                                                \
    "dpdk_args = [\"--in-memory\", \"--no-pci\"]\n"                                        \
    "host_addr = \"198.18.0.2\"\n"                                                         \
    "mask_addr = \"255.255.255.0\"\n"                                                      \
    "gateway_addr = \"198.18.0.1\"\n"

struct conf_test {
    const char *name;
    bool (*fn)(void); /* true: passed (diagnostics printed as "# ...") */
};

extern const struct conf_test conf_value_tests[];
extern const size_t conf_value_ntests;
extern const struct conf_test conf_kind_tests[];
extern const size_t conf_kind_ntests;
extern const struct conf_test conf_policy_tests[];
extern const size_t conf_policy_ntests;
extern const struct conf_test conf_affinity_tests[]; /* test_conf_affinity.c */
extern const size_t conf_affinity_ntests;

/* Print a TAP diagnostic and return false unless cond. */
bool expect(bool cond, const char *what);

/* Print a TAP diagnostic and return false unless needle is in text. */
bool expect_has(const char *text, const char *needle);

/* Build into buf a conf text: extra (NULL: a comment) on line 1, then
 * dpdk_args, host_addr, mask_addr, gateway_addr on lines 2-5, each of the
 * last three replaced when not NULL. */
void text_with(char *buf, size_t len, const char *extra, const char *host, const char *mask,
               const char *gw);

/* text (named "mem") fails with exactly one message
 * "mem:LINE: key 'KEY': value 'VALUE': PROBLEM; allowed: ALLOWED". */
bool one_error(const char *text, int line, const char *key, const char *value,
               const char *problem, const char *allowed);

/* Same, with extra on line 1 of a valid file. */
bool extra_error(const char *extra, const char *key, const char *value, const char *problem,
                 const char *allowed);

/* A valid file plus extra on line 1 parses into *c (caller frees). */
bool extra_ok(const char *extra, struct lstack_conf *c);

#endif
