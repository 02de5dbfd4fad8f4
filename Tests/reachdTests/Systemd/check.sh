#!/bin/bash
# Runs inside a systemd-nspawn container booted by SystemdTests.swift, as the
# oneshot check.service. The container's network namespace has `vh` wired to a
# gateway at 10.77.0.1 (carrier up, 10.77.0.2/24, no default route yet).
# Each check writes "PASS name" or "FAIL name: why" to /out/results; the
# Swift test asserts them. Waits poll with a deadline, never a fixed sleep.
set -u
out=/out/results
: > "$out"
reachd=$(systemctl show -p ExecStart --value reachd.service | sed -n 's/.*path=\([^ ;]*\).*/\1/p')
# The journal's MESSAGE_IDs (systemd/reachd.catalog) the checks read.
family_id=0b48f89eacaa4316b01d3b13b6e716f6
connectivity_id=882f406292b345458c16703deead3d9f
destination_id=0fcb124ef37a4a6bbecca317f6c28059

pass() { echo "PASS $1" >> "$out"; }
fail() { echo "FAIL $1: $2" >> "$out"; }
# wait_for SECONDS COMMAND...: true once COMMAND succeeds, false after the deadline.
wait_for() {
  local deadline=$(( $(date +%s%N) + $1 * 1000000000 )); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s%N)" -lt "$deadline" ] || return 1
    sleep 0.05
  done
}
status_text() { systemctl show -p StatusText --value reachd.service; }
status_starts() { case "$(status_text)" in "$1"*) return 0;; *) return 1;; esac; }
main_pid() { systemctl show -p MainPID --value reachd.service; }
# `kill 0` would signal this script's own process group: never with no main PID.
kill_main() { local pid; pid=$(main_pid); [ "${pid:-0}" -gt 0 ] && kill "$1" "$pid"; }
pid_changed() { local now; now=$(main_pid); [ "$now" != 0 ] && [ "$now" != "$1" ]; }
check() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name" "$(status_text) / $(systemctl is-active reachd.service)"; fi; }

# 1. Socket activation: nothing runs until the first connection.
systemctl is-active -q reachd.socket && [ "$(systemctl is-active reachd.service)" = inactive ] \
  && pass socket-first || fail socket-first "service $(systemctl is-active reachd.service) before any client"
# The first connection starts the daemon. On a loaded machine its start can
# outlast the client's 1 s deadline for a first answer, and the client then
# answers in-process, saying so (a CI run: "source":"embedded", the service
# still activating): what the product promises. The daemon it started must
# answer the clients that follow.
from_daemon() { answer=$("$reachd" status --json); case "$answer" in *'"source":"daemon"'*) return 0;; *) return 1;; esac; }
if wait_for 10 from_daemon; then pass activation; else fail activation "$answer"; fi
check active systemctl is-active -q reachd.service
# 1b. The unit's seccomp filter lets the daemon's loop ask for its short time
# slice: where the kernel shows a thread's slice (se.slice, Linux 6.14 and
# some stable kernels before), a `reachd monitor` a real user starts has the
# 100000 ns it asks for, and the daemon the same.
slice_of() { sed -n 's/^se\.slice *: *//p' "/proc/$1/sched"; }
setpriv --reuid=4343 --regid=4343 --clear-groups "$reachd" monitor --json > /tmp/slice-monitor.out 2>&1 &
monitor=$!
# Its first line is printed after it asked.
monitor_printed() { [ -s /tmp/slice-monitor.out ]; }
wait_for 5 monitor_printed
given=$(slice_of "$monitor"); daemon_slice=$(slice_of "$(main_pid)")
kill "$monitor"
if [ -z "$given" ]; then pass time-slice  # this kernel shows no slice to compare
elif [ "$given" = 100000 ] && [ "$daemon_slice" = "$given" ]; then pass time-slice
else fail time-slice "the daemon's slice $daemon_slice, a monitor's $given"; fi
status_is_current() { [ "$(status_text)" = "$("$reachd" status --short)" ]; }
check status-text wait_for 5 status_is_current

