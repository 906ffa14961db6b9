#!/usr/bin/env bash
# test_deb.sh BUILD_DIR SOURCE_DIR - the Debian package, as an administrator
# meets it (root; the bed lock; minutes):
#  1. scripts/build-deb.sh builds lstack_<version>_<arch>.deb from the tree
#     and lintian reports no error ($LSTACK_DEB: use that .deb instead);
#  2. a clean Debian root (debootstrap --variant=minbase, plus redis-server;
#     kept as a tarball in $LSTACK_PKG_CACHE, default /var/cache/lstack-test)
#     takes it with `apt-get install ./lstack_*.deb`, which brings in the
#     DPDK, libconfig and libnuma packages it depends on;
#  3. Redis runs over lstack there from the installed paths only: the
#     installed /etc/gazelle/lstack.conf edited for the bed, the hugepages
#     the installed lstack-setup says it needs (and Redis uses no more),
#     LD_PRELOAD=liblstack.so by name, as the redis user with the
#     capabilities and locked-memory limit of the installed redis-server
#     drop-in; a client in the client namespace sets and gets keys, and the
#     installed stackctl shows its connection and the preload's version;
#  4. `apt-get purge --autoremove lstack` leaves nothing behind: every file
#     dpkg listed is gone, the conffiles with /etc/gazelle, and the root holds
#     the same files as before the install.
# LSTACK_PACKAGE=0 skips it.
set -u
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
# shellcheck disable=SC2034 # read by common.sh: the bed's name
T_NAME=deb
# shellcheck source=../system/common.sh
source "$src/tests/system/common.sh"
[[ "${LSTACK_PACKAGE:-1}" != 0 ]] || tb_skip "LSTACK_PACKAGE=0"
tb_require_root
tb_require_tools debootstrap chroot setpriv ip ethtool sysctl redis-cli timeout
[[ -n "${LSTACK_DEB:-}" ]] || tb_require_tools dpkg-buildpackage dh lintian
[[ -d /sys/kernel/mm/hugepages/hugepages-2048kB ]] || tb_skip "no 2 MiB hugepage support in this kernel"

now() { date +%s; }
T_WORK=$(mktemp -d "/tmp/lstack-test-${LSTACK_TB}.XXXXXX")
ROOT="$T_WORK/root"
REDIS_PID=""
HOLD_PID=""
cleanup_root() {
    [[ -z "$HOLD_PID" ]] || kill "$HOLD_PID" 2>/dev/null
    if [[ -n "$REDIS_PID" ]] && kill -0 "$REDIS_PID" 2>/dev/null; then
        kill -TERM "$REDIS_PID" 2>/dev/null
        sleep 1
        kill -KILL "$REDIS_PID" 2>/dev/null
    fi
    local m
    for m in run dev sys proc; do
        mountpoint -q "$ROOT/$m" && { umount -R "$ROOT/$m" 2>/dev/null || umount -R -l "$ROOT/$m"; }
    done
    # Never remove through a mount left in the root (its /dev is the host's).
    if grep -qF " $ROOT/" /proc/mounts; then
        echo "   still mounted under $ROOT: left in place"
    elif [[ "${T_KEEP_LOG:-0}" == 1 ]]; then
        rm -rf --one-file-system "$ROOT"
        echo "(logs kept in $T_WORK)"
    else
        rm -rf --one-file-system "$T_WORK"
    fi
}
tb_on_cleanup 'cleanup_root'
tb_trap_cleanup
in_root() { chroot "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }

# ---- 1. the package ----
t0=$(now)
if [[ -n "${LSTACK_DEB:-}" ]]; then
    deb=$LSTACK_DEB
    [[ -f "$deb" ]] || t_fail "LSTACK_DEB=$deb: no such file"
    t_ok "package given: $deb"
    build_s="(given)"
else
    "$src/scripts/build-deb.sh" "$build/deb" || t_fail "scripts/build-deb.sh failed"
    deb=$(ls "$build"/deb/lstack_*.deb)
    t_ok "built $(basename "$deb"); lintian: no error"
    build_s="$(($(now) - t0)) s"
fi
version=$(dpkg-deb -f "$deb" Version)

# ---- 2. a clean root ----
t1=$(now)
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[[ -n "$codename" ]] || t_fail "cannot tell the Debian release (/etc/os-release)"
# The machine's own archive, as apt knows it: "URI SUITE COMPONENT" lines.
repos=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' 'Created-By: Packages' |
    awk -v c="$codename" '$2 == c || index($2, c "-") == 1' | sort -u)
