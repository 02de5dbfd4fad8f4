#!/usr/bin/env python3
"""The host's own connections as evidence (issue 43), three measures:

1. A path that dies under traffic: the gateway's address goes, with carrier
   and routes intact, while an app connects to three servers beyond it (one
   connection every 200 ms, each given 1 s). From the app's first failed
   connection to the daemon's verdict (a subscriber sees `connectivity`
   leave `full`), p50 and p95 over ROUNDS runs at once, and beside it, in
   the same runs, when the kernel's neighbour entry for the gateway turned
   FAILED (`ip monitor neigh`): the neighbour path's time for an entry the
   app's traffic had kept fresh.
2. Cost: the daemon's CPU per 10,000 closed connections (answered, through
   the gateway, closed by the app with a reset so no port waits), with the
   kernel's socket filter and without it (`--passive-unfiltered`), against
   the same flood with the passive watch off (`passive = no`): the floor.
3. Loss: 2% of packets dropped both ways at the gateway (nftables'
   `numgen`) while an app makes 5 requests a second for SECONDS (600):
   suspicions raised (`reachd_stalls_total`), want 0, beside the failed
   connections counted (`reachd_connections_failed_total`).

Needs root. Usage: python3 bench/passive.py [--tiny] [ROUNDS [CONNECTIONS [SECONDS]]]
--tiny (make test): one run, 1,000 connections, 3 s of loss, and the
neighbour path not waited for.
"""
import json
import os
import statistics
import subprocess
import sys
import threading
import time

import reachd_bench

SERVERS = ["192.0.2.11", "192.0.2.12", "192.0.2.13"]
PORT = 4443
TRAFFIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "reachdTests", "Harness", "tcp-traffic.py")

# Connects to HOST:PORT N times as fast as it can, each closed with a reset
# (SO_LINGER 0) once answered, so that no port waits in TIME_WAIT.
FLOOD = """
import socket, struct, sys
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
linger = struct.pack("ii", 1, 0)
for _ in range(n):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
    s.connect((host, port))
    s.recv(3)
    s.close()
"""


def servers(net):
    for address in SERVERS:
        reachd_bench.sh(f"ip -n {net.gw} addr add {address}/32 dev lo")
    server = subprocess.Popen(["ip", "netns", "exec", net.gw, "python3", TRAFFIC, "serve", str(PORT)],
                              stdout=subprocess.PIPE, text=True)
    server.stdout.readline()
    return server


def subscribe(net):
    subscriber = reachd_bench.connect(net.sock)
    subscriber.sendall(b'{"op":"subscribe","detail":"summary"}\n')
    return subscriber, subscriber.makefile()


def dying_path(waits_for_kernel, results):
    net = reachd_bench.Network(resolver=False)
    processes = []
    try:
        processes.append(servers(net))
        processes.append(subprocess.Popen(["ip", "netns", "exec", net.gw, "python3", "-c", reachd_bench.CHECK_SERVER]))
        time.sleep(0.3)
        # The check's default timeout (5 s): the probe's silence is most of the verdict's time.
        daemon, _ = reachd_bench.start_daemon(net, "--check-url", "http://10.77.0.1:8080/generate_204")
        processes.append(daemon)
        subscriber, lines = subscribe(net)
        while json.loads(lines.readline()).get("connectivity") != "full":
            pass
        app = subprocess.Popen(["ip", "netns", "exec", net.host, "python3", TRAFFIC, "connect", "0.2", "1", "600"]
                               + [f"{s}:{PORT}" for s in SERVERS], stdout=subprocess.PIPE, text=True)
        processes.append(app)
        outcomes = []
        threading.Thread(target=lambda: [outcomes.append(line.split()) for line in app.stdout], daemon=True).start()
        kernel, failed = reachd_bench.watch_gateway_failed(net, clock=time.time)
        processes.append(kernel)
        time.sleep(6)  # past the 5 s that keep a family's probes apart, as a path dies long after its last probe
        reachd_bench.sh(f"ip -n {net.gw} addr del 10.77.0.1/24 dev vg")
        died = time.time()
        subscriber.settimeout(60)
        while json.loads(lines.readline()).get("connectivity") == "full":
            pass
        verdict = time.time()
        first = min((float(at) for at, outcome in list(outcomes) if outcome == "fail" and float(at) > died), default=None)
        if waits_for_kernel:
            deadline = time.time() + 60
            while not failed and time.time() < deadline:
                time.sleep(0.2)
        if first is not None:
            results.append((verdict - first, failed[0] - died if failed else None))
    finally:
        reachd_bench.stop(processes, net)


