"""The summary a document cites: one small JSON file of medians and the
method line, from a run's results.json (scripts/bench.sh, or --both-ends).

    bench.py summary RESULTS.json [--bed NAME] > docs/results/<bed>.json

Rows: one per scenario and test, each kind's median req/s, p50 and p99
(ms) over the rounds, the ratios the run computed (the last kind over
each other one, as its "ratio" entry holds them), and, where the run has
it, the server's CPU microseconds per request. The method line says what
ran, where and when: the command, lstack's revision, build type and the
versions of redis, DPDK, lwIP and the kernel. The raw runs stay in the
run's own folder (bench/results/, ignored by git).
"""
import json
import re
import sys

KEEP = ("rps", "p50", "p99")


def _r(v, nd=3):
    return None if v is None else round(v, nd)


def _lwip(text):
    """"lwIP 2.1.3 from Debian source package lwip_2.1.3+dfsg1-2 + ..." -> "2.1.3+dfsg1-2 (lstack's build)"."""
    m = re.search(r"lwip_(\S+)", text) or re.search(r"(\d+\.\d+\.\d+\S*)", text)
    own = " (lstack's build)" if "lstack/stack/lwip" in text else ""
    return (m.group(1) if m else text) + own


def method_line(d):
    v = d.get("versions", {})
    cmds = d.get("commands", [])
    cmd = next((c[2:].strip() for c in cmds if c.startswith("# scripts/bench")), "scripts/bench.sh")
    rev = v.get("lstack_git_rev", "?")[:7] + ("+changes" if v.get("lstack_git_dirty") == "1" else "")
    redis = next((w[2:] for w in v.get("redis", "").split() if w.startswith("v=")), "?")
    parts = [" ".join(cmd.split()), f"lstack {rev}" + (f" ({v['buildtype']})" if v.get("buildtype") else ""),
             v.get("lstack_pmd", "").split(" ")[0] or None, f"{d.get('rounds', '?')} rounds, medians",
             f"redis {redis}, DPDK {v.get('dpdk', '?').split()[0]}"
             + (f", lwIP {_lwip(v['lwip'])}" if v.get("lwip") else "") + f", kernel {v.get('kernel', '?').split()[0]}",
             "2-vCPU VM, server and client pinned to one CPU each", v.get("date_utc", "?")]
    return "; ".join(p for p in parts if p)


def summarize(d, bed):
    rows = []
    for s, sc in sorted(d.get("scenarios", {}).items(), key=lambda kv: int(kv[0])):
        cpu = sc.get("cpu_per_req") or {}
        for test, t in sc.get("tests", {}).items():
            row = {"scenario": int(s), "args": sc.get("args"), "test": test}
            for kind, kv in t.items():
                if kind == "ratio" or kind.startswith("ratio_") or not isinstance(kv, dict) or "rps" not in kv:
                    continue
                for m in KEEP:
                    row[f"{kind}_{m}"] = _r(kv.get(m))
            for key, rv in t.items():
                if key != "ratio" and not key.startswith("ratio_"):
                    continue
                if isinstance(rv, dict) and any(isinstance(x, dict) for x in rv.values()):
                    for over, r in rv.items():  # both ends: memif over each kernel kind
                        for m in KEEP:
                            row[f"ratio_{over}_{m}"] = _r((r or {}).get(m))
                elif isinstance(rv, dict):
                    for m in KEEP:
                        row[f"{key}_{m}"] = _r(rv.get(m))
                elif isinstance(rv, (int, float)):
                    row[key] = _r(rv)
            for kind, c in cpu.items():
                if isinstance(c, dict):
                    for m in ("us", "busy_us", "tx_burst_us", "busy_less_tx_us"):
                        if c.get(m) is not None:
                            row[f"{kind}_server_{m}_per_req"] = _r(c[m], 2)
            rows.append(row)
    v = d.get("versions", {})
    return {"bed": bed, "date_utc": v.get("date_utc"), "lstack_commit": v.get("lstack_git_rev"),
            "method": method_line(d), "rows": rows}


def cmd_summary(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    bed = "bench"
    if len(argv) >= 3 and argv[1] == "--bed":
        bed = argv[2]
    with open(argv[0]) as f:
        d = json.load(f)
    json.dump(summarize(d, bed), sys.stdout, indent=1)
    print()
    return 0