# 2. A route change reaches the daemon, and its StatusText.
ip route add default via 10.77.0.1
route_change_shown() { status_starts "online ipv4=online ipv6=local via vh, gateway 10.77.0.1" && status_is_current; }
check route-change wait_for 5 route_change_shown

# 2b. The connectivity check (/etc/reachd/reachd.conf points at a server on
# the gateway) works under the unit's sandbox: Internet sockets, a dynamic
# user binding to the interface.
connectivity_full() { "$reachd" status --json | grep -q '"connectivity":"full"'; }
check connectivity wait_for 10 connectivity_full
# 2b'. `reachd check` as a real user: the shipped daemon announces how soon
# it answers (timeout 2 s: max(5, 2) + 2), and answers within it.
check_started=$(date +%s%N)
answer=$(setpriv --reuid=4343 --regid=4343 --clear-groups "$reachd" check --json 2>&1)
check_ms=$(( ($(date +%s%N) - check_started) / 1000000 ))
case "$answer" in
  *'"check":{"answer_within_ms":7000,'*'"connectivity":"full"'*) [ "$check_ms" -lt 8000 ] && pass check-as-user \
    || fail check-as-user "took $check_ms ms" ;;
  *) fail check-as-user "$answer" ;;
esac

# 2b''. Name resolution under the unit's sandbox: the daemon (a dynamic user
# with /etc read-only) reads the resolver's configuration, notices it replaced
# as NetworkManager replaces it, and a real user reads the verdict.
dns_cursor=$(journalctl --no-pager -u reachd.service -o export -n 1 | sed -n 's/^__CURSOR=//p')
umount /etc/resolv.conf 2>/dev/null
printf 'nameserver 10.77.0.53\n' > /etc/resolv.conf.reachd-check && mv -f /etc/resolv.conf.reachd-check /etc/resolv.conf
judged='"dns":{"servers":[{"address":"10.77.0.53","interface":"vh","reason":null,"state":"reachable"}],"state":"ok"}'
resolver_judged() { setpriv --reuid=4343 --regid=4343 --clear-groups "$reachd" status --json | grep -qF "$judged"; }
if wait_for 5 resolver_judged; then pass dns-as-user
else fail dns-as-user "$(setpriv --reuid=4343 --regid=4343 --clear-groups "$reachd" status --json 2>&1 | grep -o '"dns":{[^}]*}[^}]*}')"; fi
# The verdict's own journal entry (MESSAGE_ID), one field per server.
journal_dns() {
  journalctl --no-pager -o export --cursor="$dns_cursor" MESSAGE_ID=573588866fdd4e26a2f9861d66176725 \
    | grep -qxF 'REACHD_DNS_SERVER=10.77.0.53 reachable vh'
}
if wait_for 5 journal_dns; then pass journal-dns
else fail journal-dns "$(journalctl --no-pager -o export --cursor="$dns_cursor" -u reachd.service | grep '^REACHD_DNS' | tr '\n' ' ')"; fi

# 2b'''. A gateway that stops answering, under the unit's sandbox: the daemon
# (a dynamic user) watches the neighbour table through its filtered socket.
# The gateway's entry is given a MAC nobody has, as a dead box's entry would
# be stale: traffic makes the kernel probe it, unanswered, and find it FAILED;
# the daemon says limited, with no probe. Then the kernel asks anew by
# broadcast, the real gateway answers (REACHABLE), and the daemon probes.
# Read from the journal, not from a status polled: the kernel asks anew by
# broadcast at the next packet, so `limited` may last less than one poll of
# a loaded machine (a CI run saw only `full` before and after).
gateway_cursor=$(journalctl --no-pager -u reachd.service -o export -n 1 | sed -n 's/^__CURSOR=//p')
connectivity_limited() {
  journalctl --no-pager -o cat --cursor="$gateway_cursor" MESSAGE_ID=$connectivity_id \
    REACHD_CONNECTIVITY=limited | grep -q .
}
ip neigh replace 10.77.0.1 dev vh lladdr 02:00:00:00:de:ad nud stale
( for _ in $(seq 150); do echo x 2>/dev/null > /dev/udp/10.77.0.1/9; sleep 0.2; done ) &
traffic=$!
if wait_for 12 connectivity_limited; then pass dead-gateway
else fail dead-gateway "$("$reachd" status --json 2>&1 | grep -o '"connectivity":"[a-z]*"') $(ip neigh show 10.77.0.1)"; fi
told_back() { connectivity_full && journalctl --no-pager -u reachd.service | grep -q 'answers address resolution again'; }
if wait_for 15 told_back; then pass dead-gateway-back
else fail dead-gateway-back "$("$reachd" status --json 2>&1 | grep -o '"connectivity":"[a-z]*"') $(ip neigh show 10.77.0.1)"; fi
kill "$traffic" 2>/dev/null

