#!/usr/bin/env python3
"""Parse and aggregate the runs of scripts/bench.sh (stdlib only).

    bench.py oneline RUNDIR        one line about one run (progress output)
    bench.py aggregate OUTDIR [--rounds N] [--scenarios 1,2] [--server-cpu N] [--client-cpu N]
                                   results.json, results.csv, runs.csv,
                                   summary.txt (also printed), chart.gp + chart.dat
    bench.py table RESULTS.json    print the table of an earlier run again
    bench.py noisy RUNDIR...       exit 1 if another process disturbed one of the runs
    bench.py perf RUNDIR           the server's and the client's perf samples by
                                   object group (a run made with --perf)

A run directory (raw/s<S>-r<R>-<kind>/) holds what bench.sh recorded:
bench.csv (redis-benchmark --csv), times.0/.1 (bash's `times` around the
client), pid_stat.0/.1 (/proc/PID/stat of redis-server before
and after), stat.0/.1 (/proc/stat), t.0/t.1 (ns), status, others_before/after;
with --client-napi threaded, napi_stat.0/.1 (/proc/PID/stat of the client
veth's NAPI kthreads: "client_napi_us_per_req", their CPU time over the
requests, the client's receive that runs there; it is not counted as a
foreign process's).

Server CPU = (utime + stime) delta of the redis-server process over the
client's run, in % of one core; client CPU = user + sys of redis-benchmark
(the change in the driving shell's children times) over the same time; cpuN busy = non-idle share of CPU N from /proc/stat
(softirq included, whoever it ran for).

Server CPU per request: the redis-server process's (utime + stime) delta
over the client's run divided by the requests made (-n times the tests of
the scenario), for every kind ("server_us_per_req"); for a server under
lstack also the stack's busy time over the same requests
("stack_busy_us_per_req"): the poll rounds' busy cycles (rounds that moved
a frame, and what the polling thread did until its next round: redis's own
work included, idle polling excluded; lstack/stack/round_acct.h) between
`stackctl show stats --json` before and after the client (stack_stats.0/.1),
converted with the TSC rate the stack reports. That is wall-clock time: a
server the kernel preempts is charged for the wait, so the process's CPU
time shared out by the busy fraction comes too
("stack_busy_cpu_us_per_req"). Of the busy time, the part inside the
port's tx burst calls ("stack_tx_burst_us_per_req", stackctl's
tx_burst_cycles): on af_xdp over the veth it holds the kick system call and
the kernel client's receive path that the kick runs on the server's core,
so the busy time less it ("stack_busy_less_tx_us_per_req") is the server's
own work without the bed's (both reported, issue 11); frames per tx burst
("stack_frames_per_tx_burst", stackctl's tx_packets over tx_bursts: frames
per af_xdp kick). For every kind, the server CPU's whole busy time from
/proc/stat over the requests ("server_core_us_per_req"; the table gives
the kernel's: with --rps on its own receive runs there, in softirq that
may land while the CPU is idle, outside redis's utime + stime). Per
scenario: medians over rounds, and lstack / kernel ratios of both
(results.json "cpu_per_req", results.csv, the table, chart-cpu.gp).

Ratios: median over rounds of lstack divided by the median of the kernel,
for req/s and for each latency percentile. A run with --base-build has a
third kind, "base" (another lstack build): then base / kernel and lstack /
base ratios of the same medians come too (results.json: "ratio_base_kernel"
and "ratio_lstack_base" per test; results.csv, the table and the chart gain
their columns); without base runs the output is what it was before.
A run with --rtw has the kind "rtw" (the same build in stack_thread_mode =
"run-to-wakeup"): rtw / kernel and rtw / lstack ratios ("ratio_rtw_kernel",
"ratio_rtw_lstack" per test; results.csv and the table gain their columns)
and issue 12's targets (RTW_TARGETS); the chart leaves rtw out.
"""
import csv
import json
import os
import re
import statistics
import sys

SCENARIOS = {
    1: "-c 50 -P 1 -t set,get -d 3",
    2: "-c 1000 -r 1000000 -t set,get -d 3",
    3: "-c 50 -P 16 -t set,get",
    4: "-c 50 -t set,get -d 1024",
    5: "-c 1 -t ping",
    6: "-c 10 -t set,get -d 65536",
    7: "-c 50 -t set,get -d 3 --threads 2 (servers: --io-threads 2 --io-threads-do-reads yes)",
}
KINDS = ("kernel", "lstack")
BASE = "base"  # the kind of a --base-build run
RTW = "rtw"  # the kind of a --rtw run: lstack in run-to-wakeup
RUN_DIR = re.compile(r"^s(\d+)-r(\d+)-(kernel|lstack|base|rtw)$")

# Issue 12 (--rtw): (scenario, metric, over, op, bound, text): rtw's median
# over the median of kind `over`.
RTW_TARGETS = [
    (1, "rps", "lstack", ">=", 0.85, "scenario 1: run-to-wakeup (one stack) within 15% of run-to-completion "
                                     "(rtw / lstack req/s >= 0.85)"),
    (7, "rps", "kernel", ">=", 1.3, "scenario 7 (io-threads on every kind): run-to-wakeup >= 1.3x the kernel"),
]

# (scenario, what, op, bound, text): server CPU per request, lstack / kernel.
# what: "busy" (the stack's busy time) or "process" (utime + stime).
CPU_TARGETS = [
    (1, "busy", "<=", 0.35, "kernel client bed, scenario 1: lstack server us/request (stack busy time) "
                            "<= 0.35x the kernel's (utime + stime)"),
]

# (scenario, what, op, bound, text). what: rps or p50/p99 ratio
# lstack/kernel; op ">=" or "<=".
TARGETS = [
    (1, "rps", ">=", 1.5, "scenario 1 throughput >= 1.5x kernel"),
    (2, "rps", ">=", 1.5, "scenario 2 throughput >= 1.5x kernel"),
    (4, "rps", ">=", 1.5, "scenario 4 throughput >= 1.5x kernel"),
    (3, "rps", ">=", 1.2, "scenario 3 throughput >= 1.2x kernel"),
    (1, "p99", "<=", 0.7, "scenario 1 p99 <= 0.7x kernel"),
    (2, "p99", "<=", 0.7, "scenario 2 p99 <= 0.7x kernel"),
    (5, "p50", "<=", 1.0, "scenario 5 p50 no worse than kernel"),
]


def read(path, default=None):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def parse_bench_csv(path):
    """{test: {rps, avg, min, p50, p95, p99, max}} from redis-benchmark --csv."""
    out = {}
    text = read(path, "")
    rows = list(csv.reader(line for line in text.splitlines() if line.strip()))
    if not rows or rows[0][:2] != ["test", "rps"]:
        return out
    head = rows[0]
    names = {"rps": "rps", "avg_latency_ms": "avg", "min_latency_ms": "min",
             "p50_latency_ms": "p50", "p95_latency_ms": "p95",
             "p99_latency_ms": "p99", "max_latency_ms": "max"}
    for row in rows[1:]:
        if len(row) != len(head):
            continue
        rec = {}
        for k, v in zip(head[1:], row[1:]):
            if k in names:
                try:
                    rec[names[k]] = float(v)
                except ValueError:
                    pass
        if "rps" in rec:
            out[row[0]] = rec
    return out


