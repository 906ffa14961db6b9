#!/usr/bin/env python3
"""Split a callgrind profile by shared object: where the instructions go.

    callgrind_split.py CALLGRIND.OUT [--requests N] [--top K] [--calls FN,FN...]
                       [--maps PROC_PID_MAPS] [--lwip LIBLSTACK_LWIP.SO]
                       [--idle IDLE_CALLGRIND.OUT --busy-rounds B]

Prints the self cost (instructions, Ir) of each group of objects - redis,
lstack, lwIP, DPDK, libc, allocator - and of each object, per request when
--requests is given; then the same with the shared libraries (libc, the
allocator, ld.so) charged to the group that called them, and the sum of
lstack's and lwIP's groups ("lstack + lwIP"); then the K
costliest functions, and how often the functions named with --calls were
called. Stdlib only (and binutils' nm for --maps).
"""
import bisect
import os
import re
import subprocess
import sys
from collections import defaultdict

# Idle poll rounds (--idle, --busy-rounds). The stack polls while it waits,
# so a run counts, besides the work of its requests, the rounds that found
# nothing: as many as fit in the time the server waited for the client,
# which depends on the client's speed and the machine's load, not on the
# stack (the same build's lstack + lwIP per request moved by 4% between two
# runs), and a cheaper idle round only makes more of them. IDLE_CALLGRIND.OUT
# is a dump of the same process over a time with no traffic: its cost per
# poll round (per call of stack_poll), per group and per function, is what an
# idle round costs. B is the number of rounds of the benchmark that received
# a frame (stackctl's busy_polls over the run); the benchmark's other rounds
# (its stack_poll calls - B) were idle, and their estimated cost is taken
# out: "work" is what is left, per request. It still holds the per-round work
# of the busy rounds (the burst call, the timers, the flush).
#
# lwIP runs from a private copy in a memfd per stack (lstack/stack/lwip_load.c
# dlopens /proc/self/fd/N; /proc/PID/maps names it "/memfd:lstack-lwip-K
# (deleted)"). Valgrind cannot read such a file: its functions show up as
# bare addresses in object "???" (an object valgrind does name
# "/proc/self/fd/N" or "...lstack-lwip..." is lwIP as well). --maps (a copy
# of /proc/PID/maps of the profiled process) gives each copy's load address,
# so those addresses are counted as lwIP and named after the symbols of
# --lwip, the file the copies were made of: default the build's
# lstack/stack/lwip/liblstack_lwip.so next to this script (build/), or, for a
# build of before lstack's own lwIP, Debian's liblwip.so.0. Ours has a full
# symbol table, so static functions get their own names; Debian's is
# stripped, so a static function is named after the exported one before it
# ("tcp_input+"). Without debug info valgrind makes a "function" of each call
# target and charges it everything executed until the next call, so a name
# is approximate: the function called, and the static helpers it jumps into
# (lwIP's calls to its own exported functions go through its PLT: a PLT
# entry is named after the function it leads to).
#
# Callgrind's format (the parts used): "ob=", "fl=", "fn=" name the current
# object, file and function, with "(id) name" compression; "cob=", "cfn="
# name a call's target; a "calls=" line is followed by one cost line that is
# the call's inclusive cost (not self cost), and the "cob=" before it holds
# for that call only; every other cost line
# "<position> <Ir>" is self cost of the current function.

# The file the stacks copy lwIP from (lstack/meson.build, LSTACK_LWIP_SO),
# in the default build tree; before lstack built its own: Debian's.
OWN_LWIP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build",
                        "lstack", "stack", "lwip", "liblstack_lwip.so")
DEBIAN_LWIP = "/usr/lib/x86_64-linux-gnu/liblwip.so.0"
LWIP_COPY = "lwip (memfd copy)"  # the object name given to addresses placed in a copy


LIB_GROUPS = ("libc", "allocator", "ld.so")
# Library functions that call back into the program: their inclusive cost
# is the program's, not the library's.
CALLBACK_FNS = ("__libc_start_main", "__libc_start_call_main", "start_thread", "clone",
                "qsort", "bsearch", "pthread_once", "__pthread_once", "dl_iterate_phdr", "__cxa_finalize", "exit")


