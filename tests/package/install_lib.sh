# shellcheck shell=bash
# Sourced by the install tests: `meson install --destdir` of a build into a
# temporary root, and where the build's options put each kind of file.
#   inst_tree BUILD_DIR   sets DEST (removed at exit), LIBDIR, PRIVDIR,
#                         BINDIR, MANDIR, DATADIR and UNITDIR (absolute, as
#                         installed, without DEST)
inst_tree() {
    local build=$1 opts
    DEST=$(mktemp -d "${TMPDIR:-/tmp}/lstack-install.XXXXXX")
    trap 'rm -rf "$DEST"' EXIT
    if ! meson install -C "$build" --destdir "$DEST" --no-rebuild --quiet >"$DEST.log" 2>&1; then
        cat "$DEST.log"
        rm -f "$DEST.log"
        echo "Bail out! meson install --destdir failed"
        exit 1
    fi
    rm -f "$DEST.log"
    opts=$(meson introspect "$build" --buildoptions | python3 -c '
import json, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
p = o["prefix"]
full = lambda d: d if d.startswith("/") else p + "/" + d
print(full(o["libdir"]), full(o["bindir"]), full(o["mandir"]), full(o["datadir"]))')
    # shellcheck disable=SC2034 # read by the tests that source this file
    read -r LIBDIR BINDIR MANDIR DATADIR <<<"$opts"
    # shellcheck disable=SC2034
    PRIVDIR="$LIBDIR/lstack"
    # shellcheck disable=SC2034
    UNITDIR=$(cd "$DEST" && find . -name ltran.service -path '*/systemd/system/*' | sed 's|^\.||; s|/ltran.service$||')
}