def proc_times(stat_text):
    """(utime + stime) in ticks from a /proc/PID/stat line, or None."""
    if not stat_text or ") " not in stat_text:
        return None
    rest = stat_text.rsplit(") ", 1)[1].split()
    # rest[0] is field 3 (state): utime is field 14, stime field 15
    return int(rest[11]) + int(rest[12])


def napi_times(text0, text1, hz):
    """Seconds of CPU (utime + stime) the client veth's NAPI kthreads used
    between two snapshots (napi_stat.0/.1: one /proc/PID/stat line each,
    the pid first), or None (no snapshot: not --client-napi threaded).
    A kthread in one snapshot only (re-created in between) counts as 0."""
    if not text0 or not text1:
        return None

    def by_pid(text):
        out = {}
        for line in text.splitlines():
            t = proc_times(line)
            if t is not None:
                out[line.split(None, 1)[0]] = t
        return out
    a, b = by_pid(text0), by_pid(text1)
    if not a or not b:
        return None
    return sum(b[p] - a[p] for p in b if p in a) / hz


def child_times(text):
    """(user, sys) seconds of the children, from bash's `times` (2nd line)."""
    lines = (text or "").strip().splitlines()
    if len(lines) < 2:
        return None
    vals = []
    for tok in lines[1].split():
        m = re.match(r"^(\d+)m([\d.]+)s$", tok)
        if not m:
            return None
        vals.append(int(m.group(1)) * 60 + float(m.group(2)))
    return tuple(vals) if len(vals) == 2 else None


def netdev_counts(text):
    out = {}
    for line in (text or "").splitlines():
        p = line.split()
        if len(p) == 2 and p[1].isdigit():
            out[p[0]] = int(p[1])
    return out


def cpu_lines(stat_text):
    """{cpuN: (busy, total)} in ticks from /proc/stat."""
    out = {}
    for line in (stat_text or "").splitlines():
        m = re.match(r"^(cpu\d+)\s+(.*)$", line)
        if not m:
            continue
        v = [int(x) for x in m.group(2).split()]
        idle = v[3] + (v[4] if len(v) > 4 else 0)  # idle + iowait
        total = sum(v[:8])  # guest time is already in user
        out[m.group(1)] = (total - idle, total)
    return out


def scenario_nreq(out, s):
    """The -n of scenario s's client command (commands.txt), or None."""
    for c in (read(os.path.join(out, "commands.txt"), "") or "").splitlines():
        m = re.match(rf"^scenario {s} client: .* -n (\d+) ", c + " ")
        if m:
            return int(m.group(1))
    return None


def stack_rounds(text):
    """(busy_cycles, idle_cycles, rounds, busy_rounds, tsc_hz,
    tx_burst_cycles or None) of the "total" of a `stackctl show stats
    --json` document, or None."""
    try:
        t = json.loads(text)["total"]
        r = tuple(int(t[k]) for k in ("rounds_busy_cycles", "rounds_idle_cycles", "polls", "rounds_busy", "tsc_hz"))
        return r + ((int(t["tx_burst_cycles"]) if "tx_burst_cycles" in t else None),)
    except (TypeError, ValueError, KeyError):
        return None


def stack_tx_bursts(text):
    """(tx_bursts, tx_packets) of the "total" of a `stackctl show stats
    --json` document, or None (a build without tx_bursts)."""
    try:
        t = json.loads(text)["total"]
        return int(t["tx_bursts"]), int(t["tx_packets"])
    except (TypeError, ValueError, KeyError):
        return None