# 2b (passive). The host's own connections, under the unit's sandbox: the
# daemon (a dynamic user, no capability) hears a real user's connections end,
# from the kernel's TCP destroy groups, and failures to three servers beyond
# the gateway ask for a probe, which finds the path working: full stands.
passive_cursor=$(journalctl --no-pager -u reachd.service -o export -n 1 | sed -n 's/^__CURSOR=//p')
suspected() { journalctl --no-pager -u reachd.service --cursor="$passive_cursor" | grep -q 'connections through this path fail'; }
wait_for 15 connectivity_full
setpriv --reuid=4343 --regid=4343 --clear-groups /usr/bin/python3 - <<'PY' 2>>/out/passive.err &
import socket, threading
def attempt(address):
    s = socket.socket()
    s.settimeout(0.5)
    try:
        s.connect((address, 4443))
    except OSError:
        pass
    s.close()
threads = [threading.Thread(target=attempt, args=(f"198.51.100.{11 + i % 3}",)) for i in range(12)]
for t in threads:
    t.start()
for t in threads:
    t.join()
PY
if wait_for 10 suspected && wait_for 10 connectivity_full; then pass passive-as-user
else fail passive-as-user "$(journalctl --no-pager -u reachd.service --cursor="$passive_cursor" | tail -3 | tr '\n' ' ') $(tail -2 /out/passive.err)"; fi
if journalctl --no-pager -u reachd.service | grep -q "cannot watch the host's closed connections"; then
  fail passive-watched "$(journalctl --no-pager -u reachd.service | grep 'closed connections' | head -1)"
else pass passive-watched; fi
if journalctl --no-pager -u reachd.service --cursor="$passive_cursor" | grep -q '198\.51\.100\.'; then
  fail passive-private "a peer's address reached the journal"
else pass passive-private; fi

# 2b''''. A resume from suspend, told by the real dbus-daemon under its real
# policy to the unit's user (sysusers.d's: dbus-daemon refuses a dynamic one):
# logind steps aside, and a stand-in under logind's name says what logind
# says on waking. The daemon checks at once.
resumed() { journalctl --no-pager -u reachd.service --cursor="$resume_cursor" | grep -q 'the host resumed from suspend'; }
resume_cursor=$(journalctl --no-pager -u reachd.service -o export -n 1 | sed -n 's/^__CURSOR=//p')
# First, a user who is not logind sends it to the daemon's own unique name
# (the bus routes a unicast signal from anyone, under the real policy): not
# heard, so the real one below is the first resume logged. A user of the
# system's (dbus-daemon refuses a uid it cannot look up).
useradd --system --no-create-home reachd-spoofer 2>>/out/spoof.err
spoofed=$(setpriv --reuid="$(id -u reachd-spoofer)" --regid="$(id -g reachd-spoofer)" --clear-groups /usr/bin/python3 - "$(main_pid)" <<'PY' 2>>/out/spoof.err
import sys
from gi.repository import Gio, GLib
bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
def call(method, arguments=None):
    return bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", method, arguments,
                         None, 0, -1, None).unpack()
for name in call("ListNames")[0]:
    if name.startswith(":") and call("GetConnectionUnixProcessID", GLib.Variant("(s)", (name,)))[0] == int(sys.argv[1]):
        for _ in range(20):
            bus.emit_signal(name, "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PrepareForSleep",
                            GLib.Variant("(b)", (False,)))
        bus.flush_sync(None)
        print("sent to", name)
