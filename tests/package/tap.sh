# shellcheck shell=bash
# Sourced by the package tests: TAP output (meson's protocol 'tap').
#   tap_ok WHAT | tap_not_ok WHAT     one check's line
#   tap_check WHAT COMMAND...         ok when COMMAND succeeds
#   tap_end                           the plan; exits 1 if a check failed
TAP_N=0
TAP_FAILS=0
tap_ok() { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $1"; }
tap_not_ok() { TAP_N=$((TAP_N + 1)); TAP_FAILS=$((TAP_FAILS + 1)); echo "not ok $TAP_N - $1"; }
tap_check() {
    local what=$1
    shift
    if "$@"; then tap_ok "$what"; else tap_not_ok "$what"; fi
}
tap_end() {
    echo "1..$TAP_N"
    exit $((TAP_FAILS > 0))
}