def run_record(d):
    """Everything about one run directory."""
    name = os.path.basename(d.rstrip("/"))
    m = RUN_DIR.match(name)
    rec = {"dir": name}
    if m:
        rec.update(scenario=int(m.group(1)), round=int(m.group(2)), kind=m.group(3))
    rec["status"] = (read(os.path.join(d, "status"), "missing") or "").strip()
    rec["tests"] = parse_bench_csv(os.path.join(d, "bench.csv"))
    t0 = read(os.path.join(d, "t.0"))
    t1 = read(os.path.join(d, "t.1"))
    wall = (int(t1) - int(t0)) / 1e9 if t0 and t1 else None
    rec["wall_s"] = wall
    hz = os.sysconf("SC_CLK_TCK")
    a = proc_times(read(os.path.join(d, "pid_stat.0")))
    b = proc_times(read(os.path.join(d, "pid_stat.1")))
    rec["server_cpu_pct"] = (100.0 * (b - a) / hz / wall) if (a is not None and b is not None and wall) else None
    c0 = child_times(read(os.path.join(d, "times.0")))
    c1 = child_times(read(os.path.join(d, "times.1")))
    if c0 and c1 and wall:
        user, sys_ = c1[0] - c0[0], c1[1] - c0[1]
        rec["client_cpu_pct"] = 100.0 * (user + sys_) / wall
        rec["client_user_s"], rec["client_sys_s"] = user, sys_
    else:
        rec["client_cpu_pct"] = None
    s0 = cpu_lines(read(os.path.join(d, "stat.0")))
    s1 = cpu_lines(read(os.path.join(d, "stat.1")))
    busy, busy_s = {}, {}
    for cpu in s0:
        if cpu in s1:
            db = s1[cpu][0] - s0[cpu][0]
            dt = s1[cpu][1] - s0[cpu][1]
            busy[cpu] = 100.0 * db / dt if dt > 0 else None
            busy_s[cpu] = db / hz
    rec["cpu_busy_pct"] = busy
    rec["cpu_busy_s"] = busy_s
    # CPU time of anything else on the machine over the run: all CPUs' busy
    # time less the server's and the client's, in % of one core. About 0-5%
    # on a quiet machine (kernel threads, this script); more means another
    # process competed with the measurement.
    hz_total = 0.0
    for cpu in s0:
        if cpu in s1:
            hz_total += (s1[cpu][0] - s0[cpu][0]) / hz
    srv_s = (b - a) / hz if (a is not None and b is not None) else None
    cli_s = (rec.get("client_user_s") or 0) + (rec.get("client_sys_s") or 0)
    # --client-napi threaded: the client veth's NAPI kthreads (the client's
    # receive) are the bed's, not another process's: counted apart.
    napi_s = napi_times(read(os.path.join(d, "napi_stat.0")), read(os.path.join(d, "napi_stat.1")), hz)
    rec["client_napi_s"] = napi_s
    rec["foreign_cpu_pct"] = ((100.0 * (hz_total - srv_s - cli_s - (napi_s or 0)) / wall)
                              if (srv_s is not None and wall) else None)
    # Server CPU per request: the process's, and (lstack) the stack's busy time.
    nreq = scenario_nreq(os.path.dirname(os.path.dirname(os.path.abspath(d))), rec.get("scenario"))
    requests = nreq * len(rec["tests"]) if nreq and rec["tests"] else None
    rec["requests"] = requests
    rec["server_cpu_s"] = srv_s
    rec["server_us_per_req"] = srv_s * 1e6 / requests if (srv_s is not None and requests) else None
    rec["client_napi_us_per_req"] = napi_s * 1e6 / requests if (napi_s is not None and requests) else None
    r0 = stack_rounds(read(os.path.join(d, "stack_stats.0")))
    r1 = stack_rounds(read(os.path.join(d, "stack_stats.1")))
    rec["stack_busy_s"] = rec["stack_idle_s"] = rec["stack_busy_pct"] = rec["stack_busy_us_per_req"] = None
    rec["stack_busy_cpu_us_per_req"] = None
    rec["stack_tx_burst_us_per_req"] = rec["stack_busy_less_tx_us_per_req"] = None
    rec["stack_frames_per_tx_burst"] = None
    b0 = stack_tx_bursts(read(os.path.join(d, "stack_stats.0")))
    b1 = stack_tx_bursts(read(os.path.join(d, "stack_stats.1")))
    if b0 and b1 and b1[0] > b0[0]:
        rec["stack_frames_per_tx_burst"] = (b1[1] - b0[1]) / (b1[0] - b0[0])
    if r0 and r1 and r1[4] > 0 and r1[0] >= r0[0] and r1[1] >= r0[1]:
        busy, idle = (r1[0] - r0[0]) / r1[4], (r1[1] - r0[1]) / r1[4]
        rec["stack_busy_s"], rec["stack_idle_s"] = busy, idle
        rec["stack_rounds"], rec["stack_busy_rounds"] = r1[2] - r0[2], r1[3] - r0[3]
        rec["stack_busy_pct"] = 100.0 * busy / (busy + idle) if busy + idle > 0 else None
        rec["stack_busy_us_per_req"] = busy * 1e6 / requests if requests else None
        if requests and r0[5] is not None and r1[5] is not None and r1[5] >= r0[5]:
            tx = (r1[5] - r0[5]) / r1[4]
            rec["stack_tx_burst_us_per_req"] = tx * 1e6 / requests
            rec["stack_busy_less_tx_us_per_req"] = (busy - tx) * 1e6 / requests
        # The busy time is wall-clock (TSC): on a shared machine a preempted
        # server is charged for the wait. The process's CPU time shared out
        # by the busy fraction is the same measure without the waits (if
        # preemption falls on busy and idle time alike).
        if srv_s is not None and requests and rec["stack_busy_pct"] is not None:
            rec["stack_busy_cpu_us_per_req"] = srv_s * rec["stack_busy_pct"] / 100.0 * 1e6 / requests
    n0 = netdev_counts(read(os.path.join(d, "netdev.0")))
    n1 = netdev_counts(read(os.path.join(d, "netdev.1")))
    rec["client_if"] = {k: n1[k] - n0[k] for k in n0 if k in n1} if n0 and n1 else None
    for k in ("others_before", "others_after"):
        v = (read(os.path.join(d, k)) or "").strip()
        rec[k] = int(v) if v.isdigit() else None
    return rec


NOISY_FOREIGN_PCT = 8.0


def is_noisy(rec):
    f = rec.get("foreign_cpu_pct")
    return ((rec.get("others_before") or 0) + (rec.get("others_after") or 0) > 0
            or (f is not None and f > NOISY_FOREIGN_PCT))


def cmd_noisy(dirs):
    """Exit 1 when one of the runs was disturbed by another process."""
    bad = 0
    for d in dirs:
        r = run_record(d)
        if is_noisy(r):
            bad += 1
            f = r.get("foreign_cpu_pct")
            print(f"{os.path.basename(d)}: other processes {r.get('others_before')}/{r.get('others_after')}, "
                  f"foreign CPU {'-' if f is None else format(f, '.0f')}%")
    return 1 if bad else 0


def fmt_rps(v):
    return "-" if v is None else f"{v:,.0f}"


def fmt_ms(v):
    return "-" if v is None else f"{v:.3f}"


def fmt_x(v):
    return "-" if v is None else f"{v:.2f}x"


def fmt_pct(v):
    return "-" if v is None else f"{v:.0f}%"


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def cmd_oneline(d):
    r = run_record(d)
    parts = []
    for t, v in r["tests"].items():
        parts.append(f"{t} {fmt_rps(v.get('rps'))} req/s p50 {fmt_ms(v.get('p50'))} p99 {fmt_ms(v.get('p99'))} ms")
    parts.append(f"server CPU {fmt_pct(r['server_cpu_pct'])}, client CPU {fmt_pct(r.get('client_cpu_pct'))}")
    if r.get("server_us_per_req") is not None:
        busy = r.get("stack_busy_us_per_req")
        parts.append(f"server {fmt_us(r['server_us_per_req'])} us/req"
                     + ("" if busy is None else f", stack busy {fmt_us(busy)} us/req ({fmt_pct(r.get('stack_busy_pct'))};"
                                                f" that share of its CPU {fmt_us(r.get('stack_busy_cpu_us_per_req'))})")
                     + ("" if r.get("stack_tx_burst_us_per_req") is None else
                        f", of it in tx bursts {fmt_us(r['stack_tx_burst_us_per_req'])}, busy less tx bursts"
                        f" {fmt_us(r.get('stack_busy_less_tx_us_per_req'))} us/req"))
    if r.get("client_napi_us_per_req") is not None:
        parts.append(f"client NAPI kthread {fmt_us(r['client_napi_us_per_req'])} us/req")
    print("; ".join(parts))


def cpu_per_req(per_kind, has_base, has_rtw=False):
    """Server CPU microseconds per request of a scenario, by kind, and the
    ratios to the kernel's (process time; the stack's busy time)."""
    kern = per_kind.get("kernel", {}).get("server_us_per_req")
    out = {"kernel": {"us": kern, "core_us": per_kind.get("kernel", {}).get("server_core_us_per_req"),
                      "napi_us": per_kind.get("kernel", {}).get("client_napi_us_per_req")}}
    for k in ("lstack",) + ((BASE,) if has_base else ()) + ((RTW,) if has_rtw else ()):
        pk = per_kind.get(k, {})
        out[k] = {"us": pk.get("server_us_per_req"), "busy_us": pk.get("stack_busy_us_per_req"),
                  "busy_pct": pk.get("stack_busy_pct"), "busy_cpu_us": pk.get("stack_busy_cpu_us_per_req"),
                  "ratio_process": ratio(pk.get("server_us_per_req"), kern),
                  "ratio_busy": ratio(pk.get("stack_busy_us_per_req"), kern),
                  "ratio_busy_cpu": ratio(pk.get("stack_busy_cpu_us_per_req"), kern),
                  "tx_burst_us": pk.get("stack_tx_burst_us_per_req"),
                  "busy_less_tx_us": pk.get("stack_busy_less_tx_us_per_req"),
                  "frames_per_tx_burst": pk.get("stack_frames_per_tx_burst"),
                  "napi_us": pk.get("client_napi_us_per_req"),
                  "ratio_busy_less_tx": ratio(pk.get("stack_busy_less_tx_us_per_req"), kern)}
    return out


