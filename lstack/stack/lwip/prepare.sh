#!/usr/bin/env bash
# prepare.sh SRC PATCHDIR OUT - the lwIP sources lstack compiles: a copy of
# SRC/src (Debian's lwip source, scripts/fetch-lwip.sh) in OUT with every
# PATCHDIR/*.patch applied in name order. Run by meson at configure time;
# does nothing when OUT already holds this source with these patches.
set -euo pipefail
src=$1 patches=$2 out=$3
if [[ ! -f "$src/src/include/lwip/opt.h" ]]; then
    echo "lwIP source not found in $src: run scripts/fetch-lwip.sh (scripts/install-deps.sh does)" >&2
    exit 1
fi
want=$( { cat "$src/.lstack-source" 2>/dev/null; cat "$patches"/*.patch; } | sha256sum | cut -d' ' -f1)
if [[ -f "$out/.stamp" && "$(cat "$out/.stamp")" == "$want" ]]; then
    exit 0
fi
rm -rf "$out"
mkdir -p "$out"
cp -r "$src/src" "$out/src"
for p in "$patches"/*.patch; do
    if ! patch -d "$out" -p1 --batch --forward --silent <"$p"; then
        echo "lwIP patch $(basename "$p") does not apply to $src" >&2
        exit 1
    fi
done
echo "$want" >"$out/.stamp"
