"""The perf samples of a scripts/bench.sh --perf run, by object group."""
import os
import re

from runs import read

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
