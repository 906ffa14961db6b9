/*
 * stackctl - look inside a running lstack process (the preload under an
 * application, or lstackd): its connections, counters, configuration and
 * port, and set its log level. The kernel does not see lstack's traffic,
 * so ss, netstat and tcpdump cannot.
 *
 * This file owns the command line (options, help, exit status) and the
 * request of each command; finding the process and the conversation are in
 * stackctl_target.c / stackctl_conn.c, the output in stackctl_render.c and
 * stackctl_stats.c. Guide: docs/stackctl.md.
 *
 * Design: docs/design.md#stackctl-names-a-process-not-a-stack
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "ctl/ctl_conns.h"
#include "stackctl.h"

#ifndef LSTACK_VERSION
#define LSTACK_VERSION "unknown"
#endif

static const char *const usage_main =
    "usage: stackctl [TARGET] [--json] COMMAND ...\n"
    "\n"
    "Look inside a running lstack process: what ss, netstat and ethtool show for\n"
    "the kernel's stack.\n"
    "\n"
    "Commands:\n"
    "  show connections   TCP connections and listeners (also: show -c)\n"
    "  show stats         counters per stack and in total (also: show; show -r: rates)\n"
    "  show config        the configuration in effect, defaults included\n"
    "  show nic           the DPDK port: driver, link, queues, offloads, xstats\n"
    "  set loglevel LEVEL error, warning, info or debug, at once\n"
    "  list               the lstack processes found\n"
    "  ltran [SOCKET]     ltran's clients (processes sharing its port), their addresses,\n"
    "                     listeners, frames in/out/dropped, ring depths, and its cost\n"
    "  help [COMMAND]     this text, or a command's\n"
    "\n"
    "Target (default: the only running lstack process):\n"
    "  -p, --pid PID      the process with this PID\n"
    "  -n, --name NAME    the lstack process whose program is NAME\n"
    "      --prefix P     only control sockets with unix_prefix P\n"
    "\n"
    "Options:\n"
    "  -j, --json         one JSON document instead of a table\n"
    "      --timeout S    seconds to wait for the process (default 10)\n"
    "  -h, --help         help (after a command: that command's)\n"
    "  -V, --version      stackctl's version and protocol version\n"
    "\n"
    "Control sockets live in $LSTACK_RUN_DIR (default /var/run/lstack).\n"
    "Exit status: 0 ok, 1 failed, 2 usage, 3 no such lstack process (none, several,\n"
    "dead, not lstack), 4 permission denied, 5 protocol version mismatch.\n";

static const char *const usage_show =
    "usage: stackctl [TARGET] show connections [--state STATE] [--port N] [--stack N] [--json]\n"
    "       stackctl [TARGET] show stats [-r | --watch N] [--count K] [--stack N] [--json]\n"
    "       stackctl [TARGET] show config [--json]\n"
    "       stackctl [TARGET] show nic [--json]\n"
    "\n"
    "show connections (-c): one row per TCP connection of every stack of the\n"
    "  process: stack, fd, local and remote address, state, unread bytes\n"
    "  (RECV_Q), bytes not sent yet (UNSENT) and not acknowledged yet (UNACKED),\n"
    "  congestion window, send and receive windows, RTT and RTO (lwIP measures\n"
    "  in 500 ms ticks), retransmissions of the oldest segment. Listeners first,\n"
    "  with their backlog and accept queue.\n"
    "    --state STATE   only this TCP state (ESTABLISHED, LISTEN, TIME_WAIT, ...)\n"
    "    --port N        only connections whose local or remote port is N\n"
    "    --stack N       only stack N of the process (connections; stats: its row and a\n"
    "                    total of it alone)\n"
    "show stats: rx/tx packets and bytes, drops by reason, mbufs, connections\n"
    "  opened/accepted/refused/reset, application calls, calls the kernel served;\n"
    "  the poll rounds as VPP's show runtime: rounds/s, busy %, frames per busy\n"
    "  round, cycles per frame, busy and idle time (busy: rounds that moved a\n"
    "  frame, and the application's work until the next round).\n"
    "    -r              rates per second, every second\n"
    "    --watch N       rates per second, every N seconds\n"
    "    --count K       stop after K reports (default: until interrupted)\n"
    "show config: every lstack.conf key with the value in effect.\n"
    "show nic: DPDK port information, basic and extended counters.\n";

static const char *const usage_set =
    "usage: stackctl [TARGET] set loglevel {error|warning|info|debug} [--json]\n"
    "\n"
    "Set the process's lstack log level at once (stderr and syslog).\n";

static const char *const usage_list =
    "usage: stackctl list [--prefix P]\n"
    "\n"
    "List the control sockets in the run dir: PID, program, prefix, and whether\n"
    "the process still runs (a socket of a killed process is left over).\n";

static const char *const usage_ltran =
    "usage: stackctl ltran [SOCKET] [--json]\n"
    "\n"
    "Ask ltran (the process that shares one port among lstack processes) at its\n"
    "unix socket (default $LTRAN_SOCKET, else /var/run/ltran/ltran.sock): its\n"
    "clients with their addresses, listeners, 4-tuples, frames delivered (RX),\n"
    "taken (TX), dropped on a full ring, ring depths; its own counters and the\n"
    "busy time per frame forwarded (docs/ltran.md).\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "stackctl: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(stackctl --help for the usage)\n");
    return SC_USAGE;
}

/* Parse a whole number in [min, max]. */
static bool parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* Send req to the target and render its reply with show. */
typedef int (*render_fn)(struct sc_src *src, bool json, FILE *out, char *err, size_t errlen);

