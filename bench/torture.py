#!/usr/bin/env python3
"""reachd under a hostile local user: the figures behind issue 7.

Each scenario runs in throw-away network namespaces against REACHD (default
.build/dist/release/reachd, what make install ships), so the same script measures any two builds:

1. Flood: one connection pipelines {"op":"get"} as fast as it can (never
   reading, or reading everything) while 10 subscribers follow default-route
   flips. Reported: flips seen, each subscriber's delay after the kernel's own
   notification (`ip -ts monitor route`, same run), against the same flips
   with no flood; daemon CPU and RSS.
2. Descriptors and users: connections held by `nobody`, under a 64-descriptor
   limit and under the default one; how `reachd status` fares for another user.
3. A stopped daemon (SIGSTOP), and a stopped daemon with a full listen queue:
   `status`, `wait-online` and `monitor`.
4. A daemon that refuses (`too_many_clients`): how often `reachd monitor`
   reconnects, its CPU, how much it logs, whether it follows netlink meanwhile.
5. `seq` across a daemon restart.

Usage: python3 bench/torture.py [--tiny] [flood|descriptors|stopped|refused|sequence ...]
--tiny (make test): 4 flips to 2 subscribers, 100 connections held where
1,100 were, and 2 s (refused, monitor) or 3 s (wait-online) where a
scenario waited 3 to 10 s.
"""
import datetime
import json
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import reachd_bench

REACHD = os.path.abspath(os.environ.get("REACHD", ".build/dist/release/reachd"))
NOBODY, OTHER = 65534, 65533
# The holder runs as `nobody`, who may not enter root's home (a pyenv python3 first on root's PATH).
SYSTEM_PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
HOLDER = r"""
import json, socket, sys, time
path, count, subscribe = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
opened, failed = [], 0
for _ in range(count):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(0.2)
    try:
        s.connect(path)
        if subscribe:
            s.sendall(b'{"op":"subscribe"}\n')
        opened.append(s)
    except OSError:
        failed += 1
time.sleep(1)
kept, refusals, closed = [], [], 0
for s in opened:
    s.setblocking(False)
    try:
        data = s.recv(65536)
    except BlockingIOError:
        data = None
    if data is None or (subscribe and b'"type":"status"' in data):
        kept.append(s)
    elif b"too_many_clients" in data:
        refusals.append(json.loads(data.split(b"\n")[0])["message"])
    else:
        closed += 1
print(json.dumps({"kept": len(kept), "refused": len(refusals), "closed": closed, "failed": failed,
                  "message": refusals[0] if refusals else None}), flush=True)
time.sleep(600)
"""

