#!/usr/bin/env python3
"""reachd benchmarks, in throw-away network namespaces.

1. Start-up: time from exec to the first answer on the socket, and resident
   memory after it, with an empty table and with N routes (default 100,000).
2. Flood: N route additions then N deletions that leave the answer alone;
   time until the daemon has read past them (a marker change is published),
   statuses published meanwhile (should be just the marker), and resyncs.
3. Idle: system calls made by an idle daemon over 10 seconds (strace -c -f).
4. In-process `reachd status` with N routes.
5. The connectivity check: the daemon's start-up and RSS without it, and with
   it on after a probe against a server in the gateway namespace.

Needs root. Usage: python3 bench/reachd_bench.py [--tiny] [ROUTES]
--tiny (make test): 100 routes and 1 s under strace.
"""
import ctypes
import itertools
import json
import shutil
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REACHD = os.path.abspath(os.environ.get("REACHD", ".build/dist/release/reachd"))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# --tiny (make test runs each bench once, at its smallest, so that none rots
# unseen): its figures mean nothing, its run to the end does. A tiny bench
# leaves /etc alone (see Network).
TINY = False


def arguments():
    """sys.argv[1:] less --tiny, and whether it was there (which sets TINY)."""
    global TINY
    TINY = "--tiny" in sys.argv[1:]
    return [a for a in sys.argv[1:] if a != "--tiny"], TINY


def built(variable, release, debug):
    """The binary `variable` names, else `release` (under the package); in a
    tiny run, `debug` where there is no `release`, as make test builds only
    debug. Either path may not exist: the caller says what it skips."""
    path = os.environ.get(variable)
    if path:
        return os.path.abspath(path)
    release = os.path.join(ROOT, release)
    if TINY and not os.access(release, os.X_OK):
        return os.path.join(ROOT, debug)
    return release


def sh(command):
    subprocess.run(command, shell=True, check=True)


_networks = itertools.count()


class Network:
    def __init__(self, resolver=True):
        """`resolver=False`: no /etc/netns file. Making and removing
        /etc/netns wakes every daemon and client that watches /etc for the
        resolver's files: a bench that make test runs beside the tests of
        idle system calls must leave /etc alone."""
        # Numbered: a bench may hold several at once.
        serial = next(_networks)
        self.host, self.gw = f"rdb-{os.getpid()}-{serial}-h", f"rdb-{os.getpid()}-{serial}-g"
        self.dir = tempfile.mkdtemp(prefix="reachd-bench-")
        self.sock = os.path.join(self.dir, "reachd.sock")
        self.daemons = []  # killed on close, if a failed run left them
        # A name server routed as the Internet is, whatever the machine's own:
        # `ip netns exec` mounts this file over /etc/resolv.conf, so the
        # daemon's dns verdict moves with the default route. In a tiny run
        # the files are the network's own (`etc`), mounted over /etc's by
        # `exec` in a mount namespace of the process's own: /etc/netns is
        # never made.
        self.netns_etc = f"/etc/netns/{self.host}" if resolver and not TINY else None
        self.etc = self.netns_etc or (os.path.join(self.dir, "etc") if resolver else None)
        try:
            self._set_up()
        except BaseException:
            # Callers close what they opened; one that failed to open cleans up here.
            self.close()
            raise

    def _set_up(self):
        if self.etc:
            os.makedirs(self.etc, exist_ok=True)
            with open(os.path.join(self.etc, "resolv.conf"), "w") as f:
                f.write("nameserver 192.0.2.53\n")
        # No duplicate address detection: its completion a second later would be a
        # real change in the middle of a measurement.
        sh(f"ip netns add {self.host} && ip netns add {self.gw} && ip -n {self.host} link set lo up && "
           f"ip netns exec {self.host} sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 && "
           f"ip link add vh netns {self.host} type veth peer name vg netns {self.gw} && "
           f"ip -n {self.gw} link set vg up && ip -n {self.gw} addr add 10.77.0.1/24 dev vg && "
           f"ip -n {self.host} link set vh up && ip -n {self.host} addr add 10.77.0.2/24 dev vh && "
           f"ip -n {self.host} route add default via 10.77.0.1")

    def exec(self, *argv):
        """The command that runs `argv` in the host namespace with the
        network's resolver files over /etc's (the process is argv's: each
        wrapper execs the next)."""
        prefix = ["ip", "netns", "exec", self.host]
        if self.etc and not self.netns_etc:
            prefix += ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                       'for f in "$0"/*; do mount --bind "$f" "/etc/${f##*/}" || exit; done; exec "$@"', self.etc]
        return prefix + list(argv)

    def batch(self, lines):
        path = os.path.join(self.dir, "batch")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        sh(f"ip -n {self.host} -batch {path}")

    def close(self):
        for daemon in self.daemons:
            if daemon.poll() is None:
                daemon.kill()
                daemon.wait()
        for ns in (self.host, self.gw):
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)
        if self.netns_etc:
            shutil.rmtree(self.netns_etc, ignore_errors=True)
            try:
                os.rmdir(os.path.dirname(self.netns_etc))  # /etc/netns, if no one else uses it
            except OSError:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)


