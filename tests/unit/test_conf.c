/*
 * test_conf.c - unit tests of the lstack.conf parser (lstack/conf/).
 *
 * Owns: one test per behaviour; for every error class a good and a bad
 * fixture (tests/fixtures/conf/<class>_good.conf / _bad.conf), the bad one
 * asserting that the message names file:line, the key, the value and what
 * is allowed. Plus in-memory cases for the finer rules, and the sample
 * conf/lstack.conf.
 *
 * Usage: test_conf FIXTURES_DIR SAMPLE_CONF. Prints TAP; exits 1 if any
 * test failed, 2 on usage.
 */
#include "conf/conf.h"
#include "conf/conf_check.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_conf.h"

static const char *fixtures;
static const char *sample;

/* ---- helpers ---- */

bool expect(bool cond, const char *what)
{
    if (!cond)
        printf("#   failed: %s\n", what);
    return cond;
}

bool expect_has(const char *text, const char *needle)
{
    if (strstr(text, needle) != NULL)
        return true;
    printf("#   expected to find: %s\n#   in: %s\n", needle, text);
    return false;
}

static int count_lines(const char *text)
{
    int n = *text != '\0';

    for (; *text != '\0'; text++)
        n += *text == '\n';
    return n;
}

static void fixture_path(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s.conf", fixtures, name);
}

/* Build a conf text: extra on line 1, then the mandatory keys with host,
 * mask and gateway replaced when not NULL. */
void text_with(char *buf, size_t len, const char *extra, const char *host,
                      const char *mask, const char *gw)
{
    snprintf(buf, len,
             "%s\n"
             "dpdk_args = [\"--in-memory\", \"--no-pci\"]\n"
             "host_addr = \"%s\"\n"
             "mask_addr = \"%s\"\n"
             "gateway_addr = \"%s\"\n",
             extra != NULL ? extra : "# nothing extra", host != NULL ? host : "198.18.0.2",
             mask != NULL ? mask : "255.255.255.0", gw != NULL ? gw : "198.18.0.1");
}

/* text fails with exactly one message naming mem:line, key, value,
 * problem and allowed. */
bool one_error(const char *text, int line, const char *key, const char *value,
                      const char *problem, const char *allowed)
{
    struct lstack_conf c;
    char err[4096], want[1024];
    int rc = lstack_conf_parse(text, "mem", &c, err, sizeof(err));
    bool ok = expect(rc == -1, "fails") && expect(strchr(err, '\n') == NULL, "one line");

    snprintf(want, sizeof(want), "mem:%d: key '%s': value '%s': %s; allowed: %s", line, key,
             value, problem, allowed);
    ok &= expect_has(err, want);
    lstack_conf_free(&c);
    return ok;
}

bool extra_error(const char *extra, const char *key, const char *value,
                        const char *problem, const char *allowed)
{
    char text[2048];

    text_with(text, sizeof(text), extra, NULL, NULL, NULL);
    return one_error(text, 1, key, value, problem, allowed);
}

bool extra_ok(const char *extra, struct lstack_conf *c)
{
    char text[2048], err[4096];
    int rc;

    text_with(text, sizeof(text), extra, NULL, NULL, NULL);
    rc = lstack_conf_parse(text, "mem", c, err, sizeof(err));
    return expect(rc == 0, err);
}

/* The fixture loads without error. */
static bool good(const char *name)
{
    struct lstack_conf c;
    char path[512], err[4096];
    int rc;

    fixture_path(name, path, sizeof(path));
    rc = lstack_conf_load(path, &c, err, sizeof(err));
    lstack_conf_free(&c);
    return expect(rc == 0, "loads") && expect(err[0] == '\0', "no message");
}

/* The fixture fails with exactly one message, at line, naming key, value
 * and allowed. */
static bool bad(const char *name, int line, const char *key, const char *value,
                const char *problem, const char *allowed)
{
    struct lstack_conf c;
    char path[512], err[4096], head[1024], tail[512];
    int rc;
    bool ok;

    fixture_path(name, path, sizeof(path));
    rc = lstack_conf_load(path, &c, err, sizeof(err));
    lstack_conf_free(&c);
    snprintf(head, sizeof(head), "%s:%d: key '%s': value '%s': %s", path, line, key, value,
             problem);
    snprintf(tail, sizeof(tail), "; allowed: %s", allowed);
    ok = expect(rc == -1, "fails");
    ok &= expect_has(err, head);
    ok &= expect_has(err, tail);
    ok &= expect(count_lines(err) == 1, "exactly one message");
    return ok;
}