static int run(const struct sc_target *t, const struct sc_opts *o, const char *req, render_fn show)
{
    struct sc_conn c;
    char err[1024];
    int rc = sc_connect(t, o->timeout_ms, &c, err, sizeof(err));
    if (rc == SC_OK)
        rc = sc_send(&c, req, err, sizeof(err)) == 0 ? SC_OK : SC_FAIL;
    if (rc == SC_OK) {
        struct sc_src src;
        sc_src_conn(&src, &c);
        rc = show(&src, o->json, stdout, err, sizeof(err));
        sc_close(&c);
    }
    if (rc != SC_OK)
        fprintf(stderr, "stackctl: %s\n", err);
    fflush(stdout);
    return rc;
}

/* The stats request (with --stack N: that stack only). */
static void stats_req(const struct sc_opts *o, char *req, size_t len)
{
    if (o->stack >= 0)
        snprintf(req, len, "{\"version\":%d,\"cmd\":\"stats\",\"stack\":%d}", CTL_PROTO_VERSION, o->stack);
    else
        snprintf(req, len, "{\"version\":%d,\"cmd\":\"stats\"}", CTL_PROTO_VERSION);
}

/* One stats reading into s. */
static int read_stats(const struct sc_target *t, const struct sc_opts *o, struct sc_sample *s)
{
    struct sc_conn c;
    char err[1024], req[128];
    stats_req(o, req, sizeof(req));
    int rc = sc_connect(t, o->timeout_ms, &c, err, sizeof(err));
    if (rc == SC_OK)
        rc = sc_send(&c, req, err, sizeof(err)) == 0 ? SC_OK : SC_FAIL;
    if (rc == SC_OK) {
        struct sc_src src;
        sc_src_conn(&src, &c);
        rc = sc_read_sample(&src, s, err, sizeof(err));
        sc_close(&c);
    }
    if (rc != SC_OK)
        fprintf(stderr, "stackctl: %s\n", err);
    return rc;
}

static int watch(const struct sc_target *t, const struct sc_opts *o)
{
    static struct sc_sample prev, cur;
    int rc = read_stats(t, o, &prev);
    for (long n = 0; rc == SC_OK && (o->count == 0 || n < o->count); n++) {
        sleep((unsigned)o->watch_s);
        rc = read_stats(t, o, &cur);
        if (rc != SC_OK)
            break;
        sc_print_rates(&prev, &cur, o->json, !o->json && n % 20 == 0, stdout);
        fflush(stdout);
        prev = cur;
    }
    return rc;
}