mirror=$(awk -v c="$codename" '$2 == c {print $1; exit}' <<<"$repos")
[[ -n "$mirror" ]] || t_fail "apt knows no archive for $codename (apt-get indextargets)"
cache=${LSTACK_PKG_CACHE:-/var/cache/lstack-test}
base="$cache/$codename-minbase-redis.tar"
if [[ ! -s "$base" ]]; then
    mkdir -p "$cache" "$T_WORK/boot"
    echo "   debootstrap --variant=minbase --include=redis-server $codename from $mirror (once; kept in $base)"
    debootstrap --variant=minbase --include=redis-server "$codename" "$T_WORK/boot" "$mirror" >"$T_WORK/debootstrap.log" 2>&1 ||
        { tail -n 20 "$T_WORK/debootstrap.log"; t_fail "debootstrap failed (log above)"; }
    tar -C "$T_WORK/boot" -cf "$base.tmp" . && mv "$base.tmp" "$base" || t_fail "cannot write $base"
    rm -rf --one-file-system "${T_WORK:?}/boot"
fi
mkdir -p "$ROOT"
tar -C "$ROOT" -xf "$base" || t_fail "cannot unpack $base"
awk '{print "deb " $1 " " $2 " " $3}' <<<"$repos" >"$ROOT/etc/apt/sources.list"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# No service starts inside the root (Debian's policy-rc.d convention).
printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
chmod 755 "$ROOT/usr/sbin/policy-rc.d"
mount -t proc proc "$ROOT/proc" && mount --rbind /sys "$ROOT/sys" && mount --make-rslave "$ROOT/sys" &&
    mount --rbind /dev "$ROOT/dev" && mount --make-rslave "$ROOT/dev" && mount -t tmpfs tmpfs "$ROOT/run" ||
    t_fail "cannot mount proc, sys, dev and run in the root"
in_root apt-get update -q >"$T_WORK/apt-update.log" 2>&1 || { tail "$T_WORK/apt-update.log"; t_fail "apt-get update in the root failed"; }
# What the root holds before the install (apt's and dpkg's own state, logs
# and caches aside: they record the install by design).
snapshot() {
    (cd "$ROOT" && find . -xdev \( -path ./var/lib/apt -o -path ./var/lib/dpkg -o -path ./var/cache -o \
        -path ./var/log -o -path ./tmp -o -path ./var/tmp -o -path ./etc/ld.so.cache \) -prune -o -print) | sort
}
snapshot >"$T_WORK/before"
t_ok "clean $codename root ready ($(wc -l <"$T_WORK/before") files; redis-server $(in_root dpkg-query -W -f='${Version}' redis-server))"
root_s="$(($(now) - t1)) s"

# ---- 3. apt-get install ./lstack_*.deb ----
t2=$(now)
cp "$deb" "$ROOT/tmp/"
in_root apt-get install -y -q "/tmp/$(basename "$deb")" >"$T_WORK/apt-install.log" 2>&1 ||
    { tail -n 30 "$T_WORK/apt-install.log"; t_fail "apt-get install ./$(basename "$deb") failed in the clean root"; }