/* ---- error classes: a good and a bad fixture each ---- */

static bool t_unknown_key_good(void) { return good("unknown_key_good"); }

static bool t_unknown_key_bad(void)
{
    struct lstack_conf c;
    char path[512], err[4096], want[1024];
    int rc;

    fixture_path("unknown_key_bad", path, sizeof(path));
    rc = lstack_conf_load(path, &c, err, sizeof(err));
    snprintf(want, sizeof(want),
             "%s:2: unknown key 'tcp_con_count' (value '100'); did you mean 'tcp_conn_count'?",
             path);
    return expect(rc == -1, "fails") && expect_has(err, want) && expect(count_lines(err) == 1, "1");
}

static bool t_wrong_type_good(void) { return good("wrong_type_good"); }

static bool t_wrong_type_bad(void)
{
    return bad("wrong_type_bad", 2, "tcp_conn_count", "1500",
               "wrong type string, expected integer", "integer 1..20000");
}

static bool t_out_of_range_good(void) { return good("out_of_range_good"); }

static bool t_out_of_range_bad(void)
{
    return bad("out_of_range_bad", 2, "tcp_conn_count", "20001", "is out of range",
               "integer 1..20000");
}

static bool t_bad_ipv4_good(void) { return good("bad_ipv4_good"); }

static bool t_bad_ipv4_bad(void)
{
    return bad("bad_ipv4_bad", 2, "host_addr", "1.2.3", "is not an IPv4 address",
               "unicast IPv4 address a.b.c.d");
}

static bool t_mask_good(void) { return good("mask_good"); }

static bool t_mask_bad(void)
{
    return bad("mask_bad", 2, "mask_addr", "255.0.255.0", "is not contiguous",
               "contiguous netmask a.b.c.d, /1 to /31");
}

static bool t_mac_good(void) { return good("mac_good"); }

static bool t_mac_bad(void)
{
    return bad("mac_bad", 2, "devices", "02:00:00:00:00", "is not a MAC address",
               "unicast MAC address aa:bb:cc:dd:ee:ff, not all-zero");
}

static bool t_gateway_good(void) { return good("gateway_good"); }

static bool t_gateway_bad(void)
{
    return bad("gateway_bad", 2, "gateway_addr", "198.18.1.1",
               "is outside host_addr's subnet 198.18.0.0/24",
               "198.18.0.1..198.18.0.254 except host_addr 198.18.0.2");
}

static bool t_mandatory_good(void) { return good("mandatory_good"); }

static bool t_mandatory_bad(void)
{
    struct lstack_conf c;
    char path[512], err[4096], want[1024];
    int rc;

    fixture_path("mandatory_bad", path, sizeof(path));
    rc = lstack_conf_load(path, &c, err, sizeof(err));
    snprintf(want, sizeof(want), "%s: missing mandatory key 'mask_addr' (Netmask of host_addr's",
             path);
    return expect(rc == -1, "fails") && expect_has(err, want) && expect(count_lines(err) == 1, "1");
}

static bool t_pending_good(void) { return good("pending_good"); }

static bool t_pending_bad(void)
{
    return bad("pending_bad", 2, "udp_enable", "1",
               "is not supported yet (UDP is not built yet: UDP sockets stay on the kernel",
               "only 0");
}

static bool t_cpulist_good(void)
{
    struct lstack_conf c;
    char path[512], err[4096];
    int rc;

    fixture_path("cpulist_good", path, sizeof(path));
    rc = lstack_conf_load(path, &c, err, sizeof(err));
    lstack_conf_free(&c);
    return expect(rc == 0, "loads") && expect(c.num_cpus == 1 && c.cpus[0] == 3, "cpus = {3}");
}

static bool t_cpulist_bad(void)
{
    return bad("cpulist_bad", 2, "num_cpus", "0-8",
               "lists 9 CPUs: more than 8 stacks are not supported yet", "1 to 8 CPU ids 0..1023");
}

static bool t_syntax_good(void) { return good("syntax_good"); }

static bool t_syntax_bad(void)
{
    struct lstack_conf c;
    char path[512], err[4096], want[1024];
    int rc;

    fixture_path("syntax_bad", path, sizeof(path));
    rc = lstack_conf_load(path, &c, err, sizeof(err));
    snprintf(want, sizeof(want), "%s:3: syntax error: ", path);
    return expect(rc == -1, "fails") && expect_has(err, want) && expect(count_lines(err) == 1, "1");
}

