#!/usr/bin/env bash
# Install what lstack needs (Debian packages), build it warning-free, and run
# every test: unit tests, then system tests in self-made network namespaces
# (those need root; without root they are skipped, not passed).
# Usage: scripts/test.sh [meson test args...]   (e.g. --suite unit)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}

scripts/install-deps.sh

if [ -f "$BUILD/build.ninja" ]; then
    meson setup --reconfigure "$BUILD" >/dev/null
else
    meson setup "$BUILD"
fi
# Warnings are errors here, so "builds with no warnings" is checked on every run.
meson configure "$BUILD" -Dwerror=true
ninja -C "$BUILD"

# 2 MiB hugepages for the whole run, the previous count restored at exit:
# the namespace beds reserve their own, but tso-tap and the memif tests
# start stacks with no bed around them (root only; TEST_HUGEPAGES=0: leave
# the machine's count as it is).
hp_sysfs=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
hp_want=${TEST_HUGEPAGES:-2048}
if [ "$(id -u)" -eq 0 ] && [ -w "$hp_sysfs" ] && [ "$hp_want" -gt 0 ]; then
    hp_old=$(cat "$hp_sysfs")
    if [ "$hp_old" -lt "$hp_want" ]; then
        echo "$hp_want" >"$hp_sysfs" || true
        echo "hugepages: $hp_old -> $(cat "$hp_sysfs") for the run"
        trap 'echo "$hp_old" >"$hp_sysfs" 2>/dev/null || true' EXIT
    fi
fi