def routes(n, verb):
    return [f"route {verb} 10.{100 + i // 65536}.{i // 256 % 256}.{i % 256}/32"
            + (" via 10.77.0.1" if verb == "add" else "") for i in range(n)]


def connect(path):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    return s


def connect_inside(net, path):
    """A connection to `path` from the host namespace, as the daemon answers
    reach and watch only to peers of its own network (the kernel makes the
    accepted socket in the namespace of the socket that connected)."""
    made = []

    def make():
        # setns moves the calling thread only: this one, which ends here.
        libc = ctypes.CDLL(None, use_errno=True)
        with open(f"/run/netns/{net.host}") as namespace:
            if libc.setns(namespace.fileno(), 0x40000000) != 0:  # CLONE_NEWNET
                made.append(OSError(ctypes.get_errno(), f"setns into {net.host}"))
                return
        made.append(socket.socket(socket.AF_UNIX))

    thread = threading.Thread(target=make)
    thread.start()
    thread.join()
    if isinstance(made[0], OSError):
        raise made[0]
    made[0].connect(path)
    return made[0]


def read_status(f):
    return json.loads(f.readline())


def start_daemon(net, *extra):
    start = time.monotonic()
    log = open(os.path.join(net.dir, "daemon.log"), "w")
    daemon = subprocess.Popen(net.exec(REACHD, "daemon", "--socket", net.sock, *extra), stderr=log)
    net.daemons.append(daemon)
    while True:
        try:
            s = connect(net.sock)
            s.sendall(b'{"op":"get"}\n')
            s.makefile().readline()
            s.close()
            break
        except (FileNotFoundError, ConnectionRefusedError):
            if daemon.poll() is not None:
                raise RuntimeError(f"the daemon exited ({daemon.returncode}) before it answered: see {log.name}")
            time.sleep(0.002)
    elapsed = time.monotonic() - start
    return daemon, elapsed