def cpu_nanoseconds(pid):
    """The CPU time of every thread of `pid` so far, to the nanosecond (schedstat; /proc's stat counts ticks)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/schedstat") as f:
            total += int(f.read().split()[0])
    return total


def flood_cost(connections, *daemon_arguments, config=None):
    """The daemon's CPU seconds over a flood of `connections` answered connections, and the flood's seconds."""
    net = reachd_bench.Network(resolver=False)
    processes = []
    try:
        processes.append(servers(net))
        extra = list(daemon_arguments)
        if config:
            path = os.path.join(net.dir, "reachd.conf")
            with open(path, "w") as f:
                f.write(config)
            extra += ["--config", path]
        daemon, _ = reachd_bench.start_daemon(net, *extra)
        processes.append(daemon)
        time.sleep(0.5)
        before = cpu_nanoseconds(daemon.pid)
        start = time.monotonic()
        subprocess.run(["ip", "netns", "exec", net.host, "python3", "-c", FLOOD, SERVERS[0], str(PORT), str(connections)],
                       check=True)
        elapsed = time.monotonic() - start
        time.sleep(0.5)  # what the daemon still had queued
        return (cpu_nanoseconds(daemon.pid) - before) / 1e9, elapsed
    finally:
        reachd_bench.stop(processes, net)


def lossy(seconds):
    net = reachd_bench.Network(resolver=False)
    processes = []
    try:
        processes.append(servers(net))
        processes.append(subprocess.Popen(["ip", "netns", "exec", net.gw, "python3", "-c", reachd_bench.CHECK_SERVER]))
        reachd_bench.sh(f"ip netns exec {net.gw} nft 'add table inet loss; "
                        "add chain inet loss in { type filter hook prerouting priority 0; }; "
                        "add chain inet loss out { type filter hook output priority 0; }; "
                        "add rule inet loss in numgen random mod 100 < 2 drop; "
                        "add rule inet loss out numgen random mod 100 < 2 drop'")
        time.sleep(0.3)
        daemon, _ = reachd_bench.start_daemon(
            net, "--check-url", "http://10.77.0.1:8080/generate_204", "--metrics-listen", "yes")
        processes.append(daemon)
        app = subprocess.run(["ip", "netns", "exec", net.host, "python3", TRAFFIC, "connect", "0.2", "1", str(seconds)]
                             + [f"{s}:{PORT}" for s in SERVERS], capture_output=True, text=True, check=True)
        outcomes = [line.split()[1] for line in app.stdout.splitlines()]
        scrape = subprocess.run(
            ["ip", "netns", "exec", net.host, "python3", "-c",
             "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:10077/metrics', timeout=5).read().decode())"],
            capture_output=True, text=True, check=True).stdout

        def value(series):
            return next((int(float(line.split()[-1])) for line in scrape.splitlines() if line.startswith(series + " ")), None)

        return (outcomes.count("ok"), outcomes.count("fail"), value('reachd_connections_failed_total{family="ipv4"}'),
                value('reachd_stalls_total{family="ipv4"}'))
    finally:
        reachd_bench.stop(processes, net)


def main():
    arguments = sys.argv[1:]
    tiny = "--tiny" in arguments
    arguments = [a for a in arguments if a != "--tiny"]
    rounds = int(arguments[0]) if arguments else (1 if tiny else 10)
    connections = int(arguments[1]) if len(arguments) > 1 else (1000 if tiny else 10000)
    seconds = int(arguments[2]) if len(arguments) > 2 else (3 if tiny else 600)
    if os.geteuid() != 0:
        sys.exit("bench: needs root for network namespaces")

    print(f"a path that dies under an app's traffic, {rounds} runs at once: from the app's first failed connection "
          "to the daemon's verdict, beside the kernel's neighbour entry turning FAILED in the same runs:")
    results = reachd_bench.at_once(dying_path, rounds, not tiny)
    verdicts = [v for v, _ in results]
    kernel = [k for _, k in results if k is not None]
    if not verdicts:
        sys.exit("  no run finished")
    print(f"  passive: verdict p50 {statistics.median(verdicts):5.2f} s, p95 {reachd_bench.percentile(verdicts, 0.95):5.2f} s after "
          f"the first failed connection ({len(results)}/{rounds} runs)")
    if kernel:
        print(f"  neighbour path: the kernel's FAILED p50 {statistics.median(kernel):5.2f} s, "
              f"p95 {reachd_bench.percentile(kernel, 0.95):5.2f} s after the gateway died ({len(kernel)} runs)")
    elif not tiny:
        print("  neighbour path: the kernel's entry never turned FAILED within 60 s")

    print(f"the daemon's CPU over {connections} answered connections through the gateway, closed as fast as one "
          "process can:")
    for label, arguments, config in (
        ("passive off (the floor)", [], "[connectivity]\npassive = no\n"),
        ("filtered in the kernel", [], None),
        ("unfiltered", ["--passive-unfiltered"], None),
    ):
        cpu, elapsed = flood_cost(connections, *arguments, config=config)
        per = cpu * 10000 / connections
        print(f"  {label:24} {cpu * 1000:8.2f} ms CPU ({per * 1000:7.2f} ms per 10,000 closes: "
              f"{per * 100:5.2f}% of a core at 10,000 a second), {connections / elapsed:6.0f} closes a second")

    ok, fail, counted, stalls = lossy(seconds)
    print(f"2% random loss both ways for {seconds} s under 5 requests a second: {ok} answered, {fail} failed "
          f"(the daemon counted {counted}), stalls raised: {stalls} (want 0)")


if __name__ == "__main__":
    main()
