/*
 * test_ctl_render.c - stackctl's output from canned reply records: aligned
 * tables, JSON documents (checked by parsing them back), rates, and how a
 * process's error record or a cut reply becomes an exit status. TAP; no
 * socket, no root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stackctl.h"

#include "tap.h"

/* ---- a record source over canned lines ---- */

struct canned {
    const char *const *lines;
    int i;
    char buf[4096];
};

static int canned_next(void *ctx, struct ctl_obj *o, char *err, size_t errlen, int *status)
{
    struct canned *c = ctx;
    *status = SC_FAIL;
    if (c->lines[c->i] == NULL) {
        snprintf(err, errlen, "cut");
        return -1;
    }
    snprintf(c->buf, sizeof(c->buf), "%s", c->lines[c->i++]);
    char perr[64];
    if (ctl_obj_parse(c->buf, o, perr, sizeof(perr)) != 0) {
        snprintf(err, errlen, "bad: %s", perr);
        return -1;
    }
    const char *type = ctl_obj_str(o, "type");
    if (strcmp(type, "error") == 0) {
        snprintf(err, errlen, "%s", ctl_obj_str(o, "error"));
        return -1;
    }
    return strcmp(type, "end") == 0 ? 0 : 1;
}

static char hello_line[] =
    "{\"type\":\"hello\",\"proto\":\"lstack-ctl\",\"version\":1,\"pid\":42,\"prog\":\"redis-server\",\"lstack\":\"9.8.7\"}";
static struct ctl_obj hello;

/* Render lines with fn into a string (caller frees). */
static char *render(const char *const *lines, int (*fn)(struct sc_src *, bool, FILE *, char *, size_t), bool json,
                    int *rc, char *err, size_t errlen)
{
    struct canned c = {.lines = lines};
    struct sc_src src = {.next = canned_next, .ctx = &c, .hello = &hello};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    *rc = fn(&src, json, f, err, errlen);
    fclose(f);
    return text;
}

/* A cheap well-formedness check of a JSON document: brackets balance
 * outside strings (the system test parses the real output with Python). */
static int balanced(const char *s)
{
    int depth = 0, in_str = 0;
    for (; *s; s++) {
        if (in_str) {
            if (*s == '\\' && s[1])
                s++;
            else if (*s == '"')
                in_str = 0;
            continue;
        }
        if (*s == '"')
            in_str = 1;
        else if (*s == '{' || *s == '[')
            depth++;
        else if (*s == '}' || *s == ']')
            depth--;
        if (depth < 0)
            return 0;
    }
    return depth == 0 && !in_str;
}

static const char *const conns[] = {
    "{\"type\":\"listen\",\"stack\":0,\"fd\":6,\"local\":\"0.0.0.0:6379\",\"state\":\"LISTEN\",\"backlog\":511,\"accept_q\":2}",
    "{\"type\":\"conn\",\"stack\":0,\"fd\":7,\"local\":\"198.18.0.2:6379\",\"remote\":\"198.18.0.1:40000\","
    "\"state\":\"ESTABLISHED\",\"recv_q\":10,\"unsent\":0,\"unacked\":5,\"cwnd\":14600,\"snd_wnd\":65535,"
    "\"rcv_wnd\":65535,\"rtt_ms\":0,\"rto_ms\":3000,\"rexmit\":0}",
    "{\"type\":\"conn\",\"stack\":0,\"fd\":-1,\"local\":\"198.18.0.2:6379\",\"remote\":\"198.18.0.1:40001\","
    "\"state\":\"TIME_WAIT\",\"recv_q\":0,\"unsent\":0,\"unacked\":0,\"cwnd\":0,\"snd_wnd\":0,"
    "\"rcv_wnd\":0,\"rtt_ms\":0,\"rto_ms\":0,\"rexmit\":0}",
    "{\"type\":\"end\",\"connections\":2,\"listeners\":1,\"pages\":1,\"page_size\":256,\"lock_max_us\":1500}",
    NULL,
};

