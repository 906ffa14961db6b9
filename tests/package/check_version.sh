#!/usr/bin/env bash
# check_version.sh BUILD_DIR SOURCE_DIR VERSION - one version number, meson's
# (VERSION): each program prints it, and the Debian package has it (TAP).
set -u
build=$1
src=$2
version=$3
n=0
fails=0
check() { # check WHAT OUTPUT
    n=$((n + 1))
    if grep -qF "lstack $version" <<<"$2"; then echo "ok $n - $1"; else
        fails=$((fails + 1))
        echo "not ok $n - $1"
        echo "# printed: $2"
    fi
}
check "stackctl --version says lstack $version" "$("$build/tools/stackctl" --version 2>&1)"
check "ltran --version says it" "$("$build/ltran/ltran" --version 2>&1)"
check "lstackd --version says it" "$("$build/tools/lstackd" --version 2>&1)"
check "lstack-setup -V says it" "$("$build/tools/lstack-setup" -V 2>&1)"
deb=$(sed -n '1s/^lstack (\([^)]*\)).*/\1/p' "$src/debian/changelog")
check "debian/changelog's version is meson's" "lstack $deb"
echo "1..$n"
exit $((fails > 0))