def calls_back(caller, callee):
    if caller == "(below main)" or callee is None:
        return True
    base = callee.split("@", 1)[0].split("'", 1)[0]
    return base in CALLBACK_FNS


def is_lwip_object(obj):
    """An object name that is a copy of lwIP: ours, Debian's, the memfd
    ("/memfd:lstack-lwip-0 (deleted)"), or the path it was dlopened by."""
    return "lwip" in obj or re.match(r"^/proc/self/fd/\d+$", obj) is not None


def group_of(obj):
    base = obj.rsplit("/", 1)[-1]
    if is_lwip_object(obj):
        return "lwIP"
    if base.startswith("libjemalloc") or base.startswith("libtcmalloc"):
        return "allocator"
    if base.startswith("liblstack_dpdk"):
        return "lstack (DPDK side)"
    if base.startswith("liblstack"):
        return "lstack"
    if base.startswith("librte_") or base.startswith("libdpdk"):
        return "DPDK"
    if base.startswith("redis-") or base == "redis-server":
        return "redis"
    if base.startswith("libc.so") or base.startswith("libc-"):
        return "libc"
    if base.startswith("ld-linux"):
        return "ld.so"
    return "other"


def parse(path, lwip_range=None):
    names = {"ob": {}, "fl": {}, "fn": {}}
    self_cost = defaultdict(int)          # (ob, fn) -> Ir
    calls = defaultdict(int)              # (callee ob, callee fn) -> call count
    lib_by_caller = defaultdict(int)      # caller group -> Ir of its calls into LIB_GROUPS
    totals = None
    ob = fl = fn = "?"
    cob = cfn = None
    after_calls = False
    comp = re.compile(r"^\((\d+)\)(?:\s+(.*))?$")

    def resolve(kind, val):
        m = comp.match(val)
        if not m:
            return val
        idx, name = m.group(1), m.group(2)
        table = names[kind]
        if name is not None:
            table[idx] = name
            return name
        return table.get(idx, f"({idx})")

    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                parts = line.split()
                if len(parts) >= 2:
                    try:
                        ir = int(parts[1])
                    except ValueError:
                        ir = 0
                    if after_calls:
                        after_calls = False
                        callee = cob if cob is not None else ob
                        cg, g = group_of(fix_ob(callee, cfn, lwip_range)), group_of(fix_ob(ob, fn, lwip_range))
                        if cg in LIB_GROUPS and g not in LIB_GROUPS and not calls_back(fn, cfn):
                            lib_by_caller[g] += ir
                        cob = None  # cob= names the callee of one call only
                    else:
                        self_cost[(ob, fn)] += ir
                continue
            key, _, val = line.partition("=")
            if key == "ob":
                ob = resolve("ob", val)
            elif key in ("fl", "fi", "fe"):
                fl = resolve("fl", val)
            elif key == "fn":
                fn = resolve("fn", val)
                cob = None
            elif key == "cob":
                cob = resolve("ob", val)
            elif key in ("cfl", "cfi"):
                resolve("fl", val)
            elif key == "cfn":
                cfn = resolve("fn", val)
            elif key == "calls":
                try:
                    calls[(cob if cob is not None else ob, cfn)] += int(val.split()[0])
                except (ValueError, IndexError):
                    pass
                after_calls = True
            elif line.startswith(("totals:", "summary:")):
                try:
                    totals = int(line.split(":", 1)[1].split()[0])
                except (ValueError, IndexError):
                    pass
    return self_cost, calls, totals, lib_by_caller


MAPS = []  # (lo, hi, path) of the profiled process, from --maps


def bare_addr(fn):
    """The address of a function valgrind could only name by it, or None."""
    if fn and fn.startswith("0x"):
        try:
            return int(fn, 16)
        except ValueError:
            return None
    return None


def lwip_copy_of(addr, copies):
    """The (lo, hi, base) of the lwIP copy holding addr, or None."""
    for c in copies or ():
        if c[0] <= addr < c[1]:
            return c
    return None


