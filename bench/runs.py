#!/usr/bin/env python3
"""What one run of scripts/bench.sh recorded, read back (stdlib only).

A run directory (raw/s<S>-r<R>-<kind>/) holds what bench.sh recorded:
bench.csv (redis-benchmark --csv), times.0/.1 (bash's `times` around the
client), pid_stat.0/.1 (/proc/PID/stat of redis-server before and after),
stat.0/.1 (/proc/stat), t.0/t.1 (ns), status, others_before/after;
stack_stats.0/.1 (`stackctl show stats --json`, lstack servers);
with --client-napi threaded, napi_stat.0/.1 (the client veth's NAPI
kthreads). run_record() turns one into a dict; is_noisy() says whether
another process disturbed it. What each figure means: bench.py's usage.
"""
import csv
import json
import os
import re

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


def scenario_tests(srun):
    """The tests of one scenario's runs (redis-benchmark -t names), in the
    order they first appear."""
    tests = []
    for r in srun:
        for t in r["tests"]:
            if t not in tests:
                tests.append(t)
    return tests


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
