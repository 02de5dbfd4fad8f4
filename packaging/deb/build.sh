#!/bin/bash
# Builds reachd_VERSION_ARCH.deb from a tree staged by `make install
# DESTDIR=ROOT PREFIX=/usr`. Usage: packaging/deb/build.sh ROOT OUTDIR
# A binary package only, with dpkg-deb: no debian/ source tree for
# dpkg-buildpackage, because Swift isn't packaged in Debian to build one.
set -euo pipefail
root=$(cd "$1" && pwd)
out=$2
here=$(cd "$(dirname "$0")" && pwd)
binary=$root/usr/bin/reachd

version=$("$binary" --version)
arch=$(dpkg --print-architecture)

# Debian policy's place for the licence, pointing at the system's copy of its text.
cat > "$root/usr/share/doc/reachd/copyright" <<'COPYRIGHT'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: reachd

Files: *
Copyright: reachd developers
License: Apache-2.0
 On Debian systems, the full text of the Apache License 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
COPYRIGHT

mkdir -p "$root/DEBIAN"
install -m755 "$here/postinst" "$here/prerm" "$here/postrm" "$root/DEBIAN/"
# dpkg keeps an administrator's edits to these across upgrades.
(cd "$root" && find etc -type f | sed 's|^|/|') > "$root/DEBIAN/conffiles"

# The library dependencies, with the versions the binary needs, the way
# dh_shlibdeps finds them; it wants a debian/control beside it.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/debian"
printf 'Source: reachd\n\nPackage: reachd\nArchitecture: any\n' > "$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O -e "$binary" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "dpkg-shlibdeps found no dependencies of $binary" >&2; exit 1; }
# deb-systemd-helper and deb-systemd-invoke, used by the maintainer scripts.
depends="$depends, init-system-helpers (>= 1.54~)"

size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@DEPENDS@|$depends|" \
    -e "s|@INSTALLED_SIZE@|$size|" "$here/control.in" > "$root/DEBIAN/control"

mkdir -p "$out"
dpkg-deb --root-owner-group -Zxz --build "$root" "$out/reachd_${version}_${arch}.deb"