def fix_ob(ob, fn, copies):
    """Name the object of a bare address valgrind could not place: an lwIP
    copy (a memfd), or a PLT stub of a known file (from --maps)."""
    a = bare_addr(fn)
    if a is None or not (ob in ("???", "") or is_lwip_object(ob)):
        return ob
    if lwip_copy_of(a, copies):
        return LWIP_COPY
    if ob in ("???", ""):
        for lo, hi, path in MAPS:
            if lo <= a < hi:
                return path
    return ob


def load_maps(maps_path):
    for line in open(maps_path):
        parts = line.split()
        if len(parts) >= 6 and parts[5].startswith("/") and "x" in parts[1]:
            a, b = (int(x, 16) for x in parts[0].split("-"))
            MAPS.append((a, b, parts[5]))


def lwip_copies(maps_path):
    """[(lo, hi, base)] of each lwIP copy in a maps file: the mappings of
    one memfd (or /proc/self/fd file) whose name has "lstack-lwip"; base is
    the address of its file offset 0."""
    by_file = {}
    for line in open(maps_path):
        parts = line.split()
        if len(parts) < 6 or "lstack-lwip" not in parts[5]:
            continue
        a, b = (int(x, 16) for x in parts[0].split("-"))
        off = int(parts[2], 16)
        key = (parts[3], parts[4], parts[5])  # device, inode, name
        lo, hi, base = by_file.get(key, (a, b, None))
        by_file[key] = (min(lo, a), max(hi, b), a - off if base is None or off == 0 else base)
    return sorted(by_file.values())


