# shellcheck shell=bash
# Shared by the tests that run a program under the preload (sourced, never
# run): tests/unit/test_preload.sh and tests/system/common.sh (the redis,
# sem and stackctl tests).
#
# preload_list LIB : the LD_PRELOAD value that loads the preload library LIB
# into an unmodified program, colon-separated (the harness splits commands on
# blanks).

# A sanitizer build of liblstack.so (meson -Db_sanitize=address,undefined)
# links the ASan runtime, which must be the first object of the process: the
# host program (redis-server, sh) is not instrumented, so the runtime goes
# first in LD_PRELOAD. It is found the way the loader finds it (ldd of LIB),
# so a gcc build (libasan.so.N) needs nothing set. LSTACK_PRELOAD_EXTRA, when
# set (even empty), replaces that guess: libraries to preload before LIB, e.g.
# a clang runtime (libclang_rt.asan-x86_64.so) for a -shared-libsan build.
#
# Design: docs/design.md#one-preload-harness-for-plain-and-sanitizer-runs

preload_list() {
    local lib="$1" extra
    if [[ -n "${LSTACK_PRELOAD_EXTRA+set}" ]]; then
        extra="$LSTACK_PRELOAD_EXTRA"
    else
        extra=$(ldd "$lib" 2>/dev/null | awk '$1 ~ /^libasan\.so/ && $3 ~ /^\// {print $3; exit}')
    fi
    echo "${extra:+$extra:}$lib"
}
