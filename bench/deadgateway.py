#!/usr/bin/env python3
"""A dead gateway to the daemon's verdict: the gateway's address is removed
while its link keeps carrier and routes, an app sends a datagram through it
every 200 ms, and a subscriber waits for `connectivity` to leave `full`.
The daemon hears it from the kernel's neighbour table (the entry turning
FAILED), so each run also times that notification with `ip monitor neigh`
in the same namespace: the kernel's part, then the daemon's on top.

Two cases, ROUNDS runs each, all at once in namespaces of their own:
- the gateway's entry stale when it dies (idle 15 to 45 s after its last
  confirmation): the kernel's 5 s delay and 3 s of probes;
- fresh (the check's probe confirmed it just before): the kernel believes
  it for up to its reachable time (15 to 45 s, random) first.

Needs root. Usage: python3 bench/deadgateway.py [--tiny] [ROUNDS]
--tiny (make test): 1 run per case, under the host namespace's neighbour
timers shortened (SHORT_TIMERS: reachable 1 to 3 s, 1 s delay, probes
300 ms apart), where the kernel's own would take up to 53 s.
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import time

import reachd_bench

APP = """
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
while True:
    try: s.sendto(b"x", ("10.77.0.1", 9))
    except OSError: pass
    time.sleep(0.2)
"""


SHORT_TIMERS = ("net.ipv4.neigh.vh.base_reachable_time_ms=2000 net.ipv4.neigh.vh.delay_first_probe_time=1 "
                "net.ipv4.neigh.vh.retrans_time_ms=300")


def run(stale, results):
    net = reachd_bench.Network()
    processes = []
    try:
        if reachd_bench.TINY:
            reachd_bench.sh(f"ip netns exec {net.host} sysctl -qw {SHORT_TIMERS}")
        processes.append(subprocess.Popen(["ip", "netns", "exec", net.gw, "python3", "-c", reachd_bench.CHECK_SERVER]))
        time.sleep(0.3)
        daemon, _ = reachd_bench.start_daemon(net, "--check-url", "http://10.77.0.1:8080/generate_204")
        processes.append(daemon)
        subscriber = reachd_bench.connect(net.sock)
        subscriber.sendall(b'{"op":"subscribe"}\n')
        lines = subscriber.makefile()
        while json.loads(lines.readline()).get("connectivity") != "full":
            pass
        kernel, failed = reachd_bench.watch_gateway_failed(net)
        processes.append(kernel)
        if stale:
            reachd_bench.sh(f"ip -n {net.host} neigh change 10.77.0.1 dev vh nud stale")
        reachd_bench.sh(f"ip -n {net.gw} addr del 10.77.0.1/24 dev vg")
        died = time.monotonic()
        processes.append(subprocess.Popen(["ip", "netns", "exec", net.host, "python3", "-c", APP]))
        subscriber.settimeout(90)
        while json.loads(lines.readline()).get("connectivity") == "full":
            pass
        verdict = time.monotonic()
        time.sleep(0.1)
        results.append((failed[0] - died if failed else None, verdict - died))
    finally:
        reachd_bench.stop(processes, net)


def main():
    argv, tiny = reachd_bench.arguments()
    rounds = int(argv[0]) if argv else (1 if tiny else 10)
    if os.geteuid() != 0:
        sys.exit("bench: needs root for network namespaces")
    print(f"dead gateway to the daemon's verdict, {rounds} runs per case, all at once, each against the kernel's "
          "FAILED (`ip monitor neigh`) in the same run" + (", the neighbour timers shortened:" if tiny else ":"))
    for label, stale in (("entry stale when it died", True), ("entry fresh when it died", False)):
        results = reachd_bench.at_once(run, rounds, stale)
        verdicts = [v for _, v in results]
        kernel = [k for k, _ in results if k is not None]
        ours = [v - k for k, v in results if k is not None]
        if not verdicts:
            print(f"  {label}: no run finished")
            continue
        print(f"  {label}: verdict p50 {statistics.median(verdicts):5.2f} s, p95 {reachd_bench.percentile(verdicts, 0.95):5.2f} s "
              f"after the gateway died; the kernel's FAILED p50 {statistics.median(kernel) if kernel else float('nan'):5.2f} s; "
              f"the daemon's part p50 {statistics.median(ours) * 1000 if ours else float('nan'):6.1f} ms, "
              f"worst {max(ours) * 1000 if ours else float('nan'):6.1f} ms ({len(results)}/{rounds} runs)")


if __name__ == "__main__":
    main()
