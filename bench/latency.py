#!/usr/bin/env python3
"""Event-to-subscriber latency, against the kernel's own notification: the
figures behind issue 11.

Default-route flips go through one long-lived `ip -batch -` in a throw-away
namespace. First issue 45's five watchers in one run per round, with the
ratios its goals are set in and each one's CPU time per flip in the same
rounds (the daemon's counted with its client's); then the CPU a flip costs
reachd in-process and bench/relay.c alone, cold and warm; then each watcher in a run of its own beside
`ip monitor`, then all in one run. Every watcher's output line is stamped by one epoll loop here, the
same way as the line of `ip monitor route` (the kernel's own notification, the
limit), and each watcher is reported as its difference from that line, never
as an absolute time. Watchers:

- `ip monitor route`, the reference;
- a bare subscriber on the daemon's socket (this script): the daemon alone;
- `reachd monitor --json`, in-process (`--no-daemon`) and through the daemon;
- GLib's GNetworkMonitor from Python, where python3-gi is installed.

Then the route change to the `dns` verdict (issue 36): the first line that
says the name server's route moved, through the daemon and in-process.

Then fan-out: the same flips while 1,000, then 10,000 subscribers (bench/fanout.c, one
epoll loop in C, so the reader isn't what is measured) follow the daemon;
event to first and to last subscriber; then the same subscribers follow
bench/relay.c's fan, the floor (lines as long as the daemon's, written and
nothing else), and the daemon's time to the last against the floor's. And idle wake-ups: context switches of
every thread of a waiting `reachd monitor` (in-process, through the daemon)
and of a ReachabilityMonitor library client, over 10 s.

Needs root. Usage: python3 bench/latency.py [--tiny] [FLIPS] [hop|dns]
--tiny (make test): 2 flips, one round of the five watchers, fan-out to 10
subscribers once, 1 s idle; the library client REACHD_BANNER names, else
OnlineBanner under the package (.build/release, else .build/debug). Where
there is no C compiler ($CC, else gcc), what needs one is skipped, saying so.
"""
import atexit
import functools
import json
import shutil
import os
import random
import re
import select
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import reachd_bench

REACHD = os.path.abspath(os.environ.get("REACHD", ".build/dist/release/reachd"))
HERE = os.path.dirname(os.path.abspath(__file__))
CC = os.environ.get("CC", "gcc")
GLIB_WATCHER = r"""
import sys
import gi
gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib
monitor = Gio.NetworkMonitor.get_default()
def changed(_, available):
    sys.stdout.write(f"network-changed available={available}\n")
    sys.stdout.flush()
monitor.connect("network-changed", changed)
sys.stdout.write(f"ready {monitor.__gtype__.name}\n")
sys.stdout.flush()
GLib.MainLoop().run()
"""


def glib_python():
    """A Python with GObject introspection (Debian's, beside a pyenv one)."""
    for python in ("/usr/bin/python3", sys.executable):
        if subprocess.run([python, "-c", "import gi"], capture_output=True).returncode == 0:
            return python
    return None


class Watcher:
    """A process (or socket) whose lines are stamped on arrival."""

    def __init__(self, name, fd, owner=None):
        self.name, self.fd, self.owner = name, fd, owner
        # A `reachd monitor` of the daemon's: its CPU counts with the daemon's.
        self.follows_daemon = False
        self.buffer = b""
        self.lines = []  # (monotonic ns, line)

    def feed(self, now):
        data = os.read(self.fd, 65536)
        self.buffer += data
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            self.lines.append((now, line.decode(errors="replace")))
        return bool(data)


# The kernel's own notification, the yardstick. Real-time (SCHED_FIFO), as this
# script runs where it can: on two cores a flip wakes five processes, and a
# reference that waits for a core behind a watcher would flatter that watcher
# (measured: `ip monitor` waited 0.26 ms behind an in-process monitor, against
# 0.03 ms beside the daemon).
REFERENCE = ["chrt", "-f", "10", "ip", "monitor", "route"]

# In a watcher's arguments, where the daemon's socket goes (inside a word too).
SOCKET = "@SOCKET@"


