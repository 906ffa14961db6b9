#!/usr/bin/env bash
# check_install.sh BUILD_DIR SOURCE_DIR - the tree `meson install` makes
# (TAP; into a --destdir, no root):
#  - every file where docs/install.md says: liblstack.so in the libdir, its
#    private libraries and lstack-setup in libdir/lstack, the programs, the
#    configurations in /etc/gazelle, the manual pages, the units, the drop-in;
#  - liblstack.so and lstackd find the private libraries through a RUNPATH
#    relative to themselves ($ORIGIN), and no installed file names the build
#    tree outside its debugging information;
#  - /etc/gazelle/lstack.conf has every key commented out: lstack-setup
#    reports the four mandatory keys missing and nothing else, and the file
#    with every key uncommented is valid; lstack-setup reads the installed
#    ltran.conf too.
set -u
# shellcheck source=tap.sh
source "$(dirname "$0")/tap.sh"
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
# shellcheck source=install_lib.sh
source "$src/tests/package/install_lib.sh"
inst_tree "$build"

want=(
    "$LIBDIR/liblstack.so" "$PRIVDIR/liblstack_lwip.so" "$PRIVDIR/liblstack_dpdk.so" "$PRIVDIR/lstack-setup"
    "$BINDIR/stackctl" "$BINDIR/ltran" "$BINDIR/lstackd"
    /etc/gazelle/lstack.conf /etc/gazelle/ltran.conf
    "$MANDIR/man5/lstack.conf.5" "$MANDIR/man7/liblstack.7" "$MANDIR/man8/stackctl.8" "$MANDIR/man8/ltran.8"
    "$MANDIR/man8/lstackd.8"
    "$UNITDIR/lstack-setup.service" "$UNITDIR/ltran.service" "$UNITDIR/redis-server-lstack@.service"
    "$DATADIR/lstack/redis-server.service.d/lstack.conf"
)
missing=()
for f in "${want[@]}"; do [[ -f "$DEST$f" ]] || missing+=("$f"); done
tap_check "every file installed where docs/install.md says (unit dir: ${UNITDIR:-none})" test ${#missing[@]} -eq 0 -a -n "$UNITDIR"
[[ ${#missing[@]} -eq 0 ]] || echo "# missing: ${missing[*]}"
extra=$(cd "$DEST" && find . -type f | sed 's|^\.||' | sort | comm -23 - <(printf '%s\n' "${want[@]}" | sort))
tap_check "nothing else installed" test -z "$extra"
[[ -z "$extra" ]] || echo "$extra" | sed 's/^/# extra: /'

runpath() { readelf -d "$1" 2>/dev/null | sed -n 's/.*(RUNPATH).*\[\(.*\)\]$/\1/p'; }
rp=$(runpath "$DEST$LIBDIR/liblstack.so")
tap_check "liblstack.so: RUNPATH \$ORIGIN/lstack (it is '$rp')" test "$rp" = '$ORIGIN/lstack'
rp=$(runpath "$DEST$BINDIR/lstackd")
resolved=$(realpath -m "$DEST$BINDIR/${rp#\$ORIGIN/}")
tap_check "lstackd: RUNPATH relative to itself, reaching the private directory ('$rp')" \
    test "${rp:0:8}" = '$ORIGIN/' -a "$resolved" = "$DEST$PRIVDIR"
others=""
for f in "$BINDIR/stackctl" "$BINDIR/ltran" "$PRIVDIR/liblstack_lwip.so" "$PRIVDIR/liblstack_dpdk.so" "$PRIVDIR/lstack-setup"; do
    [[ -z "$(runpath "$DEST$f")" ]] || others+=" $f"
done
tap_check "no other installed program or library has a RUNPATH" test -z "$others"
[[ -z "$others" ]] || echo "# with a RUNPATH:$others"

# The build tree's path: in no installed file, debugging information
# (which the Debian package strips) and the names of source files
# (sanitizers and assertions report them; lwIP is compiled from the build
# tree) aside.
named=""
while IFS= read -r -d '' f; do
    scan=$f
    if [[ "$(head -c 4 "$f")" == $'\x7fELF' ]]; then
        scan=$(mktemp)
        objcopy --strip-debug "$f" "$scan"
    fi
    if strings -a "$scan" | grep -F -e "$build" | grep -qv '\.[ch]$'; then named+=" ${f#"$DEST"}"; fi
    [[ "$scan" == "$f" ]] || rm -f "$scan"
done < <(find "$DEST" -type f -print0)
tap_check "no installed file names the build tree" test -z "$named"
[[ -z "$named" ]] || echo "# naming them:$named"

conf="$DEST/etc/gazelle/lstack.conf"
active=$(grep -cv '^[[:space:]]*\(#.*\)\{0,1\}$' "$conf")
tap_check "/etc/gazelle/lstack.conf: no key set ($active active lines)" test "$active" -eq 0
keys=$(sed -n 's/^LSTACK_CONF_KEY(\([a-z0-9_]*\),.*/\1/p' "$src/lstack/conf/conf_keys.def")
absent=""
for k in $keys; do grep -q "^# $k = " "$conf" || absent+=" $k"; done
tap_check "/etc/gazelle/lstack.conf: every key of the table, commented out" test -n "$keys" -a -z "$absent"
[[ -z "$absent" ]] || echo "# absent:$absent"
setup="$DEST$PRIVDIR/lstack-setup"
out=$("$setup" -n -c "$conf" 2>&1)
rc=$?
want_missing=$(printf '%s\n' dpdk_args gateway_addr host_addr mask_addr)
got_missing=$(sed -n "s/.*missing mandatory key '\([a-z_]*\)'.*/\1/p" <<<"$out" | sort)
lines=$(grep -c . <<<"$out")
tap_check "as installed: lstack-setup says the 4 mandatory keys are missing, nothing else, status 1" \
    test "$rc" -eq 1 -a "$got_missing" = "$want_missing" -a "$lines" -eq 4
[[ "$rc" -eq 1 && "$got_missing" == "$want_missing" && "$lines" -eq 4 ]] || sed 's/^/# /' <<<"$out"
all="$DEST/all.conf"
sed 's/^# \([a-z_0-9]* = \)/\1/' "$conf" >"$all"
out=$("$setup" -n -c "$all" 2>&1)
rc=$?
tap_check "every key uncommented: a valid file (lstack-setup -n: status $rc)" test "$rc" -eq 0
[[ "$rc" -eq 0 ]] || sed 's/^/# /' <<<"$out"

out=$("$setup" -n -t "$DEST/etc/gazelle/ltran.conf" 2>&1)
rc=$?
if [[ "$rc" -eq 0 ]] && grep -q "ltran.conf: needs [0-9]* hugepages" <<<"$out"; then
    tap_ok "the installed ltran.conf: lstack-setup -n -t reads it and says what it needs"
else
    tap_not_ok "the installed ltran.conf: lstack-setup -n -t reads it and says what it needs (status $rc)"
    sed 's/^/# /' <<<"$out"
fi
tap_end
