#!/usr/bin/env bash
# check_man.sh MAN_BUILD_DIR SOURCE_DIR - the manual pages (TAP):
#  - each renders with groff -ww and man --warnings without a warning;
#  - lstack.conf(5) has an entry for every key of the key table
#    (lstack/conf/conf_keys.def), liblstack(7) names every interposed call
#    (lstack/common/calls.def);
#  - each page's header carries the version (the one meson has), given
#    as $3.
set -u
mandir=$1
src=$2
version=$3
command -v groff >/dev/null && command -v man >/dev/null || { echo "1..0 # SKIP groff or man not installed"; exit 0; }
pages=(lstack.conf.5 liblstack.7 stackctl.8 ltran.8 lstackd.8)
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }

for p in "${pages[@]}"; do
    f="$mandir/$p"
    if [[ ! -s "$f" ]]; then
        not_ok "$p exists"
        continue
    fi
    w=$( { groff -ww -man -z -Tutf8 "$f"; LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$f" >/dev/null; } 2>&1)
    if [[ -z "$w" ]]; then ok "$p renders without a warning"; else not_ok "$p renders without a warning"; echo "$w" | sed 's/^/# /'; fi
    if grep -q "^\.TH .*\"lstack $version\"" "$f"; then ok "$p: header says lstack $version"; else not_ok "$p: header says lstack $version"; grep '^\.TH' "$f" | sed 's/^/# /'; fi
done

# Every key of the table has its entry (.TP then .B key) in lstack.conf(5).
keys=$(sed -n 's/^LSTACK_CONF_KEY(\([a-z0-9_]*\),.*/\1/p' "$src/lstack/conf/conf_keys.def")
missing=()
for k in $keys; do
    awk -v k="$k" 'prev == ".TP" && $0 == ".B " k {found = 1} {prev = $0} END {exit !found}' "$mandir/lstack.conf.5" ||
        missing+=("$k")
done
if [[ -n "$keys" && ${#missing[@]} -eq 0 ]]; then
    ok "lstack.conf(5) has an entry for each of the $(echo "$keys" | wc -l) keys of conf_keys.def"
else
    not_ok "lstack.conf(5) has an entry for every key of conf_keys.def"
    echo "# missing: ${missing[*]:-(no keys read from conf_keys.def)}"
fi

# Every call of calls.def is named in liblstack(7)'s INTERPOSED CALLS.
calls=$(sed -n 's/^LSTACK_CALL\(_VA\)\{0,1\}([^,]*, *\([A-Za-z0-9_]*\),.*/\2/p' "$src/lstack/common/calls.def")
section=$(sed -n '/^\.SH INTERPOSED CALLS/,/^\.SH /p' "$mandir/liblstack.7" | tr -s ' ,.\n' '\n')
missing=()
for c in $calls; do
    grep -qx -- "$c" <<<"$section" || missing+=("$c")
done
if [[ -n "$calls" && ${#missing[@]} -eq 0 ]]; then
    ok "liblstack(7) names each of the $(echo "$calls" | wc -l) calls of calls.def"
else
    not_ok "liblstack(7) names every call of calls.def"
    echo "# missing: ${missing[*]:-(no calls read from calls.def)}"
fi

echo "1..$n"
exit $((fails > 0))
