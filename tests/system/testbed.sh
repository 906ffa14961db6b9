#!/usr/bin/env bash
# lstack system test bed: two network namespaces joined by a veth pair.
#
#   client ns "${LSTACK_TB}-cli"            server ns "${LSTACK_TB}-srv"
#   veth "${LSTACK_TB}-c" 198.18.0.1/24 <-> veth "${LSTACK_TB}-s" (no kernel IPv4 of its own;
#   (kernel; also the stack's gateway)       the stack owns 198.18.0.2 through TB_PMD)
#
# Addresses come from the RFC 2544 benchmark range, so nothing here can reach
# a real network. Use it two ways:
#   CLI:      testbed.sh up | down | status
#   library:  source testbed.sh; tb_require_root; tb_trap_cleanup; tb_up; ...

# Environment:
#   LSTACK_TB      name prefix (default "lstk"; [a-z0-9], at most 13 characters)
#   TB_HUGEPAGES   minimum number of 2 MiB hugepages to reserve (default 512)
#   TB_CPU         lcore given to lstackd (default 0)
#   LSTACK_TEST_STACKS  N > 1: tb_write_conf lists CPUs 0..N-1 in
#                  num_cpus and the af_packet port gets qpairs=N, so a server
#                  under the preload with LSTACK_TEST_STACK_MODE=run-to-wakeup
#                  runs N stacks (the sem-multi test)
#   TB_BRIDGE      1: put a third namespace "${LSTACK_TB}-br" between client
#                  and server, where tb_start_bridge runs lossy_bridge (loss,
#                  duplication, reordering, delay, corruption; see
#                  lossy_bridge.c). Client and server veths then each pair with
#                  a veth of the bridge namespace ("${LSTACK_TB}-y" / "-x");
#                  no frame passes while the bridge is not running.
#   TB_PMD         the DPDK vdev that drives the server veth: af_packet (default)
#                  or af_xdp. af_xdp attaches an XDP program that hands every
#                  frame of the veth to the stack while it runs, so the kernel
#                  address (tb_add_kernel_addr) is unreachable meanwhile: use
#                  it where one server runs at a time (scripts/bench.sh).
#
# State of a bed lives in /run/lstack-testbed-${LSTACK_TB}/ so that `down`
# also cleans up after a crashed or interrupted run.

LSTACK_TB="${LSTACK_TB:-lstk}"
TB_HUGEPAGES="${TB_HUGEPAGES:-512}"
TB_CPU="${TB_CPU:-0}"
TB_PMD="${TB_PMD:-af_packet}"
TB_BRIDGE="${TB_BRIDGE:-0}"

TB_NS_SRV="${LSTACK_TB}-srv"
TB_NS_CLI="${LSTACK_TB}-cli"
TB_IF_SRV="${LSTACK_TB}-s"
TB_IF_CLI="${LSTACK_TB}-c"
TB_NS_BR="${LSTACK_TB}-br"
TB_IF_BR_SRV="${LSTACK_TB}-x" # bridge side of the server's veth (lossy_bridge --a)
TB_IF_BR_CLI="${LSTACK_TB}-y" # bridge side of the client's veth (lossy_bridge --b)
TB_IP_STACK="198.18.0.2"
TB_IP_CLI="198.18.0.1"
TB_MASK="255.255.255.0"
TB_PREFIXLEN=24
TB_STATE_DIR="/run/lstack-testbed-${LSTACK_TB}"
TB_HP_SYSFS="/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
export LSTACK_TB TB_HUGEPAGES TB_CPU TB_PMD TB_BRIDGE TB_NS_BR TB_IF_BR_SRV TB_IF_BR_CLI
export TB_NS_SRV TB_NS_CLI TB_IF_SRV TB_IF_CLI TB_IP_STACK TB_IP_CLI TB_MASK TB_STATE_DIR

# lstackd bookkeeping (set by tb_start_lstackd)
TB_LSTACKD_PID=""
TB_LSTACKD_LOG=""
TB_LSTACKD_MAC=""
TB_LSTACKD_PORT=""

# Extra commands run by the cleanup trap before the bed is torn down.
TB_CLEANUP_CMDS=()

tb_log() { echo "testbed[${LSTACK_TB}]: $*" >&2; }
tb_die() { tb_log "ERROR: $*"; return 1; }

# ---------------------------------------------------------------------------
# prerequisites (for tests: 77 = skipped under meson / automake conventions)

tb_skip() {
    echo "SKIP: $*"
    exit 77
}

tb_require_root() {
    [[ $(id -u) -eq 0 ]] || tb_skip "must run as root (network namespaces, hugepages)"
}

# tb_require_tools TOOL... : skip the test when one of the tools is missing.
tb_require_tools() {
    local t
    for t in "$@"; do
        command -v "$t" >/dev/null 2>&1 || tb_skip "required tool '$t' not found"
    done
}

