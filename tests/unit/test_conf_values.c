/*
 * test_conf_values.c - in-memory unit tests of the value parsers (IPv4,
 * netmask, MAC, CPU list) and of the address rules of a whole file (host,
 * mask, gateway, MAC). One behaviour per test. Run from test_conf.c.
 */
#include "conf/conf.h"
#include "conf/conf_values.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "test_conf.h"

#define IPV4_ALLOWED "unicast IPv4 address a.b.c.d, not in 0/8, 127/8, 224/4 or 240/4"
#define SUBNET_ALLOWED "198.18.0.1..198.18.0.254"

/* ---- value parsers ---- */

static bool t_cpulist_forms(void)
{
    int cpus[64], n;
    char why[128];
    bool ok = true;

    ok &= expect(lstack_parse_cpulist("2,4", 0, 1023, cpus, 64, &n, why, sizeof(why)) == 0 &&
                     n == 2 && cpus[0] == 2 && cpus[1] == 4, "\"2,4\"");
    ok &= expect(lstack_parse_cpulist("1-3,6", 0, 1023, cpus, 64, &n, why, sizeof(why)) == 0 &&
                     n == 4 && cpus[0] == 1 && cpus[2] == 3 && cpus[3] == 6, "\"1-3,6\"");
    ok &= expect(lstack_parse_cpulist(" 5 , 0 ", 0, 1023, cpus, 64, &n, why, sizeof(why)) == 0 &&
                     n == 2 && cpus[0] == 5 && cpus[1] == 0, "spaces, order kept");
    return ok;
}

static bool t_cpulist_errors(void)
{
    static const struct {
        const char *in, *why;
    } cases[] = {
        { "3-1", "range 3-1 is reversed" }, { "2,2", "CPU 2 is listed twice" },
        { "1024", "CPU 1024 is out of range" }, { "a", "expected a CPU id at offset 0" },
        { "2,", "expected a CPU id at offset 2" }, { "", "expected a CPU id at offset 0" },
        { "0-64", "more than 64 CPUs" }, { "1;2", "unexpected ';' at offset 1" },
    };
    int cpus[64], n;
    char why[128];
    bool ok = true;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = lstack_parse_cpulist(cases[i].in, 0, 1023, cpus, 64, &n, why, sizeof(why));

        ok &= expect(rc == -1, cases[i].in) && expect(strcmp(why, cases[i].why) == 0, why);
    }
    return ok;
}

static bool t_ipv4_forms(void)
{
    static const char *bad[] = { "1.2.3", "256.0.0.1", "1.2.3.4.5", " 1.2.3.4", "1.2.3.4 ", "" };
    uint32_t a;
    bool ok = expect(lstack_parse_ipv4("198.18.0.2", &a) == 0 && a == inet_addr("198.18.0.2"),
                     "198.18.0.2");

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ok &= expect(lstack_parse_ipv4(bad[i], &a) == -1, bad[i]);
    return ok;
}

static bool t_mask_prefix(void)
{
    return expect(lstack_mask_prefix(inet_addr("255.255.255.0")) == 24, "/24") &&
           expect(lstack_mask_prefix(inet_addr("128.0.0.0")) == 1, "/1") &&
           expect(lstack_mask_prefix(inet_addr("255.255.255.255")) == 32, "/32") &&
           expect(lstack_mask_prefix(inet_addr("0.0.0.0")) == 0, "/0") &&
           expect(lstack_mask_prefix(inet_addr("255.255.0.255")) == -1, "gap") &&
           expect(lstack_mask_prefix(inet_addr("0.255.255.255")) == -1, "reversed");
}

static bool t_mac_forms(void)
{
    static const char *bad[] = { "02:00:00:00:00:0g", "02-00-00-00-00-02", "02:00:00:00:00:002",
                                 "2:00:00:00:00:02", "02:00:00:00:00:02:" };
    uint8_t m[6];
    bool ok = expect(lstack_parse_mac("0A:bb:cc:dd:ee:FF", m) == 0 && m[0] == 0x0a &&
                         m[5] == 0xff, "mixed case");

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ok &= expect(lstack_parse_mac(bad[i], m) == -1, bad[i]);
    return ok;
}

/* ---- addresses in a whole file ---- */

static bool host_error(const char *host, const char *problem, const char *allowed)
{
    char text[2048];

    text_with(text, sizeof(text), NULL, host, NULL, NULL);
    return one_error(text, 3, "host_addr", host, problem, allowed);
}