def aggregate(out, rounds, scen_list, server_cpu, client_cpu):
    raw = os.path.join(out, "raw")
    runs = []
    for name in sorted(os.listdir(raw)) if os.path.isdir(raw) else []:
        d = os.path.join(raw, name)
        if os.path.isdir(d) and RUN_DIR.match(name):
            runs.append(run_record(d))
    runs.sort(key=lambda r: (r.get("scenario", 0), r.get("round", 0), r.get("kind", "")))
    retried = sorted(n for n in (os.listdir(raw) if os.path.isdir(raw) else []) if ".noisy" in n)
    has_base = any(r.get("kind") == BASE for r in runs)
    has_rtw = any(r.get("kind") == RTW for r in runs)
    kinds = KINDS + ((BASE,) if has_base else ()) + ((RTW,) if has_rtw else ())

    scen = {}
    for s in scen_list:
        srun = [r for r in runs if r.get("scenario") == s]
        tests = []
        for r in srun:
            for t in r["tests"]:
                if t not in tests:
                    tests.append(t)
        per_kind = {}
        for k in kinds:
            kr = [r for r in srun if r.get("kind") == k and r["status"] == "ok"]
            nreq = scenario_nreq(out, s)
            def per_req(r, key):
                ci = r.get("client_if")
                if not ci or key not in ci or not nreq or not r["tests"]:
                    return None
                return ci[key] / (nreq * len(r["tests"]))
            per_kind[k] = {
                "pkts_to_client_per_req": median([per_req(r, "rx_packets") for r in kr]),
                "pkts_from_client_per_req": median([per_req(r, "tx_packets") for r in kr]),
                "napi_pkts_to_client_per_req": median([per_req(r, "napi_packets") for r in kr]),
                "rounds_ok": len(kr),
                "server_cpu_pct": median([r["server_cpu_pct"] for r in kr]),
                "server_us_per_req": median([r.get("server_us_per_req") for r in kr]),
                "stack_busy_us_per_req": median([r.get("stack_busy_us_per_req") for r in kr]),
                "stack_busy_pct": median([r.get("stack_busy_pct") for r in kr]),
                "stack_busy_cpu_us_per_req": median([r.get("stack_busy_cpu_us_per_req") for r in kr]),
                "stack_tx_burst_us_per_req": median([r.get("stack_tx_burst_us_per_req") for r in kr]),
                "stack_busy_less_tx_us_per_req": median([r.get("stack_busy_less_tx_us_per_req") for r in kr]),
                "stack_frames_per_tx_burst": median([r.get("stack_frames_per_tx_burst") for r in kr]),
                # The server CPU's whole busy time (/proc/stat: softirq run
                # while the CPU was idle included) over the requests: with
                # --rps on, the kernel server's own receive runs there.
                "server_core_us_per_req": median([
                    r["cpu_busy_s"][f"cpu{server_cpu}"] * 1e6 / r["requests"]
                    if r.get("requests") and f"cpu{server_cpu}" in (r.get("cpu_busy_s") or {}) else None
                    for r in kr]),
                "client_cpu_pct": median([r.get("client_cpu_pct") for r in kr]),
                "client_napi_us_per_req": median([r.get("client_napi_us_per_req") for r in kr]),
                "cpu_busy_pct": {
                    c: median([r["cpu_busy_pct"].get(c) for r in kr])
                    for c in (f"cpu{server_cpu}", f"cpu{client_cpu}")
                },
            }
        tstats = {}
        for t in tests:
            ts = {}
            for k in kinds:
                kr = [r for r in srun if r.get("kind") == k and r["status"] == "ok" and t in r["tests"]]
                ts[k] = {
                    "rounds": {r["round"]: r["tests"][t] for r in kr},
                    **{m: median([r["tests"][t].get(m) for r in kr])
                       for m in ("rps", "avg", "p50", "p95", "p99", "max")},
                }
            ts["ratio"] = {m: ratio(ts["lstack"][m], ts["kernel"][m]) for m in ("rps", "avg", "p50", "p95", "p99")}
            if has_base:
                ts["ratio_base_kernel"] = {m: ratio(ts[BASE][m], ts["kernel"][m])
                                           for m in ("rps", "avg", "p50", "p95", "p99")}
                ts["ratio_lstack_base"] = {m: ratio(ts["lstack"][m], ts[BASE][m])
                                           for m in ("rps", "avg", "p50", "p95", "p99")}
            if has_rtw:
                ts["ratio_rtw_kernel"] = {m: ratio(ts[RTW][m], ts["kernel"][m])
                                          for m in ("rps", "avg", "p50", "p95", "p99")}
                ts["ratio_rtw_lstack"] = {m: ratio(ts[RTW][m], ts["lstack"][m])
                                          for m in ("rps", "avg", "p50", "p95", "p99")}
            tstats[t] = ts
        scen[s] = {"args": SCENARIOS.get(s, "?"), "tests": tstats, "kinds": per_kind,
                   "cpu_per_req": cpu_per_req(per_kind, has_base, has_rtw)}

    # targets: every test of the scenario must meet it
    targets = []
    for s, what, op, bound, text in TARGETS:
        if s not in scen:
            continue
        vals = {t: v["ratio"][what] for t, v in scen[s]["tests"].items()}
        ok = bool(vals) and all(x is not None and (x >= bound if op == ">=" else x <= bound) for x in vals.values())
        targets.append({"target": text, "scenario": s, "metric": what, "op": op, "bound": bound,
                        "values": vals, "met": ok})
    for s, what, op, bound, text in CPU_TARGETS:
        if s not in scen:
            continue
        x = scen[s]["cpu_per_req"]["lstack"]["ratio_busy" if what == "busy" else "ratio_process"]
        ok = x is not None and (x >= bound if op == ">=" else x <= bound)
        targets.append({"target": text, "scenario": s, "metric": f"server_us_per_req_{what}", "op": op,
                        "bound": bound, "values": {"all": x}, "met": ok})
    for s, what, over, op, bound, text in (RTW_TARGETS if has_rtw else []):
        if s not in scen:
            continue
        vals = {t: v[f"ratio_rtw_{over}"][what] for t, v in scen[s]["tests"].items()}
        ok = bool(vals) and all(x is not None and (x >= bound if op == ">=" else x <= bound) for x in vals.values())
        targets.append({"target": text, "scenario": s, "metric": f"rtw_{over}_{what}", "op": op, "bound": bound,
                        "values": vals, "met": ok})
    worse = {}
    for s, v in scen.items():
        if not v["tests"]:
            worse[f"{s}:-"] = None  # no result at all: not met
        for t, ts in v["tests"].items():
            x = ts["ratio"]["rps"]
            if x is None or x < 1.0:
                worse[f"{s}:{t}"] = x
    targets.append({"target": "no scenario slower than the kernel (throughput)", "scenario": None,
                    "metric": "rps", "op": ">=", "bound": 1.0, "values": worse, "met": not worse})

    meta = {}
    for line in (read(os.path.join(out, "versions.txt"), "") or "").splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            meta[k] = v
    result = {
        "versions": meta,
        "commands": (read(os.path.join(out, "commands.txt"), "") or "").splitlines(),
        "lstack_conf": read(os.path.join(out, "lstack.conf"), ""),
        **({"kinds": list(kinds)} if has_base or has_rtw else {}),
        **({"base_conf": read(os.path.join(out, "lstack-base.conf"), "")} if has_base else {}),
        **({"rtw_conf": read(os.path.join(out, "lstack-rtw.conf"), "")} if has_rtw else {}),
        "rounds": rounds,
        "server_cpu": server_cpu,
        "client_cpu": client_cpu,
        "scenarios": {str(k): v for k, v in scen.items()},
        "targets": targets,
        "runs": runs,
        "noisy_retried": retried,
    }
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(result, f, indent=1, sort_keys=False)

    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scenario", "args", "test",
                    "kernel_rps", "lstack_rps", "rps_ratio",
                    "kernel_p50_ms", "lstack_p50_ms", "p50_ratio",
                    "kernel_p99_ms", "lstack_p99_ms", "p99_ratio",
                    "kernel_server_cpu_pct", "lstack_server_cpu_pct",
                    "kernel_client_cpu_pct", "lstack_client_cpu_pct",
                    "kernel_rounds", "lstack_rounds"]
                   + (["base_rps", "base_kernel_rps_ratio", "lstack_base_rps_ratio",
                       "base_p50_ms", "base_kernel_p50_ratio", "lstack_base_p50_ratio",
                       "base_p99_ms", "base_kernel_p99_ratio", "lstack_base_p99_ratio",
                       "base_server_cpu_pct", "base_client_cpu_pct", "base_rounds"] if has_base else [])
                   + ["kernel_server_us_per_req", "lstack_server_us_per_req", "lstack_busy_us_per_req",
                      "lstack_kernel_us_ratio", "lstack_busy_kernel_us_ratio", "lstack_busy_cpu_us_per_req",
                      "lstack_busy_cpu_kernel_us_ratio"]
                   + (["base_server_us_per_req", "base_busy_us_per_req"] if has_base else [])
                   + (["rtw_rps", "rtw_kernel_rps_ratio", "rtw_lstack_rps_ratio",
                       "rtw_p50_ms", "rtw_kernel_p50_ratio", "rtw_lstack_p50_ratio",
                       "rtw_p99_ms", "rtw_kernel_p99_ratio", "rtw_lstack_p99_ratio",
                       "rtw_server_cpu_pct", "rtw_client_cpu_pct", "rtw_rounds", "rtw_server_us_per_req",
                       "rtw_busy_us_per_req"] if has_rtw else []))
        for s, v in scen.items():
            for t, ts in v["tests"].items():
                k, l = ts["kernel"], ts["lstack"]
                row = [s, v["args"], t,
                       k["rps"], l["rps"], ts["ratio"]["rps"],
                       k["p50"], l["p50"], ts["ratio"]["p50"],
                       k["p99"], l["p99"], ts["ratio"]["p99"],
                       v["kinds"]["kernel"]["server_cpu_pct"], v["kinds"]["lstack"]["server_cpu_pct"],
                       v["kinds"]["kernel"]["client_cpu_pct"], v["kinds"]["lstack"]["client_cpu_pct"],
                       len(k["rounds"]), len(l["rounds"])]
                if has_base:
                    b, bk, lb = ts[BASE], ts["ratio_base_kernel"], ts["ratio_lstack_base"]
                    row += [b["rps"], bk["rps"], lb["rps"], b["p50"], bk["p50"], lb["p50"],
                            b["p99"], bk["p99"], lb["p99"],
                            v["kinds"][BASE]["server_cpu_pct"], v["kinds"][BASE]["client_cpu_pct"],
                            len(b["rounds"])]
                cp = v["cpu_per_req"]
                row += [cp["kernel"]["us"], cp["lstack"]["us"], cp["lstack"]["busy_us"],
                        cp["lstack"]["ratio_process"], cp["lstack"]["ratio_busy"], cp["lstack"]["busy_cpu_us"],
                        cp["lstack"]["ratio_busy_cpu"]]
                if has_base:
                    row += [cp[BASE]["us"], cp[BASE]["busy_us"]]
                if has_rtw:
                    w_, wk, wl = ts[RTW], ts["ratio_rtw_kernel"], ts["ratio_rtw_lstack"]
                    row += [w_["rps"], wk["rps"], wl["rps"], w_["p50"], wk["p50"], wl["p50"],
                            w_["p99"], wk["p99"], wl["p99"],
                            v["kinds"][RTW]["server_cpu_pct"], v["kinds"][RTW]["client_cpu_pct"],
                            len(w_["rounds"]), cp[RTW]["us"], cp[RTW]["busy_us"]]
                w.writerow(row)

    with open(os.path.join(out, "runs.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scenario", "round", "kind", "status", "test", "rps", "p50_ms", "p99_ms", "max_ms",
                    "wall_s", "server_cpu_pct", "client_cpu_pct",
                    f"cpu{server_cpu}_busy_pct", f"cpu{client_cpu}_busy_pct", "foreign_cpu_pct",
                    "others_before", "others_after", "requests", "server_us_per_req", "stack_busy_us_per_req",
                    "stack_busy_pct", "stack_busy_cpu_us_per_req"])
        for r in runs:
            for t, v in (r["tests"] or {"-": {}}).items():
                w.writerow([r.get("scenario"), r.get("round"), r.get("kind"), r["status"], t,
                            v.get("rps"), v.get("p50"), v.get("p99"), v.get("max"),
                            r["wall_s"], r["server_cpu_pct"], r.get("client_cpu_pct"),
                            r["cpu_busy_pct"].get(f"cpu{server_cpu}"), r["cpu_busy_pct"].get(f"cpu{client_cpu}"),
                            r.get("foreign_cpu_pct"), r["others_before"], r["others_after"], r.get("requests"),
                            r.get("server_us_per_req"), r.get("stack_busy_us_per_req"), r.get("stack_busy_pct"),
                            r.get("stack_busy_cpu_us_per_req")])

    write_chart(out, scen, has_base)
    write_cpu_chart(out, scen)
    text = table(result)
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(text)
    print(text, end="")
    bad = [r["dir"] for r in runs if r["status"] != "ok"]
    missing = [s for s in scen_list if not scen[s]["tests"]]
    return 1 if bad or missing or not runs else 0