tb__check_name() {
    if [[ ! "$LSTACK_TB" =~ ^[a-z0-9]{1,13}$ ]]; then
        tb_die "LSTACK_TB='$LSTACK_TB' must be 1..13 characters of [a-z0-9]"
        return 1
    fi
}

# ---------------------------------------------------------------------------
# state file: KEY=VALUE lines

tb__state_file() { echo "$TB_STATE_DIR/state"; }

tb__state_get() {
    local f
    f=$(tb__state_file)
    [[ -f "$f" ]] || return 1
    local v
    v=$(sed -n "s/^$1=//p" "$f" | tail -n 1)
    [[ -n "$v" ]] || return 1
    echo "$v"
}

tb__state_set() {
    local f
    f=$(tb__state_file)
    mkdir -p "$TB_STATE_DIR"
    if [[ -f "$f" ]]; then
        grep -v "^$1=" "$f" >"$f.tmp" || true
        mv -f "$f.tmp" "$f"
    fi
    echo "$1=$2" >>"$f"
}

tb__state_del() {
    local f
    f=$(tb__state_file)
    [[ -f "$f" ]] || return 0
    grep -v "^$1=" "$f" >"$f.tmp" || true
    mv -f "$f.tmp" "$f"
}

# ---------------------------------------------------------------------------
# hugepages

tb__hp_reserve() {
    local old want got
    if [[ ! -w "$TB_HP_SYSFS" ]]; then
        tb_die "$TB_HP_SYSFS not writable (no 2 MiB hugepage support?)"
        return 1
    fi
    old=$(cat "$TB_HP_SYSFS")
    want="$TB_HUGEPAGES"
    # Remember the value found before any bed touched it; a leftover state
    # file from a crashed run already holds the original value.
    if ! tb__state_get HP_OLD >/dev/null; then
        tb__state_set HP_OLD "$old"
    fi
    if ((old < want)); then
        echo "$want" >"$TB_HP_SYSFS" 2>/dev/null || true
        got=$(cat "$TB_HP_SYSFS")
        if ((got < want)); then
            tb_die "could only reserve $got of $want hugepages (2 MiB)"
            return 1
        fi
        tb__state_set HP_SET "$want"
        tb_log "hugepages: $old -> $got"
    fi
}

tb__hp_restore() {
    local old set cur
    old=$(tb__state_get HP_OLD) || return 0
    set=$(tb__state_get HP_SET) || set=""
    cur=$(cat "$TB_HP_SYSFS" 2>/dev/null) || return 0
    # Restore only when we raised it and nobody changed it since.
    if [[ -n "$set" && "$cur" == "$set" && "$cur" != "$old" ]]; then
        # Pages of a process that just died may take a moment to be released.
        local i
        for ((i = 0; i < 20; i++)); do
            echo "$old" >"$TB_HP_SYSFS" 2>/dev/null || true
            [[ "$(cat "$TB_HP_SYSFS")" == "$old" ]] && break
            sleep 0.1
        done
        [[ "$(cat "$TB_HP_SYSFS")" == "$old" ]] || tb_log "warning: could not restore hugepages to $old"
        tb_log "hugepages: $cur -> $(cat "$TB_HP_SYSFS")"
    fi
    tb__state_del HP_SET
    tb__state_del HP_OLD
}

# ---------------------------------------------------------------------------
# process helpers: only ever touch a PID recorded by this bed, and only while
# it is still the same process (same start time).

tb__proc_starttime() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    # field 22 after the "(comm)" part, which may contain spaces
    stat="${stat##*) }"
    # shellcheck disable=SC2086
    set -- $stat
    echo "${20}"
}

tb__kill_recorded_lstackd() {
    local pid st cur
    pid=$(tb__state_get LSTACKD_PID) || return 0
    st=$(tb__state_get LSTACKD_START) || st=""
    cur=$(tb__proc_starttime "$pid") || cur=""
    if [[ -n "$cur" && "$cur" == "$st" ]]; then
        tb_log "stopping leftover lstackd pid $pid"
        kill -TERM "$pid" 2>/dev/null || true
        local i
        for ((i = 0; i < 50; i++)); do
            [[ "$(tb__proc_starttime "$pid")" == "$st" ]] || break
            sleep 0.1
        done
        if [[ "$(tb__proc_starttime "$pid")" == "$st" ]]; then
            tb_log "leftover lstackd pid $pid ignores SIGTERM, sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
            sleep 0.2
        fi
    fi
    tb__state_del LSTACKD_PID
    tb__state_del LSTACKD_START
}

# ---------------------------------------------------------------------------
# up / down / status

tb__ns_exists() { ip netns list 2>/dev/null | awk '{print $1}' | grep -qx -- "$1"; }

