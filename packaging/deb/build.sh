#!/bin/bash
# Builds reachd_VERSION_ARCH.deb and reachd-gio_VERSION_ARCH.deb from a tree
# staged by `make install DESTDIR=ROOT PREFIX=/usr`; the GIO module moves out
# of ROOT into a tree of its own. Usage: packaging/deb/build.sh ROOT OUTDIR
# A binary package only, with dpkg-deb: no debian/ source tree for
# dpkg-buildpackage, because Swift isn't packaged in Debian to build one.
set -euo pipefail
# The modes of what is made here are the package's (dpkg-buildpackage sets the same).
umask 022
root=$(cd "$1" && pwd)
out=$2
here=$(cd "$(dirname "$0")" && pwd)
binary=$root/usr/bin/reachd

version=$("$binary" --version)
arch=$(dpkg --print-architecture)

# Debian policy's place for the licence, pointing at the system's copy of its text.
copyright() {
  cat <<'COPYRIGHT'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: reachd

Files: *
Copyright: reachd developers
License: Apache-2.0
 On Debian systems, the full text of the Apache License 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
COPYRIGHT
}
copyright > "$root/usr/share/doc/reachd/copyright"

# The module's package: GLib's trigger on the module directory
# (libglib2.0-0's "interest-noawait") refreshes giomodule.cache when dpkg
# adds or removes the file, so it needs no maintainer scripts.
gio=$root-gio
rm -rf "$gio"
module=$(cd "$root" && find usr/lib -path '*/gio/modules/libgioreachd.so')
[ -n "$module" ] || { echo "no GIO module under $root/usr/lib: make install stages it" >&2; exit 1; }
install -D -m644 "$root/$module" "$gio/$module"
rm -f "$root/$module"
(cd "$root" && rmdir -p --ignore-fail-on-non-empty "$(dirname "$module")")
mkdir -p "$gio/usr/share/doc/reachd-gio"
copyright > "$gio/usr/share/doc/reachd-gio/copyright"

mkdir -p "$root/DEBIAN"
install -m755 "$here/postinst" "$here/prerm" "$here/postrm" "$root/DEBIAN/"
# dpkg keeps an administrator's edits to these across upgrades.
(cd "$root" && find etc -type f | sed 's|^|/|') > "$root/DEBIAN/conffiles"

# The library dependencies, with the versions an object needs, the way
# dh_shlibdeps finds them; it wants a debian/control beside it.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/debian"
printf 'Source: reachd\n\nPackage: reachd\nArchitecture: any\n' > "$work/debian/control"
shlibdeps() {
  local found
  found=$(cd "$work" && dpkg-shlibdeps -O -e "$1" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
  [ -n "$found" ] || { echo "dpkg-shlibdeps found no dependencies of $1" >&2; return 1; }
  echo "$found"
}

# control ROOT TEMPLATE DEPENDS: writes ROOT/DEBIAN/control.
control() {
  local size
  size=$(du -sk --exclude=DEBIAN "$1" | cut -f1)
  mkdir -p "$1/DEBIAN"
  sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@DEPENDS@|$3|" \
      -e "s|@INSTALLED_SIZE@|$size|" "$2" > "$1/DEBIAN/control"
}

# Assigned on their own: set -e does not see a failure inside an argument.
daemon_depends=$(shlibdeps "$binary")
module_depends=$(shlibdeps "$gio/$module")
# deb-systemd-helper and deb-systemd-invoke, used by the maintainer scripts.
control "$root" "$here/control.in" "$daemon_depends, init-system-helpers (>= 1.54~)"
# Built together, they speak the same protocol version for sure.
control "$gio" "$here/control-gio.in" "$module_depends, reachd (= $version)"

mkdir -p "$out"
dpkg-deb --root-owner-group -Zxz --build "$root" "$out/reachd_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$gio" "$out/reachd-gio_${version}_${arch}.deb"
