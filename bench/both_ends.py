#!/usr/bin/env python3
"""Aggregate the runs of scripts/bench.sh --both-ends (stdlib only).

    both_ends.py oneline RUNDIR     one line about one run (progress output)
    both_ends.py aggregate OUTDIR [--rounds N] [--scenarios 1,5] [--server-cpu N] [--client-cpu N]
                                    results.json, results.csv, summary.txt
                                    (also printed), chart.gp + chart.dat
    both_ends.py table RESULTS.json print the table of an earlier run again

Run directories are raw/s<S>-r<R>-<kind>/ with the files bench.sh records
(bench/runs.py parses them). Kinds: kernel-veth, kernel-lo, kernel-unix,
memif. Medians over rounds; ratios are memif's median over each kernel
kind's median (req/s, p50, p99).
"""
import csv
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fmt  # noqa: E402  (modules of this directory)
import runs as rundir  # noqa: E402

KINDS = ("kernel-veth", "kernel-lo", "kernel-unix", "memif")
KERNELS = KINDS[:3]
RUN_DIR = re.compile(r"^s(\d+)-r(\d+)-(kernel-veth|kernel-lo|kernel-unix|memif)$")
LABEL = {"kernel-veth": "kernel veth", "kernel-lo": "kernel lo", "kernel-unix": "kernel unix",
         "memif": "lstack memif"}

# (scenario, what, op, bound, text): the both-ends targets. what: "rps/<kind>"
# (memif / kind), "rps" (memif req/s), "p99" (memif p99 in ms).
TARGETS = [
    (1, "rps/kernel-veth", ">=", 5.0, "scenario 1: both ends on lstack >= 5x kernel over the veth"),
    (1, "rps/kernel-unix", ">=", 3.0, "scenario 1: both ends on lstack >= 3x kernel unix socket"),
    (5, "rps", ">=", 250000, "scenario 5: both ends on lstack >= 250k req/s"),
    (5, "p99", "<=", 0.020, "scenario 5: both ends on lstack p99 <= 20 us"),
]


def record(d):
    r = rundir.run_record(d)
    m = RUN_DIR.match(os.path.basename(d.rstrip("/")))
    if m:
        r.update(scenario=int(m.group(1)), round=int(m.group(2)), kind=m.group(3))
    return r


def cmd_oneline(d):
    r = record(d)
    parts = [f"{t} {fmt.fmt_rps(v.get('rps'))} req/s p50 {fmt.fmt_ms(v.get('p50'))} p99 "
             f"{fmt.fmt_ms(v.get('p99'))} ms" for t, v in r["tests"].items()]
    parts.append(f"server CPU {fmt.fmt_pct(r['server_cpu_pct'])}, client CPU {fmt.fmt_pct(r.get('client_cpu_pct'))}")
    print("; ".join(parts))


def aggregate(out, rounds, scen_list, server_cpu, client_cpu):
    raw = os.path.join(out, "raw")
    runs = [record(os.path.join(raw, n)) for n in sorted(os.listdir(raw)) if RUN_DIR.match(n)]
    scen = {}
    for s in scen_list:
        srun = [r for r in runs if r.get("scenario") == s]
        tests = rundir.scenario_tests(srun)
        tstats = {}
        for t in tests:
            ts = {}
            for k in KINDS:
                kr = [r for r in srun if r.get("kind") == k and r["status"] == "ok" and t in r["tests"]]
                ts[k] = {"rounds": {r["round"]: r["tests"][t] for r in kr},
                         **{m: fmt.median([r["tests"][t].get(m) for r in kr]) for m in ("rps", "p50", "p99")}}
            ts["ratio"] = {k: {m: fmt.ratio(ts["memif"][m], ts[k][m]) for m in ("rps", "p50", "p99")}
                           for k in KERNELS}
            tstats[t] = ts
        kinds = {}
        for k in KINDS:
            kr = [r for r in srun if r.get("kind") == k and r["status"] == "ok"]
            kinds[k] = {"rounds_ok": len(kr),
                        "server_cpu_pct": fmt.median([r["server_cpu_pct"] for r in kr]),
                        "client_cpu_pct": fmt.median([r.get("client_cpu_pct") for r in kr])}
        scen[s] = {"args": rundir.SCENARIOS.get(s, "?"), "tests": tstats, "kinds": kinds}

    targets = []
    for s, what, op, bound, text in TARGETS:
        if s not in scen:
            continue
        vals = {}
        for t, ts in scen[s]["tests"].items():
            if what.startswith("rps/"):
                vals[t] = ts["ratio"][what[4:]]["rps"]
            else:
                vals[t] = ts["memif"][what]
        ok = bool(vals) and all(x is not None and (x >= bound if op == ">=" else x <= bound) for x in vals.values())
        targets.append({"target": text, "scenario": s, "metric": what, "op": op, "bound": bound,
                        "values": vals, "met": ok})
    meta = {}
    for line in (rundir.read(os.path.join(out, "versions.txt"), "") or "").splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            meta[k] = v
    result = {"versions": meta, "commands": (rundir.read(os.path.join(out, "commands.txt"), "") or "").splitlines(),
              "rounds": rounds, "server_cpu": server_cpu, "client_cpu": client_cpu,
              "scenarios": {str(k): v for k, v in scen.items()}, "targets": targets, "runs": runs}
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scenario", "args", "test"] + [f"{k}_{m}" for k in KINDS for m in ("rps", "p50_ms", "p99_ms")]
                   + [f"memif_over_{k}_rps" for k in KERNELS])
        for s, v in scen.items():
            for t, ts in v["tests"].items():
                w.writerow([s, v["args"], t] + [ts[k][m] for k in KINDS for m in ("rps", "p50", "p99")]
                           + [ts["ratio"][k]["rps"] for k in KERNELS])
    write_chart(out, scen)
    text = table(result)
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(text)
    print(text, end="")
    bad = [r["dir"] for r in runs if r["status"] != "ok"]
    return 1 if bad or not runs else 0