tb__clean_dpdk_files() {
    local mnt
    # --in-memory normally leaves nothing, but a run without it (or a crash) may.
    rm -rf /var/run/dpdk/"${LSTACK_TB}"* 2>/dev/null || true
    while read -r _ mnt fstype _; do
        [[ "$fstype" == hugetlbfs ]] || continue
        rm -f "$mnt"/"${LSTACK_TB}"*map_* 2>/dev/null || true
    done </proc/mounts
    rm -f /dev/hugepages/"${LSTACK_TB}"*map_* 2>/dev/null || true
}

tb_down() {
    tb__check_name || return 1
    local ns pids
    tb__kill_recorded_lstackd
    tb__kill_recorded_bridge
    for ns in "$TB_NS_SRV" "$TB_NS_CLI" "$TB_NS_BR"; do
        if tb__ns_exists "$ns"; then
            pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
            [[ -z "$pids" ]] || tb_log "warning: processes still in $ns: $pids (not ours to kill)"
            ip -n "$ns" link del "$TB_IF_SRV" 2>/dev/null || true
            ip -n "$ns" link del "$TB_IF_CLI" 2>/dev/null || true
            ip -n "$ns" link del "$TB_IF_BR_SRV" 2>/dev/null || true
            ip -n "$ns" link del "$TB_IF_BR_CLI" 2>/dev/null || true
            ip netns del "$ns" 2>/dev/null || tb_log "warning: could not delete netns $ns"
        fi
    done
    # (The pair is created inside the namespaces, so the root ns never holds it.)
    tb__hp_restore
    tb__clean_dpdk_files
    rm -rf "$TB_STATE_DIR"
    return 0
}

tb_up() {
    tb__check_name || return 1
    tb_vdev >/dev/null || return 1 # TB_PMD is af_packet or af_xdp
    local ns
    # Idempotent: drop whatever a previous run left behind.
    if [[ -d "$TB_STATE_DIR" ]] || tb__ns_exists "$TB_NS_SRV" || tb__ns_exists "$TB_NS_CLI" ||
        tb__ns_exists "$TB_NS_BR"; then
        tb_log "removing leftovers of a previous run"
        tb_down
    fi
    mkdir -p "$TB_STATE_DIR" || return 1
    tb__state_set CREATED "$(date +%s)"

    tb__hp_reserve || return 1

    ip netns add "$TB_NS_SRV" || { tb_die "cannot create netns $TB_NS_SRV"; return 1; }
    ip netns add "$TB_NS_CLI" || { tb_die "cannot create netns $TB_NS_CLI"; return 1; }
    for ns in "$TB_NS_SRV" "$TB_NS_CLI"; do
        ip -n "$ns" link set lo up || return 1
        # Quiet namespaces: no IPv6 autoconf/DAD/RS frames on new interfaces.
        ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 2>/dev/null || true
    done
    # Create the pair directly inside the namespaces: no names in the root ns.
    if [[ "$TB_BRIDGE" == 1 ]]; then
        tb__bridge_links || return 1
    else
        ip -n "$TB_NS_SRV" link add "$TB_IF_SRV" type veth peer name "$TB_IF_CLI" netns "$TB_NS_CLI" ||
            { tb_die "cannot create veth pair"; return 1; }
    fi
    ip netns exec "$TB_NS_SRV" sysctl -qw "net.ipv6.conf.${TB_IF_SRV}.disable_ipv6=1" || return 1
    ip netns exec "$TB_NS_CLI" sysctl -qw "net.ipv6.conf.${TB_IF_CLI}.disable_ipv6=1" || return 1

    # Client: an ordinary kernel host, and the stack's gateway.
    ip -n "$TB_NS_CLI" addr add "${TB_IP_CLI}/${TB_PREFIXLEN}" dev "$TB_IF_CLI" || return 1
    # Without this the kernel leaves TCP/UDP checksums partial (offloaded) on veth.
    ip netns exec "$TB_NS_CLI" ethtool -K "$TB_IF_CLI" tx off >/dev/null 2>&1 ||
        { tb_die "ethtool -K $TB_IF_CLI tx off failed"; return 1; }
    # Server: no kernel address; the stack owns the wire through af_packet.
    # GRO would hand af_packet super-frames bigger than the MTU.
    ip netns exec "$TB_NS_SRV" ethtool -K "$TB_IF_SRV" gro off >/dev/null 2>&1 || true

    ip -n "$TB_NS_SRV" link set "$TB_IF_SRV" up || return 1
    ip -n "$TB_NS_CLI" link set "$TB_IF_CLI" up || return 1
    local i
    for ((i = 0; i < 50; i++)); do
        [[ "$(ip netns exec "$TB_NS_CLI" cat "/sys/class/net/$TB_IF_CLI/operstate" 2>/dev/null)" == up ]] &&
            [[ "$(ip netns exec "$TB_NS_SRV" cat "/sys/class/net/$TB_IF_SRV/operstate" 2>/dev/null)" == up ]] && break
        sleep 0.1
    done
    ((i < 50)) || { tb_die "veth pair did not come up"; return 1; }
    tb__state_set UP 1
    tb_log "up: $TB_NS_CLI/$TB_IF_CLI $TB_IP_CLI <-> $([[ "$TB_BRIDGE" == 1 ]] && echo "$TB_NS_BR <-> ")$TB_NS_SRV/$TB_IF_SRV (stack $TB_IP_STACK)"
}

