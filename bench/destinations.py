#!/usr/bin/env python3
"""Watched destinations (issue 17), in throw-away network namespaces.

1. Flood: 1,024 destinations watched through the daemon while 100,000 routes
   are added to an unrelated table and deleted again (200,000 changes).
   Destination lines published meanwhile (should be 0), the longest
   re-evaluation of all watches (the daemon's debug log), and the time
   until a marker change reaches its watch.
2. Latency: a watched destination's answer after a default-route flip,
   against `ip monitor route` in the same run, through the daemon and
   in-process (`reachd reach --watch`).
3. Idle: system calls of a daemon holding 1,024 watches over 10 s (strace -c -f),
   and wake-ups of a waiting `reachd reach --watch`.

Needs root. Usage: python3 bench/destinations.py [--tiny] [ROUTES]
--tiny (make test): 8 watches, 100 routes, 2 flips, 1 s idle.
"""
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

import latency
import reachd_bench
from reachd_bench import REACHD

WATCHES = 1024


def limits():
    return ["--max-watches-per-connection", str(WATCHES), "--max-watches-per-user", str(WATCHES),
            "--max-watches", str(WATCHES)]


def target(i):
    return f"10.{200 + i // 65536}.{i // 256 % 256}.{i % 256}:443"


def watch_all(net):
    """One connection watching WATCHES literal destinations (via the default
    route), with every first answer read; from the host namespace, as
    the daemon watches only for its own network's peers."""
    s = reachd_bench.connect_inside(net, net.sock)
    requests = "".join(json.dumps({"op": "watch", "id": str(i), "target": target(i)}) + "\n" for i in range(WATCHES))
    # Sent beside the reading: the daemon reads no more requests while its
    # answers wait to be read, so writing them all first would deadlock.
    sender = threading.Thread(target=s.sendall, args=(requests.encode(),))
    sender.start()
    f = s.makefile()
    for _ in range(WATCHES):
        answer = json.loads(f.readline())
        assert answer.get("state") == "reachable", answer
    sender.join()
    return s, f


def flood(n):
    net = reachd_bench.Network()
    try:
        daemon, _ = reachd_bench.start_daemon(net, "--no-check", "--log-level", "debug", *limits())
        s, f = watch_all(net)
        start = time.monotonic()
        net.batch([f"route add 172.{16 + i // 65536}.{i // 256 % 256}.{i % 256}/32 via 10.77.0.1 table 300"
                   for i in range(n)])
        net.batch([f"route del 172.{16 + i // 65536}.{i // 256 % 256}.{i % 256}/32 table 300" for i in range(n)])
        written = time.monotonic() - start
        # The marker: watch 0's prefix blackholed. The next line must be its.
        subprocess.run(["ip", "-n", net.host, "route", "add", "blackhole", target(0).split(":")[0]], check=True)
        published = 0
        while True:
            line = json.loads(f.readline())
            published += 1
            if line.get("id") == "0" and line.get("reason") == "blackhole_route":
                break
        settled = time.monotonic() - start
        rss = reachd_bench.rss_kib(daemon.pid)
        daemon.terminate()
        daemon.wait()
        log = open(os.path.join(net.dir, "daemon.log")).read()
        times = [int(t) for t in re.findall(r"destinations\.evaluation_us=(\d+)", log)]
        return {
            "changes": 2 * n, "ip_batch_s": written, "settled_s": settled,
            "lines_before_marker": published - 1, "evaluations": len(times),
            "longest_ms": max(times) / 1000 if times else None,
            "median_ms": sorted(times)[len(times) // 2] / 1000 if times else None,
            "overruns": log.count("overran"), "rss_kib": rss,
        }
    finally:
        net.close()


def idle(seconds=10):
    net = reachd_bench.Network()
    try:
        daemon, _ = reachd_bench.start_daemon(net, "--no-check", *limits())
        s, f = watch_all(net)
        watcher = subprocess.Popen(net.exec(REACHD, "reach", "--watch", "--socket", net.sock, "192.0.2.80"),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        inprocess = subprocess.Popen(net.exec(REACHD, "reach", "--watch", "--no-daemon", "192.0.2.80", "api.example.invalid"),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)
        trace = subprocess.run(["timeout", "-s", "INT", str(seconds), "strace", "-c", "-f", "-p", str(daemon.pid)],
                               capture_output=True, text=True)
        calls = [l for l in trace.stderr.splitlines() if l.strip() and not l.startswith(("strace:", "%", "-"))]
        rows = [f"  daemon with {WATCHES} watches, {seconds} s under strace -c -f: "
                + ("; ".join(l.split()[-1] + " " + l.split()[3] for l in calls if "total" not in l) or "no system calls")]
        watchers = (("reachd reach --watch, through the daemon", watcher),
                    ("reachd reach --watch, in-process (a literal and a name)", inprocess))
        for (name, process), count in zip(watchers, latency.wakeups([p.pid for _, p in watchers], seconds)):
            rows.append(f"  {name:56} {count:4} wake-ups in {seconds} s")
            process.kill()
            process.wait()
        daemon.terminate()
        daemon.wait()
        return rows
    finally:
        net.close()


def main():
    global WATCHES
    argv, tiny = reachd_bench.arguments()
    n = int(argv[0]) if argv else (100 if tiny else 100_000)
    if tiny:
        WATCHES = 8
    flips, seconds = (2, 1) if tiny else (40, 10)
    print(f"{WATCHES} watched destinations, {n:,} routes added to table 300 and deleted:")
    print("  " + json.dumps(flood(n)))
    print("\nwatched destination after a default-route flip, against ip monitor route (same run):")
    for row in latency.measure(flips, [
        ("reachd reach --watch, through the daemon",
         [REACHD, "reach", "--watch", "--json", "--socket", latency.SOCKET, "192.0.2.80"]),
        ("reachd reach --watch, in-process", [REACHD, "reach", "--watch", "--json", "--no-daemon", "192.0.2.80"]),
    ]):
        print(row)
    print("\nidle:")
    for row in idle(seconds):
        print(row)


if __name__ == "__main__":
    main()