static void test_table(void)
{
    static const char *const head[] = {"NAME", "N", "LAST", NULL};
    struct sc_table t;
    sc_table_init(&t, head, "lrl");
    const char *r1[] = {"a", "1", "x"}, *r2[] = {"longer", "12345", NULL};
    sc_table_row(&t, r1);
    sc_table_row(&t, r2);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sc_table_print(&t, f);
    fclose(f);
    check(strcmp(text, "NAME        N  LAST\n"
                       "a           1  x\n"
                       "longer  12345  -\n") == 0,
          "table: widths from the widest cell, numbers right, NULL as '-', no trailing blanks");
    free(text);
    sc_table_free(&t);
}

static void test_connections(void)
{
    char err[256];
    int rc;
    char *t = render(conns, sc_show_connections, false, &rc, err, sizeof(err));
    check(rc == SC_OK, "connections: status ok");
    check(strstr(t, "LISTENERS\nSTACK  FD  LOCAL         BACKLOG  ACCEPT_Q\n    0   6  0.0.0.0:6379      511         2\n") != NULL,
          "connections: listener table");
    check(strstr(t, "    0   7  198.18.0.2:6379  198.18.0.1:40000  ESTABLISHED      10") != NULL,
          "connections: connection row aligned");
    check(strstr(t, "    0   -  198.18.0.2:6379  198.18.0.1:40001  TIME_WAIT") != NULL, "connections: fd -1 shows '-'");
    check(strstr(t, "2 connections, 1 listener; unread 10 B, unsent 0 B, unacked 5 B") != NULL &&
              strstr(t, "longest stack lock hold 1.500 ms") != NULL,
          "connections: summary with totals and the lock hold");
    free(t);
    t = render(conns, sc_show_connections, true, &rc, err, sizeof(err));
    static const char start[] = "{\"pid\":42,\"prog\":\"redis-server\",\"listeners\":[{\"stack\":0,";
    check(rc == SC_OK && balanced(t) && strncmp(t, start, strlen(start)) == 0,
          "connections --json: one document, hello's pid and prog first");
    check(strstr(t, "\"connections\":[{\"stack\":0,\"fd\":7,") != NULL && strstr(t, "\"type\"") == NULL &&
              strstr(t, "\"summary\":{\"connections\":2,") != NULL,
          "connections --json: arrays without the type field, summary from the end record");
    free(t);
}

static void test_errors(void)
{
    char err[256];
    int rc;
    static const char *const cut[] = {conns[0], NULL};
    free(render(cut, sc_show_connections, false, &rc, err, sizeof(err)));
    check(rc == SC_FAIL && strcmp(err, "cut") == 0, "a reply without its end record fails");
    static const char *const refused[] = {"{\"type\":\"error\",\"error\":\"unknown TCP state 'x'\"}", NULL};
    char *t = render(refused, sc_show_connections, true, &rc, err, sizeof(err));
    check(rc == SC_FAIL && strstr(err, "unknown TCP state") != NULL && (t == NULL || t[0] == '\0'),
          "an error record: its message, nothing printed");
    free(t);
}

