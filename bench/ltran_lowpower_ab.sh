#!/usr/bin/env bash
# ltran_lowpower_ab.sh - issue 13's low-power figures, builds alternating:
# tests/system/test_ltran_lowpower.sh (ltran and three redis-servers, all
# low_power_mode = 1) run ROUNDS times against each build in turn (the
# first is A, the next B, C, ...), its output kept in OUT/<letter>-<round>.log,
# one summary line per run:
# idle CPU (ltran and each redis, % of a CPU over 2 s), spaced PINGs' p50 of
# each instance's last attempt with the kernel loopback's, and the -c 1
# ping_inline p99 of each instance with the kernel loopback's.
#   ROUNDS=2 OUT=dir bench/ltran_lowpower_ab.sh BUILD_A BUILD_B [BUILD_C ...]
# (a "build" is a directory with ltran/ltran, tools/stackctl and
# lstack/liblstack.so). Run it under the quiet lock (docs/performance.md,
# ## ltran).
set -u
(($# >= 1)) || { echo "usage: ROUNDS=n OUT=dir $0 BUILD_A [BUILD_B ...]" >&2; exit 2; }
BUILDS=("$@")
ROUNDS="${ROUNDS:-2}"
OUT="${OUT:-$(mktemp -d /tmp/ltran-lp-ab.XXXXXX)}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$OUT"
summary() { # LOG
    python3 - "$1" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
idle = re.search(r"idle for 2 s: CPU (.*?);", t)
sp, kp = {}, {}
for m in re.finditer(r"(\d+) attempt \d+: .*? p50 ([\d.]+) .*?kernel loopback p50 ([\d.]+)", t):
    sp[m.group(1)] = m.group(2); kp[m.group(1)] = m.group(3)
c1 = dict(re.findall(r"(\d+): redis-benchmark -c 1 ping_inline: [\d.]+ req/s, p50 [\d.]+ p99 ([\d.]+)", t))
k1 = re.search(r"kernel loopback: redis-benchmark -c 1 ping_inline: [\d.]+ req/s, p50 [\d.]+ p99 ([\d.]+)", t)
ports = ["6379", "6380", "6381"]
print("idle[%s] spaced-p50 %s (kernel %s) | c1-p99 %s (kernel %s) | %s" % (
    idle.group(1) if idle else "?", "/".join(sp.get(p, "?") for p in ports),
    "/".join(kp.get(p, "?") for p in ports), "/".join(c1.get(p, "?") for p in ports),
    k1.group(1) if k1 else "?", "PASS" if "PASS:" in t else "FAIL"))
PY
}
for ((r = 1; r <= ROUNDS; r++)); do
    for ((i = 0; i < ${#BUILDS[@]}; i++)); do
        b=$(printf "\\x$(printf %x $((65 + i)))")
        build="${BUILDS[$i]}"
        log="$OUT/$b-$r.log"
        "$HERE/tests/system/test_ltran_lowpower.sh" "$build" >"$log" 2>&1
        echo "$(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg) $b round $r: $(summary "$log")"
    done
done
echo "logs: $OUT"
