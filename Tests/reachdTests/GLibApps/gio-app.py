#!/usr/bin/python3
"""A GLib app, as the GIO module's tests see one.

Asks GLib for the default network monitor and prints, one JSON object per
line, which type GLib chose, how long choosing took, and every property
change and network-changed signal with the state at that moment. Commands
on the FIFO named by the first argument (else stdin), one per line:
  reach TARGET        can_reach (blocks the main loop, as it does in an app)
  reach-async TARGET  can_reach_async
  reach-service SERVICE PROTOCOL DOMAIN        can_reach of a GNetworkService
  reach-service-async SERVICE PROTOCOL DOMAIN  can_reach_async of one
  heartbeat           from now on, a 10 ms timer notes the longest wait of
                      the main loop between its ticks, less the time the
                      kernel kept the thread waiting for a CPU (a loaded
                      machine's share, not the app's)
  longest-wait        prints it (in ms) and starts afresh
TARGET is HOST:PORT or [IPV6]:PORT, parsed by GNetworkAddress.
"""
import json
import os
import sys
import time

from gi.repository import Gio, GLib

started = time.monotonic()
monitor = Gio.NetworkMonitor.get_default()
chosen_ms = (time.monotonic() - started) * 1000


def state():
    return {
        "available": monitor.get_network_available(),
        "connectivity": monitor.get_connectivity().value_nick,
        "metered": monitor.get_network_metered(),
    }


def emit(event, **fields):
    print(json.dumps({"event": event, **fields, **state()}), flush=True)


def error_name(error):
    """GLib's name for the error: host-unreachable, not-found, ..."""
    for domain, enum in (("g-io-error-quark", Gio.IOErrorEnum), ("g-resolver-error-quark", Gio.ResolverError)):
        if error.domain == domain:
            return enum(error.code).value_nick
    return error.domain


def answered(target, call):
    try:
        emit("reach", target=target, reachable=call())
    except GLib.Error as error:
        emit("reach", target=target, reachable=False, error=error_name(error), message=error.message)


def finish(target):
    return lambda source, result: answered(target, lambda: monitor.can_reach_finish(result))


def command(line):
    words = line.split()
    if not words:
        return
    if words[0] == "reach":
        answered(words[1], lambda: monitor.can_reach(Gio.NetworkAddress.parse(words[1], 443), None))
    elif words[0] == "reach-async":
        monitor.can_reach_async(Gio.NetworkAddress.parse(words[1], 443), None, finish(words[1]))
    elif words[0] == "reach-service":
        service = Gio.NetworkService.new(words[1], words[2], words[3])
        answered(" ".join(words[1:]), lambda: monitor.can_reach(service, None))
    elif words[0] == "reach-service-async":
        service = Gio.NetworkService.new(words[1], words[2], words[3])
        monitor.can_reach_async(service, None, finish(" ".join(words[1:])))
    elif words[0] == "heartbeat":
        heartbeat["last"], heartbeat["queued"] = time.monotonic(), queued_ns()
        GLib.timeout_add(10, tick)
    elif words[0] == "longest-wait":
        # The tick's own 10 ms are no wait.
        emit("longest-wait", ms=max(0.0, heartbeat["longest"] - 10))
        heartbeat["longest"] = 0.0


pending = b""
heartbeat = {"last": None, "queued": 0, "longest": 0.0}


def queued_ns():
    """How long this thread has waited on a run queue (schedstat's second field)."""
    with open("/proc/thread-self/schedstat") as stat:
        return int(stat.read().split()[1])


def tick():
    now, queued = time.monotonic(), queued_ns()
    waited = (now - heartbeat["last"]) * 1000 - (queued - heartbeat["queued"]) / 1e6
    heartbeat["longest"] = max(heartbeat["longest"], waited)
    heartbeat["last"], heartbeat["queued"] = now, queued
    return True


def on_stdin(fd, condition):
    global pending
    try:
        chunk = os.read(fd, 4096)
    except BlockingIOError:
        return True
    if not chunk:
        loop.quit()
        return False
    pending += chunk
    while b"\n" in pending:
        line, pending = pending.split(b"\n", 1)
        command(line.decode())
    return True


monitor.connect("network-changed", lambda m, available: emit("network-changed", argument=available))
monitor.connect("notify", lambda m, spec: emit("notify", property=spec.name))
# Read and write both: the test's writes come and go without an end of file.
# Opened before "ready": the test sends once it reads that, and a FIFO no
# one has open for reading refuses a writer that will not wait (ENXIO, seen
# on a loaded make test).
commands = os.open(sys.argv[1], os.O_RDWR | os.O_NONBLOCK) if len(sys.argv) > 1 else 0
emit("ready", type=type(monitor).__gtype__.name, chosen_ms=chosen_ms)
GLib.unix_fd_add_full(GLib.PRIORITY_DEFAULT, commands, GLib.IOCondition.IN | GLib.IOCondition.HUP, on_stdin)
loop = GLib.MainLoop()
loop.run()