def lwip_symbols(so):
    """Sorted [(address, size, name)]: the functions of so (its full symbol
    table when it has one, else its dynamic one), and its PLT entries, named
    after the function they jump to (lwIP's calls to its own exported
    functions go through its PLT, and valgrind, without symbols, names a
    function after the address it was called at)."""
    syms = []
    for args in (["nm", "-S", "--defined-only", so], ["nm", "-S", "-D", "--defined-only", so]):
        out = subprocess.run(args, capture_output=True, text=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 4 and p[2] in "TtWw":
                syms.append((int(p[0], 16), int(p[1], 16), p[3]))
            elif len(p) == 3 and p[1] in "TtWw":  # no size
                syms.append((int(p[0], 16), 0, p[2]))
        if syms:
            break
    out = subprocess.run(["objdump", "-d", "-j", ".plt", "-j", ".plt.sec", so],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.+)@plt>:$", line)
        if m:
            syms.append((int(m.group(1), 16), 16, m.group(2)))
    syms.sort()
    return syms


def name_lwip(addr, copy, syms):
    """The name of the lwIP function at addr of a copy: the symbol there, or
    "sym+" for an address after the start of sym (inside it, or in a static
    function after it that a stripped library has no symbol for)."""
    v = addr - copy[2]
    i = bisect.bisect_right(syms, (v, float("inf"), "")) - 1
    if i < 0:
        return f"lwip@{v:#x}"
    sa, _, sn = syms[i]
    return sn if sa == v else sn + "+"


def rename_lwip(fn, ob, copies, syms):
    """(object, function) of a cost or call with lwIP's bare addresses named."""
    nob = fix_ob(ob, fn, copies)
    if nob == LWIP_COPY and syms:
        a = bare_addr(fn)
        return nob, name_lwip(a, lwip_copy_of(a, copies), syms)
    return nob, fn


def load(path, rng, syms):
    """parse() with lwIP's bare addresses named: (self cost by (object,
    function), calls by function name, the file's total, library cost by
    calling group)."""
    self_cost, calls, totals, lib_by_caller = parse(path, rng)
    fixed = defaultdict(int)
    for (ob, fn), v in self_cost.items():
        fixed[rename_lwip(fn, ob, rng, syms)] += v
    named_calls = defaultdict(int)
    for (ob, fn), v in calls.items():
        named_calls[rename_lwip(fn, ob, rng, syms)[1]] += v
    return fixed, named_calls, totals, lib_by_caller


def charged_groups(self_cost, lib_by_caller):
    """Cost per group with the shared libraries charged to their caller."""
    groups = defaultdict(int)
    for (ob, fn), v in self_cost.items():
        groups[group_of(ob)] += v
    charged = {g: v for g, v in groups.items() if g not in LIB_GROUPS}
    for g, v in lib_by_caller.items():
        charged[g] = charged.get(g, 0) + v
    return charged


def call_count(calls, name):
    return sum(v for k, v in calls.items() if k == name or (k and k.endswith("'" + name)))


STACK_GROUPS = ("lstack", "lstack (DPDK side)", "lwIP")
POLL_FN = "stack_poll"  # one call per poll round (lstack/stack/stack.c)


def print_work(self_cost, calls, lib_by_caller, idle_path, busy_rounds, rng, syms, requests, top):
    """The benchmark's cost with its idle poll rounds taken out (see the
    module's doc)."""
    i_self, i_calls, _, i_lib = load(idle_path, rng, syms)
    i_rounds = call_count(i_calls, POLL_FN)
    rounds = call_count(calls, POLL_FN)
    if i_rounds == 0 or rounds == 0:
        print(f"\n(no {POLL_FN} calls in the idle or the benchmark dump: idle rounds not taken out)")
        return
    idle = max(rounds - busy_rounds, 0)
    k = idle / i_rounds  # the idle dump, scaled to the benchmark's idle rounds
    i_groups = charged_groups(i_self, i_lib)
    b_groups = charged_groups(self_cost, lib_by_caller)
    req = requests or 1
    unit = " Ir/request" if requests else " Ir"
    per_round = ", ".join(f"{g} {i_groups.get(g, 0) / i_rounds:,.0f}" for g in STACK_GROUPS)
    print(f"\nidle poll rounds: the idle dump has {i_rounds:,} rounds, {sum(i_groups.get(g, 0) for g in STACK_GROUPS) / i_rounds:,.0f} Ir "
          f"of lstack + lwIP each ({per_round}); the benchmark {rounds:,} rounds "
          f"({rounds / req:.2f} per request), {busy_rounds:,} with frames, {idle:,} idle")
    print(f"work (idle rounds taken out){unit}:")
    for g in sorted(b_groups, key=lambda g: -b_groups[g]):
        print(f"  {g:<22} {b_groups[g] / req:10.0f} - {k * i_groups.get(g, 0) / req:6.0f} idle = {(b_groups[g] - k * i_groups.get(g, 0)) / req:8.0f}")
    w = {g: b_groups.get(g, 0) - k * i_groups.get(g, 0) for g in STACK_GROUPS}
    each = ", ".join(f"{g} {v / req:,.0f}" for g, v in w.items())
    print(f"  {'lstack + lwIP work':<22} {sum(w.values()) / req:10.0f}   ({each})")
    print(f"\ntop {top} lstack/lwIP functions by work (self, idle rounds taken out){unit}:")
    rows = []
    for key, v in self_cost.items():
        if group_of(key[0]) in STACK_GROUPS or group_of(key[0]) == "DPDK":
            rows.append((v - k * i_self.get(key, 0), v, key))
    for wv, v, (ob, fn) in sorted(rows, key=lambda r: -r[0])[:top]:
        print(f"  {wv / req:8.0f}  (all {v / req:6.0f})  {fn}  [{ob.rsplit('/', 1)[-1]}]")


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    path = argv[0]
    requests = None
    top = 25
    want_calls = []
    maps = None
    lwip_so = None
    idle_path = None
    busy_rounds = None
    i = 1
    while i < len(argv):
        if argv[i] == "--requests":
            requests = int(argv[i + 1]); i += 2
        elif argv[i] == "--top":
            top = int(argv[i + 1]); i += 2
        elif argv[i] == "--calls":
            want_calls = [x for x in argv[i + 1].split(",") if x]; i += 2
        elif argv[i] == "--maps":
            maps = argv[i + 1]; i += 2
        elif argv[i] == "--lwip":
            lwip_so = argv[i + 1]; i += 2
        elif argv[i] == "--idle":
            idle_path = argv[i + 1]; i += 2
        elif argv[i] == "--busy-rounds":
            busy_rounds = int(argv[i + 1]); i += 2
        else:
            print(f"unknown argument {argv[i]}", file=sys.stderr)
            return 2
    if (idle_path is None) != (busy_rounds is None):
        print("--idle and --busy-rounds go together", file=sys.stderr)
        return 2
    rng = lwip_copies(maps) if maps else None
    if maps:
        load_maps(maps)
    syms = []
    if rng:
        if lwip_so is None:
            lwip_so = next((f for f in (OWN_LWIP, DEBIAN_LWIP) if os.path.exists(f)), None)
        if lwip_so is None or not os.path.exists(lwip_so):
            print(f"(lwIP library {lwip_so or OWN_LWIP} not found: its functions are named by address)")
        else:
            syms = lwip_symbols(lwip_so)
            print(f"lwIP symbols from {os.path.realpath(lwip_so)}, {len(rng)} copy(ies) in the process")
    self_cost, calls, totals, lib_by_caller = load(path, rng, syms)
    total = sum(self_cost.values())
    per = (lambda x: f"{x / requests:10.0f}") if requests else (lambda x: "")
    unit = " Ir/request" if requests else ""
    print(f"total {total:,} Ir{' (file says ' + format(totals, ',') + ')' if totals and totals != total else ''}"
          + (f", {requests:,} requests: {total / requests:,.0f} Ir/request" if requests else ""))
    groups = defaultdict(int)
    objs = defaultdict(int)
    for (ob, fn), v in self_cost.items():
        groups[group_of(ob)] += v
        objs[ob] += v
    if "other" in groups and not rng:
        print("(no --maps: lwIP's memfd copy is counted in 'other', object '???')")
    print(f"\nby group{unit}:")
    for g, v in sorted(groups.items(), key=lambda kv: -kv[1]):
        print(f"  {g:<22} {100.0 * v / total:6.1f}% {per(v)}")
    print(f"\nby group, shared libraries charged to their caller{unit}:")
    charged = {g: v for g, v in groups.items() if g not in LIB_GROUPS}
    for g, v in lib_by_caller.items():
        charged[g] = charged.get(g, 0) + v
    rest = total - sum(charged.values())
    for g, v in sorted(charged.items(), key=lambda kv: -kv[1]):
        print(f"  {g:<22} {100.0 * v / total:6.1f}% {per(v)}")
    print(f"  {'(libraries, unattributed)':<22} {100.0 * rest / total:6.1f}% {per(rest)}")
    stack = {g: charged.get(g, 0) for g in ("lstack", "lstack (DPDK side)", "lwIP")}
    each = ", ".join(f"{g} {v / (requests or 1):,.0f}" for g, v in stack.items())
    print(f"  {'lstack + lwIP':<22} {100.0 * sum(stack.values()) / total:6.1f}% {per(sum(stack.values()))}"
          f"   ({each}{unit or ' Ir'})")
    print(f"\nby object{unit}:")
    for o, v in sorted(objs.items(), key=lambda kv: -kv[1]):
        if v * 1000 < total:
            continue
        print(f"  {o:<60} {100.0 * v / total:6.1f}% {per(v)}")
    print(f"\ntop {top} functions (self){unit}:")
    for (ob, fn), v in sorted(self_cost.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {100.0 * v / total:6.1f}% {per(v)}  {fn}  [{ob.rsplit('/', 1)[-1]}]")
    if idle_path is not None:
        print_work(self_cost, calls, lib_by_caller, idle_path, busy_rounds, rng, syms, requests, top)
    if want_calls:
        print("\ncalls" + (" (per request)" if requests else "") + ":")
        for name in want_calls:
            n = sum(v for k, v in calls.items() if k == name or (k and k.endswith("'" + name)))
            print(f"  {name:<32} {n:>12,}" + (f" {n / requests:10.2f}" if requests else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
