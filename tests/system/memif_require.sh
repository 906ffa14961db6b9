# memif_require.sh - sourced by the memif programs' test scripts
# (test_memif_race.sh, test_memif_abandon.sh): exit 77 (meson's skip) unless
# run as root with DPDK's net_memif driver installed.
[[ $(id -u) -eq 0 ]] || { echo "SKIP: must run as root"; exit 77; }
dpkg-query -W -f='${db:Status-Abbrev}' librte-net-memif23 2>/dev/null | grep -q '^ii' ||
    { echo "SKIP: DPDK's net_memif driver (librte-net-memif23) is not installed"; exit 77; }
