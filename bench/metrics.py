#!/usr/bin/env python3
"""Metrics: what a Prometheus scrape costs the daemon, and what metrics cost
an idle one.

1. Scrape latency: SCRAPES sequential `GET /metrics` over loopback TCP, each
   on a new connection (the daemon serves one request per connection), from
   connect to the daemon closing; beside it, in the same run, the floor: the
   kernel alone doing a loopback connect, accept, a write of the same number
   of bytes and a close, all in this process.
2. CPU per scrape: the daemon's user and system time over those scrapes,
   divided by their number.
3. Idle with metrics on (the listener and a textfile) and no scrape: system
   calls over 10 s under strace -c -f.

The daemon watches WATCHED targets, so that the exposition has their series.
Needs root. Usage: python3 bench/metrics.py [--tiny] [SCRAPES] [WATCHED]
--tiny (make test): 20 scrapes, 2 watched targets, 1 s idle.
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import time

import reachd_bench


def scrape_inside(scrapes):
    """Runs in the namespace: each scrape's seconds, and the response's size."""
    request = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/plain\r\n\r\n"
    times, size = [], 0
    for _ in range(scrapes):
        start = time.perf_counter()
        s = socket.create_connection(("127.0.0.1", 10077))
        s.sendall(request)
        received = b""
        while chunk := s.recv(65536):
            received += chunk
        s.close()
        times.append(time.perf_counter() - start)
        size = len(received)
    return times, size


def floor(scrapes, size):
    """The kernel's part of a scrape: loopback connect, accept, `size` bytes, close."""
    listener = socket.create_server(("127.0.0.1", 0))
    address = listener.getsockname()
    payload = b"x" * size
    times = []
    for _ in range(scrapes):
        start = time.perf_counter()
        client = socket.create_connection(address)
        server, _ = listener.accept()
        server.sendall(payload)
        server.close()
        received = 0
        while chunk := client.recv(65536):
            received += len(chunk)
        client.close()
        times.append(time.perf_counter() - start)
    listener.close()
    return times


def summary(times):
    ordered = sorted(times)
    return (statistics.median(ordered) * 1e6, ordered[int(len(ordered) * 0.99) - 1] * 1e6)


def main():
    argv, tiny = reachd_bench.arguments()
    scrapes = int(argv[0]) if argv else (20 if tiny else 2000)
    watched = int(argv[1]) if len(argv) > 1 else (2 if tiny else 32)
    idle = 1 if tiny else 10
    if os.geteuid() != 0:
        sys.exit("bench: needs root for network namespaces")
    targets = [f"10.77.{1 + i // 250}.{1 + i % 250}:443" for i in range(watched)]
    net = reachd_bench.Network()
    try:
        textfile = os.path.join(net.dir, "reachd.prom")
        flags = ["--metrics-listen", "yes", "--metrics-textfile", textfile]
        for target in targets:
            flags += ["--watch", target]
        daemon, _ = reachd_bench.start_daemon(net, *flags)
        time.sleep(0.3)
        # Warm: the first scrape builds what later ones reuse.
        # This file's directory, wherever the bench was started from.
        inside = [sys.executable, "-c",
                  "import sys, json; sys.path.insert(0, sys.argv[2]); import metrics; "
                  "t, n = metrics.scrape_inside(int(sys.argv[1])); print(json.dumps([t, n]))"]
        here = os.path.dirname(os.path.abspath(__file__))
        subprocess.run(["ip", "netns", "exec", net.host] + inside + ["20", here], check=True, capture_output=True)
        cpu_before = reachd_bench.cpu_seconds(daemon.pid)
        result = subprocess.run(["ip", "netns", "exec", net.host] + inside + [str(scrapes), here],
                                check=True, capture_output=True, text=True)
        cpu_after = reachd_bench.cpu_seconds(daemon.pid)
        times, size = json.loads(result.stdout)
        floor_times = floor(scrapes, size)
        median, p99 = summary(times)
        floor_median, floor_p99 = summary(floor_times)
        print(f"metrics ({watched} watched targets, exposition {size} bytes), {scrapes} scrapes, each a new connection:")
        print(f"  scrape, connect to close:    median {median:7.1f} µs, p99 {p99:7.1f} µs")
        print(f"  floor (kernel's part alone): median {floor_median:7.1f} µs, p99 {floor_p99:7.1f} µs")
        print(f"  daemon CPU per scrape: {(cpu_after - cpu_before) / scrapes * 1e6:.1f} µs "
              f"({cpu_after - cpu_before:.2f} s over {scrapes}; clock ticks of {1e3 / os.sysconf('SC_CLK_TCK'):.0f} ms)")
        lines = reachd_bench.syscalls(daemon.pid, idle)
        print(f"  idle with metrics on, no scrape, {idle} s under strace -c -f (system calls made):")
        print("\n".join("    " + l for l in lines) if lines else "    none")
        daemon.terminate()
        daemon.wait()
    finally:
        net.close()


if __name__ == "__main__":
    main()