static bool t_unreadable_good(void) { return good("unreadable_good"); }

static bool t_unreadable_missing(void)
{
    struct lstack_conf c;
    char path[512], err[4096], want[1024];
    int rc;

    snprintf(path, sizeof(path), "%s/no-such-file.conf", fixtures);
    rc = lstack_conf_load(path, &c, err, sizeof(err));
    snprintf(want, sizeof(want), "%s: cannot read: No such file or directory", path);
    return expect(rc == -1, "fails") && expect(strcmp(err, want) == 0, want);
}

static bool t_unreadable_directory(void)
{
    struct lstack_conf c;
    char err[4096], want[1024];
    int rc;

    rc = lstack_conf_load(fixtures, &c, err, sizeof(err));
    snprintf(want, sizeof(want), "%s: cannot read: Is a directory", fixtures);
    return expect(rc == -1, "fails") && expect(strcmp(err, want) == 0, want);
}

static bool t_unreadable_nul_byte(void)
{
    struct lstack_conf c;
    char path[] = "/tmp/test_conf_nul_XXXXXX", err[1024], want[256];
    int fd = mkstemp(path);
    bool ok = expect(fd >= 0, "mkstemp");

    if (!ok)
        return false;
    ok &= expect(write(fd, "a = 1\n\0b = 2\n", 13) == 13, "write");
    close(fd);
    ok &= expect(lstack_conf_load(path, &c, err, sizeof(err)) == -1, "fails");
    snprintf(want, sizeof(want), "%s: cannot read: NUL byte at offset 6 (not a text file)", path);
    ok &= expect(strcmp(err, want) == 0, want);
    unlink(path);
    return ok;
}

/* ---- whole-file behaviour ---- */

static bool t_all_errors_reported(void)
{
    struct lstack_conf c;
    char path[512], err[4096], want[3][1024];
    int rc;
    bool ok;

    fixture_path("multi_bad", path, sizeof(path));
    rc = lstack_conf_load(path, &c, err, sizeof(err));
    snprintf(want[0], sizeof(want[0]), "%s:2: key 'tcp_conn_count': value '0'", path);
    snprintf(want[1], sizeof(want[1]), "%s:3: key 'nic_txqueue_size': value '1000': "
             "is not a power of 2; allowed: integer 512..8192, a power of 2", path);
    snprintf(want[2], sizeof(want[2]), "%s:4: key 'log_level': value 'verbose': is not a known "
             "value; allowed: \"error\", \"warning\", \"info\" or \"debug\"", path);
    ok = expect(rc == -1, "fails") && expect(count_lines(err) == 3, "three lines");
    for (int i = 0; i < 3; i++)
        ok &= expect_has(err, want[i]);
    return ok;
}

static bool t_defaults_filled(void)
{
    struct lstack_conf c;
    char err[1024];
    int rc = lstack_conf_parse(TEST_CONF_MANDATORY, "mem", &c, err, sizeof(err));
    bool ok = expect(rc == 0, err);

    ok &= expect(c.num_cpus == 1 && c.cpus[0] == 0, "num_cpus \"0\"");
    ok &= expect(c.stack_thread_mode == LSTACK_MODE_RUN_TO_COMPLETION, "run-to-completion");
    ok &= expect(c.init_fail == LSTACK_INIT_FAIL_KERNEL, "init_fail kernel");
    ok &= expect(c.tcp_conn_count == 1500, "tcp_conn_count 1500");
    ok &= expect(c.mbuf_count_per_conn == 170, "mbuf_count_per_conn 170");
    ok &= expect(c.nic_rxqueue_size == 4096 && c.nic_txqueue_size == 2048, "queues");
    ok &= expect(c.nic_read_number == 128, "nic_read_number 128");
    ok &= expect(c.mem_cache_num == 32 && c.rpc_number == 4, "mem_cache_num, rpc_number");
    ok &= expect(!c.listen_shadow && !c.udp_enable && !c.low_power_mode, "bools 0");
    ok &= expect(c.log_level == 6, "log_level info = LOG_INFO");
    ok &= expect(c.unix_prefix[0] == '\0' && !c.has_devices, "unix_prefix, devices");
    ok &= expect(c.dpdk_argc == 2 && strcmp(c.dpdk_argv[1], "--no-pci") == 0, "dpdk_args");
    ok &= expect(c.host_addr == inet_addr("198.18.0.2"), "host_addr");
    ok &= expect(c.mask_addr == inet_addr("255.255.255.0"), "mask_addr");
    ok &= expect(c.gateway_addr == inet_addr("198.18.0.1"), "gateway_addr");
    lstack_conf_free(&c);
    return ok;
}