def cpu_seconds(pid):
    """User and system CPU time of `pid` so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def startup(n):
    """The daemon's start-up to its first answer and an in-process `reachd
    status`, each the median of seven (one in a tiny run), and the daemon's
    RSS, with `n` routes in the table. A median: the first start-up after a
    million routes went in measured 15 to 19 ms more than the ones after it
    (the whole process slower from exec on, the kernel still settling),
    where seven in a row measured no growth."""
    tries = 1 if TINY else 7
    net = Network()
    try:
        if n:
            net.batch(routes(n, "add"))
        elapsed, embedded, rss = [], [], 0
        for _ in range(tries):
            daemon, took = start_daemon(net)
            elapsed.append(took)
            rss = rss_kib(daemon.pid)
            daemon.terminate()
            daemon.wait()
            embedded_start = time.monotonic()
            # In-process: --socket names a daemon that must answer, and fails otherwise.
            subprocess.run(net.exec(REACHD, "status", "--json", "--no-daemon"), check=True, capture_output=True)
            embedded.append(time.monotonic() - embedded_start)
        return statistics.median(elapsed), rss, statistics.median(embedded)
    finally:
        net.close()


def flood(n):
    """N route additions, then N deletions: each a flood of N changes that leaves
    the answer alone. After each, a marker address is added; the daemon has
    settled when the status with the marker arrives."""
    net = Network()
    try:
        daemon, _ = start_daemon(net)
        s = connect(net.sock)
        s.sendall(b'{"op":"subscribe"}\n')
        f = s.makefile()
        seq = read_status(f)["seq"]
        rss_before = rss_kib(daemon.pid)
        results = []
        for step, verb in enumerate(("add", "del")):
            start = time.monotonic()
            net.batch(routes(n, verb))
            written = time.monotonic() - start
            marker = f"10.79.0.{step + 1}"
            sh(f"ip -n {net.host} addr add {marker}/32 dev vh")
            published = 0
            while True:
                status = read_status(f)
                published += 1
                if any(a["address"] == marker for i in status["interfaces"] for a in i["addresses"]):
                    break
            settled = time.monotonic() - start
            results.append({"verb": verb, "ip_batch_s": written, "settled_s": settled,
                            "published": published, "seq": (seq, status["seq"])})
            seq = status["seq"]
        rss_after = rss_kib(daemon.pid)
        daemon.terminate()
        daemon.wait()
        log = open(os.path.join(net.dir, "daemon.log")).read()
        return results, log.count("overran"), rss_before, rss_after
    finally:
        net.close()


def idle_syscalls(seconds=10):
    net = Network()
    try:
        daemon, _ = start_daemon(net)
        time.sleep(0.2)
        lines = syscalls(daemon.pid, seconds)
        daemon.terminate()
        daemon.wait()
        return lines
    finally:
        net.close()


def syscalls(pid, seconds=10):
    """The rows of `strace -c -f` for `pid` over `seconds`: empty when it made none."""
    trace = subprocess.run(["timeout", "-s", "INT", str(seconds), "strace", "-c", "-f", "-p", str(pid)],
                           capture_output=True, text=True)
    # No rows is "none" only if strace was there to see it.
    if f"Process {pid} attached" not in trace.stderr:
        sys.exit(f"bench: strace could not watch {pid}: {trace.stderr.strip()}")
    return [l for l in trace.stderr.splitlines() if l.strip() and not l.startswith(("strace:", "%", "-"))]


def stop(processes, net):
    """Kills what a run started, newest first, and removes its network."""
    for process in reversed(processes):
        process.kill()
        process.wait()
    net.close()


def at_once(run, rounds, *arguments):
    """`rounds` runs of `run(*arguments, results)` on threads at once, each
    in namespaces of its own; what they appended to `results`."""
    results = []
    threads = [threading.Thread(target=run, args=(*arguments, results)) for _ in range(rounds)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def percentile(values, fraction):
    """The value at `fraction` of the sorted `values` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def watch_gateway_failed(net, clock=time.monotonic):
    """`ip monitor neigh` in the host namespace; returns the process and a
    list that gets `clock()` when the gateway's entry first turns FAILED."""
    kernel = subprocess.Popen(["ip", "-n", net.host, "monitor", "neigh"], stdout=subprocess.PIPE, text=True)
    failed = []

    def watch():
        for line in kernel.stdout:
            if line.startswith("10.77.0.1 ") and line.split()[-1] == "FAILED" and not failed:
                failed.append(clock())

    threading.Thread(target=watch, daemon=True).start()
    return kernel, failed


CHECK_SERVER = """
import http.server
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.HTTPServer(("0.0.0.0", 8080), Handler).serve_forever()
"""


def connectivity_check_cost():
    """(label, first answer in s, RSS in KiB after a check, threads) without and with the check."""
    rows = []
    for label, extra in (("without the check", []), ("with the check on", ["--check-url", "http://10.77.0.1:8080/generate_204"])):
        net = Network()
        server = subprocess.Popen(["ip", "netns", "exec", net.gw, "python3", "-c", CHECK_SERVER])
        try:
            time.sleep(0.3)
            start = time.monotonic()
            log = open(os.path.join(net.dir, "daemon.log"), "w")
            daemon = subprocess.Popen(net.exec(REACHD, "daemon", "--socket", net.sock, *extra), stderr=log)
            while True:
                try:
                    s = connect(net.sock)
                    break
                except (FileNotFoundError, ConnectionRefusedError):
                    time.sleep(0.002)
            elapsed = time.monotonic() - start
            s.sendall(b'{"op":"check"}\n')
            connectivity = read_status(s.makefile())["connectivity"]
            s.close()
            time.sleep(0.3)
            threads = len(os.listdir(f"/proc/{daemon.pid}/task"))
            rows.append((label, elapsed, rss_kib(daemon.pid), threads, connectivity))
            daemon.terminate()
            daemon.wait()
        finally:
            server.kill()
            server.wait()
            net.close()
    return rows


def main():
    argv, tiny = arguments()
    routes_count = int(argv[0]) if argv else (100 if tiny else 100_000)
    idle_seconds = 1 if tiny else 10
    if os.geteuid() != 0:
        sys.exit("bench: needs root for network namespaces")
    if not os.access(REACHD, os.X_OK):
        sys.exit(f"bench: no binary at {REACHD}; run `swift build -c release` or `make bench`")
    print(f"reachd benchmarks ({REACHD}), kernel {os.uname().release}, {os.cpu_count()} cores\n")
    for n in (0, routes_count):
        elapsed, rss, embedded = startup(n)
        print(f"start-up with {n:>7} routes: first answer after {elapsed * 1000:7.1f} ms, "
              f"RSS {rss / 1024:5.1f} MiB; in-process `reachd status` {embedded * 1000:6.1f} ms" + ("" if TINY else " (medians of 7)"))
    results, resyncs, rss_before, rss_after = flood(routes_count)
    print()
    for r in results:
        print(f"flood of {routes_count} route {'additions' if r['verb'] == 'add' else 'deletions'} (answer unchanged): "
              f"ip -batch took {r['ip_batch_s']:.2f} s, daemon settled {r['settled_s'] - r['ip_batch_s']:.3f} s "
              f"after it; statuses published: {r['published']} (the marker only: seq {r['seq'][0]} -> {r['seq'][1]})")
    print(f"  overrun resyncs: {resyncs}; daemon RSS {rss_before / 1024:.1f} -> {rss_after / 1024:.1f} MiB")
    print("\nconnectivity check (a plain-HTTP probe per online family, on a thread of its own):")
    for label, elapsed, rss, threads, connectivity in connectivity_check_cost():
        print(f"  {label:18} first answer after {elapsed * 1000:5.1f} ms, RSS {rss / 1024:5.1f} MiB "
              f"after a check (connectivity {connectivity}), {threads} thread(s)")
    print(f"\nidle daemon, {idle_seconds} s under strace -c -f (system calls made):")
    lines = idle_syscalls(idle_seconds)
    print("\n".join("  " + l for l in lines) if lines else "  none")


if __name__ == "__main__":
    main()