status=$(in_root dpkg-query -W -f='${Status} ${Version}' lstack)
[[ "$status" == "install ok installed $version" ]] || t_fail "dpkg says '$status' after the install"
pulled=$(grep -c '^Setting up ' "$T_WORK/apt-install.log")
t_ok "apt-get install ./$(basename "$deb"): installed, with $((pulled - 1)) packages it depends on"
grep -q '^Setting up librte-eal' "$T_WORK/apt-install.log" && grep -q '^Setting up libconfig9' "$T_WORK/apt-install.log" &&
    grep -q '^Setting up libnuma1' "$T_WORK/apt-install.log" ||
    t_fail "apt did not install DPDK's, libconfig's and libnuma's runtime packages"
t_ok "Debian's DPDK (librte-eal23...), libconfig9 and libnuma1 came in as dependencies"
in_root dpkg -L lstack | sort >"$T_WORK/files"
conffiles=$(in_root dpkg-query -W -f='${Conffiles}' lstack | awk '{print $1}' | sort | tr '\n' ' ')
[[ "$conffiles" == "/etc/gazelle/lstack.conf /etc/gazelle/ltran.conf " ]] || t_fail "conffiles: '$conffiles'"
t_ok "conffiles: $conffiles"
lib=$(grep '/liblstack\.so$' "$T_WORK/files")
[[ "$lib" =~ ^/usr/lib/[a-z0-9_]+-linux-gnu[a-z0-9_]*/liblstack\.so$ ]] || t_fail "liblstack.so is at '$lib', not in the multiarch libdir"
privdir="$(dirname "$lib")/lstack"
for f in "$privdir/liblstack_dpdk.so" "$privdir/liblstack_lwip.so" "$privdir/lstack-setup" /usr/bin/stackctl /usr/bin/ltran \
    /usr/bin/lstackd; do
    grep -qx "$f" "$T_WORK/files" || t_fail "$f is not in the package"
done
t_ok "liblstack.so in $(dirname "$lib"), its private libraries in $privdir"
install_s="$(($(now) - t2)) s"

# ---- 4. Redis over lstack from the installed paths ----
t3=$(now)
tb_up || t_fail "test bed did not come up"
conf="$ROOT/etc/gazelle/lstack.conf"
sed -i -e "s|^# dpdk_args = .*|dpdk_args = [\"--no-pci\", \"-l\", \"$TB_CPU\", \"--vdev=$(tb_vdev)\"]|" \
    -e "s|^# host_addr = .*|host_addr = \"$TB_IP_STACK\"|" -e "s|^# mask_addr = .*|mask_addr = \"$TB_MASK\"|" \
    -e "s|^# gateway_addr = .*|gateway_addr = \"$TB_IP_CLI\"|" -e "s|^# num_cpus = .*|num_cpus = \"$TB_CPU\"|" \
    -e 's|^# tcp_conn_count = .*|tcp_conn_count = 64|' -e 's|^# mbuf_count_per_conn = .*|mbuf_count_per_conn = 32|' \
    -e 's|^# init_fail = .*|init_fail = "exit"|' "$conf"
setup_out=$(in_root "$privdir/lstack-setup") || { echo "$setup_out"; t_fail "the installed lstack-setup failed on the edited lstack.conf"; }
need=$(sed -n 's|.*/etc/gazelle/lstack.conf: needs \([0-9]*\) hugepages.*|\1|p' <<<"$setup_out")
[[ -n "$need" ]] || { echo "$setup_out"; t_fail "lstack-setup did not say what it needs"; }
t_ok "installed lstack-setup on /etc/gazelle/lstack.conf: needs $need hugepages"