static void test_config_nic_loglevel(void)
{
    static const char *const conf[] = {
        "{\"type\":\"config\",\"path\":\"/etc/x.conf\",\"log_level_now\":\"debug\"}",
        "{\"type\":\"comment\",\"text\":\"# devices: not set\"}",
        "{\"type\":\"key\",\"key\":\"host_addr\",\"raw\":\"\\\"198.18.0.2\\\"\",\"value\":\"198.18.0.2\"}",
        "{\"type\":\"key\",\"key\":\"tcp_conn_count\",\"raw\":\"1500\",\"value\":1500}",
        "{\"type\":\"end\"}",
        NULL,
    };
    char err[256];
    int rc;
    char *t = render(conf, sc_show_config, false, &rc, err, sizeof(err));
    check(rc == SC_OK && strstr(t, "# log level now: debug\n# devices: not set\nhost_addr = \"198.18.0.2\"\n"
                                   "tcp_conn_count = 1500\n") != NULL,
          "config: lstack.conf syntax");
    check(strstr(t, "# process 42 (redis-server), lstack 9.8.7, configuration read at start-up from /etc/x.conf\n") ==
              t,
          "config: the first line names the process and the preload's version");
    free(t);
    t = render(conf, sc_show_config, true, &rc, err, sizeof(err));
    check(rc == SC_OK && strstr(t, "\"keys\":{\"host_addr\":\"198.18.0.2\",\"tcp_conn_count\":1500}") != NULL &&
              strstr(t, "\"path\":\"/etc/x.conf\"") != NULL && strstr(t, "\"lstack\":\"9.8.7\"") != NULL &&
              balanced(t),
          "config --json: typed values");
    free(t);
    static const char *const nic[] = {
        "{\"type\":\"nic\",\"stack\":0,\"group\":\"port\",\"name\":\"driver\",\"value\":\"net_af_packet\"}",
        "{\"type\":\"nic\",\"stack\":0,\"group\":\"xstats\",\"name\":\"rx_good_packets\",\"value\":7}",
        "{\"type\":\"nic\",\"stack\":0,\"group\":\"port\",\"name\":\"mtu\",\"value\":1500}",
        "{\"type\":\"end\"}",
        NULL,
    };
    t = render(nic, sc_show_nic, true, &rc, err, sizeof(err));
    check(rc == SC_OK && strstr(t, "\"ports\":[{\"stack\":0,\"port\":{\"driver\":\"net_af_packet\",\"mtu\":1500},"
                                   "\"xstats\":{\"rx_good_packets\":7}}]") != NULL,
          "nic --json: items grouped per stack and group");
    free(t);
    t = render(nic, sc_show_nic, false, &rc, err, sizeof(err));
    check(rc == SC_OK && strstr(t, "    0  xstats  rx_good_packets  7\n") != NULL, "nic: table");
    free(t);
    static const char *const ll[] = {"{\"type\":\"loglevel\",\"old\":\"info\",\"level\":\"debug\"}", "{\"type\":\"end\"}",
                                     NULL};
    t = render(ll, sc_show_loglevel, false, &rc, err, sizeof(err));
    check(rc == SC_OK && strcmp(t, "log level of 42 (redis-server): info -> debug\n") == 0, "set loglevel: one line");
    free(t);
}

static const char *const stats[] = {
    "{\"type\":\"time\",\"t_us\":1000000}",
    "{\"type\":\"stack\",\"stack\":0,\"rx_packets\":100,\"drop_not_ours\":1,\"port_imissed\":2,\"sockets\":3,\"mbuf_in_use\":9}",
    "{\"type\":\"total\",\"rx_packets\":100,\"drop_not_ours\":1,\"port_imissed\":2,\"sockets\":3,\"mbuf_in_use\":9}",
    "{\"type\":\"app\",\"reads\":50,\"writes\":40,\"fds_open\":12,\"fds_limit\":1024}",
    "{\"type\":\"end\"}",
    NULL,
};

static const char *const stats2[] = {
    "{\"type\":\"time\",\"t_us\":3000000}",
    "{\"type\":\"total\",\"rx_packets\":300,\"drop_not_ours\":5,\"port_imissed\":2,\"sockets\":4,\"mbuf_in_use\":9}",
    "{\"type\":\"app\",\"reads\":150,\"writes\":40,\"fds_open\":13,\"fds_limit\":1024}",
    "{\"type\":\"end\"}",
    NULL,
};

