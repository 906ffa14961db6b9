#!/usr/bin/env bash
# Fetch Debian's lwip source package (2.1.3) into subprojects/lwip/, once.
#
#   scripts/fetch-lwip.sh          fetch if missing (as root: may add a deb-src entry)
#   scripts/fetch-lwip.sh --check  only say whether it is there; exit 1 if not
#
# lstack builds lwIP itself (lstack/stack/lwip/meson.build) with its own
# lwipopts.h; no lwIP code is kept in this repository. The source comes from
# the Debian archive the machine already uses: where apt has no deb-src entry
# for it, one is added (/etc/apt/sources.list.d/lstack-deb-src.sources) with
# the same URIs, suites and components as the machine's deb entry for its
# release, then `apt-get source lwip` unpacks it (Debian's own patches
# applied). Idempotent: a tree with a matching stamp is left alone.
#
# Design: docs/design.md#lwip-comes-from-debians-source-package
set -euo pipefail
cd "$(dirname "$0")/.."

WANT_VERSION="2.1.3"
DEST="subprojects/lwip"
STAMP="$DEST/.lstack-source"
SRC_LIST="/etc/apt/sources.list.d/lstack-deb-src.sources"

have_tree() {
    [[ -f "$STAMP" && -f "$DEST/src/core/tcp_in.c" && -f "$DEST/src/include/lwip/opt.h" ]]
}

if [[ "${1:-}" == --check ]]; then
    if have_tree; then
        echo "fetch-lwip: $(cat "$STAMP") in $DEST"
        exit 0
    fi
    echo "fetch-lwip: no lwIP source in $DEST (run scripts/fetch-lwip.sh as root)"
    exit 1
elif [[ $# -ne 0 ]]; then
    echo "usage: $0 [--check]" >&2
    exit 2
fi

if have_tree; then
    echo "fetch-lwip: already there: $(cat "$STAMP")"
    exit 0
fi

die() {
    echo "fetch-lwip: ERROR: $*" >&2
    exit 1
}

command -v dpkg-source >/dev/null 2>&1 || die "dpkg-source not found: install dpkg-dev (scripts/install-deps.sh does)"

# Does apt know the source package? (apt-cache showsrc prints nothing if not.)
knows_source() {
    [[ -n "$(apt-cache showsrc lwip 2>/dev/null | grep -m1 '^Version:' || true)" ]]
}

# Write a deb-src twin of the machine's deb entries for its release
# (deb822 .sources files and one-line .list files alike).
add_deb_src() {
    [[ $(id -u) -eq 0 ]] || die "apt has no deb-src entry for lwip and adding one needs root"
    local codename
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    [[ -n "$codename" ]] || die "cannot tell the Debian release (/etc/os-release has no VERSION_CODENAME)"
    python3 - "$codename" "$SRC_LIST" <<'PY' || die "found no deb entry for this release to mirror as deb-src"
import glob, re, sys
codename, out = sys.argv[1], sys.argv[2]
stanzas = []
# deb822 files
for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
    if path == out:
        continue
    for block in re.split(r"\n\s*\n", open(path).read()):
        fields = {}
        for line in block.splitlines():
            if line.startswith("#") or ":" not in line or line[:1].isspace():
                continue
            k, v = line.split(":", 1)
            fields[k.strip().lower()] = v.strip()
        if "deb" not in fields.get("types", "").split():
            continue
        if fields.get("enabled", "yes").lower() == "no":
            continue
        if codename not in fields.get("suites", "").split():
            continue
        stanzas.append(fields)
# one-line files
for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
    try:
        lines = open(path).read().splitlines()
    except OSError:
        continue
    for line in lines:
        m = re.match(r"^\s*deb\s+(\[[^\]]*\]\s+)?(\S+)\s+(\S+)\s+(.*)$", line)
        if not m or m.group(3) != codename:
            continue
        f = {"uris": m.group(2), "suites": m.group(3), "components": m.group(4).split("#")[0].strip()}
        opts = m.group(1) or ""
        sb = re.search(r"signed-by=(\S+?)[\s\]]", opts + " ")
        if sb:
            f["signed-by"] = sb.group(1)
        stanzas.append(f)
if not stanzas:
    sys.exit(1)
with open(out, "w") as o:
    o.write("# Added by lstack scripts/fetch-lwip.sh: the source twin of this machine's deb entry,\n")
    o.write("# so that `apt-get source lwip` works.\n")
    for f in stanzas:
        o.write("\nTypes: deb-src\nURIs: %s\nSuites: %s\nComponents: %s\n" % (f["uris"], f["suites"], f["components"]))
        if "signed-by" in f:
            o.write("Signed-By: %s\n" % f["signed-by"])
print("fetch-lwip: added deb-src entries in " + out)
PY
    apt-get update -q >/dev/null || die "apt-get update failed after adding $SRC_LIST"
}

if ! knows_source; then
    [[ $(id -u) -eq 0 ]] && apt-get update -q >/dev/null 2>&1 || true
fi
if ! knows_source; then
    add_deb_src
    knows_source || die "apt still knows no source package 'lwip' (see $SRC_LIST)"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/lstack-lwip.XXXXXX")
trap 'rm -rf "$work"' EXIT
# apt drops privileges to _apt for downloads; that user cannot write here.
chmod 0755 "$work"
(cd "$work" && apt-get source -q lwip >"$work/apt.log" 2>&1) || {
    tail -n 20 "$work/apt.log" >&2
    die "apt-get source lwip failed (network, or the archive has no lwip source)"
}
tree=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'lwip-*' | head -n 1)
[[ -n "$tree" && -f "$tree/src/include/lwip/init.h" ]] || die "apt-get source gave no lwIP tree"
ver=$(awk '/define LWIP_VERSION_MAJOR/{a=$3} /define LWIP_VERSION_MINOR/{b=$3} /define LWIP_VERSION_REVISION/{c=$3} END{print a"."b"."c}' "$tree/src/include/lwip/init.h" | tr -d '\r')
[[ "$ver" == "$WANT_VERSION" ]] || die "the source package holds lwIP $ver; lstack's lwipopts.h and patches are for $WANT_VERSION"
dsc=$(basename "$(find "$work" -maxdepth 1 -name '*.dsc' | head -n 1)" .dsc)

rm -rf "$DEST"
mkdir -p "$(dirname "$DEST")"
mv "$tree" "$DEST"
echo "lwIP $ver from Debian source package $dsc" >"$STAMP"
echo "fetch-lwip: $(cat "$STAMP") -> $DEST"