static int cmd_show(const struct sc_target *t, const struct sc_opts *o, const char *what)
{
    char req[512];
    if (strcmp(what, "connections") == 0 || strcmp(what, "conns") == 0) {
        int n = snprintf(req, sizeof(req), "{\"version\":%d,\"cmd\":\"connections\"", CTL_PROTO_VERSION);
        if (o->state != NULL)
            n += snprintf(req + n, sizeof(req) - (size_t)n, ",\"state\":\"%s\"", o->state);
        if (o->port >= 0)
            n += snprintf(req + n, sizeof(req) - (size_t)n, ",\"port\":%d", o->port);
        if (o->stack >= 0)
            n += snprintf(req + n, sizeof(req) - (size_t)n, ",\"stack\":%d", o->stack);
        snprintf(req + n, sizeof(req) - (size_t)n, "}");
        return run(t, o, req, sc_show_connections);
    }
    if (strcmp(what, "stats") == 0) {
        if (o->watch_s > 0)
            return watch(t, o);
        stats_req(o, req, sizeof(req));
        return run(t, o, req, sc_show_stats);
    }
    if (strcmp(what, "config") == 0 || strcmp(what, "nic") == 0) {
        snprintf(req, sizeof(req), "{\"version\":%d,\"cmd\":\"%s\"}", CTL_PROTO_VERSION, what);
        return run(t, o, req, what[0] == 'c' ? sc_show_config : sc_show_nic);
    }
    return usage_error("show what? '%s' (connections, stats, config, nic)", what); /* main checked it */
}

static const char *help_for(const char *cmd)
{
    if (cmd == NULL)
        return usage_main;
    if (strcmp(cmd, "show") == 0)
        return usage_show;
    if (strcmp(cmd, "set") == 0)
        return usage_set;
    if (strcmp(cmd, "list") == 0)
        return usage_list;
    if (strcmp(cmd, "ltran") == 0)
        return usage_ltran;
    return NULL;
}

enum { OPT_PREFIX = 256, OPT_TIMEOUT, OPT_STATE, OPT_PORT, OPT_WATCH, OPT_COUNT, OPT_STACK };

/* Options into o; the rest (the command words) stay in argv[optind..]. */
static int parse_opts(int argc, char **argv, struct sc_opts *o, bool *help, char *shortcut)
{
    static const struct option longs[] = {
        {"pid", required_argument, NULL, 'p'},      {"name", required_argument, NULL, 'n'},
        {"prefix", required_argument, NULL, OPT_PREFIX}, {"json", no_argument, NULL, 'j'},
        {"timeout", required_argument, NULL, OPT_TIMEOUT}, {"state", required_argument, NULL, OPT_STATE},
        {"port", required_argument, NULL, OPT_PORT}, {"watch", required_argument, NULL, OPT_WATCH},
        {"count", required_argument, NULL, OPT_COUNT}, {"help", no_argument, NULL, 'h'},
        {"stack", required_argument, NULL, OPT_STACK},
        {"version", no_argument, NULL, 'V'},       {NULL, 0, NULL, 0},
    };
    long v;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":p:n:jcrhV", longs, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (!parse_long(optarg, 1, INT_MAX, &v))
                return usage_error("-p wants a PID, not '%s'", optarg);
            o->pid = (pid_t)v;
            break;
        case 'n':
            o->name = optarg;
            break;
        case OPT_PREFIX:
            if (!ctl_prefix_ok(optarg))
                return usage_error("--prefix '%s': letters, digits, '.', '_' and '-' only", optarg);
            o->prefix = optarg;
            break;
        case 'j':
            o->json = true;
            break;
        case OPT_TIMEOUT:
            if (!parse_long(optarg, 1, 3600, &v))
                return usage_error("--timeout wants 1..3600 seconds, not '%s'", optarg);
            o->timeout_ms = (int)v * 1000;
            break;
        case OPT_STATE:
            if (ctl_tcp_state_parse(optarg) < 0)
                return usage_error("--state '%s': one of CLOSED LISTEN SYN_SENT SYN_RCVD ESTABLISHED FIN_WAIT_1 "
                                   "FIN_WAIT_2 CLOSE_WAIT CLOSING LAST_ACK TIME_WAIT",
                                   optarg);
            o->state = ctl_tcp_state_name(ctl_tcp_state_parse(optarg));
            break;
        case OPT_STACK:
            if (!parse_long(optarg, 0, 1023, &v))
                return usage_error("--stack wants a stack number 0..1023, not '%s'", optarg);
            o->stack = (int)v;
            break;
        case OPT_PORT:
            if (!parse_long(optarg, 0, 65535, &v))
                return usage_error("--port wants 0..65535, not '%s'", optarg);
            o->port = (int)v;
            break;
        case 'c':
        case 'r':
            *shortcut = (char)c;
            if (c == 'r' && o->watch_s == 0)
                o->watch_s = 1;
            break;
        case OPT_WATCH:
            if (!parse_long(optarg, 1, 86400, &v))
                return usage_error("--watch wants 1..86400 seconds, not '%s'", optarg);
            o->watch_s = (int)v;
            break;
        case OPT_COUNT:
            if (!parse_long(optarg, 1, LONG_MAX, &v))
                return usage_error("--count wants a positive number, not '%s'", optarg);
            o->count = v;
            break;
        case 'h':
            *help = true;
            break;
        case 'V':
            printf("stackctl (lstack %s), protocol %s version %d\n", LSTACK_VERSION, CTL_PROTO_NAME,
                   CTL_PROTO_VERSION);
            exit(SC_OK);
        case ':':
            return usage_error("option %s needs a value", argv[optind - 1]);
        default:
            return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    return SC_OK;
}