def table(result):
    lines = []
    v = result.get("versions", {})
    lines.append(f"lstack {v.get('lstack_git_rev', '?')[:12]}{' (dirty tree)' if v.get('lstack_git_dirty') == '1' else ''}"
                 f", {v.get('redis', '?').split(' sha=')[0]}, DPDK {v.get('dpdk', '?')}, lwIP {v.get('lwip', '?')}")
    lines.append(f"kernel {v.get('kernel', '?').split(' ')[0]}, {v.get('cpu', '?')}, {v.get('date_utc', '')}")
    offload = f"; kernel veth offloads {v['kernel_offload'].split(' ')[0]}" if "kernel_offload" in v else ""
    if v.get("client_gro", "").startswith("on"):
        offload += "; client veth GRO on"
    if v.get("rps", "").startswith("on"):
        offload += "; RPS on (each veth's receive on its own side's CPU)"
    if v.get("client_napi", "").startswith("threaded"):
        offload += f"; client veth NAPI {v['client_napi'].split(' (')[0]}"
    lines.append(f"server on CPU {result['server_cpu']}, client on CPU {result['client_cpu']}; "
                 f"lstack on {v.get('lstack_pmd', '?').split(' ')[0]}{offload}; "
                 f"medians over {result['rounds']} round(s); ratio = lstack / kernel")
    has_base = BASE in result.get("kinds", ())
    has_rtw = RTW in result.get("kinds", ())
    if has_rtw:
        lines.append(f"rtw: the same lstack in stack_thread_mode run-to-wakeup ({v.get('rtw_conf', '?')})")
    if has_base:
        lines.append(f"base: lstack {v.get('base_git_rev', '?')[:12]}"
                     f"{' (dirty tree)' if v.get('base_git_dirty') == '1' else ''}, {v.get('base_buildtype', '?')}, "
                     f"lwIP {v.get('base_lwip', '?')}, {v.get('base_preload', '?')}")
    srv, cli = f"cpu{result['server_cpu']}", f"cpu{result['client_cpu']}"

    def pk(x):
        return "-" if x is None else f"{x:.2f}"
    for s, sv in result["scenarios"].items():
        lines.append("")
        n = ""
        for c in result.get("commands", []):
            m = re.match(rf"^scenario {s} client: .* -n (\d+) ", c)
            if m:
                n = f" -n {m.group(1)}"
        lines.append(f"scenario {s}: redis-benchmark {sv['args']}{n}")
        hdr = f"  {'test':<12} {'kernel req/s':>13} {'lstack req/s':>13} {'ratio':>7}   " \
              f"{'kernel p50/p99 ms':>17} {'lstack p50/p99 ms':>17} {'p50 x':>6} {'p99 x':>6}"
        lines.append(hdr)
        for t, ts in sv["tests"].items():
            k, l, r = ts["kernel"], ts["lstack"], ts["ratio"]
            lines.append(f"  {t:<12} {fmt_rps(k['rps']):>13} {fmt_rps(l['rps']):>13} {fmt_x(r['rps']):>7}   "
                         f"{fmt_ms(k['p50']) + '/' + fmt_ms(k['p99']):>17} "
                         f"{fmt_ms(l['p50']) + '/' + fmt_ms(l['p99']):>17} "
                         f"{fmt_x(r['p50']):>6} {fmt_x(r['p99']):>6}")
        kk, lk = sv["kinds"]["kernel"], sv["kinds"]["lstack"]
        lines.append(f"  server CPU: kernel {fmt_pct(kk['server_cpu_pct'])}, lstack {fmt_pct(lk['server_cpu_pct'])}"
                     f"   client CPU: kernel {fmt_pct(kk['client_cpu_pct'])}, lstack {fmt_pct(lk['client_cpu_pct'])}"
                     f"   {srv}/{cli} busy: kernel {fmt_pct(kk['cpu_busy_pct'].get(srv))}/{fmt_pct(kk['cpu_busy_pct'].get(cli))},"
                     f" lstack {fmt_pct(lk['cpu_busy_pct'].get(srv))}/{fmt_pct(lk['cpu_busy_pct'].get(cli))}"
                     f"   rounds ok: {kk['rounds_ok']}/{lk['rounds_ok']}")
        if kk.get("pkts_to_client_per_req") is not None or lk.get("pkts_to_client_per_req") is not None:
            lines.append(f"  packets per request, to/from the client: kernel {pk(kk.get('pkts_to_client_per_req'))}"
                         f"/{pk(kk.get('pkts_from_client_per_req'))}, lstack {pk(lk.get('pkts_to_client_per_req'))}"
                         f"/{pk(lk.get('pkts_from_client_per_req'))}"
                         + ("" if not (kk.get("napi_pkts_to_client_per_req") or lk.get("napi_pkts_to_client_per_req"))
                            else f"; of those to the client, through the client veth's NAPI: kernel"
                            f" {pk(kk.get('napi_pkts_to_client_per_req'))}, lstack {pk(lk.get('napi_pkts_to_client_per_req'))}"))
        if "cpu_per_req" in sv:
            lines.append(cpu_row(sv["cpu_per_req"]))
        if has_base:
            lines.extend(base_rows(sv, srv, cli, pk))
        if has_rtw:
            lines.extend(rtw_rows(sv, srv, cli, pk))
    lines.append("")
    lines.append("targets:")
    for t in result["targets"]:
        vals = ", ".join(f"{k} {fmt_x(x)}" for k, x in t["values"].items()) or "none"
        lines.append(f"  [{'met' if t['met'] else 'MISSED'}] {t['target']}: {vals}")
    busy = [r for r in result["runs"] if is_noisy(r)]
    if busy:
        lines.append("")
        lines.append(f"note: {len(busy)} of {len(result['runs'])} runs kept were disturbed by other processes "
                     f"(another benchmark/test/build running, or > {NOISY_FOREIGN_PCT:.0f}% of a CPU used by "
                     f"others): {', '.join(r['dir'] for r in busy)}")
    retried = result.get("noisy_retried", [])
    if retried:
        lines.append(f"note: {len(retried)} disturbed run(s) were repeated (kept aside as *.noisyN)")
    return "\n".join(lines) + "\n"