tb_status() {
    local ns
    echo "prefix:     $LSTACK_TB"
    echo "state dir:  $TB_STATE_DIR $([[ -d $TB_STATE_DIR ]] && echo present || echo absent)"
    [[ -f "$(tb__state_file)" ]] && sed 's/^/  /' "$(tb__state_file)"
    echo "hugepages:  $(cat "$TB_HP_SYSFS" 2>/dev/null) x 2MiB (free $(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages 2>/dev/null))"
    for ns in "$TB_NS_SRV" "$TB_NS_CLI" "$TB_NS_BR"; do
        [[ "$ns" != "$TB_NS_BR" || "$TB_BRIDGE" == 1 ]] || tb__ns_exists "$ns" || continue
        if tb__ns_exists "$ns"; then
            echo "netns $ns:"
            ip -n "$ns" -br addr 2>/dev/null | sed 's/^/  /'
            ip -n "$ns" -br link 2>/dev/null | sed 's/^/  /'
            local pids
            pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
            [[ -z "$pids" ]] || echo "  pids: $pids"
        else
            echo "netns $ns: absent"
        fi
    done
    local -a dfiles
    dfiles=(/var/run/dpdk/"${LSTACK_TB}"*)
    [[ -e "${dfiles[0]}" ]] || dfiles=()
    echo "dpdk files: ${dfiles[*]}"
}

# tb_mac NS IF : print the MAC of an interface
tb_mac() {
    ip -n "$1" link show dev "$2" 2>/dev/null | awk '/link\/ether/ {print tolower($2); exit}'
}

# ---------------------------------------------------------------------------
# A kernel address on the server side, so that a kernel application can run
# next to the stack in the server namespace (side-by-side comparisons).
#
# The veth is shared: the stack (through af_packet) owns TB_IP_STACK, the
# server namespace's kernel owns TB_IP_KERNEL. Both use the veth's MAC; the
# kernel ignores frames for TB_IP_STACK (not local, no forwarding in a fresh
# namespace) and the stack's frame filter drops those for TB_IP_KERNEL.

TB_IP_KERNEL="${TB_IP_KERNEL:-198.18.0.3}"
export TB_IP_KERNEL

# tb_add_kernel_addr : give the server veth the kernel address TB_IP_KERNEL/24.
tb_add_kernel_addr() {
    tb__ns_exists "$TB_NS_SRV" || { tb_die "server namespace $TB_NS_SRV does not exist (tb_up first)"; return 1; }
    if ip -n "$TB_NS_SRV" -4 -o addr show dev "$TB_IF_SRV" 2>/dev/null | grep -q " ${TB_IP_KERNEL}/"; then
        return 0
    fi
    # No forwarding, no proxy ARP: the kernel must never answer for the stack's address.
    ip netns exec "$TB_NS_SRV" sysctl -qw net.ipv4.ip_forward=0 || return 1
    ip netns exec "$TB_NS_SRV" sysctl -qw "net.ipv4.conf.${TB_IF_SRV}.proxy_arp=0" || return 1
    ip -n "$TB_NS_SRV" addr add "${TB_IP_KERNEL}/${TB_PREFIXLEN}" dev "$TB_IF_SRV" ||
        { tb_die "cannot add ${TB_IP_KERNEL}/${TB_PREFIXLEN} to $TB_NS_SRV/$TB_IF_SRV"; return 1; }
    tb_log "kernel address ${TB_IP_KERNEL}/${TB_PREFIXLEN} on $TB_NS_SRV/$TB_IF_SRV"
}

# tb_del_kernel_addr : remove it again (no error if absent).
tb_del_kernel_addr() {
    ip -n "$TB_NS_SRV" addr del "${TB_IP_KERNEL}/${TB_PREFIXLEN}" dev "$TB_IF_SRV" 2>/dev/null || true
}

# ---------------------------------------------------------------------------
# lstack.conf

# tb_vdev : the --vdev argument for TB_PMD on the server veth.
#   af_packet: a 4096-frame ring (the default 512 overflows under -c 1000).
#   af_xdp: the veth's only queue; the XDP program is libxdp's default
#   (redirect to the socket bound to the queue), removed when the stack exits.
tb_vdev() {
    case "$TB_PMD" in
    af_packet) echo "net_af_packet0,iface=$TB_IF_SRV,framecnt=4096${LSTACK_TEST_STACKS:+,qpairs=$LSTACK_TEST_STACKS}" ;;
    af_xdp) echo "net_af_xdp0,iface=$TB_IF_SRV,start_queue=0,queue_count=1" ;;
    *) tb_die "TB_PMD='$TB_PMD': af_packet or af_xdp"; return 1 ;;
    esac
}

