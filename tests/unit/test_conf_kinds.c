/*
 * test_conf_kinds.c - in-memory unit tests of the rules of each key kind
 * (integers, 0/1, names, strings, lists, keys not built yet), of the error
 * report buffer, of lstack_conf_format and of lstack_conf_path. One
 * behaviour per test. Run from test_conf.c.
 */
#include "conf/conf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_conf.h"

#define DPDK_ALLOWED "list of 1..64 non-empty strings of at most 4095 bytes"

static bool t_float_wrong_type(void)
{
    return extra_error("tcp_conn_count = 1.5", "tcp_conn_count", "1.5",
                       "wrong type float, expected integer", "integer 1..20000");
}

static bool t_group_wrong_type(void)
{
    return extra_error("nic_read_number = { a = 1; }", "nic_read_number", "{...}",
                       "wrong type group, expected integer", "integer 1..512");
}

static bool t_int64_out_of_range(void)
{
    return extra_error("tcp_conn_count = 5000000000L", "tcp_conn_count", "5000000000",
                       "is out of range", "integer 1..20000");
}

static bool t_int_wrapped_by_libconfig(void)
{
    /* libconfig 1.5 would read this as 1500 (it wraps at 32 bits). */
    return extra_error("tcp_conn_count = 4294968796", "tcp_conn_count", "4294968796",
                       "is out of range", "integer 1..20000");
}

static bool t_not_power_of_2(void)
{
    return extra_error("nic_rxqueue_size = 1000", "nic_rxqueue_size", "1000",
                       "is not a power of 2", "integer 512..8192, a power of 2");
}

static bool t_bool_forms(void)
{
    struct lstack_conf c;
    bool ok = extra_ok("low_power_mode = true", &c) && expect(c.low_power_mode, "true -> 1");

    lstack_conf_free(&c);
    ok &= extra_ok("low_power_mode = 1", &c) && expect(c.low_power_mode, "1 -> 1");
    lstack_conf_free(&c);
    ok &= extra_ok("udp_enable = false", &c) && expect(!c.udp_enable, "false -> 0");
    lstack_conf_free(&c);
    return ok;
}

static bool t_bool_2(void)
{
    return extra_error("low_power_mode = 2", "low_power_mode", "2", "is out of range", "0 or 1");
}

static bool t_bool_string(void)
{
    return extra_error("low_power_mode = \"1\"", "low_power_mode", "1",
                       "wrong type string, expected integer 0/1 or boolean", "0 or 1");
}

static bool t_enum_values(void)
{
    struct lstack_conf c;
    bool ok = extra_ok("init_fail = \"exit\"", &c) &&
              expect(c.init_fail == LSTACK_INIT_FAIL_EXIT, "exit");

    lstack_conf_free(&c);
    ok &= extra_ok("log_level = \"debug\"", &c) && expect(c.log_level == 7, "debug = LOG_DEBUG");
    lstack_conf_free(&c);
    return ok;
}

static bool t_enum_unknown(void)
{
    return extra_error("init_fail = \"Kernel\"", "init_fail", "Kernel", "is not a known value",
                       "\"kernel\" or \"exit\"");
}

/* run-to-wakeup is accepted. */
static bool t_enum_wakeup(void)
{
    struct lstack_conf c;
    bool ok = extra_ok("stack_thread_mode = \"run-to-wakeup\"", &c) &&
              expect(c.stack_thread_mode == LSTACK_MODE_RUN_TO_WAKEUP, "run-to-wakeup");
    lstack_conf_free(&c);
    return ok;
}

static bool t_pending_string(void)
{
    return extra_error("host_addr6 = \"a\"", "host_addr6", "a",
                       "is not supported yet (IPv4 only for now (so is Gazelle's Redis guide))",
                       "only \"\"");
}

static bool t_pending_range_first(void)
{
    /* Out of the key's eventual range: a range error, not "not yet". */
    return extra_error("nic_vlan_mode = 5000", "nic_vlan_mode", "5000", "is out of range",
                       "integer -1..4094");
}

static bool t_pending_in_range(void)
{
    return extra_error("nic_vlan_mode = 10", "nic_vlan_mode", "10",
                       "is not supported yet (VLANs are not built yet)", "only -1");
}

static bool t_pending_defaults_accepted(void)
{
    struct lstack_conf c;
    bool ok = extra_ok("nic_vlan_mode = -1; bond_mode = -1; app_bind_numa = 0; rpc_number = 4; "
                       "host_addr6 = \"\"; use_ltran = false",
                       &c);

    lstack_conf_free(&c);
    return ok;
}

static bool t_string_too_long(void)
{
    char extra[400], shown[80];

    snprintf(extra, sizeof(extra), "unix_prefix = \"%0200d\"", 0);
    snprintf(shown, sizeof(shown), "%064d...", 0);
    return extra_error(extra, "unix_prefix", shown, "is too long (200 bytes)",
                       "string of at most 63 bytes");
}

