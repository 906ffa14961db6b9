/*
 * test_ltran_conf.c - the ltran.conf parser (ltran/ltran_conf.c), one
 * behaviour per check: defaults, every kind of key, each bad value named
 * with file:line and key, all problems reported at once, unknown keys, the
 * options ltran sets itself refused, the sample conf/ltran.conf accepted.
 * Pure: no DPDK. TAP output. argv[1]: the sample conf/ltran.conf.
 */
#include <stdio.h>
#include <string.h>

#include "ltran_conf.h"
#include "tap.h"

static struct ltran_conf c;
static char err[8192];

static int parse(const char *text)
{
    return ltran_conf_parse(text, "t.conf", &c, err, sizeof(err));
}

/* text fails, and err has want (printed when it does not). */
static void bad(const char *text, const char *want, const char *what)
{
    int rc = parse(text);
    checkf(rc != 0 && strstr(err, want) != NULL, "%s: reports \"%s\"", what, want);
    if (rc == 0 || strstr(err, want) == NULL)
        printf("#   got rc %d, err: %s\n", rc, err);
}

int main(int argc, char **argv)
{
    const char *min = "forward_kit_args = \"-l 0 --vdev=net_af_packet0,iface=eth1\"\n";
    check(parse(min) == 0, "the minimal conf (forward_kit_args) parses");
    check(c.argc == 3 && strcmp(c.args[0], "-l") == 0 && strcmp(c.args[2], "--vdev=net_af_packet0,iface=eth1") == 0,
          "forward_kit_args split into EAL words");
    check(strcmp(c.file_prefix, "ltran") == 0 && strcmp(c.socket_path, "/var/run/ltran/ltran.sock") == 0 &&
              !c.has_mac && c.max_clients == 32 && c.nb_mbufs == 32767 && c.ring_size == 1024 &&
              c.max_conns == 65536 && c.low_power == 0,
          "defaults: file prefix ltran, socket /var/run/ltran/ltran.sock, no MAC, 32 clients, 32767 mbufs");
    check(parse("forward_kit = \"dpdk\"\nforward_kit_args = \"-l 1\"\nfile_prefix = \"lt2\"\n"
                "ltran_socket = \"/tmp/x.sock\"\nbond_macs = \"aa:bb:cc:dd:ee:0f\"\ndispatch_max_client = 3\n"
                "mbuf_pool_size = 4096\nclient_ring_size = 256\ndispatch_max_conn = 1000\nlow_power_mode = 1\n"
                "nic_rxqueue_size = 512\nnic_txqueue_size = 256\n") == 0,
          "every key set");
    check(strcmp(c.file_prefix, "lt2") == 0 && strcmp(c.socket_path, "/tmp/x.sock") == 0 && c.has_mac &&
              c.mac[0] == 0xaa && c.mac[5] == 0x0f && c.max_clients == 3 && c.nb_mbufs == 4096 && c.ring_size == 256 &&
              c.max_conns == 1000 && c.low_power == 1 && c.rx_desc == 512 && c.tx_desc == 256,
          "every key's value lands in its field");
    bad("file_prefix = \"x\"\n", "t.conf: forward_kit_args: missing (mandatory)", "no forward_kit_args");
    bad("forward_kit_args = \"\"\n", "t.conf:1: forward_kit_args: empty", "empty forward_kit_args");
    bad("forward_kit_args = \"-l 0 --in-memory\"\n", "t.conf:1: forward_kit_args: \"--in-memory\": ltran sets this itself",
        "--in-memory refused");
    bad("forward_kit_args = \"-l 0 --file-prefix=x\"\n", "t.conf:1: forward_kit_args: \"--file-prefix=x\"",
        "--file-prefix refused (file_prefix names it)");
    bad("forward_kit_args = \"-l 0\"\n\nforward_kit = \"netmap\"\n", "t.conf:3: forward_kit: \"netmap\": only \"dpdk\"",
        "forward_kit other than dpdk, on line 3");
    bad("forward_kit_args = \"-l 0\"\ndispatch_max_client = 33\n", "t.conf:2: dispatch_max_client: \"33\": must be an integer 1..32",
        "dispatch_max_client out of range");
    bad("forward_kit_args = \"-l 0\"\nclient_ring_size = 1000\n", "t.conf:2: client_ring_size: 1000: must be a power of two",
        "client_ring_size not a power of two");
    bad("forward_kit_args = \"-l 0\"\nmbuf_pool_size = \"many\"\n", "t.conf:2: mbuf_pool_size: \"many\": must be a number",
        "a number given as a string");
    bad("forward_kit_args = \"-l 0\"\nfile_prefix = 7\n", "t.conf:2: file_prefix: \"7\": must be a quoted string",
        "a string given as a number");
    bad("forward_kit_args = \"-l 0\"\nbond_macs = \"aa:bb:cc\"\n", "t.conf:2: bond_macs: \"aa:bb:cc\": not a MAC",
        "a bad MAC");
    bad("forward_kit_args = \"-l 0\"\nfile_prefix = \"a/b\"\n", "t.conf:2: file_prefix: \"a/b\": no '/'",
        "a file prefix with a slash");
    bad("forward_kit_args = \"-l 0\"\nbond_mode = 1\n", "t.conf:2: bond_mode: unknown key", "an unknown key");
    bad("forward_kit_args = \"-l 0\"\ndispatch_max_client = = 3\nfile_prefix = \"x\"\n", "t.conf:2: syntax error", "a syntax error names its line");
    int rc = parse("forward_kit_args = \"-l 0\"\ndispatch_max_client = 0\nmbuf_pool_size = 5\nwhat = 1\n");
    check(rc != 0 && strstr(err, "t.conf:2: dispatch_max_client") && strstr(err, "t.conf:3: mbuf_pool_size") &&
              strstr(err, "t.conf:4: what"),
          "every problem is reported, not only the first");
    if (argc > 1) {
        rc = ltran_conf_load(argv[1], &c, err, sizeof(err));
        check(rc == 0, "the sample conf/ltran.conf parses");
        if (rc != 0)
            printf("#   %s\n", err);
    }
    rc = ltran_conf_load("/nonexistent/ltran.conf", &c, err, sizeof(err));
    check(rc != 0 && strstr(err, "/nonexistent/ltran.conf: cannot read") != NULL, "a missing file is named");
    return tap_done();
}
