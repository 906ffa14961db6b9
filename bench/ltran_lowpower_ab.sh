#!/usr/bin/env bash
# ltran_lowpower_ab.sh - issue 13's low-power figures, two builds alternating:
# tests/system/test_ltran_lowpower.sh (ltran and three redis-servers, all
# low_power_mode = 1) run ROUNDS times against build A and build B in turn,
# its output kept in OUT/<build>-<round>.log, one summary line per run:
# idle CPU (ltran and each redis, % of a CPU over 2 s), spaced PINGs' p50 of
# each instance's last attempt with the kernel loopback's, and the -c 1
# ping_inline p99 of each instance with the kernel loopback's.
#   bench/ltran_lowpower_ab.sh BUILD_A BUILD_B [ROUNDS] [OUT]
# Run it under the quiet lock (docs/performance.md, ## ltran).
set -u
A="${1:?usage: $0 BUILD_A BUILD_B [ROUNDS] [OUT]}"
B="${2:?usage: $0 BUILD_A BUILD_B [ROUNDS] [OUT]}"
ROUNDS="${3:-2}"
OUT="${4:-$(mktemp -d /tmp/ltran-lp-ab.XXXXXX)}"
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
    for b in A B; do
        build=$([[ $b == A ]] && echo "$A" || echo "$B")
        log="$OUT/$b-$r.log"
        "$HERE/tests/system/test_ltran_lowpower.sh" "$build" >"$log" 2>&1
        echo "$(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg) $b round $r: $(summary "$log")"
    done
done
echo "logs: $OUT"