PY
)
case "$spoofed" in
  'sent to :'*) if wait_for 2 resumed; then fail spoofed-resume-as-user "a user's signal was taken for logind's"
                else pass spoofed-resume-as-user; fi ;;
  *) fail spoofed-resume-as-user "the daemon's bus name was not found: $spoofed $(tail -2 /out/spoof.err)" ;;
esac
systemctl stop systemd-logind.service
/usr/bin/python3 - <<'PY' 2>>/out/resume.err
from gi.repository import Gio, GLib
bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
              GLib.Variant("(su)", ("org.freedesktop.login1", 4)), None, 0, -1, None)
bus.emit_signal(None, "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PrepareForSleep",
                GLib.Variant("(b)", (False,)))
bus.flush_sync(None)
PY
if wait_for 5 resumed; then pass resume-as-unit
else fail resume-as-unit "$(tail -3 /out/resume.err 2>/dev/null) / $(journalctl --no-pager -u reachd.service | grep -i 'bus' | tail -3 | tr '\n' '|')"; fi
systemctl start systemd-logind.service

# 2c. History in the journal: a flip of the default route is one structured
# entry per family change and per watched target (MESSAGE_ID, REACHD_*
# fields), sent with journald's native protocol from the sandboxed unit.
offline() { "$reachd" status --short | grep -q '^local'; }
# Only what the flip wrote: the entries of the first route change must not
# count. From a marker's cursor, with --cursor: --after-cursor skips the
# first entry that matches when the cursor's own entry does not match.
flip_marker() { journalctl --no-pager -t reachd-check -o export | sed -n 's/^__CURSOR=//p' | tail -1; }
echo "flip" | systemd-cat -t reachd-check
wait_for 5 sh -c "journalctl -t reachd-check | grep -q flip"
cursor=$(flip_marker)
ip route del default
wait_for 5 offline
ip route add default via 10.77.0.1
check flip-back wait_for 10 connectivity_full
# has_entry MATCHES... -- FIELD=value...: one entry since the cursor that
# matches has every FIELD=value (fields of two entries never add up to one).
entry_has() { local text=$1 field; shift; for field in "$@"; do grep -qxF "$field" <<<"$text" || return 1; done; }
has_entry() {
  local matches=() entry="" line
  while [ "$1" != -- ]; do matches+=("$1"); shift; done; shift
  while IFS= read -r line; do
    if [ -z "$line" ]; then entry_has "$entry" "$@" && return 0; entry=""; else entry+="$line"$'\n'; fi
  done < <(journalctl --no-pager -o export --cursor="$cursor" "${matches[@]}"; echo)
  return 1
}
journal_family() {
  has_entry MESSAGE_ID=$family_id REACHD_FAMILY=ipv4 REACHD_PREVIOUS_REACHABILITY=online -- \
    REACHD_REACHABILITY=local REACHD_REASON=no_route _SYSTEMD_UNIT=reachd.service \
  && has_entry MESSAGE_ID=$family_id REACHD_FAMILY=ipv4 REACHD_PREVIOUS_REACHABILITY=local -- \
    REACHD_REACHABILITY=online REACHD_INTERFACE=vh REACHD_GATEWAY=10.77.0.1 "MESSAGE=IPv4 online via vh (was local)"
}
journal_destination() {
  has_entry MESSAGE_ID=$destination_id REACHD_TARGET=203.0.113.5:443 REACHD_STATE=unreachable -- \
    REACHD_PREVIOUS_STATE=reachable REACHD_REASON=no_route _SYSTEMD_UNIT=reachd.service
}
journal_connectivity() {
  has_entry MESSAGE_ID=$connectivity_id REACHD_CONNECTIVITY=none -- REACHD_PREVIOUS_CONNECTIVITY=full REACHD_ONLINE=0 \
  && has_entry MESSAGE_ID=$connectivity_id REACHD_CONNECTIVITY=full -- REACHD_ONLINE=1
}
# What the flip wrote, for a failure's message.
flip_entries() { journalctl --no-pager -o export --cursor="$cursor" MESSAGE_ID="$1" | grep -E '^(REACHD_[A-Z_]*|MESSAGE)=' | tr '\n' ' '; }
journal_check() { if wait_for 5 "journal_$1"; then pass "journal-$1"; else fail "journal-$1" "cursor '$cursor': $(flip_entries "$2")"; fi; }
journal_check family $family_id
journal_check destination $destination_id
journal_check connectivity $connectivity_id
# 2c'. A handover: the host renumbered (a new source address on the same
# link and gateway) and back, online throughout. Each is one structured
# entry of its own MESSAGE_ID, with the path before and after, and nothing
# else: under journald no stderr line says the change a second time.
path_id=4d2fac482b314ecdbe3b97538f1663c9
# A real user's `reachd monitor` follows the sandboxed daemon through it.
watcher=/out/monitor-4343
setpriv --reuid=4343 --regid=4343 --clear-groups "$reachd" monitor > "$watcher" 2>&1 &
monitor_pid=$!
wait_for 5 grep -q '^20.* #[0-9]* online' "$watcher"
cursor=$(flip_marker)
ip addr add 10.77.0.5/24 dev vh
ip route replace default via 10.77.0.1 src 10.77.0.5
renumbered() { "$reachd" status --json | grep -q '"source":"10.77.0.5"'; }
wait_for 5 renumbered
ip route replace default via 10.77.0.1
back_from_renumbering() { "$reachd" status --json | grep -q '"source":"10.77.0.2"'; }
wait_for 5 back_from_renumbering
ip addr del 10.77.0.5/24 dev vh
journal_path() {
  has_entry MESSAGE_ID=$path_id REACHD_FAMILY=ipv4 REACHD_SOURCE=10.77.0.5 -- \
    REACHD_PREVIOUS_SOURCE=10.77.0.2 REACHD_INTERFACE=vh REACHD_GATEWAY=10.77.0.1 REACHD_PREVIOUS_INTERFACE=vh \
    REACHD_ONLINE=1 _SYSTEMD_UNIT=reachd.service "MESSAGE=IPv4 path: vh via 10.77.0.1 from 10.77.0.2 → 10.77.0.5" \
  && has_entry MESSAGE_ID=$path_id REACHD_FAMILY=ipv4 REACHD_SOURCE=10.77.0.2 -- REACHD_PREVIOUS_SOURCE=10.77.0.5
}
journal_check path $path_id
handover_line='IPv4 path: vh via 10.77.0.1 from 10.77.0.2 → 10.77.0.5'
monitor_told() { grep -q "$handover_line" "$watcher" && grep -q 'IPv4 path: vh via 10.77.0.1 from 10.77.0.5 → 10.77.0.2' "$watcher"; }
if wait_for 5 monitor_told && [ "$(grep -c "$handover_line" "$watcher")" = 1 ] && ! grep -q 'in-process' "$watcher"; then
  pass monitor-handover-as-user