def fmt_us(v):
    return "-" if v is None else f"{v:.2f}"


def cpu_row(cp):
    """The table's line of server CPU microseconds per request."""
    k, l = cp["kernel"], cp["lstack"]
    text = (f"  server CPU us/request: kernel {fmt_us(k['us'])}, lstack {fmt_us(l['us'])}"
            f" ({fmt_x(l['ratio_process'])}), lstack stack busy {fmt_us(l['busy_us'])}"
            f" ({fmt_x(l['ratio_busy'])}; busy {fmt_pct(l['busy_pct'])} of its rounds' time;"
            f" that share of its CPU time {fmt_us(l['busy_cpu_us'])}, {fmt_x(l['ratio_busy_cpu'])})")
    if l.get("tx_burst_us") is not None:
        text += (f"; of the busy time, in tx bursts {fmt_us(l['tx_burst_us'])} (af_xdp: the kick and the kernel"
                 f" client's receive path on the server's core), busy less tx bursts {fmt_us(l['busy_less_tx_us'])}"
                 f" ({fmt_x(l['ratio_busy_less_tx'])})")
        if l.get("frames_per_tx_burst") is not None:
            text += f", {l['frames_per_tx_burst']:.2f} frames per tx burst"
    if k.get("core_us") is not None:
        text += (f"; the kernel server's CPU busy in all (softirq included) {fmt_us(k['core_us'])},"
                 f" lstack busy / that {fmt_x(ratio(l['busy_us'], k['core_us']))}")
    if k.get("napi_us") is not None or l.get("napi_us") is not None:
        text += (f"; the client veth's NAPI kthread (--client-napi threaded: the client's receive) kernel"
                 f" {fmt_us(k.get('napi_us'))}, lstack {fmt_us(l.get('napi_us'))} us/request")
    if BASE in cp:
        b = cp[BASE]
        text += f"; base {fmt_us(b['us'])}, busy {fmt_us(b['busy_us'])} ({fmt_x(b['ratio_busy'])})"
    return text