# tb_af_xdp_ok : can a stack use net_af_xdp here? Prints why not; 1 if not.
tb_af_xdp_ok() {
    if [[ "$(dpkg-query -W -f='${db:Status-Abbrev}' librte-net-af-xdp23 2>/dev/null)" != "ii " ]]; then
        echo "DPDK's net_af_xdp driver (librte-net-af-xdp23) is not installed"
        return 1
    fi
    if ! python3 -c 'import socket; socket.socket(44, socket.SOCK_RAW).close()' 2>/dev/null; then
        echo "this kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS)"
        return 1
    fi
}

tb__xdp_attached() {
    ip -n "$TB_NS_SRV" -d link show dev "$TB_IF_SRV" 2>/dev/null | grep -q 'prog/xdp'
}

# tb_xdp_off : detach an XDP program left on the server veth (a stack on
# af_xdp that was killed before it could remove its own), in either mode.
# Prints what it did; 1 if a program is still attached afterwards.
tb_xdp_off() {
    tb__xdp_attached || return 0
    ip -n "$TB_NS_SRV" link set dev "$TB_IF_SRV" xdpdrv off 2>/dev/null || true
    ip -n "$TB_NS_SRV" link set dev "$TB_IF_SRV" xdpgeneric off 2>/dev/null || true
    if tb__xdp_attached; then
        echo "an XDP program is still attached to $TB_IF_SRV (ip -d link show)"
        return 1
    fi
    echo "detached a leftover XDP program from $TB_IF_SRV"
}

# tb_write_conf FILE [extra lines...]
# An extra line "key = value;" replaces the default for that key.
tb_write_conf() {
    local file="$1"
    shift
    local -a extra=("$@")
    local -A override=()
    local l k
    for l in "${extra[@]}"; do
        k="${l%%=*}"
        k="${k//[[:space:]]/}"
        [[ -n "$k" && "$l" == *=* ]] && override[$k]=1
    done
    {
        echo "# lstack.conf generated by tests/system/testbed.sh for bed '${LSTACK_TB}'"
        [[ -n "${override[dpdk_args]:-}" ]] || printf 'dpdk_args = [ "--in-memory", "--no-pci", "--file-prefix", "%s", "-l", "%s", "--vdev=%s" ];\n' \
            "${LSTACK_TB}x" "$TB_CPU" "$(tb_vdev)"
        [[ -n "${override[host_addr]:-}" ]] || echo "host_addr = \"$TB_IP_STACK\";"
        [[ -n "${override[mask_addr]:-}" ]] || echo "mask_addr = \"$TB_MASK\";"
        [[ -n "${override[gateway_addr]:-}" ]] || echo "gateway_addr = \"$TB_IP_CLI\";"
        if [[ -n "${override[num_cpus]:-}" ]]; then
            :
        elif [[ "${LSTACK_TEST_STACKS:-1}" -gt 1 ]]; then
            echo "num_cpus = \"0-$((LSTACK_TEST_STACKS - 1))\";" # one stack per CPU
        else
            echo "num_cpus = \"$TB_CPU\";"
        fi
        [[ -n "${override[tcp_conn_count]:-}" ]] || echo "tcp_conn_count = 64;"
        [[ -n "${override[mbuf_count_per_conn]:-}" ]] || echo "mbuf_count_per_conn = 32;"
        # LSTACK_TEST_STACK_MODE=run-to-wakeup runs a test in that mode.
        [[ -n "${override[stack_thread_mode]:-}" || -z "${LSTACK_TEST_STACK_MODE:-}" ]] ||
            echo "stack_thread_mode = \"$LSTACK_TEST_STACK_MODE\";"
        for l in "${extra[@]}"; do
            echo "$l"
        done
    } >"$file"
}

# ---------------------------------------------------------------------------
# The lossy bridge (TB_BRIDGE=1): a third namespace between client and
# server, where lossy_bridge forwards every frame between the two veth pairs
# with the impairments it is given. Both the stack's address and the kernel
# address (tb_add_kernel_addr) are reached through it, so a kernel server and
# the stack can be compared on the very same impaired path.

TB_BRIDGE_PID=""
TB_BRIDGE_LOG=""