else
  fail monitor-handover-as-user "$(tail -5 "$watcher" | tr '\n' ' ')"
fi
kill "$monitor_pid" 2>/dev/null
said_once() { [ "$(journalctl --no-pager -u reachd.service --cursor="$cursor" | grep -c 'IPv4 path: vh via 10.77.0.1 from 10.77.0.2 → 10.77.0.5')" = 1 ]; }
if said_once; then pass journal-said-once; else fail journal-said-once "$(journalctl --no-pager -u reachd.service --cursor="$cursor" | tail -8)"; fi

# The catalog `make install` puts in /usr/local/lib/systemd/catalog explains them.
journalctl --update-catalog
explained() {
  journalctl --no-pager -x MESSAGE_ID=$family_id REACHD_REACHABILITY=local | grep -q 'Subject: ipv4 is now local' \
  && journalctl --no-pager -x MESSAGE_ID=$path_id | grep -q 'Subject: ipv4 now leaves through vh'
}
if explained; then pass journal-catalog; else fail journal-catalog "$(journalctl --no-pager -x MESSAGE_ID=$family_id | tail -5)"; fi
journalctl --no-pager -o export MESSAGE_ID=$family_id MESSAGE_ID=$destination_id MESSAGE_ID=$connectivity_id > /out/structured 2>&1

