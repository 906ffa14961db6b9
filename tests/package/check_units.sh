#!/usr/bin/env bash
# check_units.sh BUILD_DIR SOURCE_DIR - `systemd-analyze verify` passes,
# with nothing to say, on each installed unit, and on Debian's
# redis-server.service with the installed drop-in in place (TAP). The units
# are checked inside a --destdir install (systemd-analyze --root), with the
# machine's own units beside them, so that the programs they run and the
# manual pages they name are the installed ones.
set -u
# shellcheck source=tap.sh
source "$(dirname "$0")/tap.sh"
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
command -v systemd-analyze >/dev/null || { echo "1..0 # SKIP systemd-analyze not installed"; exit 0; }
# shellcheck source=install_lib.sh
source "$src/tests/package/install_lib.sh"
inst_tree "$build"

for d in /lib/systemd/system /usr/lib/systemd/system; do
    [[ -d "$d" ]] && cp -a --no-clobber "$d/." "$DEST$UNITDIR/"
done
verify() { # verify NAME UNIT...
    local what=$1 out rc
    shift
    out=$(MANPATH="$DEST$MANDIR:" systemd-analyze --root="$DEST" verify "$@" 2>&1)
    rc=$?
    if [[ $rc -eq 0 && -z "$out" ]]; then tap_ok "$what"; else tap_not_ok "$what (status $rc)"; sed 's/^/# /' <<<"$out"; fi
}
# The Redis units run Debian's redis-server: the machine's, in the root.
if [[ -x /usr/bin/redis-server ]]; then
    mkdir -p "$DEST/usr/bin"
    cp /usr/bin/redis-server "$DEST/usr/bin/"
fi
verify "lstack-setup.service verifies" lstack-setup.service
verify "ltran.service verifies" ltran.service
verify "redis-server-lstack@.service verifies (instance 'a')" redis-server-lstack@a.service

if [[ -f "$DEST$UNITDIR/redis-server.service" && -x /usr/bin/redis-server ]]; then
    mkdir -p "$DEST/etc/systemd/system/redis-server.service.d"
    cp "$DEST$DATADIR/lstack/redis-server.service.d/lstack.conf" "$DEST/etc/systemd/system/redis-server.service.d/"
    verify "Debian's redis-server.service with the drop-in verifies" redis-server.service
    # The drop-in is read: a key systemd does not know in it is reported.
    echo "NoSuchKey=1" >>"$DEST/etc/systemd/system/redis-server.service.d/lstack.conf"
    out=$(MANPATH="$DEST$MANDIR:" systemd-analyze --root="$DEST" verify redis-server.service 2>&1)
    if grep -q NoSuchKey <<<"$out"; then tap_ok "the drop-in is what was verified"; else tap_not_ok "the drop-in is what was verified"; fi
else
    tap_ok "# SKIP Debian's redis-server.service not installed"
fi
tap_end
