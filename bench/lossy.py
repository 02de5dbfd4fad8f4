#!/usr/bin/env python3
"""A working network with 1% random loss never called broken: the gateway
drops one packet in a hundred, both ways, with nftables (`numgen random`),
its resolver is a real dnsmasq and its check server answers 204. The daemon
probes every 5 s (`--check-interval 5`, sixty times its default rate, so
that ten minutes hold about 120 checks), and a subscriber counts every
status that says `dns` other than `ok` or `connectivity` other than `full`.
The claim: none, while the network works.

Needs root and dnsmasq. Usage: python3 bench/lossy.py [--tiny] [SECONDS]
--tiny (make test): 10 s (two checks).
"""
import json
import os
import select
import shutil
import sys
import time

import reachd_bench


def main():
    argv, tiny = reachd_bench.arguments()
    seconds = int(argv[0]) if argv else (10 if tiny else 600)
    if os.geteuid() != 0:
        sys.exit("bench: needs root for network namespaces")
    dnsmasq = shutil.which("dnsmasq") or "/usr/sbin/dnsmasq"
    net = reachd_bench.Network()
    processes = []
    try:
        with open(os.path.join(net.etc, "resolv.conf"), "w") as f:
            f.write("nameserver 10.77.0.1\n")  # glibc's own timeouts: 5 s a try
        with open(os.path.join(net.etc, "hosts"), "w") as f:
            f.write("127.0.0.1 localhost\n")
        processes.append(reachd_bench.subprocess.Popen(
            ["ip", "netns", "exec", net.gw, dnsmasq, "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv",
             "--no-hosts", "--user=root", "--pid-file=", "--bind-interfaces", "--listen-address=10.77.0.1",
             "--host-record=check.example,10.77.0.1"]))
        processes.append(reachd_bench.subprocess.Popen(
            ["ip", "netns", "exec", net.gw, "python3", "-c", reachd_bench.CHECK_SERVER]))
        reachd_bench.sh(f"ip netns exec {net.gw} nft 'add table inet lossy; "
                        "add chain inet lossy in { type filter hook input priority 0; }; "
                        "add chain inet lossy out { type filter hook output priority 0; }; "
                        "add rule inet lossy in numgen random mod 100 < 1 counter drop; "
                        "add rule inet lossy out numgen random mod 100 < 1 counter drop'")
        time.sleep(0.5)
        daemon, _ = reachd_bench.start_daemon(
            net, "--check-url", "http://check.example:8080/generate_204", "--check-interval", "5", "--log-level", "debug")
        processes.append(daemon)
        subscriber = reachd_bench.connect(net.sock)
        subscriber.sendall(b'{"op":"subscribe"}\n')
        pending = b""

        def next_status(until):
            """The next status line, or None at `until`."""
            nonlocal pending
            while b"\n" not in pending:
                left = until - time.monotonic()
                if left <= 0 or not select.select([subscriber], [], [], left)[0]:
                    return None
                chunk = subscriber.recv(65536)
                if not chunk:
                    sys.exit("bench: the daemon hung up")
                pending += chunk
            line, pending = pending.split(b"\n", 1)
            return json.loads(line)

        start = time.monotonic()
        while (first := next_status(start + 30)) is None or first.get("connectivity") != "full":
            if first is None:
                sys.exit("bench: the check never found full")
        broken, statuses = [], 0
        end = time.monotonic() + seconds
        while (status := next_status(end)) is not None:
            statuses += 1
            if status.get("connectivity") != "full" or status.get("dns", {}).get("state") != "ok":
                broken.append((round(time.monotonic() - start, 1), status.get("connectivity"), status.get("dns", {}).get("state")))
        dropped = reachd_bench.subprocess.run(
            ["ip", "netns", "exec", net.gw, "nft", "list", "table", "inet", "lossy"], capture_output=True, text=True).stdout
        counts = [line.split("packets")[1].split()[0] for line in dropped.splitlines() if "counter packets" in line]
        with open(os.path.join(net.dir, "daemon.log")) as log:
            probes = sum(1 for line in log if "connectivity check" in line and "check.answer" in line)
        print(f"1% random loss both ways at the gateway for {seconds} s, a check every 5 s: {probes} probes, "
              f"packets dropped in/out {'/'.join(counts)}; statuses published {statuses}, "
              f"saying broken {len(broken)}{': ' + str(broken[:5]) if broken else ''}")
    finally:
        reachd_bench.stop(processes, net)


if __name__ == "__main__":
    main()
