#!/bin/bash
# Runs inside a minimal Debian 12 booted by DebianPackageTests.swift as the
# oneshot check.service, after `apt install ./reachd_*.deb
# ./reachd-gio_*.deb` put both packages there, and with /root/gio-probe, a
# GLib program built on the host. No Swift toolchain is inside. The
# container's `vh` is wired to a gateway at 10.77.0.1 (10.77.0.2/24).
# Each check writes "PASS name" or "FAIL name: why" to /out/results.
set -u
out=/out/results
: > "$out"
pass() { echo "PASS $1" >> "$out"; }
fail() { echo "FAIL $1: $2" >> "$out"; }
wait_for() {
  local deadline=$(( $(date +%s%N) + $1 * 1000000000 )); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s%N)" -lt "$deadline" ] || return 1
    sleep 0.05
  done
}

# 1. Nothing of Swift's here, and the binary finds every library it needs.
if [ -e /opt/swift ] || command -v swift >/dev/null; then
  fail no-toolchain "a Swift toolchain is visible"
else
  pass no-toolchain
fi
missing=$(ldd /usr/bin/reachd 2>&1 | grep -i "not found")
[ -z "$missing" ] && pass libraries || fail libraries "$missing"
version=$(/usr/bin/reachd --version 2>&1)
[ "$version" = "$(cat /out/version)" ] && pass version || fail version "$version"

# 2. The package enabled the socket; the first client starts the daemon.
[ "$(systemctl is-enabled reachd.socket)" = enabled ] && systemctl is-active -q reachd.socket \
  && pass socket-enabled || fail socket-enabled "$(systemctl is-enabled reachd.socket) $(systemctl is-active reachd.socket)"
answer=$(reachd status --json 2>&1)
case "$answer" in *'"source":"daemon"'*) pass daemon-answers ;; *) fail daemon-answers "$answer" ;; esac
# The daemon runs as the package's own user (sysusers.d), which the system
# bus resolves: it is on the bus, for logind's resume signal.
main=$(systemctl show -p MainPID --value reachd.service)
on_bus() { busctl --system --no-pager list 2>/dev/null | grep -q "^:[0-9.]* *$main "; }
[ "$(stat -c %U /proc/"$main")" = reachd ] && wait_for 5 on_bus && pass daemon-user \
  || fail daemon-user "$(stat -c %U /proc/"$main" 2>&1) $(getent passwd reachd) $(busctl --system --no-pager list 2>&1 | head -5 | tr '\n' ' ')"
# The test added a default route via the gateway before booting (minbase has no ip).
online() { reachd status --short | grep -q "ipv4=online"; }
wait_for 5 online && pass ipv4-online || fail ipv4-online "$(reachd status --short 2>&1)"
[ -f /usr/share/man/man1/reachd.1 ] && [ -f /usr/share/bash-completion/completions/reachd ] \
  && [ -f /usr/share/doc/reachd/copyright ] && pass files || fail files "$(dpkg -L reachd | tr '\n' ' ')"

# 3. GLib's trigger on its module directory listed the module, and a GLib
# program takes it (no NetworkManager here: GLib's own choice was netlink).
module=$(dpkg -L reachd-gio | grep '/libgioreachd\.so$')
cache=$(dirname "$module")/giomodule.cache
grep -qx "libgioreachd.so: gio-network-monitor" "$cache" \
  && pass gio-cache || fail gio-cache "$module; $cache: $(cat "$cache" 2>&1)"
missing=$(ldd "$module" 2>&1 | grep -i "not found")
[ -n "$module" ] && [ -z "$missing" ] && pass gio-libraries || fail gio-libraries "$module: $missing"
probe=$(/root/gio-probe 2>&1)
[ "$probe" = "ReachdNetworkMonitor available=1" ] && pass gio-picked || fail gio-picked "$probe"
# The first GLib program after the daemon stopped starts it through the
# socket, and has reachd's monitor however long the start takes (beyond the
# module's 250 ms, GLib's backend answers until the daemon speaks).
systemctl stop reachd.service
started=$(date +%s%N)
probe=$(/root/gio-probe 2>&1)
took=$(( ($(date +%s%N) - started) / 1000000 ))
echo "gio-probe with the daemon socket-activated: $took ms" > /out/activation
service_active() { systemctl is-active -q reachd.service; }
[ "$probe" = "ReachdNetworkMonitor available=1" ] && wait_for 5 service_active \
  && pass gio-activates || fail gio-activates "$probe after $took ms; reachd.service $(systemctl is-active reachd.service)"

# 3b. A GLib program in a unit with PrivateNetwork=yes, whose network is only
# lo: the module refuses the daemon of the host's network, which the socket
# path reaches, and GLib's netlink backend answers for the unit's own.
probe=$(systemd-run --wait --pipe --quiet -p PrivateNetwork=yes /root/gio-probe 2>&1)
[ "$probe" = "GNetworkMonitorNetlink available=0" ] && pass gio-private-network || fail gio-private-network "$probe"

# 4. Reinstalling (dpkg's upgrade path) restarts the running daemon on the new binary.
before=$(systemctl show -p MainPID --value reachd.service)
if dpkg -i /root/reachd_*.deb > /out/reinstall.log 2>&1; then
  restarted() { local now; now=$(systemctl show -p MainPID --value reachd.service); [ "$now" != 0 ] && [ "$now" != "$before" ]; }
  wait_for 5 restarted && reachd status --json | grep -q '"source":"daemon"' \
    && pass reinstall || fail reinstall "main PID $before, now $(systemctl show -p MainPID --value reachd.service)"
else
  fail reinstall "$(tail -5 /out/reinstall.log)"
fi

# 5. Purging stops everything and leaves nothing behind; GLib goes back to
# its own backend.
if dpkg --purge reachd-gio reachd > /out/purge.log 2>&1; then
  left=""
  systemctl is-active -q reachd.socket && left="$left socket-active"
  systemctl is-active -q reachd.service && left="$left service-active"
  [ -e /run/reachd/reachd.sock ] && left="$left /run/reachd/reachd.sock"
  [ -e /usr/bin/reachd ] && left="$left /usr/bin/reachd"
  [ -e /etc/reachd ] && left="$left /etc/reachd"
  [ -e /usr/lib/systemd/system/reachd.socket ] && left="$left unit"
  [ -e "$module" ] && left="$left $module"
  grep -q libgioreachd "$cache" && left="$left $cache"
  probe=$(/root/gio-probe 2>&1)
  case "$probe" in GNetworkMonitorNetlink*) ;; *) left="$left gio-probe:$probe" ;; esac
  [ -z "$left" ] && pass purge || fail purge "left:$left"
else
  fail purge "$(tail -5 /out/purge.log)"
fi
echo done >> "$out"
