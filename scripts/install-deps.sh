#!/usr/bin/env bash
# Install what lstack needs to build and to run its tests (Debian bookworm).
#
#   scripts/install-deps.sh          install whatever is missing (as root)
#   scripts/install-deps.sh --check  only report; exit 1 if something is missing
#
# Idempotent: asks dpkg first and runs apt-get only when a package is missing.
set -euo pipefail

# Notes on the list:
#  - libdpdk-dev depends on the PMD libraries, among them the two the test
#    bed uses, librte-net-af-packet23 (tests) and librte-net-af-xdp23 (demo,
#    benchmark; it brings libxdp1 and libbpf1), and librte-net-memif23 (two
#    lstack processes on one host: the memif tests, bench.sh --both-ends,
#    the demo), so the "dpdk" package (tools: dpdk-testpmd, dpdk-devbind) is
#    not needed.
#  - iputils-arping, not "arping": they conflict, and the tests parse the
#    iputils output.
#  - kmod gives modprobe, to load veth where it is a module.
#  - lwIP is not a binary package here: lstack builds it from Debian's lwip
#    source package, which scripts/fetch-lwip.sh fetches (last step below).
#  - systemd: for systemd-analyze (the units' test) and systemd.pc; nothing
#    here needs it running.

PACKAGES=(
    # build
    meson ninja-build pkg-config gcc libc6-dev
    libdpdk-dev librte-net-af-packet23 librte-net-af-xdp23 librte-net-memif23 libconfig-dev libnuma-dev
    # lwIP is built from Debian's source package (scripts/fetch-lwip.sh): apt-get source needs dpkg-dev
    dpkg-dev patch
    # system tests: namespaces, veth, ping/arping, offload settings
    iproute2 iputils-ping iputils-arping ethtool procps kmod
    # the SYN flood of the redis-tcp test
    hping3
    # application tests
    redis-server redis-tools python3
    # benchmark (scripts/bench.sh): its chart
    gnuplot-nox
    # sanitizer and fuzzing pass (scripts/test.sh): gcc's ASan and UBSan
    # runtimes, clang with libFuzzer
    libasan8 libubsan1 clang libclang-rt-14-dev
    # the Debian package and its tests (scripts/build-deb.sh, tests/package):
    # dpkg-buildpackage with debhelper, lintian, a clean root for the
    # install test, the manual pages' checks, systemd-analyze for the units
    debhelper fakeroot lintian debootstrap groff-base man-db systemd
)

check_only=0
case "${1:-}" in
--check) check_only=1 ;;
"") ;;
*)
    echo "usage: $0 [--check]" >&2
    exit 2
    ;;
esac

installed() {
    [[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" == "ii " ]]
}

missing=()
for p in "${PACKAGES[@]}"; do
    installed "$p" || missing+=("$p")
done

# The lwIP source (subprojects/lwip/), after the packages: it needs dpkg-dev.
fetch_lwip() {
    if ((check_only)); then
        "$(dirname "$0")/fetch-lwip.sh" --check
    else
        "$(dirname "$0")/fetch-lwip.sh"
    fi
}

if ((${#missing[@]} == 0)); then
    echo "install-deps: all ${#PACKAGES[@]} packages already installed"
    fetch_lwip
    exit $?
fi

echo "install-deps: missing: ${missing[*]}"
if ((check_only)); then
    exit 1
fi
if [[ $(id -u) -ne 0 ]]; then
    echo "install-deps: run as root to install them" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# Recommends would drag in e.g. the full dpdk tools and documentation.
apt-get install -y -q --no-install-recommends "${missing[@]}"

still=()
for p in "${missing[@]}"; do
    installed "$p" || still+=("$p")
done
if ((${#still[@]} != 0)); then
    echo "install-deps: failed to install: ${still[*]}" >&2
    exit 1
fi
echo "install-deps: installed: ${missing[*]}"
fetch_lwip
