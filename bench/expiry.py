#!/usr/bin/env python3
"""Route expiry to subscriber: an IPv6 default route refreshed to `expires 2`
(as by a router advertisement's, whose router then went silent) stops being used by
the kernel's lookup at its expiry, and the kernel says nothing until its
garbage collection, up to 30 s later. Measured in one process inside the
namespace, on one clock: when the kernel's lookup for the IPv6 probe address
first fails (polled every millisecond around the expiry), and when a
subscriber of the daemon, and `reachd monitor --json --no-daemon`, say IPv6
is no longer online. Each is reported as its difference from the lookup's
failure, never as an absolute time.

Needs root. Usage: python3 bench/expiry.py [--tiny] [ROUNDS]
--tiny (make test): 1 round.
"""
import json
import os
import select
import selectors
import socket
import statistics
import struct
import subprocess
import sys
import time

import reachd_bench

PROBE = "2606:4700:4700::1111"


def lookup_fails(sock):
    """One RTM_GETROUTE for PROBE: whether the kernel refused it."""
    packed = socket.inet_pton(socket.AF_INET6, PROBE)
    rtmsg = struct.pack("BBBBBBBBI", socket.AF_INET6, 128, 0, 0, 0, 0, 0, 0, 0)
    body = rtmsg + struct.pack("HH", 4 + len(packed), 1) + packed
    sock.send(struct.pack("IHHII", 16 + len(body), 26, 1, 1, 0) + body)
    reply = sock.recv(65536)
    kind = struct.unpack_from("H", reply, 4)[0]
    return kind == 2 and struct.unpack_from("i", reply, 16)[0] != 0  # NLMSG_ERROR with an errno


class Lines:
    """The lines from one descriptor, read unbuffered: a select on it never
    misses a line some buffer already took."""

    def __init__(self, fd):
        self.fd = fd
        self.pending = b""

    def take(self):
        """The complete lines read so far."""
        *lines, self.pending = self.pending.split(b"\n")
        return [json.loads(line) for line in lines]

    def fill(self, what="a line", timeout=30):
        """Reads what came; fails naming `what` after `timeout` seconds of silence."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            raise TimeoutError(f"no {what} within {timeout} s")
        self.pending += os.read(self.fd, 65536)


def round_inside(socket_path, reachd):
    """Runs in the namespace: one expiry, and when each heard of it."""
    # First a lifetime no start-up outlasts: a loaded make test once took
    # over 2 s to start the monitor, which then never saw the route (this
    # waited for its `online` until the test's timeout). The 2 s come below.
    route = ["ip", "-6", "route", "replace", "default", "via", "fd77::1", "dev", "vh", "expires"]
    subprocess.run(route + ["600"], check=True)
    subscriber = socket.socket(socket.AF_UNIX)
    subscriber.connect(socket_path)
    subscriber.sendall(b'{"op":"subscribe","detail":"summary"}\n')
    monitor = subprocess.Popen([reachd, "monitor", "--json", "--summary", "--no-daemon"], stdout=subprocess.PIPE)
    sources = {"daemon subscriber": Lines(subscriber.fileno()), "monitor --no-daemon": Lines(monitor.stdout.fileno())}
    # Both must first see IPv6 online.
    for name, lines in sources.items():
        while not any(status["ipv6"] == "online" for status in lines.take()):
            lines.fill(f"IPv6 online from the {name}")
    # Refreshed to 2 s, as a router's last advertisement would: both must
    # take the new lifetime from the kernel's notification.
    subprocess.run(route + ["2"], check=True)
    added = time.monotonic()
    netlink = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    netlink.bind((0, 0))
    while time.monotonic() < added + 1.8:
        time.sleep(0.01)
    while not lookup_fails(netlink):
        time.sleep(0.001)
    failed = time.monotonic()
    # Both at once: each is timed when its own line arrives, not after the other's.
    heard = {}
    waiting = selectors.DefaultSelector()
    for name, lines in sources.items():
        waiting.register(lines.fd, selectors.EVENT_READ, name)
    while len(heard) < len(sources):
        events = waiting.select(timeout=30)
        if not events:
            raise TimeoutError(f"no IPv6 offline within 30 s from {sorted(set(sources) - set(heard))}")
        for key, _ in events:
            lines = sources[key.data]
            lines.fill()
            now = time.monotonic()
            if any(status["ipv6"] != "online" for status in lines.take()):
                heard[key.data] = now
                waiting.unregister(key.fd)
    monitor.terminate()
    subprocess.run(["ip", "-6", "route", "flush", "default"], check=False)
    return {name: (when - failed) * 1000 for name, when in heard.items()} | {"expiry_after_add_s": failed - added}


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "inside":
        print(json.dumps(round_inside(sys.argv[2], sys.argv[3])))
        return
    argv, tiny = reachd_bench.arguments()
    rounds = int(argv[0]) if argv else (1 if tiny else 5)
    print(f"Route expiry to subscriber ({rounds} rounds): an IPv6 default route refreshed to expires 2,"
          " against the kernel's lookup starting to fail")
    net = reachd_bench.Network()
    try:
        reachd_bench.sh(f"ip -n {net.host} -6 addr add fd77::2/64 dev vh nodad && "
                        f"ip -n {net.gw} -6 addr add fd77::1/64 dev vg nodad")
        daemon, _ = reachd_bench.start_daemon(net, "--no-check")
        results = []
        for _ in range(rounds):
            run = subprocess.run(net.exec(sys.executable, os.path.abspath(__file__), "inside", net.sock, reachd_bench.REACHD),
                                 capture_output=True, text=True)
            if run.returncode != 0:
                said = run.stderr.strip().splitlines()
                raise RuntimeError(f"a round failed ({run.returncode}): {said[-1] if said else 'nothing on stderr'}")
            results.append(json.loads(run.stdout))
        for name in ("daemon subscriber", "monitor --no-daemon"):
            values = sorted(r[name] for r in results)
            print(f"  {name:22} after the lookup failed: median {statistics.median(values):6.1f} ms,"
                  f" max {values[-1]:6.1f} ms")
        print("  (reachd asks 20 ms past the expiry the kernel reports: it rounds lifetimes down to 10 ms ticks,"
              " and reports less than one as none; the kernel's own notification comes at its garbage"
              " collection, up to 30 s later)")
        daemon.terminate()
        daemon.wait()
    finally:
        net.close()


if __name__ == "__main__":
    main()
