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

rc=0
meson test -C "$BUILD" --print-errorlogs "$@" || rc=$?

# One plain closing line: N passed, N failed (, N skipped).
python3 - "$BUILD/meson-logs/testlog.json" <<'PY'
import json, sys
p = f = s = 0
for line in open(sys.argv[1]):
    r = json.loads(line).get("result")
    if r in ("OK", "EXPECTEDFAIL"): p += 1
    elif r == "SKIP": s += 1
    else: f += 1
print(f"{p} passed, {f} failed, {s} skipped")
PY
exit $rc
