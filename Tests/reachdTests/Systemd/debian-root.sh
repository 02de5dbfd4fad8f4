#!/bin/bash
# Prints the path of a minimal Debian 12 (debootstrap's minbase, plus systemd
# to boot it), building it on first use. Tests boot an overlay of it, so it
# stays pristine and is built once per machine, not per run.
#
# The lists and the libnl, GLib and json-glib packages are fetched here, once,
# so installing the .debs later needs no network: apt installs them only if
# the packages' Depends ask for them, which is what the test is about.
set -euo pipefail
cache=${REACHD_TEST_CACHE:-/var/cache/reachd-tests}
# Bump the suffix when what goes in changes.
root=$cache/bookworm-minbase-2
mirror=http://deb.debian.org/debian

if [ ! -e "$root/etc/machine-id" ]; then
    mkdir -p "$cache"
    partial=$root.partial
    rm -rf "$partial"
    debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus bookworm "$partial" "$mirror" >&2
    chroot "$partial" apt-get clean
    chroot "$partial" apt-get update -qq >&2
    chroot "$partial" apt-get install -qq --download-only -y libnl-3-200 libnl-route-3-200 \
        libglib2.0-0 libjson-glib-1.0-0 >&2
    # Not a first boot: Debian's presets would otherwise enable every unit.
    systemd-machine-id-setup --root="$partial" >&2
    rm -rf "$root"
    mv "$partial" "$root"
    # Roots of earlier suffixes are never booted again.
    find "$cache" -maxdepth 1 -name 'bookworm-minbase-*' ! -name "${root##*/}" -exec rm -rf {} + >&2
fi
echo "$root"
