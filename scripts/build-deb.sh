#!/usr/bin/env bash
# Build the Debian package lstack_<version>_<arch>.deb from this tree and
# check it with lintian.
#
#   scripts/build-deb.sh [OUTDIR]      (default: build-deb/)
#
# The tree (git's files, committed or not, plus the lwIP source that
# scripts/fetch-lwip.sh unpacks from Debian's lwip source package) is copied
# to OUTDIR/src/lstack-<version>/, where `dpkg-buildpackage -b -us -uc`
# runs; the .deb, .changes and .buildinfo land in OUTDIR, the build log in
# OUTDIR/build.log, lintian's report in OUTDIR/lintian.log. Exit status 1
# when the build fails or lintian reports an error.
# DEB_BUILD_OPTIONS, when unset, is "nocheck": scripts/test.sh runs every
# suite on the tree; set it (even empty) and debian/rules runs the unit and
# install suites in the package build.
# Needs debhelper and lintian (scripts/install-deps.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-build-deb}")

t0=$(date +%s)
scripts/fetch-lwip.sh >/dev/null
version=$(sed -n '1s/^lstack (\([^)]*\)).*/\1/p' debian/changelog)
[[ -n "$version" ]] || { echo "build-deb: cannot read the version of debian/changelog" >&2; exit 1; }
src="$out/src/lstack-$version"
rm -rf "$out"
mkdir -p "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' f; do [[ -e "$f" ]] && printf '%s\0' "$f"; done |
        xargs -0 cp --parents -t "$src"
else
    tar --exclude='./build*' --exclude=./subprojects --exclude=./.git -cf - . | tar -xf - -C "$src"
fi
mkdir -p "$src/subprojects"
cp -a subprojects/lwip "$src/subprojects/"

echo "build-deb: dpkg-buildpackage -b -us -uc in $src (log: $out/build.log)"
if ! (cd "$src" && DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS-nocheck}" dpkg-buildpackage -b -us -uc) >"$out/build.log" 2>&1; then
    tail -n 40 "$out/build.log"
    echo "build-deb: FAIL: dpkg-buildpackage (log: $out/build.log)" >&2
    exit 1
fi
mv "$out"/src/*.deb "$out"/src/*.changes "$out"/src/*.buildinfo "$out"/
deb=$(ls "$out"/lstack_"$version"_*.deb)
t1=$(date +%s)
echo "build-deb: $deb ($((t1 - t0)) s)"

# lintian as root says so on stderr; its findings go to stdout.
rc=0
lintian --fail-on error --display-info "$deb" >"$out/lintian.log" 2>"$out/lintian.err" || rc=$?
sed 's/^/lintian: /' "$out/lintian.log"
if ((rc != 0)); then
    cat "$out/lintian.err" >&2
    echo "build-deb: FAIL: lintian reports errors ($out/lintian.log)" >&2
    exit 1
fi
echo "build-deb: lintian: no error ($(grep -c '^W: ' "$out/lintian.log" || true) warnings, $(($(date +%s) - t1)) s)"