class Network(reachd_bench.Network):
    """reachd_bench's namespaces, plus the processes started in them (killed,
    and woken first if stopped, on close) and a directory other users can
    enter to reach the socket."""

    def __init__(self):
        super().__init__()
        os.chmod(self.dir, 0o755)
        self.children = []

    def spawn(self, argv, **kw):
        child = subprocess.Popen(argv, **kw)
        self.children.append(child)
        return child

    def reachd(self, *args, prefix=(), **kw):
        return self.spawn(list(prefix) + self.exec(REACHD, *args), **kw)

    def daemon(self, *extra, prefix=()):
        log = open(os.path.join(self.dir, "daemon.log"), "a")
        daemon = self.reachd("daemon", "--socket", self.sock, *extra, prefix=prefix, stderr=log)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                get(self.sock)
                return daemon
            except OSError:
                time.sleep(0.005)
        raise RuntimeError("daemon did not answer")

    def run(self, *args, user=None, timeout=20, default_socket=None):
        """Runs `reachd ARGS` in the host namespace, as `user` if given, with
        REACHD_SOCKET=default_socket if given (a default socket, so the client
        falls back in-process where `--socket` would be an error):
        (exit code or None if killed, seconds, stdout, stderr)."""
        as_user = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] if user else []
        environment = ["env", f"REACHD_SOCKET={default_socket}"] if default_socket else []
        start = time.monotonic()
        try:
            done = subprocess.run(self.exec(*as_user, *environment, REACHD, *args),
                                  capture_output=True, text=True, timeout=timeout)
            return done.returncode, time.monotonic() - start, done.stdout, done.stderr
        except subprocess.TimeoutExpired:
            return None, time.monotonic() - start, "", "(killed after %d s)" % timeout

    def close(self):
        for child in self.children:
            if child.poll() is None:
                try:
                    os.kill(child.pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass
                child.kill()
                child.wait()
        super().close()


def get(path, timeout=2):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    try:
        s.connect(path)
        s.sendall(b'{"op":"get"}\n')
        return json.loads(s.makefile().readline())
    finally:
        s.close()


def daemon_pid(net):
    """The reachd process itself (ip netns exec execs it, so the Popen's pid)."""
    return net.children[0].pid


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def percentiles(values):
    if not values:
        return "none"
    values = sorted(values)
    return f"p50 {statistics.median(values) * 1000:+.1f} ms, max {values[-1] * 1000:+.1f} ms"


# 1. Flood ------------------------------------------------------------------

def kernel_timestamps(lines, text):
    """Wall-clock times of `ip -ts monitor` lines containing `text`."""
    stamps = []
    for line in lines:
        if text in line and line.startswith("["):
            stamps.append(datetime.datetime.strptime(line[1:line.index("]")], "%Y-%m-%dT%H:%M:%S.%f").timestamp())
    return stamps


def flips_seen(net, flooder=None, flips=20, subscribers=10):
    """Flips the default route `flips` times while `subscribers` follow; returns
    (each subscriber's delay after the kernel's own notification of each flip,
    flips missed). The reference is `ip -ts monitor route` in the same run."""
    received = [[] for _ in range(subscribers)]
    sockets = []
    for i in range(subscribers):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(3)
        s.connect(net.sock)
        s.sendall(b'{"op":"subscribe"}\n')
        f = s.makefile()
        json.loads(f.readline())
        sockets.append(s)

        def follow(f=f, out=received[i]):
            try:
                for line in f:
                    out.append((time.time(), json.loads(line)["online"]))
            except (OSError, ValueError):
                pass
        threading.Thread(target=follow, daemon=True).start()
    monitor = subprocess.Popen(["ip", "-n", net.host, "-ts", "monitor", "route"], stdout=subprocess.PIPE, text=True)
    kernel = []
    threading.Thread(target=lambda: kernel.extend(monitor.stdout), daemon=True).start()
    ip = subprocess.Popen(["ip", "-n", net.host, "-batch", "-"], stdin=subprocess.PIPE, text=True)
    while not kernel:  # until the monitor is listening; a real change each time
        ip.stdin.write("route add 10.99.0.0/24 dev vh\nroute del 10.99.0.0/24 dev vh\n")
        ip.stdin.flush()
        time.sleep(0.05)
    stop = threading.Event()
    if flooder:
        threading.Thread(target=flooder, args=(net.sock, stop), daemon=True).start()
        time.sleep(0.5)
    expected = []
    for i in range(flips):
        online = i % 2 == 1
        expected.append(online)
        ip.stdin.write("route add default via 10.77.0.1\n" if online else "route del default\n")
        ip.stdin.flush()
        time.sleep(0.15)
    time.sleep(1.0)
    stop.set()
    ip.stdin.close()
    ip.wait()
    monitor.terminate()
    announced = kernel_timestamps(kernel, "default")
    latencies, missed, worst = [], 0, (0, None, 0)
    # A flip's line is the first of its state between the neighbouring flips'
    # notifications: a lost line must not be matched with the flip after next.
    # `ip monitor` stamps a notification when it reads it, so under load the
    # daemon may deliver first: the difference can be negative.
    starts = [float("-inf")] + announced[:-1]
    ends = announced[1:] + [float("inf")]
    for index, lines in enumerate(received):
        for flip, (at, online) in enumerate(zip(announced, expected)):
            seen = next((t for (t, o) in lines if starts[flip] < t < ends[flip] and o == online), None)
            if seen is None:
                missed += 1
                if os.environ.get("TORTURE_DEBUG"):
                    print(f"    missed: flip {flip} ({online}) at {at:.3f}, subscriber {index}: "
                          f"{[(round(t, 3), o) for (t, o) in lines if at - 0.5 < t < at + 0.5]}", file=sys.stderr)
            else:
                latencies.append(seen - at)
                worst = max(worst, (seen - at, flip, index))
    if os.environ.get("TORTURE_DEBUG"):
        print(f"    worst: flip {worst[1]} subscriber {worst[2]}: {worst[0] * 1000:.1f} ms; "
              f"{len(announced)} announced of {len(expected)}", file=sys.stderr)
    missed += subscribers * (len(expected) - len(announced))
    for s in sockets:
        s.close()
    return latencies, missed


# The flooders run as processes of their own, as an attacker's would: a
# thread here would compete for the GIL with the threads timestamping the
# subscribers' lines and skew the very figure being measured.
FLOODER = r"""
import socket, sys
path, reading = sys.argv[1], sys.argv[2] == "1"
s = socket.socket(socket.AF_UNIX)
s.connect(path)
s.setblocking(False)
chunk = b'{"op":"get"}\n' * 64
while True:
    try:
        s.send(chunk)
    except BlockingIOError:
        if not reading:
            socket.socket.settimeout(s, 0.05)
            try:
                s.send(chunk)
            except (socket.timeout, BlockingIOError):
                pass
            s.setblocking(False)
    except OSError:
        break
    if reading:
        try:
            while s.recv(1 << 20):
                pass
        except BlockingIOError:
            pass
        except OSError:
            break
"""


def flooder_process(reading):
    def run(path, stop):
        child = subprocess.Popen(["python3", "-c", FLOODER, path, "1" if reading else "0"])
        stop.wait()
        child.kill()
        child.wait()
    return run


never_reading_flooder = flooder_process(reading=False)
reading_flooder = flooder_process(reading=True)


def flood():
    flips, subscribers = (4, 2) if reachd_bench.TINY else (20, 10)
    rows = []
    for name, flooder in (("no flood (reference)", None), ("flood, never reads", never_reading_flooder),
                          ("flood, reads everything", reading_flooder)):
        net = Network()
        try:
            daemon = net.daemon()
            pid = daemon_pid(net)
            rss_idle, cpu_before, start = rss_mib(pid), reachd_bench.cpu_seconds(pid), time.monotonic()
            peak, sampling = [rss_idle], threading.Event()

            def sample():
                while not sampling.is_set():
                    peak[0] = max(peak[0], rss_mib(pid))
                    time.sleep(0.05)
            threading.Thread(target=sample, daemon=True).start()
            latencies, missed = flips_seen(net, flooder, flips, subscribers)
            cpu = (reachd_bench.cpu_seconds(pid) - cpu_before) / (time.monotonic() - start)
            sampling.set()
            late = get(net.sock, timeout=5) is not None
            rows.append(f"  {name:26} flips seen {len(latencies)}/{len(latencies) + missed}, "
                        f"after ip monitor: {percentiles(latencies)}; "
                        f"daemon CPU {cpu * 100:3.0f}%, RSS {rss_idle:.1f} MiB idle, {peak[0]:.1f} MiB peak; "
                        f"a new client answered after: {'yes' if late else 'no'}")
        except Exception as error:  # a broken daemon is a result, not a crash of the benchmark
            rows.append(f"  {name:26} failed: {error}")
        finally:
            net.close()
    return rows


# 2. Descriptors and users --------------------------------------------------

def hold(net, count, user=NOBODY, subscribe=False):
    holder = net.spawn(["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups",
                        SYSTEM_PYTHON, "-c", HOLDER, net.sock, str(count), "1" if subscribe else "0"],
                       stdout=subprocess.PIPE, text=True)
    return json.loads(holder.stdout.readline())


def status_line(result):
    code, elapsed, out, err = result
    source = "daemon" if '"source":"daemon"' in out else "in-process" if '"source":"embedded"' in out else "none"
    note = err.strip().splitlines()[-1][:110] if err.strip() else ""
    return f"exit {code}, {elapsed * 1000:.0f} ms, from {source}" + (f" ({note})" if note else "")


def descriptors():
    rows = []
    # Tiny: still past the daemon's 64 clients per user.
    many = 100 if reachd_bench.TINY else 1100
    for title, limit, count, subscribe in (("96-descriptor limit, nobody holds 200 idle", 96, 200, False),
                                           (f"default limit, nobody holds {many} idle", None, many, False),
                                           (f"default limit, nobody holds {many} subscribed", None, many, True)):
        net = Network()
        try:
            prefix = ["prlimit", f"--nofile={limit}:{limit}"] if limit else []
            net.daemon(prefix=prefix)
            held = hold(net, count, subscribe=subscribe)
            other = net.run("status", "--json", "--socket", net.sock, user=OTHER)
            root = net.run("status", "--json", "--socket", net.sock)
            rows.append(f"  {title}: {held['kept']} kept, {held['refused']} refused, {held['closed']} closed "
                        f"without a word, {held['failed']} failed to connect (listen queue full at that instant)")
            if held["message"]:
                rows.append(f"    refusal: {held['message']}")
            rows.append(f"    another user's status: {status_line(other)}")
            rows.append(f"    root's status:         {status_line(root)}")
        finally:
            net.close()
    return rows


# 3. A stopped daemon -------------------------------------------------------

def stopped():
    # Tiny: still past the 1 s a client gives the daemon before it goes in-process.
    wait, watch = (3, 2) if reachd_bench.TINY else (10, 3)
    rows = []
    for title, fill_queue in (("SIGSTOP", False), ("SIGSTOP and a full listen queue", True)):
        net = Network()
        try:
            net.daemon()
            pid = daemon_pid(net)
            os.kill(pid, signal.SIGSTOP)
            queued = []
            if fill_queue:
                while True:
                    s = socket.socket(socket.AF_UNIX)
                    s.setblocking(False)
                    try:
                        s.connect(net.sock)
                        queued.append(s)
                    except BlockingIOError:
                        break
            rows.append(f"  {title}" + (f" ({len(queued)} queued)" if fill_queue else "") + ":")
            rows.append(f"    status:      {status_line(net.run('status', '--json', default_socket=net.sock, timeout=15))}")
            code, elapsed, _, err = net.run("wait-online", "--timeout", str(wait), default_socket=net.sock, timeout=15)
            rows.append(f"    wait-online --timeout {wait} (host online): exit {code} after {elapsed:.2f} s")
            monitor = net.reachd("monitor", "--json", prefix=["env", f"REACHD_SOCKET={net.sock}"], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True)
            time.sleep(watch)
            monitor.kill()
            lines = monitor.stdout.read().splitlines()
            rows.append(f"    monitor, {watch} s: {len(lines)} lines" +
                        (f", first from {json.loads(lines[0])['source']}" if lines else ""))
            os.kill(pid, signal.SIGCONT)
        finally:
            net.close()
    return rows


# 4. A refusing daemon ------------------------------------------------------

def refused():
    seconds = 2 if reachd_bench.TINY else 6
    net = Network()
    try:
        path = os.path.join(net.dir, "refusing.sock")
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(path)
        listener.listen(64)
        accepts = [0]

        def serve():
            while True:
                try:
                    c, _ = listener.accept()
                except OSError:
                    return
                accepts[0] += 1
                c.sendall(b'{"type":"error","version":1,"code":"too_many_clients","message":"full"}\n')
                c.close()
        threading.Thread(target=serve, daemon=True).start()
        monitor = net.reachd("monitor", "--json", prefix=["env", f"REACHD_SOCKET={path}"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        t0 = time.monotonic()
        time.sleep(seconds)
        cpu, elapsed, connects = reachd_bench.cpu_seconds(monitor.pid), time.monotonic() - t0, accepts[0]
        monitor.kill()
        out, err = monitor.communicate()
        lines = out.splitlines()
        listener.close()
        return [f"  `reachd monitor` against a daemon that answers too_many_clients: "
                f"{connects} connects in {elapsed:.0f} s, CPU {cpu / elapsed * 100:.0f}%, "
                f"{len(err)} bytes on stderr in {seconds} s, "
                f"{len(lines)} statuses printed" + (f" (from {json.loads(lines[0])['source']})" if lines else "")]
    finally:
        net.close()


# 5. seq across a restart ---------------------------------------------------

def sequence():
    net = Network()
    try:
        daemon = net.daemon()
        reachd_bench.sh(f"ip -n {net.host} route del default && ip -n {net.host} route add default via 10.77.0.1")
        time.sleep(0.2)
        before = get(net.sock)["seq"]
        daemon.terminate()
        daemon.wait()
        net.children.clear()
        net.daemon()
        after = get(net.sock)["seq"]
        return [f"  seq before a restart {before}, after it {after}: "
                + ("monotonic" if after > before else "goes BACKWARDS")]
    finally:
        net.close()


def main():
    if os.geteuid() != 0:
        sys.exit("torture: needs root for network namespaces and setpriv")
    # Thousands of sockets here and in the helpers, which inherit the limit.
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(f"reachd under a hostile local user ({REACHD})\n")
    chosen, _ = reachd_bench.arguments()
    for title, scenario in (("1. one connection floods the daemon with gets", flood),
                            ("2. descriptors and users", descriptors),
                            ("3. a stopped daemon", stopped),
                            ("4. a refusing daemon", refused),
                            ("5. seq across a restart", sequence)):
        if chosen and scenario.__name__ not in chosen:
            continue
        print(title)
        for row in scenario():
            print(row, flush=True)
        print()


if __name__ == "__main__":
    main()
