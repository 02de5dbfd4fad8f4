#!/usr/bin/env python3
"""A container host: 100 veth pairs created, brought up and deleted (what
starting and stopping 100 containers does to the host's links), on a host
whose answer never changes, while 1,000 summary subscribers and one full
subscriber follow the daemon.

Reports the lines and bytes each kind of subscriber received for the churn
(summary: 0 is the goal), the full subscriber's lines against the kernel's
own link notifications in the same run (`ip monitor link`: the bound), and
the daemon's CPU time for the churn. A default-route flip after the churn
marks its end: the daemon reads in order, so once the full subscriber has
the flip, the churn is behind it, and each summary subscriber must have
exactly that one line.

Needs root. Usage: python3 bench/containers.py [--tiny] [PAIRS] [SUMMARY_SUBSCRIBERS]
--tiny (make test): 3 pairs, 10 summary subscribers.
"""
import resource
import select
import socket
import subprocess
import sys
import time

import reachd_bench



def subscribe(path, detail):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(b'{"op":"subscribe","detail":"summary"}\n' if detail == "summary" else b'{"op":"subscribe"}\n')
    return s


class Reader:
    """Counts the lines and bytes a socket receives after its first line."""

    def __init__(self, sock):
        self.sock, self.buffer, self.lines, self.bytes, self.first = sock, b"", [], 0, None
        sock.setblocking(False)

    def drain(self):
        while True:
            try:
                data = self.sock.recv(1 << 20)
            except BlockingIOError:
                return
            if not data:
                return
            self.buffer += data
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                if self.first is None:
                    self.first = line
                else:
                    self.lines.append(line)
                    self.bytes += len(line) + 1


def churn(pairs=100, summaries=1000):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    net = reachd_bench.Network()
    try:
        daemon, _ = reachd_bench.start_daemon(net, "--no-check")
        full = Reader(subscribe(net.sock, "full"))
        readers = [Reader(subscribe(net.sock, "summary")) for _ in range(summaries)]
        deadline = time.monotonic() + 10
        while any(r.first is None for r in readers + [full]) and time.monotonic() < deadline:
            for r in readers + [full]:
                r.drain()
            time.sleep(0.01)
        kernel = subprocess.Popen(["ip", "-n", net.host, "monitor", "link"], stdout=subprocess.PIPE)
        time.sleep(0.2)  # ip monitor is listening
        before = reachd_bench.cpu_seconds(daemon.pid)
        net.batch([f"link add ct{i} type veth peer name ce{i}" for i in range(pairs)]
                  + [f"link set ct{i} up" for i in range(pairs)] + [f"link set ce{i} up" for i in range(pairs)]
                  + [f"link del ct{i}" for i in range(pairs)])
        net.batch(["route del default"])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            full.drain()
            if any(b'"online":false' in line for line in full.lines):
                break
            select.select([full.sock], [], [], 0.05)
        after = reachd_bench.cpu_seconds(daemon.pid)
        time.sleep(0.3)  # the summary lines, if any, are on their way
        for r in readers:
            r.drain()
        kernel.terminate()
        notifications = kernel.communicate()[0].count(b"\n")
        daemon.terminate()
        daemon.wait()
    finally:
        net.close()
    churn_full = [line for line in full.lines if b'"online":false' not in line]
    per_summary = sorted(len(r.lines) - 1 for r in readers)  # less the flip
    got_flip = sum(1 for r in readers if r.lines and b'"online":false' in r.lines[-1])
    return [
        f"  {pairs} veth pairs created, brought up and deleted; {notifications} link notifications from the kernel (ip monitor link)",
        f"  full subscriber:       {len(churn_full)} lines, {sum(len(l) + 1 for l in churn_full) / 1024:.0f} KiB for the churn "
        f"({'within' if len(churn_full) <= notifications else 'MORE than'} the kernel's notifications)",
        f"  {summaries} summary subscribers: {sum(per_summary)} lines for the churn in all "
        f"(most for one: {per_summary[-1] if per_summary else 0}); {got_flip} of {summaries} got the route flip after it",
        f"  daemon CPU time for the churn and the flip: {(after - before) * 1000:.0f} ms",
    ]


def main():
    argv, tiny = reachd_bench.arguments()
    pairs = int(argv[0]) if argv else (3 if tiny else 100)
    summaries = int(argv[1]) if len(argv) > 1 else (10 if tiny else 1000)
    print("a container host (summary subscriptions):")
    print("\n".join(churn(pairs, summaries)))


if __name__ == "__main__":
    main()
