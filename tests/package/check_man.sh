#!/usr/bin/env bash
# check_man.sh MAN_BUILD_DIR SOURCE_DIR - the manual pages (TAP):
#  - each renders with groff -ww and man --warnings without a warning;
#  - lstack.conf(5) has an entry for every key of the key table
#    (lstack/conf/conf_keys.def), liblstack(7) names every interposed call
#    (lstack/common/calls.def);
#  - each page's header carries the version (the one meson has), given
#    as $3.
set -u
# shellcheck source=tap.sh
source "$(dirname "$0")/tap.sh"
mandir=$1
src=$2
version=$3
command -v groff >/dev/null && command -v man >/dev/null || { echo "1..0 # SKIP groff or man not installed"; exit 0; }
pages=(lstack.conf.5 liblstack.7 stackctl.8 ltran.8 lstackd.8)

for p in "${pages[@]}"; do
    f="$mandir/$p"
    if [[ ! -s "$f" ]]; then
        tap_not_ok "$p exists"
        continue
    fi
    w=$( { groff -ww -man -z -Tutf8 "$f"; LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$f" >/dev/null; } 2>&1)
    if [[ -z "$w" ]]; then tap_ok "$p renders without a warning"; else tap_not_ok "$p renders without a warning"; echo "$w" | sed 's/^/# /'; fi
    if grep -q "^\.TH .*\"lstack $version\"" "$f"; then tap_ok "$p: header says lstack $version"; else tap_not_ok "$p: header says lstack $version"; grep '^\.TH' "$f" | sed 's/^/# /'; fi
done

# all_named WHAT NAMES PRESENT : one check that every name in NAMES (one a
# line, read from a list) passes PRESENT NAME.
all_named() {
    local what=$1 names=$2 present=$3 x missing=()
    for x in $names; do
        "$present" "$x" || missing+=("$x")
    done
    if [[ -n "$names" && ${#missing[@]} -eq 0 ]]; then
        tap_ok "$what ($(wc -l <<<"$names") of them)"
    else
        tap_not_ok "$what"
        echo "# missing: ${missing[*]:-(none read from the list)}"
    fi
}

# Every key of the table has its entry (.TP then .B key) in lstack.conf(5).
key_entry() {
    awk -v k="$1" 'prev == ".TP" && $0 == ".B " k {found = 1} {prev = $0} END {exit !found}' "$mandir/lstack.conf.5"
}
all_named "lstack.conf(5) has an entry for every key of conf_keys.def" \
    "$(sed -n 's/^LSTACK_CONF_KEY(\([a-z0-9_]*\),.*/\1/p' "$src/lstack/conf/conf_keys.def")" key_entry

# Every call of calls.def is named in liblstack(7)'s INTERPOSED CALLS.
section=$(sed -n '/^\.SH INTERPOSED CALLS/,/^\.SH /p' "$mandir/liblstack.7" | tr -s ' ,.\n' '\n')
call_named() { grep -qx -- "$1" <<<"$section"; }
all_named "liblstack(7) names every call of calls.def" \
    "$(sed -n 's/^LSTACK_CALL\(_VA\)\{0,1\}([^,]*, *\([A-Za-z0-9_]*\),.*/\2/p' "$src/lstack/common/calls.def")" call_named

tap_end
