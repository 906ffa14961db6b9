#!/usr/bin/env bash
# known_crash.sh FUZZER INPUT PATTERN - a crash a fuzz target found that is
# not fixed yet (tests/fuzz/known/), kept as a test of its own: it passes
# while INPUT still kills FUZZER (replay build) with PATTERN in its report,
# so the bug stays visible, and it fails once the input runs clean: then the
# bug is fixed, and the input belongs in the seed corpus (tests/fuzz/corpus/)
# with its test and harness exception removed. Any other failure fails too.
set -u
fuzzer=$1
input=$2
pattern=$3
# The report is the expected outcome: to stderr, where PATTERN is looked for,
# not to the sanitizer pass's report files (scripts/test.sh).
out=$(FUZZ_SEND_KNOWN=1 ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=stderr" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=stderr" "$fuzzer" "$input" 2>&1)
rc=$?
if [ "$rc" -eq 0 ]; then
    echo "FAIL: $input no longer crashes $(basename "$fuzzer"): move it into the seed corpus (see tests/fuzz/known_crash.sh)"
    exit 1
fi
if ! grep -qF -- "$pattern" <<<"$out"; then
    echo "FAIL: $input makes $(basename "$fuzzer") fail (status $rc), but not with '$pattern':"
    tail -n 30 <<<"$out"
    exit 1
fi
echo "KNOWN BUG, still present: $input -> $(grep -F -- "$pattern" <<<"$out" | head -n 1)"
