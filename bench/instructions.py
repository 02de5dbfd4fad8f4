#!/usr/bin/env python3
"""Instructions per default-route change, counted by callgrind: reachd
in-process (`monitor --json --no-daemon`), the daemon with one bare
subscriber, and a `monitor --json` following that daemon (the other half
of the daemon's hop: it reads the line, and hears the kernel too, for its
liveness sentinel), beside GLib's netlink backend from Python (the
interpreter included, as a Linux app would pay it).

Timings on a shared two-core machine move by a third from run to run;
instructions do not, so a change that removes work shows here exactly
(issue 45: "remove work before optimising it"). Each figure is the whole
process's count at N changes less its count at none (start-up and
shutdown cancel), divided by N. The floor is the kernel's part: zero
user-space instructions, which no watcher reaches.

Usage: python3 bench/instructions.py [CHANGES] [--tiny]. Needs root and
valgrind.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import reachd_bench
from latency import GLIB_WATCHER, glib_python

# A bare subscriber: no liveness probe, whose timing valgrind's pace would move.
SUBSCRIBER = r"""
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b'{"op":"subscribe"}\n')
for line in s.makefile("rb"):
    sys.stdout.buffer.write(line)
    sys.stdout.flush()
"""


def counted(binary, which, changes, work):
    """Callgrind's instruction total for one run of `which` over `changes`
    default-route changes, each waited for on the watcher's output."""
    net = reachd_bench.Network()
    out = os.path.join(work, f"{which}.{changes}")
    valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    counted_process, reader, helper = None, None, None
    try:
        if which in ("daemon", "client"):
            # The daemon counted, or run plainly for the client counted.
            daemon = subprocess.Popen(
                net.exec(*(valgrind if which == "daemon" else []), binary, "daemon", "--socket", net.sock, "--no-check"),
                stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 60
            while not os.path.exists(net.sock):
                if time.monotonic() > deadline or daemon.poll() is not None:
                    raise SystemExit("the daemon made no socket in 60 s")
                time.sleep(0.1)
            time.sleep(1)  # listening is not yet reading: its first dump
            if which == "daemon":
                counted_process = daemon
                reader = subprocess.Popen(["python3", "-c", SUBSCRIBER, net.sock], stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL)
            else:
                helper = daemon
                counted_process = reader = subprocess.Popen(
                    net.exec(*valgrind, binary, "monitor", "--json", f"--socket={net.sock}"), stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL)
        elif which == "glib":
            counted_process = reader = subprocess.Popen(
                net.exec(*valgrind, glib_python(), "-c", GLIB_WATCHER), stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL)
        else:
            counted_process = reader = subprocess.Popen(
                net.exec(*valgrind, binary, "monitor", "--json", "--no-daemon"), stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL)
        def line():
            text = reader.stdout.readline()
            # Its figure is the daemon's follower's only while it follows:
            # past its first answer's deadline it would go on in-process.
            if which == "client" and text and b'"source":"daemon"' not in text:
                raise SystemExit(f"client: a line not from the daemon under valgrind: {text[:200]!r}")
            return text

        if not line():
            raise SystemExit(f"{which}: said nothing under valgrind")
        time.sleep(1)
        online = True
        for _ in range(changes):
            verb = ["del", "default"] if online else ["add", "default", "via", "10.77.0.1"]
            subprocess.run(["ip", "-n", net.host, "route", *verb], check=True)
            online = not online
            if not line():
                raise SystemExit(f"{which}: ended before a change's line")
            time.sleep(0.02)  # GLib repeats itself: its trailing lines come now
        time.sleep(0.5)
        counted_process.send_signal(signal.SIGTERM)
        counted_process.wait(timeout=60)
    finally:
        for process in (reader, counted_process, helper):
            if process and process.poll() is None:
                process.kill()
                process.wait()
        net.close()
    with open(out) as text:
        for line in text:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise SystemExit(f"{which}: callgrind wrote no total to {out}")


def main():
    argv, tiny = reachd_bench.arguments()
    changes = int(argv[0]) if argv else (1 if tiny else 200)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: instructions per change skipped (make bench installs it)")
        return
    work = tempfile.mkdtemp(prefix="reachd-instructions-")
    try:
        # Valgrind gives up on the debug info Swift writes; the symbols are enough.
        binary = os.path.join(work, "reachd")
        subprocess.run(["strip", "--strip-debug", "-o", binary, reachd_bench.REACHD], check=True)
        watchers = [("in-process", "monitor --json --no-daemon"), ("daemon", "daemon, one bare subscriber"),
                    ("client", "monitor --json through the daemon")]
        if glib_python() and not tiny:
            watchers.append(("glib", "GLib GNetworkMonitor, Python"))
        print(f"instructions per default-route change, callgrind, {changes} changes ({reachd_bench.REACHD}):")
        for which, name in watchers:
            total = counted(binary, which, changes, work)
            if tiny:
                # make test's run: each path once, under a minute; start-up
                # is in the figure, and GLib's interpreter is left out.
                print(f"  {name:34} {total / changes:>10,.0f}  (start-up included: a tiny run)")
                continue
            start_up = counted(binary, which, 0, work)
            print(f"  {name:34} {(total - start_up) / changes:>10,.0f}  (start-up and exit: {start_up:,})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