# redis-loss (suite 'loss', docs/reliability.md#loss-recovery) runs by
# default; LSTACK_LOSS=0 leaves it out (counted as skipped), e.g. on a
# machine too loaded for its time bounds.
loss_args=()
loss_skip=0
if [ $# -eq 0 ] && [ "${LSTACK_LOSS:-1}" = 0 ]; then
    loss_args=(--no-suite loss)
    loss_skip=1
    echo "redis-loss: SKIP (LSTACK_LOSS=0)"
fi

rc=0
meson test -C "$BUILD" --print-errorlogs "${loss_args[@]}" "$@" || rc=$?

# The benchmark command must keep working: one short round of every scenario
# (scripts/bench.sh --short, well under a minute). Needs root; only on a full run
# (no meson test arguments); LSTACK_BENCH_SHORT=0 leaves it out. Counted as
# one more test in the closing line.
bench=none
if [ $# -eq 0 ] && [ "${LSTACK_BENCH_SHORT:-1}" != 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "bench --short: SKIP (needs root)"
        bench=skip
    else
        bench_out=$(mktemp -d /tmp/lstack-bench-short.XXXXXX)
        # The benchmark's own vdev is net_af_xdp; where it cannot work, say so
        # and check the command on net_af_packet instead.
        pmd=af_xdp
        if ! why=$(bash -c '. tests/system/testbed.sh && tb_af_xdp_ok'); then
            echo "bench --short: $why: running it with --pmd af_packet"
            pmd=af_packet
        fi
        if timeout -s TERM 600 scripts/bench.sh --short --pmd "$pmd" --build "$BUILD" --out "$bench_out"; then
            echo "bench --short: OK"
            bench=ok
        else
            echo "bench --short: FAIL (results kept in $bench_out)"
            bench=fail
            rc=1
        fi
        [ "$bench" != ok ] || rm -rf "$bench_out"
    fi
fi

# Sanitizers and fuzzing (docs/reliability.md). Only on a full run;
# LSTACK_SANITIZE=0 leaves both passes out. Their tests count in the closing
# line like the others (each meson test once, plus one check that no
# sanitizer report was written).
#  1. ASan + UBSan (gcc) in $BUILD-asan: the unit tests and the redis suite.
#     Every report goes to a file under $BUILD-asan/sanitizer-logs/ (a daemon
#     or a background redis has no stderr a test reads): any file there is a
#     finding, printed below. The preload gets the ASan runtime first in
#     LD_PRELOAD from the harness (tests/preload_env.sh).
#  2. ThreadSanitizer (gcc) in $BUILD-tsan: the unit tests whose threads
#     share stacks, sockets and epoll sets (suite 'threads'); only their
#     targets are built. Reports go to $BUILD-tsan/sanitizer-logs/, counted
#     with ASan's in the one "no sanitizer report" check.
#  3. libFuzzer (clang) in $BUILD-fuzz: each target for FUZZ_TIME seconds
#     (default 60); a finding fails and prints the reproducer's path.
san_logs=()
san_reports=none
fuzz_state=none
# Print the reports a sanitizer left in directory $1; false if there were any.
san_check() {
    [ -z "$(ls -A "$1")" ] && return 0
    for f in "$1"/*; do
        echo "--- sanitizer report $f (first 40 lines) ---"
        head -n 40 "$f"
    done
    return 1
}
if [ $# -eq 0 ] && [ "${LSTACK_SANITIZE:-1}" != 0 ]; then
    t_san=$(date +%s)
    ASAN_BUILD="$BUILD-asan"
    sanlog="$ASAN_BUILD/sanitizer-logs"
    if [ -f "$ASAN_BUILD/build.ninja" ]; then
        meson setup --reconfigure "$ASAN_BUILD" >/dev/null
    else
        meson setup "$ASAN_BUILD" -Db_sanitize=address,undefined >/dev/null
    fi
    meson configure "$ASAN_BUILD" -Dwerror=true
    # Absolute: each test runs in the build directory, and a relative
    # log_path put the reports where the check below did not look.
    sanlog="$(cd "$ASAN_BUILD" && pwd)/sanitizer-logs"
    if ninja -C "$ASAN_BUILD" >"$ASAN_BUILD/build.log" 2>&1; then
        rm -rf "$sanlog"
        mkdir -p "$sanlog"
        # Not the system, sem, stackctl, loss and package suites: the unit
        # tests, redis, memif and ltran (redis-loss's recovery code runs here
        # in tcp-loss; the package suite builds its own optimized package).
        ASAN_OPTIONS="log_path=$sanlog/asan" \
            UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$sanlog/ubsan" \
            LSAN_OPTIONS="suppressions=$PWD/tests/sanitize/lsan.supp:print_suppressions=0" \
            meson test -C "$ASAN_BUILD" --no-suite system --no-suite sem --no-suite stackctl --no-suite loss --no-suite package --print-errorlogs || rc=1
        san_logs+=("$ASAN_BUILD/meson-logs/testlog.json")
        if san_check "$sanlog"; then
            san_reports=ok
        else
            san_reports=fail
            rc=1
        fi
    else
        tail -n 30 "$ASAN_BUILD/build.log"
        echo "sanitizer build: FAIL (log: $ASAN_BUILD/build.log)"
        san_reports=fail
        rc=1
    fi
    echo "sanitizer pass: $(($(date +%s) - t_san)) s"

    t_tsan=$(date +%s)
    TSAN_BUILD="$BUILD-tsan"
    if [ -f "$TSAN_BUILD/build.ninja" ]; then
        meson setup --reconfigure "$TSAN_BUILD" >/dev/null
    else
        meson setup "$TSAN_BUILD" -Db_sanitize=thread >/dev/null
    fi
    # -Wno-tsan: gcc warns that TSan does not model a standalone fence (the
    # seqlock of stack/flow_dir.c, memif's quiesce, ltran's rings): their
    # data accesses are atomics, which it does model. Set on an existing
    # directory too.
    meson configure "$TSAN_BUILD" -Dwerror=true -Db_sanitize=thread -Dc_args=-Wno-tsan
    tsanlog="$(cd "$TSAN_BUILD" && pwd)/sanitizer-logs"
    targets=$(meson test -C "$TSAN_BUILD" --list --suite threads 2>/dev/null | sed -n 's|^lstack:[a-z+]* / ||p' |
        while read -r t; do echo "tests/unit/test_${t//-/_}"; done)
    if ninja -C "$TSAN_BUILD" lstack/stack/lwip/liblstack_lwip.so $targets >"$TSAN_BUILD/build.log" 2>&1; then
        rm -rf "$tsanlog"
        mkdir -p "$tsanlog"
        TSAN_OPTIONS="log_path=$tsanlog/tsan" \
            meson test -C "$TSAN_BUILD" --no-rebuild --suite threads --print-errorlogs || rc=1
        san_logs+=("$TSAN_BUILD/meson-logs/testlog.json")
        if ! san_check "$tsanlog"; then
            san_reports=fail
            rc=1
        fi
    else
        tail -n 30 "$TSAN_BUILD/build.log"
        echo "thread sanitizer build: FAIL (log: $TSAN_BUILD/build.log)"
        san_reports=fail
        rc=1
    fi
    echo "thread sanitizer pass: $(($(date +%s) - t_tsan)) s"

    t_fuzz=$(date +%s)
    FUZZ_BUILD="$BUILD-fuzz"
    if ! command -v clang >/dev/null; then
        echo "fuzzing: SKIP (no clang)"
        fuzz_state=skip
    else
        if [ -f "$FUZZ_BUILD/build.ninja" ]; then
            meson setup --reconfigure "$FUZZ_BUILD" >/dev/null
        else
            CC=clang meson setup "$FUZZ_BUILD" -Dfuzz=true -Db_sanitize=address,undefined >/dev/null
        fi
        meson configure "$FUZZ_BUILD" -Dwerror=true
        if ninja -C "$FUZZ_BUILD" >"$FUZZ_BUILD/build.log" 2>&1; then
            meson test -C "$FUZZ_BUILD" --suite fuzz --print-errorlogs || rc=1
            san_logs+=("$FUZZ_BUILD/meson-logs/testlog.json")
            fuzz_state=ran
        else
            tail -n 30 "$FUZZ_BUILD/build.log"
            echo "fuzz build: FAIL (log: $FUZZ_BUILD/build.log)"
            fuzz_state=fail
            rc=1
        fi
    fi
    echo "fuzzing pass: $(($(date +%s) - t_fuzz)) s"
fi

# One plain closing line: N passed, N failed (, N skipped).
LOSS_SKIP=$loss_skip python3 - "$bench" "$san_reports" "$fuzz_state" "$BUILD/meson-logs/testlog.json" "${san_logs[@]}" <<'PY'
import json, os, sys
p = f = s = 0
for log in sys.argv[4:]:
    for line in open(log):
        r = json.loads(line).get("result")
        if r in ("OK", "EXPECTEDFAIL"): p += 1
        elif r == "SKIP": s += 1
        else: f += 1
# One more check each: bench --short; "no sanitizer report"; the fuzz build
# when it failed or was skipped (when it ran, its tests are counted above).
for state in sys.argv[1:4]:
    if state == "ok": p += 1
    elif state == "fail": f += 1
    elif state == "skip": s += 1
# redis-loss left out with LSTACK_LOSS=0 (above): one skipped test.
s += int(os.environ.get("LOSS_SKIP", "0"))
print(f"{p} passed, {f} failed, {s} skipped")
PY
exit $rc