# 2d. The watched targets in `reachd status`, judged by the sandboxed daemon.
watched_shown() { "$reachd" status | grep -q '^  10.77.0.1:80 reachable via vh$'; }
check watched-status watched_shown

# 2e. Any local user is the daemon's client: the socket's mode is 0666, and
# every directory on its path lets others through.
answer=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$reachd" status --json 2>&1)
case "$answer" in *'"source":"daemon"'*) pass other-user-client ;; *) fail other-user-client "$answer $(ls -ld /run/reachd /run/private 2>&1 | tr '\n' ' ')" ;; esac

# 2e'. The daemon answers as each caller's own uid under the unit as
# shipped, for two users other than root and nobody: a rule for one user's
# packets decides that user's answer alone (PrivateUsers= made every caller
# uid 65534 to the daemon, whose lookups then ignored every uid rule).
reach_as() { setpriv --reuid="$1" --regid="$1" --clear-groups "$reachd" reach 10.68.0.1:80 --json 2>>/out/reach.err; }
ip rule add uidrange 4242-4242 prohibit priority 100
blocked=$(reach_as 4242); blocked_code=$?
allowed=$(reach_as 4343); allowed_code=$?
ip rule del uidrange 4242-4242 prohibit priority 100
if [ "$blocked_code" = 1 ] && grep -q '"state":"unreachable"' <<<"$blocked" && grep -q '"reason":"prohibited_route"' <<<"$blocked" \
  && grep -q '"source":"daemon"' <<<"$blocked" \
  && [ "$allowed_code" = 0 ] && grep -q '"state":"reachable"' <<<"$allowed" && grep -q '"source":"daemon"' <<<"$allowed"; then
  pass per-user-routing
else
  fail per-user-routing "4242: exit $blocked_code $blocked; 4343: exit $allowed_code $allowed; $(tail -2 /out/reach.err)"
fi

# 2e'''. A process of another network namespace (a user's, in one root
# made for it, as a sandbox's PrivateNetwork= is) asks the daemon under the
# unit to reach a name: refused, other_network, told by the connection
# itself (ProtectProc=invisible hides the process from the daemon).
answer=$(unshare --net setpriv --reuid=4343 --regid=4343 --clear-groups /usr/bin/python3 -c '
import socket
s = socket.socket(socket.AF_UNIX)
s.connect("/run/reachd/reachd.sock")
s.sendall(b"{\"op\":\"reach\",\"target\":\"c2VjcmV0.exfil.test:443\"}\n")
s.settimeout(5)
print(s.recv(4096).decode().split("\n")[0])' 2>&1)
case "$answer" in *'"code":"other_network"'*) pass other-network-as-user ;; *) fail other-network-as-user "$answer" ;; esac

# 2e''. Each user's connection limit counts that user alone: one holding as
# many connections as it may leaves another served by the daemon.
held=/out/held
setpriv --reuid=4242 --regid=4242 --clear-groups python3 "$(dirname "$0")/../Harness/hold-connections.py" /run/reachd/reachd.sock 100 > "$held" 2>&1 &
holder=$!
wait_for 30 grep -q kept "$held"
answer=$(setpriv --reuid=4343 --regid=4343 --clear-groups "$reachd" status --json 2>&1)
kill "$holder"
if grep -q '"kept": 64' "$held" && grep -q '"source":"daemon"' <<<"$answer"; then
  pass per-user-limit
else
  fail per-user-limit "holder: $(cat "$held"); 4343: $answer"
fi

# 2f. The listener works under the unit's sandbox as shipped: a scrape over
# loopback (bash's /dev/tcp: no curl in every root), on the port
# reachd-metrics.socket bound at boot and passed to the daemon; a request
# naming another host (DNS rebinding) is answered 421 and nothing else.
scrape() { exec 3<>/dev/tcp/127.0.0.1/10077 && printf 'GET /metrics HTTP/1.1\r\nHost: %s\r\n\r\n' "${1:-localhost}" >&3 && cat <&3; exec 3<&-; }
scraped_online() { scrape | grep -q '^reachd_destination_reachable{target="10.77.0.1:80"} 1'; }
if wait_for 5 scraped_online && journalctl -u reachd.service --no-pager | grep -q 'metrics.listen=http://127.0.0.1:10077/metrics (from systemd)'; then
  pass metrics-listener