def start(net, name, argv):
    watcher_of_daemon = any(SOCKET in word for word in argv)
    argv = [word.replace(SOCKET, net.sock) for word in argv]
    process = subprocess.Popen(net.exec(*argv), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    watcher = Watcher(name, process.stdout.fileno(), process)
    watcher.follows_daemon = watcher_of_daemon
    return watcher


def cpu_ns(pid):
    """Nanoseconds on a CPU of process `pid`: its threads and the processes
    it started (relay.c's hop forks its reader), from the scheduler's own
    account; 0 for one that is gone. Only tasks alive when it is read count:
    none of the watchers starts or ends one while it is measured."""
    total = 0
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/schedstat") as stat:
                total += int(stat.read().split()[0])
            with open(f"/proc/{pid}/task/{thread}/children") as children:
                total += sum(cpu_ns(int(child)) for child in children.read().split())
        except OSError:
            continue
    return total


def subscriber(path, name):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(b'{"op":"subscribe"}\n')
    watcher = Watcher(name, s.fileno())
    watcher.socket = s  # kept open as long as the watcher
    return watcher


def pump(poller, watchers, until):
    """Stamps lines until `until()` or 2 s of silence."""
    by_fd = {w.fd: w for w in watchers}
    deadline = time.monotonic() + 2
    while not until() and time.monotonic() < deadline:
        for fd, _ in poller.poll(50):
            by_fd[fd].feed(time.monotonic_ns())


def flip_times(watcher, starts, matches):
    """For each flip (issued at starts[i]), when the watcher's first matching
    line after it arrived; None where none did before the next flip."""
    times = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else float("inf")
        hit = next((t for t, line in watcher.lines if start <= t < end and matches(line)), None)
        times.append(hit)
    return times


def summary(differences):
    values = sorted(differences)
    if not values:
        return "no lines"
    p99 = values[min(len(values) - 1, int(round(0.99 * (len(values) - 1))))]
    return f"{statistics.median(values) / 1e6:+.3f} ms p50, {p99 / 1e6:+.3f} ms p99  ({len(values)} flips)"


IN_PROCESS = ("reachd monitor --json, in-process", [REACHD, "monitor", "--json", "--no-daemon"])
THROUGH_DAEMON = ("reachd monitor --json, through the daemon", [REACHD, "monitor", "--json", "--socket", SOCKET])


def latency(flips, together=False):
    """Each watcher beside `ip monitor`: one at a time (on two cores, six
    processes woken by one flip measure the scheduler more than themselves),
    or all in one run with `together`."""
    python = glib_python()
    specs = [
        ("daemon socket, bare subscriber", "bare"),
        IN_PROCESS,
        THROUGH_DAEMON,
    ] + ([("GLib GNetworkMonitor (Python)", [python, "-c", GLIB_WATCHER])] if python else [])
    if together:
        return measure(flips, specs)
    return [row for spec in specs for row in measure(flips, [spec])]


DEFAULT_ROUTE_FLIP = ("route del default", "route add default via 10.77.0.1")


def measure(flips, specs, daemon_stopped=False, flip=DEFAULT_ROUTE_FLIP, arrivals=None, timeline=None, cpu=None):
    """Each watcher's line after `ip monitor`'s for the same flip; with
    `daemon_stopped`, the daemon is stopped (SIGSTOP) once they all listen.
    `flip`: the two `ip` commands that alternate (the default route going
    and coming, unless said). `arrivals`, a dict: filled with each watcher's
    arrival per flip (monotonic ns, None where none came), by name.
    `timeline`, a dict: the flips are recorded with `perf sched record`, and
    it is given the recording's path ("perf"), the daemon's pid ("daemon")
    and each watcher's ("pids", by name); the caller removes the file. `cpu`, a
    dict: filled with each watcher's CPU time per flip over the flips (µs),
    by name, the daemon's counted with a watcher of it (here it serves that
    one alone)."""
    net = reachd_bench.Network()
    rows = []
    daemon, watchers = None, []
    try:
        daemon, _ = reachd_bench.start_daemon(net, "--no-check")
        watchers.append(start(net, "ip monitor route (reference)", REFERENCE))
        poller = select.poll()
        poller.register(watchers[0].fd, select.POLLIN)
        for name, argv, *matches in specs:
            if argv == "bare":
                watchers.append(subscriber(net.sock, name))
            else:
                watchers.append(start(net, name, argv))
            # A spec's third element: which of its lines count (all, unless said).
            watchers[-1].matches = matches[0] if matches else (lambda line: True)
            poller.register(watchers[-1].fd, select.POLLIN)
            # Each has said something (its first status, or ready), so has
            # joined the kernel's groups, before the next starts: the order
            # they are handed a notice in is the reverse of the specs'. ip
            # monitor says nothing until a change.
            pump(poller, watchers, lambda: bool(watchers[-1].lines))
        drain(poller, watchers, 0.5)
        if daemon_stopped:
            os.kill(daemon.pid, signal.SIGSTOP)
        recorder = None
        if timeline is not None:
            timeline.update(perf=os.path.join(tempfile.mkdtemp(prefix="reachd-sched-"), "sched.data"), daemon=daemon.pid,
                            pids={w.name: w.owner.pid for w in watchers if w.owner is not None})
            recorder = subprocess.Popen(["perf", "sched", "record", "-a", "-o", timeline["perf"]],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1)  # perf has its events open

        def spent():
            daemon_ns = cpu_ns(daemon.pid)
            return {w.name: cpu_ns(w.owner.pid) + (daemon_ns if w.follows_daemon else 0)
                    for w in watchers[1:] if w.owner is not None}
        spent_before = spent()
        batch = subprocess.Popen(["ip", "-n", net.host, "-batch", "-"], stdin=subprocess.PIPE, text=True)
        starts = []
        online = True
        for i in range(flips):
            before = [len(w.lines) for w in watchers]
            starts.append(time.monotonic_ns())
            batch.stdin.write((flip[0] if online else flip[1]) + "\n")
            batch.stdin.flush()
            online = not online
            pump(poller, watchers, lambda: all(len(w.lines) > n for w, n in zip(watchers, before)))
            # Whatever trails (GLib repeats itself), over a pause out of phase with any timer.
            drain(poller, watchers, 0.02 + random.random() * 0.03)
        batch.stdin.close()
        batch.wait()
        if cpu is not None:
            cpu.update({name: (ns - spent_before[name]) / flips / 1e3 for name, ns in spent().items()})
        if recorder is not None:
            recorder.send_signal(signal.SIGINT)
            recorder.wait()

        reference = flip_times(watchers[0], starts, lambda line: "default" in line)
        if arrivals is not None:
            arrivals[watchers[0].name] = reference
        for w in watchers[1:]:
            times = flip_times(w, starts, w.matches)
            if arrivals is not None:
                arrivals[w.name] = times
            differences = [t - r for t, r in zip(times, reference) if t is not None and r is not None]
            missed = sum(1 for t in times if t is None)
            # A GLib app says which backend it got: GLib falls back without a word.
            first = w.lines[0][1] if w.lines else ""
            name = f"{w.name} [{first.split()[1]}]" if first.startswith("ready ") else w.name
            rows.append(f"  {name:44} {summary(differences)}" + (f", {missed} missed" if missed else ""))
    finally:
        # Whatever happened: no process outlives the namespace it ran in.
        if daemon is not None:
            if daemon_stopped:
                os.kill(daemon.pid, signal.SIGCONT)
            daemon.terminate()
            daemon.wait()
        for w in watchers:
            if w.owner is not None:
                w.owner.kill()
        net.close()
    return rows


@functools.cache
def build_directory():
    """A directory of this run's own for what it compiles (root builds it:
    not at a name others can guess), removed when the script ends."""
    directory = tempfile.mkdtemp(prefix="reachd-bench-c-")
    atexit.register(shutil.rmtree, directory, True)
    return directory


@functools.cache
def compiled(source):
    """bench/`source` built with gcc -O2, once a run: the binary's path.
    The five watchers, the timeline, the cold and warm figures and both
    fan-outs run the same two."""
    binary = os.path.join(build_directory(), os.path.splitext(source)[0])
    subprocess.run([CC, "-O2", "-o", binary, os.path.join(HERE, source)], check=True)
    return binary


def no_compiler():
    """In a tiny run without a C compiler, the note that says what is skipped; else None."""
    if reachd_bench.TINY and shutil.which(CC) is None:
        return f"  (no C compiler here ({CC}): bench/relay.c and bench/fanout.c skipped)"
    return None


def hop(flips, rounds=10):
    """Issue 45's five watchers, in one run per round, each after `ip
    monitor route` for the same flip: bench/relay.c direct (the kernel to
    one process) and hop (one process more, over a Unix socket), GLib's
    netlink backend from Python, reachd in-process and through the daemon.
    Interleaved so that each round's machine is the same for all five, and
    started in a new order each round (the kernel hands a notice to the
    newest subscriber first), each order followed by its reverse; the
    figure of each is the median over rounds of its p50. Then the two
    ratios the goals are set in: in-process against GLib (at most 1), and
    through the daemon less GLib against the bare hop (relay hop less relay
    direct), with the bare hop's spread over rounds, as on two cores it
    depends on which core the woken reader lands on."""
    skipped = no_compiler()
    relay = compiled("relay.c") if skipped is None else None
    python = glib_python()
    glib = ("GLib GNetworkMonitor (Python), in-process", [python, "-c", GLIB_WATCHER])
    direct = ("floor: relay.c, the kernel to one process", [relay, "direct"])
    relay_hop = ("floor: relay.c, one process more (a hop)", [relay, "hop"])
    watchers = ([direct, relay_hop] if skipped is None else []) + ([glib] if python else []) + [IN_PROCESS, THROUGH_DAEMON]
    rows = [skipped] if skipped else []
    if python is None:
        rows.append("  (no python3-gi here: GLib's watcher skipped, and the ratios against it)")
    p50s = {name: [] for name, _ in watchers}
    cpus = {name: [] for name, _ in watchers}
    short = {direct[0]: "relay.c direct", relay_hop[0]: "relay.c hop", glib[0]: "GLib",
             IN_PROCESS[0]: "reachd in-process", THROUGH_DAEMON[0]: "reachd's client"}
    for n in range(rounds):
        arrivals, cpu = {}, {}
        # The kernel hands a route notice to the newest subscriber first
        # (netlink_broadcast walks its list from the head, where a socket
        # joining a group is added), and on two cores the first woken
        # takes the free core: a fixed start order would fix who waits.
        # So the rounds go in pairs: a random order, then its reverse, so
        # that of any two watchers each is handed the notice first
        # equally often. The daemon starts before them all, so it is
        # handed the notice last: that favours the others, never us.
        order = random.sample(watchers, len(watchers)) if n % 2 == 0 else order[::-1]
        rows.append(f"  round {n + 1}: handed the notice first to last: "
                    + ", ".join(short[name] for name, _ in reversed(order)) + ", ip monitor, the daemon")
        for row in measure(flips, order, arrivals=arrivals, cpu=cpu):
            rows.append(f"  round {n + 1}: {row.strip()}")
        reference = arrivals["ip monitor route (reference)"]
        for name, _ in watchers:
            differences = [t - r for t, r in zip(arrivals[name], reference) if t is not None and r is not None]
            if differences:
                p50s[name].append(statistics.median(differences))
            if name in cpu:
                cpus[name].append(cpu[name])
    p50 = {name: statistics.median(values) for name, values in p50s.items() if values}
    for name, value in p50.items():
        rows.append(f"  {name:44} {value / 1e6:+.3f} ms, median of {len(p50s[name])} rounds' p50")
    # What each costs per flip, beside when it answers: the same rounds'
    # CPU time, which on two cores decides who waits for whom, and which
    # moves less from run to run than the latencies do.
    for name, values in cpus.items():
        if values:
            rows.append(f"  {name:44} {statistics.median(values):6.0f} µs CPU per flip"
                        + (" (the daemon and its client)" if name == THROUGH_DAEMON[0] else "")
                        + f", median of {len(values)} rounds")
    if glib[0] in p50 and IN_PROCESS[0] in p50:
        ratio = p50[IN_PROCESS[0]] / p50[glib[0]] if p50[glib[0]] > 0 else float("inf")
        rows.append(f"  in-process ÷ GLib:                           {ratio:.2f}  (goal: at most 1)")
    if glib[0] in p50 and THROUGH_DAEMON[0] in p50 and direct[0] in p50 and relay_hop[0] in p50:
        ours = p50[THROUGH_DAEMON[0]] - p50[glib[0]]
        hops = [h - d for h, d in zip(p50s[relay_hop[0]], p50s[direct[0]])]
        bare = statistics.median(hops)
        allowance = max(0.05e6, bare)
        rows.append(f"  through the daemon less GLib:                {ours / 1e6:+.3f} ms"
                    f"  (goal: at most {allowance / 1e6:.3f} ms, the larger of 0.05 ms and the bare hop)")
        rows.append(f"  the bare hop (relay hop less direct):        {bare / 1e6:+.3f} ms,"
                    f" {min(hops) / 1e6:+.3f} to {max(hops) / 1e6:+.3f} ms over {len(hops)} rounds")
    return rows


def cold_and_warm(flips):
    """CPU per flip, each watcher alone, with flips 20 ms apart (cold: as
    in the rounds above, and as route changes come) and 0.5 ms apart
    (warm: the caches still hold what the last one touched). The cold
    figure less the warm one is what a wake-up after a pause costs beyond
    the work itself, which grows with the memory a change touches, not with
    its instructions; bench/relay.c direct is the floor of both. Context
    switches per flip are given, so that flips taken two at a time show."""
    skipped = no_compiler()
    if skipped:
        return [skipped]
    relay = compiled("relay.c")
    rows = []
    for name, argv in (("floor: relay.c, the kernel to one process", [relay, "direct"]), IN_PROCESS):
        net = reachd_bench.Network()
        try:
            watcher = start(net, name, argv)
            poller = select.poll()
            poller.register(watcher.fd, select.POLLIN)
            pump(poller, [watcher], lambda: bool(watcher.lines))
            drain(poller, [watcher], 0.5)
            batch = subprocess.Popen(["ip", "-n", net.host, "-batch", "-"], stdin=subprocess.PIPE, text=True)
            figures = []
            for gap in (0.02, 0.0005):
                spent, woken = cpu_ns(watcher.owner.pid), switches(watcher.owner.pid)
                for i in range(flips):
                    batch.stdin.write(DEFAULT_ROUTE_FLIP[i % 2] + "\n")
                    batch.stdin.flush()
                    drain(poller, [watcher], gap)
                drain(poller, [watcher], 0.2)
                figures.append(((cpu_ns(watcher.owner.pid) - spent) / flips / 1e3,
                                (switches(watcher.owner.pid) - woken) / flips))
            batch.stdin.close()
            batch.wait()
            watcher.owner.kill()
            watcher.owner.wait()
        finally:
            net.close()
        (cold, cold_woken), (warm, warm_woken) = figures
        rows.append(f"  {name:44} {cold:5.0f} µs cold, {warm:5.0f} µs warm, {cold - warm:+5.0f} µs for the pause"
                    f"  ({cold_woken:.1f} and {warm_woken:.1f} context switches a flip)")
    return rows


# The end of a task as `perf sched timehist` writes it: "[pid/tid]" or "[pid]".
TASK = re.compile(r"\[(\d+)(?:/\d+)?\]$")


def scheduler_wakeups(recording):
    """(time in µs, waker's pid, wakee's pid) of each wake-up in a `perf sched
    record`ing, in order: from the kernel's own scheduler events."""
    text = subprocess.run(["perf", "sched", "timehist", "-w", "-i", recording], capture_output=True, text=True).stdout
    found = []
    for line in text.splitlines():
        # "  2625.994443 [0001]  relay[8766]    awakened: relay[8768]"
        # A name may hold brackets and spaces of its own (a thread named
        # "[pango] fontcon": make test's GTK window ran beside this once),
        # so the pids are read from the end of each task: "name[pid/tid]".
        parts = line.split()
        if len(parts) < 5 or "awakened:" not in parts:
            continue
        at = parts.index("awakened:")
        waker, wakee = TASK.search(" ".join(parts[2:at])), TASK.search(" ".join(parts[at + 1:]))
        if waker and wakee:
            found.append((float(parts[0]) * 1e6, int(waker.group(1)), int(wakee.group(1))))
    return found


def relayed(events, writer, printer, reader):
    """Per status, µs from `writer` waking `printer` (its write) to
    `printer` waking `reader` (the line printed): the hop as the scheduler
    saw it, with no reference process to share the cores with."""
    hops, written = [], None
    for at, waker, woken in events:
        if waker == writer and woken == printer:
            written = at
        elif waker == printer and woken == reader and written is not None:
            hops.append(at - written)
            written = None
    return hops


def timeline_hop(flips):
    """The hop on the kernel's scheduler timeline (`perf sched`), where the
    figures against `ip monitor` mix it with who got a core first: from the
    daemon's write waking `reachd monitor --json` to that client's write
    waking this script, against bench/relay.c's hop (its first process's
    write waking the second, to the second's write waking this script)."""
    if shutil.which("perf") is None:
        return ["  (no perf here: `make bench` installs linux-perf)"]
    skipped = no_compiler()
    relay = compiled("relay.c") if skipped is None else None
    reader = os.getpid()
    rows, p50 = [skipped] if skipped else [], {}
    for name, argv in (THROUGH_DAEMON, ("floor: bench/relay.c hop", [relay, "hop"]))[:1 if skipped else 2]:
        timeline = {}
        measure(flips, [(name, argv)], timeline=timeline)
        try:
            events = scheduler_wakeups(timeline["perf"])
            started = timeline["pids"][name]
            if argv[0] == relay:
                # `ip netns exec` execs the relay, which writes; the process it forks prints.
                writer = started
                # None where perf lost the wake-up (it drops events on a loaded machine).
                printer = next((woken for at, waker, woken in events if waker == writer and woken != reader), None)
            else:
                writer, printer = timeline["daemon"], started
            hops = relayed(events, writer, printer, reader) if printer is not None else []
        finally:
            shutil.rmtree(os.path.dirname(timeline["perf"]), ignore_errors=True)
        if hops:
            p50[name] = statistics.median(hops)
            rows.append(f"  {name:44} {p50[name]:6.0f} µs p50 from the write to the printed line ({len(hops)} of {flips} flips)")
        else:
            rows.append(f"  {name:44} no wake-ups recorded")
    if len(p50) == 2:
        ours, floor = p50[THROUGH_DAEMON[0]], p50["floor: bench/relay.c hop"]
        rows.append(f"  the hop above the floor, on the timeline:       {(ours - floor) / 1e3:+.3f} ms")
    return rows


def print_hop(flips):
    print("\n".join(hop(flips, 1 if reachd_bench.TINY else 10)))
    print("the same hop on the scheduler's timeline (perf sched):")
    print("\n".join(timeline_hop(flips)))


def dns_verdict(flips):
    """Route change to the `dns` verdict (issue 36): the status line that
    says the name server's route went or came (a `dns` change; the bench's
    network has a resolver routed as the Internet is), through the daemon
    and in-process, each beside `ip monitor` in a run of its own."""
    said = lambda line: '"kind":"dns"' in line
    return [row for name, argv in (THROUGH_DAEMON, IN_PROCESS)
            for row in measure(flips, [(name.replace("reachd monitor --json", "the dns verdict"), argv, said)])]


def drain(poller, watchers, seconds):
    by_fd = {w.fd: w for w in watchers}
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        for fd, _ in poller.poll(left * 1000):
            by_fd[fd].feed(time.monotonic_ns())


def fanout(flips, subscribers=1000, floor=None):
    """Flips while `subscribers` follow the daemon through bench/fanout.c:
    event (ip monitor's line) to the first and to the last subscriber, and
    the medians of both (ns). With `floor`, a line length: they follow
    bench/relay.c's fan instead, which writes each a line that long per
    change and does nothing else, the least a fan-out costs."""
    if skipped := no_compiler():
        return [skipped], None
    reader = compiled("fanout.c")
    net = None
    try:
        net = reachd_bench.Network()
        if floor:
            path = os.path.join(net.dir, "floor.sock")
            writer = subprocess.Popen(net.exec(compiled("relay.c"), "fan", path, str(floor)))
            deadline = time.monotonic() + 10
            while not os.path.exists(path) and writer.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
        else:
            path = net.sock
            writer, _ = reachd_bench.start_daemon(net, "--no-check")
        kernel = start(net, "ip monitor", REFERENCE)
        fan = subprocess.Popen([reader, path, str(subscribers)], stdout=subprocess.PIPE)
        fanned = Watcher("fanout", fan.stdout.fileno(), fan)
        poller = select.poll()
        for w in (kernel, fanned):
            poller.register(w.fd, select.POLLIN)
        pump(poller, [kernel, fanned], lambda: fanned.lines)
        if not fanned.lines or fanned.lines[0][1] != "ready":
            return [f"  the reader did not get {subscribers} first statuses"], None
        batch = subprocess.Popen(["ip", "-n", net.host, "-batch", "-"], stdin=subprocess.PIPE, text=True)
        online, first, last = True, [], []
        for _ in range(flips):
            seen = (len(kernel.lines), len(fanned.lines))
            batch.stdin.write((DEFAULT_ROUTE_FLIP[0] if online else DEFAULT_ROUTE_FLIP[1]) + "\n")
            batch.stdin.flush()
            online = not online
            pump(poller, [kernel, fanned], lambda: len(kernel.lines) > seen[0] and len(fanned.lines) > seen[1])
            if len(kernel.lines) > seen[0] and len(fanned.lines) > seen[1]:
                reference = kernel.lines[seen[0]][0]
                _, first_ns, last_ns = fanned.lines[seen[1]][1].split()
                first.append(int(first_ns) - reference)
                last.append(int(last_ns) - reference)
            drain(poller, [kernel, fanned], 0.05 + random.random() * 0.05)
        batch.stdin.close()
        batch.wait()
        fan.kill()
        kernel.owner.kill()
        writer.terminate()
        writer.wait()
    finally:
        if net is not None:
            net.close()
    who = "floor: relay.c fan, " if floor else ""
    medians = (statistics.median(first), statistics.median(last)) if first else None
    return [f"  {who}event to the first of {subscribers}: {summary(first)}",
            f"  {who}event to the last of {subscribers}:  {summary(last)}"], medians


def daemon_line_length():
    """The length of the daemon's first line to a subscriber (bytes, the
    newline included): the floor's fan-out writes lines as long."""
    net = reachd_bench.Network(resolver=False)
    try:
        reachd_bench.start_daemon(net, "--no-check")
        with reachd_bench.connect(net.sock) as s:
            s.sendall(b'{"op":"subscribe"}\n')
            line = s.makefile("rb").readline()
        if not line.endswith(b"\n"):
            raise SystemExit("the daemon closed a subscriber before its first line")
        return len(line)
    finally:
        net.close()


def print_fanout(flips, sizes):
    """Each size of fan-out through the daemon, then through the floor,
    and the daemon's median to the last subscriber against the floor's."""
    length = daemon_line_length()
    for subscribers in sizes:
        rows, ours = fanout(flips, subscribers)
        print("\n".join(rows))
        rows, floor = fanout(flips, subscribers, floor=length)
        print("\n".join(rows))
        if ours and floor:
            # Under a millisecond the figures are mostly who got a core
            # first (the floor can beat ip monitor itself): a ratio of them
            # says nothing, so only the difference is given.
            ratio = f"{ours[1] / floor[1]:.2f}" if floor[1] >= 1e6 else "not given under 1 ms"
            # Issue 45 sets its goal at 10,000; a smaller fan-out is shown beside it.
            goal = "  (goal: at most 1.1)" if subscribers == 10000 else ""
            print(f"  to the last of {subscribers} ({length}-byte lines): the daemon less the floor"
                  f" {(ours[1] - floor[1]) / 1e6:+.3f} ms, the daemon ÷ the floor {ratio}{goal}")


def switches(pid):
    """Context switches of every thread of `pid` so far, voluntary and not."""
    count = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/status") as f:
            for line in f:
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    count += int(line.split()[1])
    return count


def wakeups(pids, seconds=10):
    """Context switches of every thread of each of `pids` over the same
    `seconds`: each is a wake-up. Measured together, since a waiting
    process's count does not depend on the others, and an idle host does
    not change meanwhile."""
    before = [switches(pid) for pid in pids]
    time.sleep(seconds)
    return [switches(pid) - b for pid, b in zip(pids, before)]


def idle(seconds=10):
    """Wake-ups of clients waiting on a network that doesn't change."""
    net = reachd_bench.Network()
    rows = []
    try:
        daemon, _ = reachd_bench.start_daemon(net, "--no-check")
        clients = [
            ("reachd daemon", None),
            ("reachd monitor, in-process", [REACHD, "monitor", "--no-daemon"]),
            ("reachd monitor, through the daemon", [REACHD, "monitor", "--socket", net.sock]),
            ("reachd wait-online -6 (never satisfied)", [REACHD, "wait-online", "-6", "-t", "0", "--socket", net.sock]),
        ]
        example = os.environ.get("REACHD_BANNER")
        if reachd_bench.TINY:
            example = reachd_bench.built("REACHD_BANNER", ".build/release/OnlineBanner", ".build/debug/OnlineBanner")
            if not os.access(example, os.X_OK):
                rows.append(f"  (no library client at {example}: the ReachabilityMonitor app skipped)")
                example = None
        if example:
            clients.append(("a ReachabilityMonitor app (onChange)", ["env", f"REACHD_SOCKET={net.sock}", example]))
        daemon_pid = int(subprocess.check_output(["pgrep", "-f", f"daemon --socket {net.sock}"]).split()[-1])
        processes = [None if argv is None
                     else subprocess.Popen(net.exec(*argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                     for _, argv in clients]
        time.sleep(1)  # past start-up
        # ip netns exec and env exec what they run: the same process.
        counts = wakeups([daemon_pid if p is None else p.pid for p in processes], seconds)
        for (name, _), count in zip(clients, counts):
            rows.append(f"  {name:42} {count:4} wake-ups in {seconds} s")
        for p in processes:
            if p:
                p.kill()
                p.wait()
        daemon.terminate()
        daemon.wait()
    finally:
        net.close()
    return rows


def main():
    argv, tiny = reachd_bench.arguments()
    flips = int(argv[0]) if argv else (2 if tiny else 100)
    seconds = 1 if tiny else 10
    # The stamps are taken here: real-time too, like the reference, so that
    # a line is stamped when it arrives, not when a core is free. Not
    # inherited: the daemon and the watchers run as they would anywhere.
    global REFERENCE
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, os.sched_param(10))
    except PermissionError:
        # A container or a cgroup with no real-time budget: the reference
        # must not need it either, and the figures say so.
        REFERENCE = REFERENCE[REFERENCE.index("ip"):]
        print("note: no real-time scheduling here; `ip monitor` and the stamps run at normal priority")
    if len(argv) > 1 and argv[1] == "hop":
        print_hop(flips)
        return
    if len(argv) > 1 and argv[1] == "dns":
        print("\n".join(dns_verdict(flips)))
        return
    print("five watchers in one run, each after `ip monitor route` for the same flip (issue 45's goals):")
    print_hop(flips)
    print("\nCPU per flip, each alone, flips 20 ms apart (cold) and 0.5 ms apart (warm):")
    print("\n".join(cold_and_warm(flips)))
    print("\nroute change to the dns verdict (a name server routed as the Internet is), after `ip monitor route`:")
    print("\n".join(dns_verdict(flips)))
    print(f"event to subscriber, added over `ip monitor route` in the same run, one watcher at a time ({REACHD}):")
    print("\n".join(latency(flips)))
    print("\n... and all watchers in one run (six processes woken per flip on this machine's cores):")
    print("\n".join(latency(flips, together=True)))
    print("\nfan-out, event to subscribers, after `ip monitor route` in the same run:")
    print_fanout(flips, [10] if tiny else [1000, 10000])
    print("\nidle wake-ups (context switches of every thread; 0 is the goal):")
    print("\n".join(idle(seconds)))


if __name__ == "__main__":
    main()
