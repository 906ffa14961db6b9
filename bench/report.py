"""Aggregation of a scripts/bench.sh run: medians over rounds, ratios to
the kernel, server CPU per request, the targets, results.json/csv,
runs.csv and the summary table."""
import csv
import json
import os
import re

from charts import write_chart, write_cpu_chart
from fmt import fmt_ms, fmt_pct, fmt_rps, fmt_us, fmt_x, median, ratio
from runs import BASE, KINDS, NOISY_FOREIGN_PCT, RTW, RUN_DIR, SCENARIOS, is_noisy, read, run_record, scenario_nreq, scenario_tests

# Server CPU = (utime + stime) delta of the redis-server process over the
# client's run, in % of one core; client CPU = user + sys of redis-benchmark
# (the change in the driving shell's children times) over the same time; cpuN busy = non-idle share of CPU N from /proc/stat
# (softirq included, whoever it ran for).
#
# Server CPU per request: the redis-server process's (utime + stime) delta
# over the client's run divided by the requests made (-n times the tests of
# the scenario), for every kind ("server_us_per_req"); for a server under
# lstack also the stack's busy time over the same requests
# ("stack_busy_us_per_req"): the poll rounds' busy cycles (rounds that moved
# a frame, and what the polling thread did until its next round: redis's own
# work included, idle polling excluded; lstack/stack/round_acct.h) between
# `stackctl show stats --json` before and after the client (stack_stats.0/.1),
# converted with the TSC rate the stack reports. That is wall-clock time: a
# server the kernel preempts is charged for the wait, so the process's CPU
# time shared out by the busy fraction comes too
# ("stack_busy_cpu_us_per_req"). Of the busy time, the part inside the
# port's tx burst calls ("stack_tx_burst_us_per_req", stackctl's
# tx_burst_cycles): on af_xdp over the veth it holds the kick system call and
# the kernel client's receive path that the kick runs on the server's core,
# so the busy time less it ("stack_busy_less_tx_us_per_req") is the server's
# own work without the bed's (both reported); frames per tx burst
# ("stack_frames_per_tx_burst", stackctl's tx_packets over tx_bursts: frames
# per af_xdp kick). For every kind, the server CPU's whole busy time from
# /proc/stat over the requests ("server_core_us_per_req"; the table gives
# the kernel's: with --rps on its own receive runs there, in softirq that
# may land while the CPU is idle, outside redis's utime + stime). Per
# scenario: medians over rounds, and lstack / kernel ratios of both
# (results.json "cpu_per_req", results.csv, the table, chart-cpu.gp).
#
# Ratios: median over rounds of lstack divided by the median of the kernel,
# for req/s and for each latency percentile. A run with --base-build has a
# third kind, "base" (another lstack build): then base / kernel and lstack /
# base ratios of the same medians come too (results.json: "ratio_base_kernel"
# and "ratio_lstack_base" per test; results.csv, the table and the chart gain
# their columns); without base runs the output is what it was before.
# A run with --rtw has the kind "rtw" (the same build in stack_thread_mode =
# "run-to-wakeup"): rtw / kernel and rtw / lstack ratios ("ratio_rtw_kernel",
# "ratio_rtw_lstack" per test; results.csv and the table gain their columns)
# and the run-to-wakeup targets (RTW_TARGETS); the chart leaves rtw out.

# Run-to-wakeup (--rtw): (scenario, metric, over, op, bound, text): rtw's median
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
        tests = scenario_tests(srun)
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