# tb__bridge_links : (tb_up) the two pairs server<->bridge and client<->bridge.
tb__bridge_links() {
    local i
    ip netns add "$TB_NS_BR" || { tb_die "cannot create netns $TB_NS_BR"; return 1; }
    ip -n "$TB_NS_BR" link set lo up || return 1
    ip netns exec "$TB_NS_BR" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 2>/dev/null || true
    ip -n "$TB_NS_SRV" link add "$TB_IF_SRV" type veth peer name "$TB_IF_BR_SRV" netns "$TB_NS_BR" ||
        { tb_die "cannot create the server-bridge veth pair"; return 1; }
    ip -n "$TB_NS_CLI" link add "$TB_IF_CLI" type veth peer name "$TB_IF_BR_CLI" netns "$TB_NS_BR" ||
        { tb_die "cannot create the client-bridge veth pair"; return 1; }
    # The bridge namespace has no addresses: its kernel must never answer,
    # forward or send anything on these veths (no IPv6, no IPv4 addresses).
    for i in "$TB_IF_BR_SRV" "$TB_IF_BR_CLI"; do
        ip netns exec "$TB_NS_BR" sysctl -qw "net.ipv6.conf.${i}.disable_ipv6=1" || return 1
        # Frames the bridge sends are complete (no partial checksums to finish
        # on the way); GRO would merge frames into super-frames for af_packet.
        ip netns exec "$TB_NS_BR" ethtool -K "$i" tx off gro off >/dev/null 2>&1 ||
            { tb_die "ethtool -K $i tx off gro off failed"; return 1; }
        ip -n "$TB_NS_BR" link set "$i" up || return 1
    done
    # A kernel server on the server veth (tb_add_kernel_addr) sends through
    # af_packet on the bridge: its checksums must be complete, not partial.
    ip netns exec "$TB_NS_SRV" ethtool -K "$TB_IF_SRV" tx off >/dev/null 2>&1 ||
        { tb_die "ethtool -K $TB_IF_SRV tx off failed"; return 1; }
    ip netns exec "$TB_NS_SRV" sysctl -qw "net.ipv6.conf.${TB_IF_SRV}.disable_ipv6=1" || return 1
    ip netns exec "$TB_NS_CLI" sysctl -qw "net.ipv6.conf.${TB_IF_CLI}.disable_ipv6=1" || return 1
}

tb__kill_recorded_bridge() {
    local pid st cur
    pid=$(tb__state_get BRIDGE_PID) || return 0
    st=$(tb__state_get BRIDGE_START) || st=""
    cur=$(tb__proc_starttime "$pid") || cur=""
    if [[ -n "$cur" && "$cur" == "$st" ]]; then
        kill -TERM "$pid" 2>/dev/null || true
        tb_wait_gone "$pid" 5 || kill -KILL "$pid" 2>/dev/null || true
    fi
    tb__state_del BRIDGE_PID
    tb__state_del BRIDGE_START
}

# tb_start_bridge BIN LOG [lossy_bridge options...] : start lossy_bridge in
# the bridge namespace (--a server side, --b client side are given here; the
# caller adds --ab/--ba/--both/--seed/--duration). Main shell only (the
# bridge is a child of it). 1 if it does not report ready within 5 s.
tb_start_bridge() {
    local bin="$1" log="$2" i
    shift 2
    [[ "$TB_BRIDGE" == 1 ]] || { tb_die "tb_start_bridge: the bed was not brought up with TB_BRIDGE=1"; return 1; }
    [[ -z "$TB_BRIDGE_PID" ]] || { tb_die "bridge already running (pid $TB_BRIDGE_PID)"; return 1; }
    [[ -x "$bin" ]] || { tb_die "lossy_bridge binary '$bin' not found"; return 1; }
    : >"$log"
    ip netns exec "$TB_NS_BR" "$bin" --a "$TB_IF_BR_SRV" --b "$TB_IF_BR_CLI" "$@" >"$log" 2>&1 &
    TB_BRIDGE_PID=$!
    TB_BRIDGE_LOG="$log"
    tb__state_set BRIDGE_PID "$TB_BRIDGE_PID"
    tb__state_set BRIDGE_START "$(tb__proc_starttime "$TB_BRIDGE_PID")"
    for ((i = 0; i < 50; i++)); do
        grep -q '^lossy_bridge: ready' "$log" 2>/dev/null && { tb_log "bridge pid $TB_BRIDGE_PID: $*"; return 0; }
        kill -0 "$TB_BRIDGE_PID" 2>/dev/null || break
        sleep 0.1
    done
    tb_log "lossy_bridge did not become ready; log:"
    sed 's/^/  | /' "$log" >&2
    tb_stop_bridge >/dev/null 2>&1 || true
    return 1
}

# tb_stop_bridge : SIGTERM the bridge and print its counter lines.
tb_stop_bridge() {
    local pid="$TB_BRIDGE_PID"
    [[ -n "$pid" ]] || return 0
    kill -TERM "$pid" 2>/dev/null || true
    tb_wait_gone "$pid" 5 || kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    TB_BRIDGE_PID=""
    tb__state_del BRIDGE_PID
    tb__state_del BRIDGE_START
    grep '^lossy_bridge: [ab]->' "$TB_BRIDGE_LOG" 2>/dev/null || true
}