else
  fail metrics-listener "$(scrape 2>&1 | head -3) $(journalctl -u reachd.service --no-pager | grep listening | tail -1)"
fi
# The handovers above are counted: the default route's arrival, its flip
# (gone and back), the renumbering and its return.
path_changes() { scrape | sed -n 's/^reachd_path_changes_total{family="ipv4"} \([0-9]*\).*/\1/p'; }
[ "$(path_changes)" -ge 5 ] 2>/dev/null && pass metrics-path-changes || fail metrics-path-changes "$(scrape | grep path_changes)"
# Every entry reached the real journald: a burst waits for room in its
# queue (10 datagrams in this container) rather than being dropped.
scrape | grep -qx 'reachd_journal_dropped_total 0' && pass journal-none-dropped \
  || fail journal-none-dropped "$(scrape | grep journal_dropped)"
rebound=$(scrape rebind.attacker.example:10077)
case "$rebound" in
  'HTTP/1.1 421 Misdirected Request'*'Content-Length: 0'*) grep -q reachd_ <<<"$rebound" && fail metrics-rebinding "$rebound" || pass metrics-rebinding ;;
  *) fail metrics-rebinding "$rebound" ;;
esac

# 2g. The textfile, in the runtime directory the unit gives the daemon, read
# through the link tmpfiles.d put in node_exporter's directory, by a user
# that is not the daemon's.
textfile=/var/lib/prometheus/node-exporter/reachd.prom
textfile_readable() { setpriv --reuid=65534 --regid=65534 --clear-groups cat "$textfile" | grep -q '^reachd_online 1'; }
if wait_for 5 textfile_readable; then pass textfile; else
  fail textfile "$(ls -ld /run/reachd /run/reachd/* /run/reachd/metrics/* "$textfile" 2>&1 | tr '\n' ' ') $(setpriv --reuid=65534 --regid=65534 --clear-groups cat "$textfile" 2>&1 | head -3 | tr '\n' ' ') $(journalctl -u reachd.service --no-pager | grep -i textfile | tail -2)"
fi

# 3. A dynamic user with no capabilities.
pid=$(main_pid)
# No awk: in a volatile root its /etc/alternatives link dangles.
field() { sed -n "s/^$1:[[:space:]]*\([^[:space:]]*\).*/\1/p" /proc/"$pid"/status; }
uid=$(field Uid)
caps=$(field CapEff)
bounding=$(field CapBnd)
[ "$uid" != 0 ] && [ "$caps" = 0000000000000000 ] && [ "$bounding" = 0000000000000000 ] \
  && pass unprivileged || fail unprivileged "uid $uid CapEff $caps CapBnd $bounding"

# 3b. The open-file limit the unit sets (the syscall filter forbids raising
# it), and the client cap derived from it: 16384 less 64 reserved.
open_files=$(sed -n 's/^Max open files[[:space:]]*\([0-9]*\)[[:space:]]*\([0-9]*\).*/\1 \2/p' /proc/"$pid"/limits)
if [ "$open_files" = "16384 16384" ] && journalctl -u reachd.service --no-pager | grep -q "clients.max=16320"; then
  pass descriptor-limit
else
  fail descriptor-limit "limits '$open_files'; $(journalctl -u reachd.service --no-pager | grep listening | tail -1)"
fi
seq_of() { "$reachd" status --json | sed -n 's/.*"seq":\([0-9]*\).*/\1/p'; }
seq_before=$(seq_of)