static void test_stats(void)
{
    char err[256];
    int rc;
    char *t = render(stats, sc_show_stats, false, &rc, err, sizeof(err));
    check(rc == SC_OK && strstr(t, "COUNTER        STACK 0  TOTAL\nrx_packets         100    100\n") != NULL,
          "stats: per stack and total columns");
    check(strstr(t, "APPLICATION (process-wide)  VALUE\nreads                          50\n") != NULL,
          "stats: application counters");
    check(strstr(t, "\nfds_open                       12\nfds_limit                    1024\n") != NULL,
          "stats: the process's open fds and their limit, in the process-wide table");
    free(t);
    t = render(stats, sc_show_stats, true, &rc, err, sizeof(err));
    check(rc == SC_OK && balanced(t) && strstr(t, "\"t_us\":1000000") != NULL &&
              strstr(t, "\"app\":{\"reads\":50,\"writes\":40,\"fds_open\":12,\"fds_limit\":1024}") != NULL &&
              strstr(t, "\"stacks\":[{\"stack\":0,\"rx_packets\":100,") != NULL,
          "stats --json: time, total, app, stacks");
    free(t);

    struct sc_sample a, b;
    struct canned c1 = {.lines = stats}, c2 = {.lines = stats2};
    struct sc_src s1 = {.next = canned_next, .ctx = &c1, .hello = &hello};
    struct sc_src s2 = {.next = canned_next, .ctx = &c2, .hello = &hello};
    check(sc_read_sample(&s1, &a, err, sizeof(err)) == SC_OK && sc_read_sample(&s2, &b, err, sizeof(err)) == SC_OK &&
              a.t_us == 1000000 && sc_sample_get(&b, "reads") == 150 && sc_sample_get(&a, "sockets") == 3,
          "samples: total and app fields, the process's clock");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sc_print_rates(&a, &b, true, false, f);
    fclose(f);
    check(strstr(text, "\"interval_s\":2.000000") != NULL && strstr(text, "\"rx_packets\":100.000") != NULL &&
              strstr(text, "\"reads\":50.000") != NULL && strstr(text, "\"writes\":0.000") != NULL,
          "rates --json: per second over the process's interval");
    check(strstr(text, "\"gauges\":{") != NULL && strstr(strstr(text, "\"gauges\":{"), "\"sockets\":4,") != NULL &&
              strstr(text, "\"sockets\":0.5") == NULL,
          "rates --json: gauges as they are, not as rates");
    check(strstr(text, "\"fds_open\":13,\"fds_limit\":1024") != NULL && strstr(text, "\"fds_open\":0.5") == NULL,
          "rates --json: fds open and their limit are gauges");
    free(text);
    text = NULL;
    f = open_memstream(&text, &len);
    sc_print_rates(&a, &b, false, true, f);
    fclose(f);
    char *row = strchr(text, '\n');
    int fields[15] = {0};
    int n = row != NULL ? sscanf(row + 1, "%*s %d %d %d %d %d %d %d %d %d %d %d %d %d %d", &fields[0], &fields[1],
                                 &fields[2], &fields[3], &fields[4], &fields[5], &fields[6], &fields[7], &fields[8],
                                 &fields[9], &fields[10], &fields[11], &fields[12], &fields[13])
                      : 0;
    check(strncmp(text, "TIME ", 5) == 0 && strstr(text, " RX_PPS ") != NULL && n == 14 && fields[0] == 100 && fields[4] == 2 &&
              fields[7] == 50 && fields[12] == 4,
          "rates table: header, rx 100/s, drops of every kind summed 2/s, reads 50/s, sockets 4");
    free(text);
}

/* Poll-round counters: two stacks, then the same process 2 s later. */
static const char *const rounds1[] = {
    "{\"type\":\"time\",\"t_us\":1000000}",
    "{\"type\":\"stack\",\"stack\":0,\"polls\":1000,\"rounds_busy\":100,\"rounds_rx_frames\":150,"
    "\"rounds_tx_frames\":50,\"rounds_busy_cycles\":2000000,\"rounds_idle_cycles\":6000000,\"tsc_hz\":2000000000,"
    "\"lock_waits\":10,\"lock_wait_cycles\":800000}",
    "{\"type\":\"stack\",\"stack\":1,\"polls\":3000,\"rounds_busy\":0,\"rounds_rx_frames\":0,"
    "\"rounds_tx_frames\":0,\"rounds_busy_cycles\":0,\"rounds_idle_cycles\":8000000,\"tsc_hz\":2000000000}",
    "{\"type\":\"total\",\"polls\":4000,\"rounds_busy\":100,\"rounds_rx_frames\":150,"
    "\"rounds_tx_frames\":50,\"rounds_busy_cycles\":2000000,\"rounds_idle_cycles\":14000000,\"tsc_hz\":2000000000,"
    "\"lock_waits\":10,\"lock_wait_cycles\":800000}",
    "{\"type\":\"app\",\"reads\":50}",
    "{\"type\":\"end\"}",
    NULL,
};
static const char *const rounds2[] = {
    "{\"type\":\"time\",\"t_us\":3000000}",
    "{\"type\":\"total\",\"polls\":404000,\"rounds_busy\":1100,\"rounds_rx_frames\":2150,"
    "\"rounds_tx_frames\":1050,\"rounds_busy_cycles\":1002000000,\"rounds_idle_cycles\":3014000000,"
    "\"tsc_hz\":2000000000,\"lock_waits\":1010,\"lock_wait_cycles\":200800000}",
    "{\"type\":\"app\",\"reads\":50}",
    "{\"type\":\"end\"}",
    NULL,
};

