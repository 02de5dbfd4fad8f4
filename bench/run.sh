#!/usr/bin/env bash
# Benchmarks: start-up time and memory against the size of the routing table,
# how long a route flood takes to settle, system calls of an idle daemon, and
# the daemon and its clients under a hostile local user (bench/torture.py), a
# container host's veth churn under 1,000 summary subscribers (bench/containers.py), and
# event-to-subscriber latency against `ip monitor`, fan-out to 1,000 and 10,000 subscribers
# and idle wake-ups of clients (bench/latency.py), and 1,024 watched destinations
# through a route flood, their latency and their idle cost (bench/destinations.py), and
# GLib apps on the GIO module beside GLib's netlink backend (bench/gio.py), what one
# library monitor following 1, 16 and 64 destinations costs its process (bench/monitor_cost.py),
# how soon an expiring route is noticed, against the kernel's lookup (bench/expiry.py), and
# a Prometheus scrape's latency against the kernel's floor, its CPU, and an idle daemon
# with metrics on (bench/metrics.py), and a dead gateway to the daemon's verdict, against
# the kernel's neighbour entry turning FAILED (bench/deadgateway.py), and ten minutes of 1%
# random loss at the gateway that must never be called broken (bench/lossy.py), and the
# host's own connections as evidence: a dying path's verdict beside the neighbour path's,
# the daemon's CPU per 10,000 closed connections with and without the kernel's filter, and
# ten minutes of 2% loss that must raise no suspicion (bench/passive.py), and the
# instructions one route change costs in-process, in the daemon, in a client following it and in GLib
# (bench/instructions.py), and
# IPv4 route removals the kernel tells of before it unlinks the route (bench/removal.py).
# Needs root (network namespaces). Usage: make bench, or bash bench/run.sh [ROUTES]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v strace >/dev/null || { apt-get update -qq && apt-get install -y -qq strace; }
python3 bench/reachd_bench.py "$@"
echo
python3 bench/torture.py
echo
python3 bench/containers.py
echo
python3 bench/destinations.py
echo
python3 bench/gio.py
echo
python3 bench/monitor_cost.py
echo
python3 bench/instructions.py
echo
python3 bench/expiry.py
echo
python3 bench/metrics.py
echo
python3 bench/deadgateway.py
echo
python3 bench/lossy.py
echo
python3 bench/passive.py
echo
python3 bench/removal.py
echo
exec python3 bench/latency.py