# The installed drop-in's capabilities and memory lock, as systemd would
# give them to the redis user.
dropin="$ROOT/usr/share/lstack/redis-server.service.d/lstack.conf"
caps=$(sed -n 's/^AmbientCapabilities=//p' "$dropin" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
grep -q '^LimitMEMLOCK=infinity$' "$dropin" || t_fail "the drop-in sets no LimitMEMLOCK=infinity"
grep -q '^Environment=LD_PRELOAD=liblstack.so GAZELLE_BIND_PROCNAME=redis-server' "$dropin" ||
    t_fail "the drop-in does not preload liblstack.so for redis-server"
[[ -n "$caps" ]] || t_fail "the drop-in names no capability"
mkdir -p "$ROOT/run/lstack" "$T_WORK/redis"
chown "$(in_root id -u redis):$(in_root id -g redis)" "$ROOT/run/lstack"
chmod 2755 "$ROOT/run/lstack"
# LimitMEMLOCK=infinity, where this shell may raise the hard limit
# (CAP_SYS_RESOURCE); CAP_IPC_LOCK lets the redis user lock past it anyway.
memlock=unlimited
cap_eff=$(awk '/^CapEff:/ {print $2}' /proc/self/status)
if (((0x$cap_eff >> 24 & 1) == 0)); then
    memlock=$(ulimit -Hl)
    echo "   no CAP_SYS_RESOURCE here: the memory lock limit stays at $memlock KiB (CAP_IPC_LOCK goes past it)"
fi
hp_free0=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
ip netns exec "$TB_NS_SRV" chroot "$ROOT" prlimit --memlock="$memlock:$memlock" \
    setpriv --reuid=redis --regid=redis --init-groups --inh-caps="$caps" --ambient-caps="$caps" \
    env -i PATH=/usr/bin:/bin LD_PRELOAD=liblstack.so GAZELLE_BIND_PROCNAME=redis-server \
    LSTACK_CONF_PATH=/etc/gazelle/lstack.conf \
    redis-server --port 6379 --bind 0.0.0.0 --protected-mode no --save "" --appendonly no --dir /tmp \
    --daemonize no >"$T_WORK/redis/out.log" 2>&1 &
REDIS_PID=$!
up=0
for ((i = 0; i < 300; i++)); do
    kill -0 "$REDIS_PID" 2>/dev/null || break
    if [[ "$(ip netns exec "$TB_NS_CLI" timeout 2 redis-cli -h "$TB_IP_STACK" -p 6379 ping 2>/dev/null)" == PONG ]]; then
        up=1
        break
    fi
    sleep 0.1
done
((up)) || { tail -n 30 "$T_WORK/redis/out.log"; t_fail "redis under the installed preload did not answer PING on $TB_IP_STACK"; }
hp_used=$((hp_free0 - $(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)))
uid=$(awk '/^Uid:/ {print $2}' "/proc/$REDIS_PID/status")
[[ "$uid" == "$(in_root id -u redis)" ]] || t_fail "redis runs as uid $uid, not as the root's redis user"
t_ok "redis-server (the redis user, ambient caps ${caps//+/}) answers on $TB_IP_STACK over lstack"
((hp_used <= need)) || t_fail "the stack took $hp_used hugepages, more than the $need lstack-setup reserves"
t_ok "hugepages in use: $hp_used, within the $need lstack-setup said"
maps=$(cat "/proc/$REDIS_PID/maps")
grep -q " $ROOT$lib\$" <<<"$maps" && grep -q " $ROOT$privdir/liblstack_dpdk.so\$" <<<"$maps" ||
    t_fail "redis has not mapped the installed liblstack.so and $privdir/liblstack_dpdk.so"
! grep -qF -e "$build" -e "$src" <<<"$maps" || t_fail "redis maps a file of the build or source tree"
t_ok "it maps the installed liblstack.so and liblstack_dpdk.so, nothing of the build or source tree"

for ((k = 0; k < 100; k++)); do echo "SET pkg:$k v$k"; done |
    ip netns exec "$TB_NS_CLI" redis-cli -h "$TB_IP_STACK" -p 6379 >/dev/null || t_fail "SETs failed"
got=$(ip netns exec "$TB_NS_CLI" redis-cli -h "$TB_IP_STACK" -p 6379 get pkg:42)
size=$(ip netns exec "$TB_NS_CLI" redis-cli -h "$TB_IP_STACK" -p 6379 dbsize)
[[ "$got" == v42 && "$size" == 100 ]] || t_fail "GET pkg:42 gave '$got', DBSIZE '$size' (want v42, 100)"
t_ok "100 SETs, GET and DBSIZE right"

ip netns exec "$TB_NS_CLI" bash -c "exec 3<>/dev/tcp/$TB_IP_STACK/6379; sleep 30" &
HOLD_PID=$!
conns=""
for ((i = 0; i < 50; i++)); do
    conns=$(ip netns exec "$TB_NS_SRV" chroot "$ROOT" /usr/bin/stackctl show connections 2>&1)
    grep -q "ESTABLISHED" <<<"$conns" && grep -q "$TB_IP_CLI" <<<"$conns" && break
    sleep 0.1
done
grep -q "ESTABLISHED" <<<"$conns" && grep -q "$TB_IP_CLI" <<<"$conns" ||
    { echo "$conns"; t_fail "/usr/bin/stackctl show connections does not show the client's connection"; }
t_ok "/usr/bin/stackctl show connections: the client's connection ESTABLISHED"
cfg=$(ip netns exec "$TB_NS_SRV" chroot "$ROOT" /usr/bin/stackctl show config 2>&1 | head -n 1)
grep -q "lstack $version, configuration read at start-up from /etc/gazelle/lstack.conf" <<<"$cfg" ||
    t_fail "stackctl show config does not name the preload's version and /etc/gazelle/lstack.conf: '$cfg'"
t_ok "stackctl show config: $cfg"
kill "$HOLD_PID" 2>/dev/null
wait "$HOLD_PID" 2>/dev/null
HOLD_PID=""
kill -TERM "$REDIS_PID"
for ((i = 0; i < 100; i++)); do
    kill -0 "$REDIS_PID" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$REDIS_PID" 2>/dev/null && t_fail "redis did not stop on SIGTERM"
wait "$REDIS_PID"
rc=$?
REDIS_PID=""
[[ $rc -eq 0 ]] || { tail -n 20 "$T_WORK/redis/out.log"; t_fail "redis exited with status $rc on SIGTERM"; }
t_ok "redis stopped on SIGTERM (status 0)"
redis_s="$(($(now) - t3)) s"

# ---- 5. purge ----
t4=$(now)
rm -rf "$ROOT/run/lstack"
in_root apt-get purge -y -q --autoremove lstack >"$T_WORK/apt-purge.log" 2>&1 ||
    { tail -n 20 "$T_WORK/apt-purge.log"; t_fail "apt-get purge --autoremove lstack failed"; }
status=$(in_root dpkg-query -W -f='${Status}' lstack 2>/dev/null)
[[ -z "$status" || "$status" == "unknown ok not-installed" ]] || t_fail "dpkg says '$status' after the purge"
left=""
while IFS= read -r f; do
    # Directories (/lib, /usr/share/doc...) are shared: the snapshot below covers them.
    [[ -e "$ROOT$f" && ! -d "$ROOT$f" ]] && left+=" $f"
done <"$T_WORK/files"
[[ -z "$left" ]] || t_fail "files of the package left after the purge:$left"
[[ ! -e "$ROOT/etc/gazelle" ]] || t_fail "/etc/gazelle left after the purge: $(ls -A "$ROOT/etc/gazelle")"
t_ok "purged: none of the $(wc -l <"$T_WORK/files") paths dpkg listed is left, nor /etc/gazelle"
snapshot >"$T_WORK/after"
if ! diff "$T_WORK/before" "$T_WORK/after" >"$T_WORK/diff"; then
    sed 's/^/  | /' "$T_WORK/diff" | head -n 40
    t_fail "the root holds different files after install and purge (above: < before, > after)"
fi
t_ok "the root holds the same $(wc -l <"$T_WORK/after") files as before the install"
purge_s="$(($(now) - t4)) s"
echo "   time: build $build_s, clean root $root_s, install $install_s, redis $redis_s, purge $purge_s"
t_pass
