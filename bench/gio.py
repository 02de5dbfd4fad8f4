#!/usr/bin/env python3
"""GLib apps on reachd's GIO module, beside GLib's own netlink backend, in one
run: the figures behind issue 18.

Two copies of one GLib app (latency.GLIB_WATCHER: python3-gi, printing each
network-changed) watch the same namespace, one on the module that `make
gio-module` builds (GIO_EXTRA_MODULES, GIO_USE_NETWORK_MONITOR=reachd), one on
GLib's netlink backend (GIO_USE_NETWORK_MONITOR=netlink). Reported:

- network-changed after `ip monitor route`'s line for the same default-route
  flip, both apps and `ip monitor` in one run (latency.measure);
- the same for a handover: the default route replaced by one through
  another gateway and back, online throughout (issue 33: the module used to
  say nothing of it);
- network-changed signals through a flood of ROUTES route additions and as
  many deletions in the main table that leave the default route alone
  (each one spurious), and whether each app still hears the default route's
  removal afterwards;
- wake-ups of each app process over 10 s of a network that doesn't change;
- network-changed after `ip monitor` again, with the daemon stopped (SIGSTOP)
  once both apps listen: the module notices within a second of the first
  change (its liveness question) and follows GLib's backend meanwhile.

Needs root. Usage: python3 bench/gio.py [--tiny] [FLIPS] [ROUTES]
--tiny (make test): 2 flips and 2 handovers, 100 routes, 1 s idle, 2 flips
with the daemon stopped; the module found under the package (.build/gio).
"""
import os
import select
import subprocess
import sys
import time

import latency
import reachd_bench

MODULES = os.path.abspath(os.environ.get("REACHD_GIO_MODULES", ".build/gio"))


def apps(python):
    """(name, argv) of the app on each backend."""
    app = [python, "-c", latency.GLIB_WATCHER]
    return [
        ("GLib app, reachd's module", ["env", f"GIO_EXTRA_MODULES={MODULES}", "GIO_USE_NETWORK_MONITOR=reachd",
                                       f"REACHD_SOCKET={latency.SOCKET}"] + app),
        ("GLib app, GLib's netlink backend", ["env", "GIO_USE_NETWORK_MONITOR=netlink"] + app),
    ]


def signals(watcher):
    return [line for _, line in watcher.lines if line.startswith("network-changed")]


def flood_and_idle(specs, routes, seconds=10):
    net = reachd_bench.Network()
    rows = []
    try:
        daemon, _ = reachd_bench.start_daemon(net, "--no-check")
        watchers = [latency.start(net, name, argv) for name, argv in specs]
        poller = select.poll()
        for w in watchers:
            poller.register(w.fd, select.POLLIN)
        latency.pump(poller, watchers, lambda: all(w.lines for w in watchers))
        latency.drain(poller, watchers, 0.5)
        # GLib falls back without a word: each app says which backend it got.
        for w, expected in zip(watchers, ("ReachdNetworkMonitor", "GNetworkMonitorNetlink")):
            if not w.lines or w.lines[0][1] != f"ready {expected}":
                sys.exit(f"{w.name}: expected {expected}, got {w.lines[:1]}")
        before = [len(signals(w)) for w in watchers]

        started = time.monotonic()
        net.batch(reachd_bench.routes(routes, "add") + reachd_bench.routes(routes, "del"))
        written = time.monotonic() - started
        # Until every app has been quiet for 2 s: GLib's backend trails.
        while True:
            seen = sum(len(w.lines) for w in watchers)
            latency.drain(poller, watchers, 2)
            if sum(len(w.lines) for w in watchers) == seen:
                break
        flooded = [len(signals(w)) - n for w, n in zip(watchers, before)]

        reachd_bench.sh(f"ip -n {net.host} route del default")
        latency.drain(poller, watchers, 3)
        rows.append(f"  a flood of {2 * routes:,} route changes leaving the default route alone "
                    f"(ip -batch: {written:.1f} s), then the default route removed:")
        for w, first, count in zip(watchers, before, flooded):
            heard = any(line.endswith("available=False") for line in signals(w)[first + count:])
            rows.append(f"    {w.name:36} {count:7,} spurious signals; the removal afterwards: "
                        + ("heard" if heard else "NOT HEARD"))

        for w, count in zip(watchers, latency.wakeups([w.owner.pid for w in watchers], seconds)):
            rows.append(f"  idle, {w.name:36} {count:4} wake-ups in {seconds} s")
        for w in watchers:
            w.owner.kill()
        daemon.terminate()
        daemon.wait()
    finally:
        net.close()
    return rows


def main():
    global MODULES
    argv, tiny = reachd_bench.arguments()
    flips = int(argv[0]) if argv else (2 if tiny else 100)
    routes = int(argv[1]) if len(argv) > 1 else (100 if tiny else 100_000)
    if tiny and "REACHD_GIO_MODULES" not in os.environ:
        MODULES = os.path.join(reachd_bench.ROOT, ".build", "gio")
    python = latency.glib_python()
    if python is None or not os.path.exists(os.path.join(MODULES, "libgioreachd.so")):
        sys.exit("needs python3-gi and the module (make gio-module): make bench provides both")
    specs = apps(python)
    print(f"GLib apps: network-changed after `ip monitor route`, {flips} default-route flips, both in one run:")
    print("\n".join(latency.measure(flips, specs)))
    print()
    print(f"GLib apps: network-changed after `ip monitor route`, {flips} handovers (the default route's gateway"
          " replaced and back, online throughout), both in one run:")
    print("\n".join(latency.measure(flips, specs, flip=(
        "route replace default via 10.77.0.254", "route replace default via 10.77.0.1"))))
    print()
    print("\n".join(flood_and_idle(specs, routes, 1 if tiny else 10)))
    print()
    stopped = 2 if tiny else max(4, flips // 10)
    print(f"GLib apps with the daemon stopped (SIGSTOP) once both listen, {stopped} flips"
          " (the first waits for the module's liveness question, 1 s at most):")
    print("\n".join(latency.measure(stopped, specs, daemon_stopped=True)))


if __name__ == "__main__":
    main()