static bool t_dpdk_args_empty(void)
{
    return one_error("dpdk_args = []\nhost_addr = \"198.18.0.2\"\nmask_addr = \"255.255.255.0\"\n"
                     "gateway_addr = \"198.18.0.1\"\n",
                     1, "dpdk_args", "[...]", "has 0 elements", DPDK_ALLOWED);
}

static bool t_dpdk_args_not_list(void)
{
    return one_error("dpdk_args = \"--in-memory\"\nhost_addr = \"198.18.0.2\"\n"
                     "mask_addr = \"255.255.255.0\"\ngateway_addr = \"198.18.0.1\"\n",
                     1, "dpdk_args", "--in-memory", "wrong type string, expected a list of strings",
                     DPDK_ALLOWED);
}

static bool t_dpdk_args_elements(void)
{
    struct lstack_conf c;
    char err[4096];
    int rc = lstack_conf_parse("dpdk_args = (\"-l\", 0, \"\")\nhost_addr = \"198.18.0.2\"\n"
                               "mask_addr = \"255.255.255.0\"\ngateway_addr = \"198.18.0.1\"\n",
                               "mem", &c, err, sizeof(err));
    bool ok = expect(rc == -1, "fails");

    ok &= expect_has(err, "mem:1: key 'dpdk_args[1]': value '0': wrong type integer, expected "
                          "string; allowed: " DPDK_ALLOWED);
    ok &= expect_has(err, "mem:1: key 'dpdk_args[2]': value '': is empty; allowed: ");
    lstack_conf_free(&c);
    return ok;
}

static bool t_dpdk_args_too_many(void)
{
    char text[4096];
    size_t o = 0;

    o += (size_t)snprintf(text + o, sizeof(text) - o, "dpdk_args = [");
    for (int i = 0; i < 65; i++)
        o += (size_t)snprintf(text + o, sizeof(text) - o, "%s\"-v\"", i > 0 ? ", " : "");
    snprintf(text + o, sizeof(text) - o, "]\nhost_addr = \"198.18.0.2\"\n"
             "mask_addr = \"255.255.255.0\"\ngateway_addr = \"198.18.0.1\"\n");
    return one_error(text, 1, "dpdk_args", "[...]", "has 65 elements", DPDK_ALLOWED);
}

static bool t_unknown_no_suggestion(void)
{
    struct lstack_conf c;
    char text[2048], err[1024];
    int rc;

    text_with(text, sizeof(text), "zzzz_qqq = 1", NULL, NULL, NULL);
    rc = lstack_conf_parse(text, "mem", &c, err, sizeof(err));
    return expect(rc == -1, "fails") &&
           expect(strcmp(err, "mem:1: unknown key 'zzzz_qqq' (value '1'); the keys are listed "
                              "in docs/config.md") == 0,
                  err);
}

static bool t_duplicate_key(void)
{
    struct lstack_conf c;
    char text[2048], err[1024];
    int rc;

    text_with(text, sizeof(text), "host_addr = \"198.18.0.3\"", NULL, NULL, NULL);
    rc = lstack_conf_parse(text, "mem", &c, err, sizeof(err));
    return expect(rc == -1, "fails") && expect_has(err, "mem:3: syntax error: duplicate setting");
}

static bool t_report_truncated(void)
{
    struct lstack_conf c;
    char err[40];
    int rc = lstack_conf_parse("a = 1\nb = 2\nc = 3\n", "mem", &c, err, sizeof(err));
    size_t n = strlen(err);

    return expect(rc == -1, "fails") && expect(n == sizeof(err) - 1, "buffer filled") &&
           expect(strcmp(err + n - 3, "...") == 0, "ends with ...") &&
           expect(lstack_conf_parse("a = 1", "mem", &c, NULL, 0) == -1, "no buffer: still -1");
}

static bool t_failure_leaves_freed(void)
{
    struct lstack_conf c;
    char text[2048], err[1024];

    text_with(text, sizeof(text), "tcp_conn_count = 0", NULL, NULL, NULL);
    return expect(lstack_conf_parse(text, "mem", &c, err, sizeof(err)) == -1, "fails") &&
           expect(c.dpdk_argc == 0, "dpdk_args freed");
}

static bool t_free_idempotent(void)
{
    struct lstack_conf c;
    bool ok = extra_ok(NULL, &c);

    lstack_conf_free(&c);
    lstack_conf_free(&c);
    return ok && expect(c.dpdk_argc == 0, "freed");
}