static void test_runtime(void)
{
    char err[256];
    int rc;
    char *t = render(rounds1, sc_show_stats, false, &rc, err, sizeof(err));
    check(rc == SC_OK && strstr(t, "RUNTIME (since start)  STACK 0  STACK 1    TOTAL\n"
                                   "rounds/s                250000   750000  1000000\n"
                                   "busy %                   25.00     0.00    12.50\n"
                                   "frames/busy round         2.00        -     2.00\n"
                                   "cycles/frame             10000        -    10000\n"
                                   "busy ms                    1.0      0.0      1.0\n"
                                   "idle ms                    3.0      4.0      7.0\n"
                                   "lock wait ms               0.4      0.0      0.4\n"
                                   "lock wait %              10.00     0.00     5.00\n") != NULL,
          "stats: the runtime table (rounds/s, busy %, frames per busy round, cycles per frame, busy and idle "
          "time, the time waited for the stack's lock) per stack and in total; '-' where there is nothing to "
          "divide");
    free(t);
    t = render(rounds1, sc_show_stats, true, &rc, err, sizeof(err));
    check(rc == SC_OK && balanced(t) &&
              strstr(t, "\"runtime\":{\"total\":{\"rounds\":4000,\"rounds_busy\":100,\"frames\":200,"
                        "\"tsc_hz\":2000000000,\"rounds_per_s\":1000000.0,\"busy_pct\":12.500,"
                        "\"frames_per_busy_round\":2.000,\"cycles_per_frame\":10000.0,\"busy_us\":1000.0,"
                        "\"idle_us\":7000.0,\"lock_waits\":10,\"lock_wait_us\":400.0,\"lock_wait_pct\":5.000},"
                        "\"stacks\":[{\"rounds\":1000,") != NULL &&
              strstr(t, "\"frames_per_busy_round\":null,\"cycles_per_frame\":null") != NULL,
          "stats --json: the runtime, total and per stack (null where there is nothing to divide)");
    free(t);

    struct sc_sample a, b;
    struct canned c1 = {.lines = rounds1}, c2 = {.lines = rounds2};
    struct sc_src s1 = {.next = canned_next, .ctx = &c1, .hello = &hello};
    struct sc_src s2 = {.next = canned_next, .ctx = &c2, .hello = &hello};
    sc_read_sample(&s1, &a, err, sizeof(err));
    sc_read_sample(&s2, &b, err, sizeof(err));
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sc_print_rates(&a, &b, true, false, f);
    fclose(f);
    check(strstr(text, "\"runtime\":{\"rounds\":400000,\"rounds_busy\":1000,\"frames\":3000,\"tsc_hz\":2000000000,"
                       "\"rounds_per_s\":200000.0,\"busy_pct\":25.000,\"frames_per_busy_round\":3.000,"
                       "\"cycles_per_frame\":333333.3,\"busy_us\":500000.0,\"idle_us\":1500000.0,"
                       "\"lock_waits\":1000,\"lock_wait_us\":100000.0,\"lock_wait_pct\":5.000}") != NULL &&
              strstr(text, "\"gauges\":{") != NULL && strstr(text, "\"tsc_hz\":2000000000}") != NULL &&
              strstr(text, "\"tsc_hz\":0.000") == NULL,
          "rates --json: the runtime over the interval; tsc_hz is a gauge, not a rate");
    free(text);
    text = NULL;
    f = open_memstream(&text, &len);
    sc_print_rates(&a, &b, false, true, f);
    fclose(f);
    check(strstr(text, " ROUNDS/S      BUSY%    FR/BUSY  CYC/FRAME  LOCKWAIT%\n") != NULL &&
              strstr(text, "     200000       25.0       3.00     333333       5.00\n") != NULL,
          "rates table: rounds/s, busy %, frames per busy round, cycles per frame, lock wait % over the "
          "interval");
    free(text);
}

int main(void)
{
    char err[64];
    if (ctl_obj_parse(hello_line, &hello, err, sizeof(err)) != 0) {
        printf("not ok 1 - hello parses\n1..1\n");
        return 1;
    }
    test_table();
    test_connections();
    test_errors();
    test_config_nic_loglevel();
    test_stats();
    test_runtime();
    return tap_done();
}