# ---------------------------------------------------------------------------
# lstackd control. Call these from the test's main shell (not inside $(...)),
# so that the daemon is a child of that shell and `wait` can reap it.

# tb_start_lstackd BIN CONF LOG [TIMEOUT_S]
tb_start_lstackd() {
    local bin="$1" conf="$2" log="$3" timeout="${4:-30}"
    local i line
    if [[ -n "$TB_LSTACKD_PID" ]]; then
        tb_die "lstackd already started (pid $TB_LSTACKD_PID)"
        return 1
    fi
    [[ -x "$bin" ]] || { tb_die "lstackd binary '$bin' not found or not executable"; return 1; }
    : >"$log"
    # `ip netns exec` execs the command, so $! is lstackd's own PID.
    ip netns exec "$TB_NS_SRV" "$bin" -f "$conf" >"$log" 2>&1 &
    TB_LSTACKD_PID=$!
    TB_LSTACKD_LOG="$log"
    tb__state_set LSTACKD_PID "$TB_LSTACKD_PID"
    tb__state_set LSTACKD_START "$(tb__proc_starttime "$TB_LSTACKD_PID")"
    for ((i = 0; i < timeout * 10; i++)); do
        line=$(grep -m1 '^lstackd: ready ' "$log" 2>/dev/null) && break
        if ! kill -0 "$TB_LSTACKD_PID" 2>/dev/null; then
            local rc=0
            wait "$TB_LSTACKD_PID" || rc=$?
            tb_log "lstackd exited with status $rc before becoming ready; log:"
            sed 's/^/  | /' "$log" >&2
            TB_LSTACKD_PID=""
            tb__state_del LSTACKD_PID
            return 1
        fi
        sleep 0.1
    done
    if [[ -z "$line" ]]; then
        tb_log "lstackd not ready after ${timeout}s; log:"
        sed 's/^/  | /' "$log" >&2
        tb_stop_lstackd >/dev/null 2>&1 || true
        return 1
    fi
    # shellcheck disable=SC2034 # for the caller
    TB_LSTACKD_MAC=$(sed -n 's/.* mac=\([0-9a-fA-F:]*\).*/\1/p' <<<"$line" | tr 'A-F' 'a-f')
    # shellcheck disable=SC2034 # for the caller
    TB_LSTACKD_PORT=$(sed -n 's/.* port=\([^ ]*\).*/\1/p' <<<"$line")
    tb_log "lstackd pid $TB_LSTACKD_PID: $line"
}

tb__stats_count() { grep -c '^lstackd: stats ' "$TB_LSTACKD_LOG" 2>/dev/null || true; }

# tb_lstackd_stats : ask for a fresh stats line (SIGUSR1) and print it.
tb_lstackd_stats() {
    local before i line
    [[ -n "$TB_LSTACKD_PID" ]] || { tb_die "lstackd not started"; return 1; }
    before=$(tb__stats_count)
    kill -USR1 "$TB_LSTACKD_PID" 2>/dev/null || { tb_die "lstackd (pid $TB_LSTACKD_PID) is gone"; return 1; }
    for ((i = 0; i < 100; i++)); do
        # wait for a new, complete (newline-terminated) stats line
        if (($(tb__stats_count) > before)) && [[ -z "$(tail -c 1 "$TB_LSTACKD_LOG")" ]]; then
            line=$(grep '^lstackd: stats ' "$TB_LSTACKD_LOG" | tail -n 1)
            echo "$line"
            return 0
        fi
        sleep 0.05
    done
    tb_die "no stats line from lstackd within 5 s after SIGUSR1"
    return 1
}