static bool t_format_round_trip(void)
{
    struct lstack_conf a, b;
    char *text, err[4096];
    int need;
    bool ok = extra_ok("devices = \"02:00:00:00:00:2a\"; num_cpus = \"5\"; init_fail = \"exit\"; "
                       "low_power_mode = 1; log_level = \"debug\"; tcp_conn_count = 20000",
                       &a);

    need = lstack_conf_format(&a, NULL, 0);
    text = malloc((size_t)need + 1);
    ok &= expect(text != NULL && lstack_conf_format(&a, text, (size_t)need + 1) == need, "len");
    ok &= expect_has(text, "devices = \"02:00:00:00:00:2a\"\n");
    ok &= expect_has(text, "dpdk_args = [\"--in-memory\", \"--no-pci\"]\n");
    ok &= expect(lstack_conf_parse(text, "formatted", &b, err, sizeof(err)) == 0, err);
    ok &= expect(b.has_devices && b.devices[5] == 0x2a, "devices");
    ok &= expect(b.num_cpus == 1 && b.cpus[0] == 5, "num_cpus");
    ok &= expect(b.init_fail == LSTACK_INIT_FAIL_EXIT && b.low_power_mode, "init_fail, low_power");
    ok &= expect(b.log_level == 7 && b.tcp_conn_count == 20000, "log_level, tcp_conn_count");
    ok &= expect(b.host_addr == a.host_addr && b.gateway_addr == a.gateway_addr, "addresses");
    ok &= expect(b.dpdk_argc == 2 && strcmp(b.dpdk_argv[0], "--in-memory") == 0, "dpdk_args");
    free(text);
    lstack_conf_free(&a);
    lstack_conf_free(&b);
    return ok;
}

static bool t_format_no_devices(void)
{
    struct lstack_conf c;
    char text[8192];
    bool ok = extra_ok(NULL, &c);

    lstack_conf_format(&c, text, sizeof(text));
    ok &= expect_has(text, "# devices: not set, the only port is used\n");
    ok &= expect_has(text, "udp_enable = 0\n");
    ok &= expect_has(text, "nic_vlan_mode = -1\n");
    lstack_conf_free(&c);
    return ok;
}

static bool t_conf_path(void)
{
    bool ok;

    setenv(LSTACK_CONF_ENV, "/tmp/x.conf", 1);
    ok = expect(strcmp(lstack_conf_path(), "/tmp/x.conf") == 0, "from the environment");
    setenv(LSTACK_CONF_ENV, "", 1);
    ok &= expect(strcmp(lstack_conf_path(), LSTACK_CONF_DEFAULT_PATH) == 0, "empty: default");
    unsetenv(LSTACK_CONF_ENV);
    ok &= expect(strcmp(lstack_conf_path(), LSTACK_CONF_DEFAULT_PATH) == 0, "unset: default");
    return ok;
}

const struct conf_test conf_kind_tests[] = {
    { "float for an integer key: wrong type", t_float_wrong_type },
    { "group for an integer key: wrong type", t_group_wrong_type },
    { "integer64 out of range", t_int64_out_of_range },
    { "integer wrapped by libconfig caught", t_int_wrapped_by_libconfig },
    { "not a power of 2", t_not_power_of_2 },
    { "0/1 keys: 0, 1, true, false", t_bool_forms },
    { "0/1 keys: 2 rejected", t_bool_2 },
    { "0/1 keys: quoted \"1\" rejected", t_bool_string },
    { "names: exit, debug", t_enum_values },
    { "names: unknown (case matters)", t_enum_unknown },
    { "names: run-to-wakeup", t_enum_wakeup },
    { "not built yet: string other than \"\"", t_pending_string },
    { "not built yet: range checked first", t_pending_range_first },
    { "not built yet: in range but not the default", t_pending_in_range },
    { "not built yet: defaults accepted", t_pending_defaults_accepted },
    { "string too long: error, shown cut", t_string_too_long },
    { "dpdk_args empty", t_dpdk_args_empty },
    { "dpdk_args not a list", t_dpdk_args_not_list },
    { "dpdk_args bad elements, each reported", t_dpdk_args_elements },
    { "dpdk_args more than 64", t_dpdk_args_too_many },
    { "unknown key without a close match", t_unknown_no_suggestion },
    { "duplicate key: syntax error with line", t_duplicate_key },
    { "report cut with ... when the buffer is small", t_report_truncated },
    { "failure leaves the struct freed", t_failure_leaves_freed },
    { "lstack_conf_free idempotent", t_free_idempotent },
    { "lstack_conf_format parses back to the same", t_format_round_trip },
    { "lstack_conf_format: absent devices, keys without a field", t_format_no_devices },
    { "lstack_conf_path: environment, empty, unset", t_conf_path },
};
const size_t conf_kind_ntests = sizeof(conf_kind_tests) / sizeof(conf_kind_tests[0]);
