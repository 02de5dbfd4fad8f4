#!/usr/bin/env python3
"""What one ReachabilityMonitor following the status and N destinations costs
its process: threads and descriptors over the process before the monitor, for
1, 16 and 64 destinations, through a daemon and in-process
(bench/MonitorCost, the callback API, literal destinations). The issue's
bound: at most +8 threads and +20 descriptors, whatever N.

Needs root. Usage: python3 bench/monitor_cost.py [--tiny]
--tiny (make test): 1 and 2 destinations; the probe REACHD_MONITOR_COST
names, else .build/release/MonitorCost, else .build/debug/MonitorCost (what
make test builds), under the package."""
import json
import os
import subprocess
import sys

import reachd_bench

PROBE = os.path.abspath(os.environ.get("REACHD_MONITOR_COST", ".build/release/MonitorCost"))


def measure(net, n, source):
    command = net.exec(PROBE, str(n), source, *([net.sock] if source == "daemon" else []))
    return json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


def main():
    global PROBE
    _, tiny = reachd_bench.arguments()
    if tiny:
        PROBE = reachd_bench.built("REACHD_MONITOR_COST", ".build/release/MonitorCost", ".build/debug/MonitorCost")
    if not os.access(PROBE, os.X_OK):
        sys.exit(f"bench: no probe at {PROBE}; run `make bench`")
    print("One monitor following the status and N destinations (bench/MonitorCost)")
    net = reachd_bench.Network()
    try:
        daemon, _ = reachd_bench.start_daemon(net, "--no-check")
        for source, name in (("daemon", "through the daemon"), ("embedded", "in-process")):
            for n in ((1, 2) if tiny else (1, 16, 64)):
                cost = measure(net, n, source)
                threads = cost["threads"]["after"] - cost["threads"]["before"]
                descriptors = cost["descriptors"]["after"] - cost["descriptors"]["before"]
                print(f"  {name:19} {n:3} destinations: +{threads} threads, +{descriptors:2} descriptors"
                      f"  ({cost['answered']} answered, from {cost['answers_from']})")
        daemon.terminate()
        daemon.wait()
    finally:
        net.close()


if __name__ == "__main__":
    main()
