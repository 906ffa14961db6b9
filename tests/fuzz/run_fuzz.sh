#!/usr/bin/env bash
# run_fuzz.sh FUZZER SEED_DIR ARTIFACT_DIR - one fuzzing run of a libFuzzer
# target for a fixed budget, as a test: FUZZ_TIME seconds (default 60) and
# at most FUZZ_RUNS executions (default 100000000), each input at most 10 s.
# The seeds are copied into a scratch corpus, so the tree is never written.
# Passes when the budget ran out without a finding; a crash, a leak, a
# sanitizer report, a broken check (abort) or a timeout fails it, and the
# reproducer's path is printed (kept in ARTIFACT_DIR). The last lines give
# the executions and the time (libFuzzer's -print_final_stats).
set -u
fuzzer=$1
seeds=$2
artifacts=$3
budget=${FUZZ_TIME:-60}
runs=${FUZZ_RUNS:-100000000}
name=$(basename "$fuzzer")

mkdir -p "$artifacts"
work=$(mktemp -d "/tmp/lstack-$name.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
cp "$seeds"/* "$work/corpus/"
before=$(ls "$artifacts")

# Every sanitizer report is fatal (UBSan would go on otherwise), and the
# third-party leaks of tests/sanitize/lsan.supp are not findings.
here=$(cd "$(dirname "$0")" && pwd)
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# The fuzzer links clang's shared ASan runtime (top-level meson.build) after
# libstdc++ (libFuzzer's): ASan's "runtime comes first" check fails, but the
# runtime still precedes libc, so its malloc is the one every object binds to.
export ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$here/../sanitize/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

t0=$(date +%s)
rc=0
"$fuzzer" "$work/corpus" -max_total_time="$budget" -runs="$runs" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" >"$work/log" 2>&1 || rc=$?
t1=$(date +%s)

grep -E '^(#[0-9]+ +(INITED|DONE)|stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb|new_units_added)|Done [0-9]+ runs)' \
    "$work/log"
echo "$name: $((t1 - t0)) s, corpus of $(find "$work/corpus" -type f | wc -l) inputs at the end (from $(find "$seeds" -type f | wc -l) seeds)"
new=$(comm -13 <(echo "$before") <(ls "$artifacts"))
if [ "$rc" -ne 0 ] || [ -n "$new" ]; then
    echo "FAIL: $name exited with status $rc; its report:"
    grep -v -E '^#[0-9]+ ' "$work/log" | tail -n 60
    for f in $new; do
        echo "reproducer: $artifacts/$f (replay: $fuzzer $artifacts/$f)"
    done
    exit 1
fi
echo "PASS: $name found nothing"
