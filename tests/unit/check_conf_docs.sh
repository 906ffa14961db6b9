#!/bin/sh
# check_conf_docs.sh - fail if conf/lstack.conf or docs/config.md differ
# from what lstack-conf-doc generates from the key table (conf_keys.def).
# Usage: check_conf_docs.sh LSTACK_CONF_DOC SOURCE_ROOT
set -u
doc=$1
root=$2
status=0
for pair in "conf conf/lstack.conf" "md docs/config.md"; do
    set -- $pair
    out=$(mktemp) || exit 1
    if ! "$doc" "$1" > "$out"; then
        echo "$doc $1 failed" >&2
        status=1
    elif ! diff -u "$root/$2" "$out"; then
        echo "$2 is out of date: regenerate with: $doc $1 > $2" >&2
        status=1
    fi
    rm -f "$out"
done
exit $status