static bool known_show(const char *what)
{
    static const char *const known[] = {"connections", "conns", "stats", "config", "nic"};
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(what, known[i]) == 0)
            return true;
    return false;
}

/* The canonical name of a log level (any case), or NULL. */
static const char *level_name(const char *arg)
{
    static const char *const levels[] = {"error", "warning", "info", "debug"};
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
        if (strcasecmp(arg, levels[i]) == 0)
            return levels[i];
    return NULL;
}

/* set loglevel LEVEL (checked by main). */
static int cmd_set(const struct sc_target *t, const struct sc_opts *o, const char *level)
{
    char req[128];
    snprintf(req, sizeof(req), "{\"version\":%d,\"cmd\":\"loglevel\",\"level\":\"%s\"}", CTL_PROTO_VERSION,
             level_name(level));
    return run(t, o, req, sc_show_loglevel);
}

int main(int argc, char **argv)
{
    struct sc_opts o = {.timeout_ms = 10000, .port = -1, .stack = -1};
    bool help = false;
    char shortcut = 0;
    int rc = parse_opts(argc, argv, &o, &help, &shortcut);
    if (rc != SC_OK)
        return rc;
    int nargs = argc - optind;
    char **args = argv + optind;
    const char *cmd = nargs > 0 ? args[0] : NULL;
    if (cmd != NULL && strcmp(cmd, "help") == 0) {
        help = true;
        cmd = nargs > 1 ? args[1] : NULL;
    }
    if (help) {
        const char *text = help_for(cmd);
        if (text == NULL)
            return usage_error("no help for '%s' (commands: show, set, list)", cmd);
        fputs(text, stdout);
        return SC_OK;
    }
    if (cmd == NULL) {
        fputs(usage_main, stderr);
        return SC_USAGE;
    }
    if (strcmp(cmd, "list") == 0)
        return sc_list(&o, stdout);
    if (strcmp(cmd, "ltran") == 0) {
        if (nargs > 2)
            return usage_error("unexpected argument '%s'", args[2]);
        return sc_ltran(&o, nargs > 1 ? args[1] : NULL, stdout);
    }
    if (strcmp(cmd, "show") != 0 && strcmp(cmd, "set") != 0)
        return usage_error("unknown command '%s' (show, set, list, ltran, help)", cmd);
    const char *what = nargs > 1 ? args[1] : shortcut == 'c' ? "connections" : "stats";
    if (strcmp(cmd, "show") == 0 && nargs > 2)
        return usage_error("unexpected argument '%s'", args[2]);
    if (strcmp(cmd, "show") == 0 && !known_show(what))
        return usage_error("show what? '%s' (connections, stats, config, nic)", what);
    if (strcmp(cmd, "set") == 0 && (nargs != 3 || strcmp(args[1], "loglevel") != 0))
        return usage_error("%s", "usage: stackctl set loglevel {error|warning|info|debug}");
    if (strcmp(cmd, "set") == 0 && level_name(args[2]) == NULL)
        return usage_error("log level '%s': error, warning, info or debug", args[2]);
    struct sc_target t;
    char err[2048];
    rc = sc_find_target(&o, &t, err, sizeof(err));
    if (rc != SC_OK) {
        fprintf(stderr, "stackctl: %s\n", err);
        return rc;
    }
    if (strcmp(cmd, "set") == 0)
        return cmd_set(&t, &o, args[2]);
    return cmd_show(&t, &o, what);
}