def write_cpu_chart(out, scen):
    """chart-cpu.dat + chart-cpu.gp: server CPU microseconds per request by
    scenario: the kernel's process, lstack's process, lstack's busy time."""
    rows = [(s, v["cpu_per_req"]) for s, v in scen.items() if "cpu_per_req" in v]
    if not rows or all(cp["kernel"]["us"] is None for _, cp in rows):
        return

    def num(x):
        return "NaN" if x is None else f"{x:.6g}"

    with open(os.path.join(out, "chart-cpu.dat"), "w") as f:
        f.write("# scenario kernel_us lstack_us lstack_busy_us lstack_busy_cpu_us\n")
        for s, cp in rows:
            f.write(f"\"{s}\" {num(cp['kernel']['us'])} {num(cp['lstack']['us'])} {num(cp['lstack']['busy_us'])}"
                    f" {num(cp['lstack']['busy_cpu_us'])}\n")
    gp = """\
set terminal pngcairo size 900,500 font ",10"
set output "chart-cpu.png"
set termoption noenhanced
set datafile missing "NaN"
set title "redis-server CPU per request (median of rounds; lower is better)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set key top left
set xlabel "scenario"
set ylabel "microseconds per request"
set yrange [0:*]
plot "chart-cpu.dat" using 2:xtic(1) title "kernel: utime+stime" lc rgb "#7f7f7f", \\
     "" using 3 title "lstack: utime+stime (idle polling included)" lc rgb "#aec7e8", \\
     "" using 4 title "lstack: stack busy time (TSC)" lc rgb "#1f77b4", \\
     "" using 5 title "lstack: busy share of utime+stime" lc rgb "#17becf"
"""
    with open(os.path.join(out, "chart-cpu.gp"), "w") as f:
        f.write(gp)


def kind_rows(sv, kind, cols, lat, srv, cli, pk, extra=""):
    """The table's lines for a third kind (base, rtw) of one scenario: its
    req/s, the two req/s ratios of cols ((label, key of ts) each), its
    p50/p99 and the latency ratios of lat ((label, key)), then its CPU line."""
    (l1, k1), (l2, k2) = cols
    lines = [f"  {'vs ' + kind:<12} {kind + ' req/s':>13} {l1:>11} {l2:>11}   "
             f"{kind + ' p50/p99 ms':>17} {lat[0] + ' p50 x':>17} {'p99 x':>6}"]
    for t, ts in sv["tests"].items():
        x, r1, r2, rl = ts[kind], ts[k1], ts[k2], ts[lat[1]]
        lines.append(f"  {t:<12} {fmt_rps(x['rps']):>13} {fmt_x(r1['rps']):>11} {fmt_x(r2['rps']):>11}   "
                     f"{fmt_ms(x['p50']) + '/' + fmt_ms(x['p99']):>17} {fmt_x(rl['p50']):>17} {fmt_x(rl['p99']):>6}")
    kk = sv["kinds"][kind]
    lines.append(f"  {kind}: server CPU {fmt_pct(kk['server_cpu_pct'])}, client CPU {fmt_pct(kk['client_cpu_pct'])}"
                 f", {srv}/{cli} busy {fmt_pct(kk['cpu_busy_pct'].get(srv))}/{fmt_pct(kk['cpu_busy_pct'].get(cli))}"
                 f", rounds ok {kk['rounds_ok']}, packets per request to/from the client "
                 f"{pk(kk.get('pkts_to_client_per_req'))}/{pk(kk.get('pkts_from_client_per_req'))}{extra}")
    return lines


def base_rows(sv, srv, cli, pk):
    """The table's lines for the base build of one scenario."""
    return kind_rows(sv, BASE, (("base/kernel", "ratio_base_kernel"), ("lstack/base", "ratio_lstack_base")),
                     ("lstack/base", "ratio_lstack_base"), srv, cli, pk)


def rtw_rows(sv, srv, cli, pk):
    """The table's lines for the run-to-wakeup kind of one scenario."""
    cp = sv.get("cpu_per_req", {}).get(RTW, {})
    return kind_rows(sv, RTW, (("rtw/kernel", "ratio_rtw_kernel"), ("rtw/lstack", "ratio_rtw_lstack")),
                     ("rtw/kernel", "ratio_rtw_kernel"), srv, cli, pk,
                     f", server CPU us/request {fmt_us(cp.get('us'))}, stack busy {fmt_us(cp.get('busy_us'))}")