def table(result):
    v = result.get("versions", {})
    lines = [f"lstack {v.get('lstack_git_rev', '?')[:12]}{' (dirty tree)' if v.get('lstack_git_dirty') == '1' else ''}, "
             f"{v.get('redis', '?').split(' sha=')[0]}, DPDK {v.get('dpdk', '?')}, kernel {v.get('kernel', '?')}",
             f"{v.get('cpu', '?')}, {v.get('date_utc', '')}, load {v.get('load_at_start', '?')} -> {v.get('load_at_end', '?')}",
             f"server on CPU {result['server_cpu']}, client on CPU {result['client_cpu']}; medians over "
             f"{result['rounds']} round(s); x = lstack memif (both ends) / that kernel kind"]
    for s, sv in result["scenarios"].items():
        lines.append("")
        lines.append(f"scenario {s}: redis-benchmark {sv['args']}")
        lines.append(f"  {'test':<12} " + " ".join(f"{LABEL[k] + ' req/s':>18}" for k in KINDS)
                     + "  " + " ".join(f"{'x ' + k[7:]:>7}" for k in KERNELS))
        for t, ts in sv["tests"].items():
            lines.append(f"  {t:<12} " + " ".join(f"{fmt.fmt_rps(ts[k]['rps']):>18}" for k in KINDS)
                         + "  " + " ".join(f"{fmt.fmt_x(ts['ratio'][k]['rps']):>7}" for k in KERNELS))
        lines.append("  latency p50/p99 ms:")
        for t, ts in sv["tests"].items():
            lines.append(f"  {t:<12} " + " ".join(
                f"{fmt.fmt_ms(ts[k]['p50']) + '/' + fmt.fmt_ms(ts[k]['p99']):>18}" for k in KINDS))
        ks = sv["kinds"]
        lines.append("  server/client CPU: " + ", ".join(
            f"{k} {fmt.fmt_pct(ks[k]['server_cpu_pct'])}/{fmt.fmt_pct(ks[k]['client_cpu_pct'])}" for k in KINDS)
            + "; rounds ok: " + "/".join(str(ks[k]["rounds_ok"]) for k in KINDS))
    lines.append("")
    lines.append("targets:")
    for t in result["targets"]:
        vals = ", ".join(f"{k} {fmt.fmt_x(x) if t['metric'].startswith('rps/') else x}" for k, x in t["values"].items())
        lines.append(f"  [{'met' if t['met'] else 'MISSED'}] {t['target']}: {vals or 'none'}")
    return "\n".join(lines) + "\n"


def write_chart(out, scen):
    rows = []
    for s, v in scen.items():
        for t, ts in v["tests"].items():
            rows.append((f"{s}:{t}",) + tuple(ts[k]["rps"] for k in KINDS)
                        + tuple(ts["ratio"][k]["rps"] for k in KERNELS))
    if not rows:
        return
    with open(os.path.join(out, "chart.dat"), "w") as f:
        f.write("# label " + " ".join(f"{k}_rps" for k in KINDS) + " " + " ".join(f"x_{k}" for k in KERNELS) + "\n")
        for r in rows:
            f.write(f"\"{r[0]}\" " + " ".join("NaN" if x is None else f"{x:.6g}" for x in r[1:]) + "\n")
    gp = """\
set terminal pngcairo size 1200,900 font ",10"
set output "chart.png"
set termoption noenhanced
set datafile missing "NaN"
set multiplot layout 2,1 title "redis-server: both ends on lstack (net_memif) vs the kernel (median of rounds)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -30 scale 0
set grid ytics
set key top right
set title "throughput (req/s, log scale)"
set logscale y
plot "chart.dat" using 2:xtic(1) title "kernel veth" lc rgb "#7f7f7f", \\
     "" using 3 title "kernel lo" lc rgb "#bcbd22", \\
     "" using 4 title "kernel unix" lc rgb "#ff7f0e", \\
     "" using 5 title "lstack memif (both ends)" lc rgb "#1f77b4"
set title "lstack memif / kernel kind (req/s), log scale"
plot "chart.dat" using 6:xtic(1) title "/ veth" lc rgb "#7f7f7f", \\
     "" using 7 title "/ lo" lc rgb "#bcbd22", \\
     "" using 8 title "/ unix" lc rgb "#ff7f0e", \\
     1 notitle with lines lc rgb "black" dt 2
unset multiplot
"""
    with open(os.path.join(out, "chart.gp"), "w") as f:
        f.write(gp)


def main(argv):
    if len(argv) >= 2 and argv[0] == "oneline":
        cmd_oneline(argv[1])
        return 0
    if len(argv) >= 2 and argv[0] == "table":
        with open(argv[1]) as f:
            print(table(json.load(f)), end="")
        return 0
    if len(argv) >= 2 and argv[0] == "aggregate":
        opts = {"--rounds": "0", "--scenarios": "1,2,3,4,5,6", "--server-cpu": "1", "--client-cpu": "0"}
        rest = argv[2:]
        while rest:
            if rest[0] in opts and len(rest) >= 2:
                opts[rest[0]] = rest[1]
                rest = rest[2:]
            else:
                print(f"both_ends.py: unknown argument {rest[0]}", file=sys.stderr)
                return 2
        return aggregate(argv[1], int(opts["--rounds"]), [int(x) for x in opts["--scenarios"].split(",") if x],
                         int(opts["--server-cpu"]), int(opts["--client-cpu"]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
