#!/usr/bin/env python3
"""An IPv4 route's removal, told before it happens: the kernel sends
RTM_DELROUTE before fib_table_delete unlinks the route, so a listener that
looks the route up at once may be answered by the route going away.

Flips the default route through one `ip -batch` in a throw-away namespace.
Beside it, bench/removal.c (the kernel alone: on each removal it asks at
once, then again until the answer changes) counts the removals answered by
the removed route and how long that lasted; and `reachd monitor --json
--no-daemon` must say each removal (ipv4 no longer "online") within a
second, whatever the first lookup heard. Where there are two CPUs, `ip` and
the C listener are pinned apart, and a busy loop shares `ip`'s CPU, as on a
loaded host: the race needs the listener to run while the remover is
between its notification and its unlink. 20,000 flips with reachd before
its fix (REACHD=...): 5 of 10,000 removals left standing; after it, 0.

Needs root and a C compiler. Usage: python3 bench/removal.py [--tiny] [FLIPS]
(--tiny, make test: 20 flips).
"""
import json
import os
import select
import shutil
import statistics
import subprocess
import time

import reachd_bench
from latency import CC, compiled


def pinned(cpu, argv):
    return (["taskset", "-c", str(cpu)] if os.cpu_count() > 1 and shutil.which("taskset") else []) + argv


class Lines:
    """A process's output read from its descriptor, a line at a time, within
    a deadline: nothing hides in a buffered reader's pocket from select()."""

    def __init__(self, stream):
        self.fd, self.pending = stream.fileno(), b""

    def next(self, seconds):
        deadline = time.monotonic() + seconds
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return None
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line.decode()


def main():
    argv, tiny = reachd_bench.arguments()
    flips = int(argv[0]) if argv else (20 if tiny else 5000)
    if shutil.which(CC) is None:
        print(f"no C compiler ({CC}): the removal race is not measured")
        return
    listener = compiled("removal.c")
    net = reachd_bench.Network(resolver=False)
    processes = []
    try:
        kernel = subprocess.Popen(pinned(1, net.exec(listener, "1.1.1.1")), stdout=subprocess.PIPE, text=True)
        reachd = subprocess.Popen(net.exec(reachd_bench.REACHD, "monitor", "--json", "--no-daemon"),
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        batch = subprocess.Popen(pinned(0, ["ip", "-n", net.host, "-batch", "-"]), stdin=subprocess.PIPE, text=True)
        busy = subprocess.Popen(pinned(0, ["sh", "-c", "while :; do :; done"]))
        processes = [kernel, reachd, batch, busy]
        told_lines, said_lines = Lines(kernel.stdout), Lines(reachd.stdout)
        if told_lines.next(10) is None or said_lines.next(10) is None:
            raise SystemExit("the listener or reachd said nothing in 10 s")
        stale, windows, standing, removals, extra = 0, [], 0, 0, 0
        online = True
        for _ in range(flips):
            batch.stdin.write("route del default\n" if online else "route add default via 10.77.0.1\n")
            batch.stdin.flush()
            told = told_lines.next(5)
            if told is None:
                raise SystemExit("the C listener heard no route notification in 5 s")
            # reachd's lines until one says what the flip made of IPv4, for
            # a second at most; any before it are counted, never skipped.
            wanted = "local" if online else "online"
            lines = 0
            while (said := said_lines.next(1)) is not None:
                lines += 1
                if json.loads(said).get("ipv4") == wanted:
                    break
            extra += max(lines - 1, 0)
            if online:
                removals += 1
                words = told.split()
                if words[1] == "stale":
                    stale += 1
                    windows.append(float(words[2]))
                if said is None:
                    standing += 1
            online = not online
        print(f"IPv4 default route removed {removals} times ({os.cpu_count()} CPUs; the listener and ip pinned apart, "
              "a busy loop beside ip):")
        window = (f", for {statistics.median(windows):.1f} µs p50, {max(windows):.1f} µs at most"
                  if windows else "")
        print(f"  the kernel, asked at once: {stale} removals answered by the removed route{window}")
        print(f"  reachd monitor --json --no-daemon: {standing} removals left standing "
              f"(no line saying ipv4 local within 1 s); {extra} lines besides")
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
        net.close()


if __name__ == "__main__":
    main()