# 4. kill -9: systemd restarts it, and a client through the socket gets the current state.
if kill_main -9 && wait_for 10 pid_changed "$pid" && wait_for 10 systemctl is-active -q reachd.service; then
  answer=$("$reachd" status --json)
  case "$answer" in *'"online":true'*'"source":"daemon"'*) pass restart-after-kill ;; *) fail restart-after-kill "$answer" ;; esac
  seq_after=$(seq_of)
  [ -n "$seq_before" ] && [ -n "$seq_after" ] && [ "$seq_after" -gt "$seq_before" ] \
    && pass seq-monotonic || fail seq-monotonic "seq $seq_before before the restart, $seq_after after"
else
  fail restart-after-kill "not restarted"
fi

# 5. A stopped event loop misses its watchdog pings: systemd kills and restarts it.
pid=$(main_pid)
if kill_main -STOP && wait_for 20 pid_changed "$pid" && wait_for 10 systemctl is-active -q reachd.service; then
  journalctl -u reachd.service --no-pager | grep -q -i "watchdog timeout" \
    && pass watchdog || fail watchdog "restarted, but the journal shows no watchdog timeout"
else
  fail watchdog "not restarted within 20 s"
fi

# 6. systemctl stop: a clean exit, and the socket unit keeps the path.
systemctl stop reachd.service
result=$(systemctl show -p Result --value reachd.service)
[ "$(systemctl is-active reachd.service)" = inactive ] && [ "$result" = success ] \
  && systemctl is-active -q reachd.socket && [ -S /run/reachd/reachd.sock ] \
  && pass clean-stop || fail clean-stop "result $result, socket $(systemctl is-active reachd.socket)"
# A stopped daemon's textfile would tell a state nobody watches: the daemon
# removes it (MetricsScrapeTests sees that outside systemd), and systemd its
# runtime directory; node_exporter then reports the dangling link.
[ ! -e /run/reachd/metrics/reachd.prom ] && pass textfile-removed || fail textfile-removed "$(ls -l /run/reachd)"

# 7. reachd-wait-online.service finishes once a default route appears.
ip route del default
systemctl start --no-block reachd-wait-online.service
if wait_for 5 sh -c '[ "$(systemctl is-active reachd-wait-online.service)" = activating ]'; then
  ip route add default via 10.77.0.1
  wait_for 10 sh -c '[ "$(systemctl show -p Result --value reachd-wait-online.service)" = success ] && systemctl is-active -q reachd-wait-online.service' \
    && pass wait-online || fail wait-online "$(systemctl is-active reachd-wait-online.service)"
else
  fail wait-online "did not wait: $(systemctl is-active reachd-wait-online.service)"
fi

# 8. The per-interface template: waits for a route out through vh, which there is.
systemctl start reachd-wait-online@vh.service \
  && [ "$(systemctl show -p Result --value reachd-wait-online@vh.service)" = success ] \
  && pass wait-online-interface \
  || fail wait-online-interface "$(systemctl is-active reachd-wait-online@vh.service), $(systemctl show -p Result -p ExecMainStatus reachd-wait-online@vh.service | tr '\n' ' ')$(journalctl -u reachd-wait-online@vh.service --no-pager -o cat | tail -5 | tr '\n' ' ')"

# 9. A unit with PrivateNetwork=yes has a network of its own, only lo, yet
# the daemon's socket path reaches it: it must get its own network's answer,
# not the daemon's (online via vh).
private_status=$(systemd-run --wait --pipe --quiet -p PrivateNetwork=yes "$reachd" status --json 2>/out/private.err)
code=$?
case "$code $private_status" in
  '1 '*'"online":false'*'"source":"embedded"'*)
    grep -q "serves another network namespace; computed in-process" /out/private.err \
      && pass private-network-status || fail private-network-status "no reason given: $(cat /out/private.err)" ;;
  *) fail private-network-status "exit $code: $private_status $(cat /out/private.err)" ;;
esac
systemd-run --wait --pipe --quiet -p PrivateNetwork=yes "$reachd" wait-online --timeout 1 >/dev/null 2>&1
code=$?
[ "$code" = 1 ] && pass private-network-wait-online || fail private-network-wait-online "exit $code"

journalctl --no-pager -u reachd.service -u reachd.socket -u reachd-wait-online.service -u 'reachd-wait-online@*' > /out/journal 2>&1
echo done >> "$out"