static bool t_sample_conf_parses(void)
{
    struct lstack_conf c;
    char err[4096];
    int rc = lstack_conf_load(sample, &c, err, sizeof(err));
    bool ok = expect(rc == 0, err);

    ok &= expect(c.dpdk_argc == 5 &&
                     strcmp(c.dpdk_argv[4], "--vdev=net_af_packet0,iface=lsv-s") == 0,
                 "dpdk_args of the test bed");
    ok &= expect(c.host_addr == inet_addr("198.18.0.2"), "host_addr of the test bed");
    lstack_conf_free(&c);
    return ok;
}

static bool t_table_consistent(void)
{
    char err[4096];
    int rc = lstack_conf_check_table(err, sizeof(err));

    return expect(rc == 0, err);
}

static const struct conf_test file_tests[] = {
    { "unknown key: good", t_unknown_key_good },
    { "unknown key: bad, with a suggestion", t_unknown_key_bad },
    { "wrong type: good (integer64)", t_wrong_type_good },
    { "wrong type: bad (quoted number)", t_wrong_type_bad },
    { "out of range: good (max)", t_out_of_range_good },
    { "out of range: bad (max + 1)", t_out_of_range_bad },
    { "bad IPv4: good", t_bad_ipv4_good },
    { "bad IPv4: bad (1.2.3)", t_bad_ipv4_bad },
    { "netmask: good (/30)", t_mask_good },
    { "netmask: bad (not contiguous)", t_mask_bad },
    { "MAC: good (mixed case)", t_mac_good },
    { "MAC: bad (five pairs)", t_mac_bad },
    { "gateway: good (last host)", t_gateway_good },
    { "gateway: bad (outside the subnet)", t_gateway_bad },
    { "mandatory: good", t_mandatory_good },
    { "mandatory: bad (mask_addr missing)", t_mandatory_bad },
    { "not built yet: good (default)", t_pending_good },
    { "not built yet: bad (udp_enable 1)", t_pending_bad },
    { "CPU list: good (one CPU)", t_cpulist_good },
    { "CPU list: bad (more stacks than supported)", t_cpulist_bad },
    { "syntax: good", t_syntax_good },
    { "syntax: bad, file:line", t_syntax_bad },
    { "unreadable: good", t_unreadable_good },
    { "unreadable: nonexistent path", t_unreadable_missing },
    { "unreadable: a directory", t_unreadable_directory },
    { "unreadable: a NUL byte", t_unreadable_nul_byte },
    { "every error reported, one per line", t_all_errors_reported },
    { "defaults filled", t_defaults_filled },
    { "sample conf/lstack.conf parses", t_sample_conf_parses },
    { "key table consistent", t_table_consistent },
};

static int run(const struct conf_test *tests, size_t n, int *num)
{
    int failed = 0;

    for (size_t i = 0; i < n; i++) {
        bool ok = tests[i].fn();

        printf("%s %d - %s\n", ok ? "ok" : "not ok", ++*num, tests[i].name);
        failed += !ok;
    }
    return failed;
}

int main(int argc, char **argv)
{
    size_t nfile = sizeof(file_tests) / sizeof(file_tests[0]);
    int failed = 0, num = 0;

    if (argc != 3) {
        fprintf(stderr, "usage: %s FIXTURES_DIR SAMPLE_CONF\n", argv[0]);
        return 2;
    }
    fixtures = argv[1];
    sample = argv[2];
    printf("1..%zu\n", nfile + conf_value_ntests + conf_kind_ntests + conf_policy_ntests +
           conf_affinity_ntests);
    failed += run(file_tests, nfile, &num);
    failed += run(conf_value_tests, conf_value_ntests, &num);
    failed += run(conf_kind_tests, conf_kind_ntests, &num);
    failed += run(conf_policy_tests, conf_policy_ntests, &num);
    failed += run(conf_affinity_tests, conf_affinity_ntests, &num);
    return failed > 0 ? 1 : 0;
}