def write_chart(out, scen, has_base=False):
    """chart.dat + chart.gp: req/s (log scale) and the lstack/kernel ratios.
    With base runs: base's req/s in the first panel, base/kernel req/s in
    the second, and a third panel of the lstack/base ratios (their columns
    come after the first six, which keep their place)."""
    rows = []
    for s, v in scen.items():
        for t, ts in v["tests"].items():
            row = (f"{s}:{t}", ts["kernel"]["rps"], ts["lstack"]["rps"],
                   ts["ratio"]["rps"], ts["ratio"]["p50"], ts["ratio"]["p99"])
            if has_base:
                lb = ts["ratio_lstack_base"]
                row += (ts[BASE]["rps"], ts["ratio_base_kernel"]["rps"], lb["rps"], lb["p50"], lb["p99"])
            rows.append(row)
    if not rows:
        return

    def num(x):
        return "NaN" if x is None else f"{x:.6g}"

    with open(os.path.join(out, "chart.dat"), "w") as f:
        f.write("# label kernel_rps lstack_rps rps_ratio p50_ratio p99_ratio"
                + (" base_rps base_kernel_rps_ratio lstack_base_rps_ratio lstack_base_p50_ratio"
                   " lstack_base_p99_ratio" if has_base else "") + "\n")
        for r in rows:
            f.write(f"\"{r[0]}\" " + " ".join(num(x) for x in r[1:]) + "\n")
    if has_base:
        size, panels, title = "1200,1300", "3,1", "kernel, base build and lstack"
        base_bar = '     "" using 7 title "base" lc rgb "#bcbd22", \\\n'
        base_ratio = '     "" using 8 title "base req/s" lc rgb "#bcbd22", \\\n'
        third = """\
set title "lstack / base, log scale (req/s: higher is better; p50, p99 latency: lower is better)"
plot "chart.dat" using 9:xtic(1) title "req/s" lc rgb "#2ca02c", \\
     "" using 10 title "p50" lc rgb "#ff7f0e", \\
     "" using 11 title "p99" lc rgb "#d62728", \\
     1 notitle with lines lc rgb "black" dt 2
"""
    else:
        size, panels, title = "1200,900", "2,1", "kernel vs lstack"
        base_bar = base_ratio = third = ""
    gp = f"""\
set terminal pngcairo size {size} font ",10"
set output "chart.png"
set termoption noenhanced
set datafile missing "NaN"
set multiplot layout {panels} title "redis-server: {title} (median of rounds)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -30 scale 0
set grid ytics
set key top right
set title "throughput (req/s, log scale)"
set logscale y
set ylabel "req/s"
plot "chart.dat" using 2:xtic(1) title "kernel" lc rgb "#7f7f7f", \\
{base_bar}     "" using 3 title "lstack" lc rgb "#1f77b4"
set title "{'lstack (and base) / kernel' if has_base else 'lstack / kernel'}, log scale (req/s: higher is better; p50, p99 latency: lower is better)"
set ylabel "ratio"
plot "chart.dat" using 4:xtic(1) title "req/s" lc rgb "#2ca02c", \\
     "" using 5 title "p50" lc rgb "#ff7f0e", \\
     "" using 6 title "p99" lc rgb "#d62728", \\
{base_ratio}     1 notitle with lines lc rgb "black" dt 2
{third}unset multiplot
"""
    with open(os.path.join(out, "chart.gp"), "w") as f:
        f.write(gp)


def perf_group(dso):
    d = dso.strip()
    if d.startswith("[kernel"):
        return "kernel"
    if d == "[vdso]":
        return "vdso (clock_gettime)"
    if "lwip" in d:
        return "lwIP"
    if d.startswith("liblstack_dpdk"):
        return "lstack (DPDK side)"
    if d.startswith("liblstack"):
        return "lstack"
    if d.startswith("librte_"):
        return "DPDK"
    if d.startswith("redis-"):
        return "redis"
    if d.startswith("libc.so") or d.startswith("ld-linux"):
        return "libc"
    if d.startswith("libjemalloc"):
        return "allocator"
    return "other"


def cmd_perf(d):
    """Split the perf samples of the server and the client of one run by
    object group, from perf-all.txt (--sort cpu,pid,dso) and perf-sym.txt."""
    pids = {}
    for who in ("server", "client"):
        v = (read(os.path.join(d, f"{who}_pid")) or "").strip()
        if v.isdigit():
            pids[who] = v
    rows = []  # (pct, cpu, pid, dso)
    for line in (read(os.path.join(d, "perf-all.txt")) or "").splitlines():
        m = re.match(r"^\s*([\d.]+)%\s+(\d+)\s+(\d+):(\S+)\s+(.*)$", line)
        if m:
            rows.append((float(m.group(1)), int(m.group(2)), m.group(3), m.group(5)))
    total = sum(r[0] for r in rows)
    print(f"all samples: {total:.1f}% listed")
    for cpu in sorted({r[1] for r in rows}):
        idle = sum(r[0] for r in rows if r[1] == cpu and r[2] == "0")
        print(f"  cpu{cpu}: {sum(r[0] for r in rows if r[1] == cpu):.1f}% of samples, idle {idle:.1f}%")
    for who, pid in pids.items():
        mine = [r for r in rows if r[2] == pid]
        t = sum(r[0] for r in mine)
        if t == 0:
            continue
        print(f"\n{who} (pid {pid}): {t:.1f}% of all samples; by group (% of its samples):")
        groups = {}
        for r in mine:
            groups[perf_group(r[3])] = groups.get(perf_group(r[3]), 0) + r[0]
        for g, v in sorted(groups.items(), key=lambda kv: -kv[1]):
            print(f"  {g:<22} {100 * v / t:5.1f}%")
        bycpu = {}
        for r in mine:
            bycpu[r[1]] = bycpu.get(r[1], 0) + r[0]
        print("  on CPUs: " + ", ".join(f"cpu{c} {100 * v / t:.0f}%" for c, v in sorted(bycpu.items())))
        syms = []
        for line in (read(os.path.join(d, "perf-sym.txt")) or "").splitlines():
            m = re.match(rf"^\s*([\d.]+)%\s+{pid}:\S+\s+(.*?)\s+\[[.k]\]\s+(.*)$", line)
            if m:
                syms.append((float(m.group(1)), m.group(2).strip(), m.group(3).strip()))
        print(f"  top symbols (% of its samples):")
        for pct, dso, sym in sorted(syms, key=lambda x: -x[0])[:25]:
            print(f"    {100 * pct / t:5.1f}%  {sym}  [{dso}]")
    return 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "noisy":
        return cmd_noisy(argv[1:])
    if len(argv) >= 2 and argv[0] == "perf":
        return cmd_perf(argv[1])
    if len(argv) >= 2 and argv[0] == "oneline":
        cmd_oneline(argv[1])
        return 0
    if len(argv) >= 2 and argv[0] == "table":
        with open(argv[1]) as f:
            print(table(json.load(f)), end="")
        return 0
    if len(argv) >= 2 and argv[0] == "aggregate":
        out = argv[1]
        opts = {"--rounds": "0", "--scenarios": "1,2,3,4,5,6", "--server-cpu": "1", "--client-cpu": "0"}
        rest = argv[2:]
        while rest:
            if rest[0] in opts and len(rest) >= 2:
                opts[rest[0]] = rest[1]
                rest = rest[2:]
            else:
                print(f"bench.py: unknown argument {rest[0]}", file=sys.stderr)
                return 2
        scen_list = [int(x) for x in opts["--scenarios"].split(",") if x]
        return aggregate(out, int(opts["--rounds"]), scen_list,
                         int(opts["--server-cpu"]), int(opts["--client-cpu"]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