static bool t_ipv4_256(void)
{
    return host_error("256.0.0.1", "is not an IPv4 address", IPV4_ALLOWED);
}

static bool t_host_loopback(void)
{
    return host_error("127.0.0.1", "is a loopback address (127.0.0.0/8)", IPV4_ALLOWED);
}

static bool t_host_multicast(void)
{
    return host_error("224.0.0.5", "is a multicast address (224.0.0.0/4)", IPV4_ALLOWED);
}

static bool t_host_zero(void)
{
    return host_error("0.0.0.0", "is in 0.0.0.0/8 (\"this network\")", IPV4_ALLOWED);
}

static bool t_host_network(void)
{
    return host_error("198.18.0.0", "is the network address of 198.18.0.0/24", SUBNET_ALLOWED);
}

static bool t_host_broadcast(void)
{
    return host_error("198.18.0.255", "is the broadcast address of 198.18.0.0/24",
                      SUBNET_ALLOWED);
}

static bool mask_error(const char *mask, const char *problem)
{
    char text[2048];

    text_with(text, sizeof(text), NULL, NULL, mask, NULL);
    return one_error(text, 4, "mask_addr", mask, problem, "contiguous netmask a.b.c.d, /1 to /31");
}

static bool t_mask_zero(void) { return mask_error("0.0.0.0", "is empty (/0)"); }

static bool t_mask_32(void)
{
    return mask_error("255.255.255.255", "leaves no address for a gateway (/32)");
}

static bool t_mask_31(void)
{
    struct lstack_conf c;
    char text[2048], err[1024];
    int rc;

    text_with(text, sizeof(text), NULL, "198.18.0.0", "255.255.255.254", "198.18.0.1");
    rc = lstack_conf_parse(text, "mem", &c, err, sizeof(err));
    lstack_conf_free(&c);
    return expect(rc == 0, err); /* RFC 3021: both addresses of a /31 are hosts */
}

static bool t_gateway_is_host(void)
{
    char text[2048];

    text_with(text, sizeof(text), NULL, NULL, NULL, "198.18.0.2");
    return one_error(text, 5, "gateway_addr", "198.18.0.2", "is host_addr itself",
                     SUBNET_ALLOWED " except host_addr 198.18.0.2");
}

static bool t_gateway_broadcast(void)
{
    char text[2048];

    text_with(text, sizeof(text), NULL, NULL, NULL, "198.18.0.255");
    return one_error(text, 5, "gateway_addr", "198.18.0.255",
                     "is the broadcast address of 198.18.0.0/24",
                     SUBNET_ALLOWED " except host_addr 198.18.0.2");
}

static bool t_mac_multicast(void)
{
    return extra_error("devices = \"01:00:5e:00:00:01\"", "devices", "01:00:5e:00:00:01",
                       "is a multicast address (lowest bit of the first byte set)",
                       "unicast MAC address aa:bb:cc:dd:ee:ff, not all-zero");
}

static bool t_mac_zero(void)
{
    return extra_error("devices = \"00:00:00:00:00:00\"", "devices", "00:00:00:00:00:00",
                       "is the all-zero address",
                       "unicast MAC address aa:bb:cc:dd:ee:ff, not all-zero");
}

const struct conf_test conf_value_tests[] = {
    { "CPU list forms: \"2,4\", \"1-3,6\", spaces", t_cpulist_forms },
    { "CPU list errors: reversed, twice, range, syntax, count", t_cpulist_errors },
    { "IPv4 forms: 1.2.3 and 256.0.0.1 rejected", t_ipv4_forms },
    { "netmask prefix and contiguity", t_mask_prefix },
    { "MAC forms", t_mac_forms },
    { "host_addr 256.0.0.1", t_ipv4_256 },
    { "host_addr loopback", t_host_loopback },
    { "host_addr multicast", t_host_multicast },
    { "host_addr 0.0.0.0", t_host_zero },
    { "host_addr network address", t_host_network },
    { "host_addr broadcast address", t_host_broadcast },
    { "mask_addr 0.0.0.0", t_mask_zero },
    { "mask_addr /32", t_mask_32 },
    { "mask_addr /31 accepted", t_mask_31 },
    { "gateway_addr equal to host_addr", t_gateway_is_host },
    { "gateway_addr broadcast address", t_gateway_broadcast },
    { "devices multicast", t_mac_multicast },
    { "devices all-zero", t_mac_zero },
};
const size_t conf_value_ntests = sizeof(conf_value_tests) / sizeof(conf_value_tests[0]);