# tb_stat_value LINE NAME : extract NAME=<int> from a stats line
tb_stat_value() {
    local v
    v=$(tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p" | head -n 1)
    if [[ ! "$v" =~ ^[0-9]+$ ]]; then
        tb_die "stat '$2' missing or not an integer in: $1"
        return 1
    fi
    echo "$v"
}

# tb_lstackd_stat NAME : fresh value of one counter
tb_lstackd_stat() {
    local line
    line=$(tb_lstackd_stats) || return 1
    tb_stat_value "$line" "$1"
}

# tb_running PID : PID runs: one of its threads exists and is not a zombie
# (a leader that has exited while its other threads run is a zombie, the
# process is not). Each thread's /proc stat is read once and that read
# decides: a child of this shell can be reaped by bash (SIGCHLD) at any
# moment, so "kill -0 succeeds, then the state is not Z" proves nothing:
# the second look finds no file once the zombie is reaped. sem-multi failed
# that way in CI twice, and here once in 10 runs: "still running 30 s after
# the client finished" 2 s after it, with no thread left to describe (the
# leader is a zombie until exit_group's last thread is gone, then reaped).
tb_running() {
    local t st
    for t in /proc/"$1"/task/*/stat; do
        { read -r st <"$t"; } 2>/dev/null || continue
        st="${st##*) }" # past "(comm)", which may contain spaces
        [[ -n "$st" && "${st:0:1}" != Z && "${st:0:1}" != X ]] && return 0
    done
    return 1
}

# tb_wait_gone PID SECONDS : until PID has exited (gone, or a zombie waiting
# to be reaped); 1 if it still runs after SECONDS. Decide on this status
# alone: a second look (kill -0, /proc) races with the reaping.
tb_wait_gone() {
    local pid="$1" t="$2" i
    for ((i = 0; i < t * 10; i++)); do
        tb_running "$pid" || return 0
        sleep 0.1
    done
    ! tb_running "$pid"
}

# tb_describe_pid PID... : what each process is doing, for a report of a
# hang: its command line, each thread's state, kernel wait channel and
# system call, and (gdb installed) every thread's stack. Prints nothing for
# a pid that is gone. Takes up to 60 s per process (gdb).
tb_describe_pid() {
    local p t
    for p in "$@"; do
        [[ -d /proc/$p ]] || continue
        echo "--- pid $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
        for t in /proc/"$p"/task/*; do
            echo "    thread ${t##*/} ($(cat "$t/comm" 2>/dev/null)): state $(cut -d' ' -f3 "$t/stat" 2>/dev/null)," \
                "wchan $(cat "$t/wchan" 2>/dev/null), syscall $(cut -d' ' -f1 "$t/syscall" 2>/dev/null)"
        done
        if command -v gdb >/dev/null; then
            timeout 60 gdb -p "$p" -batch -ex "thread apply all bt 20" 2>/dev/null |
                grep -E '^(Thread|#)' | head -n 160 | sed 's/^/    | /'
        else
            echo "    (no gdb: no stacks)"
        fi
    done
}

tb_lstackd_running() {
    [[ -n "$TB_LSTACKD_PID" ]] && kill -0 "$TB_LSTACKD_PID" 2>/dev/null
}

# tb_stop_lstackd : SIGTERM, expect exit 0 and "lstackd: stopped".
tb_stop_lstackd() {
    local pid="$TB_LSTACKD_PID" rc=0 ok=0
    [[ -n "$pid" ]] || return 0
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        if ! tb_wait_gone "$pid" 15; then
            tb_log "lstackd pid $pid did not stop within 15 s of SIGTERM: SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
            ok=1
        fi
    fi
    wait "$pid" 2>/dev/null || rc=$?
    TB_LSTACKD_PID=""
    tb__state_del LSTACKD_PID
    tb__state_del LSTACKD_START
    if ((ok != 0)); then
        return 1
    fi
    if ((rc != 0)); then
        tb_log "lstackd exited with status $rc (expected 0); log tail:"
        tail -n 20 "$TB_LSTACKD_LOG" | sed 's/^/  | /' >&2
        return 1
    fi
    if ! grep -q '^lstackd: stopped' "$TB_LSTACKD_LOG"; then
        tb_log "lstackd exited 0 but did not print 'lstackd: stopped'; log tail:"
        tail -n 20 "$TB_LSTACKD_LOG" | sed 's/^/  | /' >&2
        return 1
    fi
    tb_log "lstackd stopped cleanly (exit 0)"
}

# ---------------------------------------------------------------------------
# cleanup trap

# tb_on_cleanup CMD... : run CMD (eval'd) in the cleanup trap, before teardown.
tb_on_cleanup() { TB_CLEANUP_CMDS+=("$*"); }

tb__cleanup() {
    local rc=$? c
    trap - EXIT INT TERM
    for c in "${TB_CLEANUP_CMDS[@]}"; do
        eval "$c" || true
    done
    if [[ -n "$TB_LSTACKD_PID" ]]; then
        tb_stop_lstackd || true
    fi
    [[ -z "$TB_BRIDGE_PID" ]] || tb_stop_bridge >/dev/null 2>&1 || true
    tb_down || true
    exit "$rc"
}

# tb_trap_cleanup : tear the bed down on exit, failure, Ctrl-C or SIGTERM.
tb_trap_cleanup() {
    trap tb__cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

# ---------------------------------------------------------------------------
# CLI

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    set -u
    if [[ "${1:-}" == up || "${1:-}" == down ]]; then
        tb__check_name || exit 2
    fi
    case "${1:-}" in
    up)
        [[ $(id -u) -eq 0 ]] || { echo "testbed.sh: must run as root" >&2; exit 1; }
        tb_up || { tb_down; exit 1; }
        tb_status
        ;;
    down)
        [[ $(id -u) -eq 0 ]] || { echo "testbed.sh: must run as root" >&2; exit 1; }
        tb_down
        ;;
    status)
        tb_status
        ;;
    *)
        echo "usage: [LSTACK_TB=prefix] $0 up|down|status" >&2
        exit 2
        ;;
    esac
fi
