#!/usr/bin/env bash
# make-deb.sh - builds the Debian package nfsrdmad_<version>_<arch>.deb (`make deb`).
#
# Usage: scripts/make-deb.sh [--prebuilt BUILD_DIR] [--lintian] OUT_DIR
#
#   OUT_DIR      where the .deb, .buildinfo and .changes land (also OUT_DIR/nfsrdmad.deb, a
#                link to the .deb). The source is copied to OUT_DIR/src/nfsrdmad-<version>
#                (the files git knows, committed or not) with packaging/debian as debian/,
#                and dpkg-buildpackage -b runs there: the working tree is never touched.
#   --prebuilt   package the tree BUILD_DIR already built (a Release tree; `make test`
#                installs such a package in its VM) instead of compiling it again with
#                Debian's flags (packaging/debian/rules says how).
#   --lintian    then run lintian on the package: exit non-zero on any error or warning
#                tag (the info tags that remain are explained in packaging/README.md).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PREBUILT=
LINTIAN=0
while [ $# -gt 0 ]; do
    case "$1" in
        --prebuilt) PREBUILT=$(cd "$2" && pwd); shift 2 ;;
        --lintian) LINTIAN=1; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "make-deb.sh: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
[ $# -eq 1 ] || { echo "usage: scripts/make-deb.sh [--prebuilt BUILD_DIR] [--lintian] OUT_DIR" >&2; exit 2; }
mkdir -p "$1"
OUT=$(cd "$1" && pwd)

for tool in dpkg-buildpackage dh git; do
    command -v "$tool" >/dev/null || { echo "make-deb.sh: $tool missing (scripts/install-deps.sh installs it)" >&2; exit 2; }
done
[ -z "$PREBUILT" ] || [ -x "$PREBUILT/daemon/nfsrdmad" ] \
    || { echo "make-deb.sh: $PREBUILT/daemon/nfsrdmad is not built" >&2; exit 2; }

# One version: the changelog's must be the project's (CMakeLists.txt).
version=$(dpkg-parsechangelog -l "$ROOT/packaging/debian/changelog" -S Version)
project=$(sed -n 's/^project(nfsrdmad VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
if [ "${version%%-*}" != "$project" ]; then
    echo "make-deb.sh: packaging/debian/changelog is at $version but CMakeLists.txt at $project:" \
         "add a changelog entry (dch -v $project)" >&2
    exit 1
fi

src="$OUT/src/nfsrdmad-$version"
rm -rf "$OUT/src"
mkdir -p "$src"
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard \
    | xargs -0 tar -cf - --no-recursion --ignore-failed-read) | tar -xf - -C "$src"
cp -r "$ROOT/packaging/debian" "$src/debian"

arch=$(dpkg-architecture -qDEB_HOST_ARCH)
deb="nfsrdmad_${version}_${arch}.deb"
rm -f "$OUT"/nfsrdmad_* "$OUT"/nfsrdmad-dbgsym_* "$OUT/nfsrdmad.deb"
echo "make-deb.sh: building $deb${PREBUILT:+ from $PREBUILT}"
(
    cd "$src"
    if [ -n "$PREBUILT" ]; then export NFSRDMAD_PREBUILT=$PREBUILT; fi
    dpkg-buildpackage -b -us -uc -j"$(nproc)"
)
mv "$OUT"/src/nfsrdmad_* "$OUT/"
mv "$OUT"/src/nfsrdmad-dbgsym_* "$OUT/" 2>/dev/null || true
ln -s "$deb" "$OUT/nfsrdmad.deb"
echo "make-deb.sh: $OUT/$deb"
dpkg-deb -I "$OUT/$deb" | sed -n '/Package:/,$p'

if [ $LINTIAN = 1 ]; then
    echo "make-deb.sh: lintian $deb"
    lintian --info --display-info --fail-on error,warning "$OUT/$deb"
fi
