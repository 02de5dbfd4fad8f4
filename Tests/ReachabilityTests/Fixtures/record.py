#!/usr/bin/env python3
"""Records the netlink fixtures in this folder from a real kernel.

Run as root from the repository root after `swift build`:
    python3 Tests/ReachabilityTests/Fixtures/record.py
or, for the closed connections or the route lookups alone:
    python3 Tests/ReachabilityTests/Fixtures/record.py closed-connections
    python3 Tests/ReachabilityTests/Fixtures/record.py route-lookups

Each scenario builds fresh network namespaces, runs `reachd monitor
--trace-netlink` inside the host namespace (which prints every received
datagram as hex), applies one command per step and files the datagrams that
step produced under a `# step:` line. Route lookups are recorded by sending
RTM_GETROUTE from inside the namespace, as reachd does.
"""
import os
import socket
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REACHD = os.path.abspath(os.environ.get("REACHD", ".build/debug/reachd"))
HOST, GATEWAY = "fixture-host", "fixture-gw"


def sh(command):
    subprocess.run(command, shell=True, check=True)


def fresh_namespaces():
    for ns in (HOST, GATEWAY):
        subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)
        sh(f"ip netns add {ns}")
    sh(f"ip -n {GATEWAY} link set lo up")


def header(scenario):
    return [
        f"# scenario: {scenario}",
        f"# recorded by Tests/ReachabilityTests/Fixtures/record.py on Linux {os.uname().release}",
        "# each 'netlink' line is one datagram as received on reachd's multicast socket, in hex",
    ]


def record_events(scenario, steps, settle=0.4):
    """steps: list of (description, shell command, seconds to settle or None)."""
    fresh_namespaces()
    monitor = subprocess.Popen(
        ["ip", "netns", "exec", HOST, REACHD, "monitor", "--trace-netlink", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines, lock = [], threading.Lock()

    def pump():
        for line in monitor.stderr:
            with lock:
                lines.append(line.rstrip("\n"))

    threading.Thread(target=pump, daemon=True).start()
    monitor.stdout.readline()  # the first status: subscribed and dumped
    out = header(scenario)
    for description, command, wait in steps:
        sh(command)
        time.sleep(wait or settle)
        with lock:
            taken, lines[:] = [l for l in lines if l.startswith("netlink ")], []
        out.append(f"# step: {description}")
        out.extend(taken)
    monitor.terminate()
    monitor.wait()
    write(scenario, out)


def write(scenario, lines):
    with open(os.path.join(HERE, f"{scenario}.netlink"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {scenario}.netlink")


def lookup(destination, fib_match=False):
    """Sends RTM_GETROUTE for destination (for the route the table holds, with
    RTM_F_FIB_MATCH, when fib_match) and prints the reply datagram as hex."""
    family = socket.AF_INET6 if ":" in destination else socket.AF_INET
    packed = socket.inet_pton(family, destination)
    # As reachd asks: the destination's length, and RTM_F_LOOKUP_TABLE, for
    # the table the route came from (without it the kernel says main).
    flags = 0x1000 | (0x2000 if fib_match else 0)
    rtmsg = struct.pack("BBBBBBBBI", family, len(packed) * 8, 0, 0, 0, 0, 0, 0, flags)
    rta = struct.pack("HH", 4 + len(packed), 1) + packed  # RTA_DST
    body = rtmsg + rta
    message = struct.pack("IHHII", 16 + len(body), 26, 1, 7, 0) + body  # RTM_GETROUTE, NLM_F_REQUEST
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    s.bind((0, 0))
    s.send(message)
    print("netlink " + s.recv(65536).hex())


def record_lookups():
    fresh_namespaces()
    sh(f"ip link add vh type veth peer name vg && ip link set vh netns {HOST} && ip link set vg netns {GATEWAY}")
    sh(f"ip -n {HOST} link set lo up && ip -n {HOST} link set vh up && ip -n {GATEWAY} link set vg up")
    sh(f"ip -n {HOST} addr add 10.77.0.2/24 dev vh && ip -n {GATEWAY} addr add 10.77.0.1/24 dev vg")
    sh(f"ip -n {HOST} -6 addr add fd77::2/64 dev vh nodad && ip -n {GATEWAY} -6 addr add fd77::1/64 dev vg nodad")
    out = header("route-lookups")
    out[2] = "# each 'netlink' line is the kernel's reply to RTM_GETROUTE for the step's destination, in hex"

    def step(description, command, destination, fib_match=False):
        if command:
            sh(command)
        reply = subprocess.run(["ip", "netns", "exec", HOST, sys.executable, __file__, "lookup", destination]
                               + (["fibmatch"] if fib_match else []),
                               check=True, capture_output=True, text=True).stdout.strip()
        out.extend([f"# step: {description}", reply])

    step("no route: lookup 1.1.1.1", None, "1.1.1.1")
    step("default via 10.77.0.1: lookup 1.1.1.1", f"ip -n {HOST} route add default via 10.77.0.1", "1.1.1.1")
    step("default via fd77::1: lookup 2606:4700:4700::1111", f"ip -n {HOST} -6 route add default via fd77::1",
         "2606:4700:4700::1111")
    # An expiring route (as a router advertisement's): a FIB match answers
    # with what it has left, RTA_CACHEINFO's rta_expires in clock ticks (a
    # plain lookup's copy of the route says nothing of it).
    step("default via fd77::1 expires 300: fib match for 2606:4700:4700::1111",
         f"ip -n {HOST} -6 route replace default via fd77::1 expires 300", "2606:4700:4700::1111", fib_match=True)
    step("unreachable default: lookup 1.1.1.1",
         f"ip -n {HOST} route del default && ip -n {HOST} route add unreachable default", "1.1.1.1")
    step("blackhole default: lookup 1.1.1.1",
         f"ip -n {HOST} route del default && ip -n {HOST} route add blackhole default", "1.1.1.1")
    step("prohibit default: lookup 1.1.1.1",
         f"ip -n {HOST} route del default && ip -n {HOST} route add prohibit default", "1.1.1.1")
    # Several next hops: a FIB match names each (RTA_MULTIPATH, the first
    # is read); a lookup, the one it chose (RTA_OIF, RTA_GATEWAY).
    step("multipath default via 10.77.0.1 and 10.77.0.3 in table 1000: fib match for 1.1.1.1",
         f"ip -n {HOST} route del default && ip -n {HOST} route add default table 1000"
         " nexthop via 10.77.0.1 dev vh nexthop via 10.77.0.3 dev vh"
         f" && ip -n {HOST} rule add to 1.1.1.1 lookup 1000", "1.1.1.1", fib_match=True)
    step("multipath default in table 1000: lookup 1.1.1.1", None, "1.1.1.1")
    # An IPv4 route through an IPv6 gateway (RFC 5549, as babeld and
    # BGP unnumbered set it): RTA_VIA, not RTA_GATEWAY.
    step("default via inet6 fd77::1: lookup 1.1.1.1",
         f"ip -n {HOST} rule del to 1.1.1.1 lookup 1000"
         f" && ip -n {HOST} -4 route add default via inet6 fd77::1 dev vh", "1.1.1.1")
    write("route-lookups", out)


def listen_closes():
    """Prints each datagram of the TCP destroy groups (IPv4 and IPv6) as hex."""
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 4)  # NETLINK_SOCK_DIAG
    s.bind((0, 1 | 4))  # SKNLGRP_INET_TCP_DESTROY, SKNLGRP_INET6_TCP_DESTROY
    print("listening", flush=True)
    while True:
        print("netlink " + s.recv(65536).hex(), flush=True)


CONNECT = """
import socket, sys
family = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(family)
s.settimeout(float(sys.argv[3]))
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
    s.sendall(b"GET / HTTP/1.0\\r\\n\\r\\n")
    s.recv(100)
except OSError:
    pass
s.close()
"""


def record_closes():
    """The kernel's word of closed TCP connections, as the daemon's passive
    watch receives it: one step per kind of ending."""
    fresh_namespaces()
    sh(f"ip link add vh type veth peer name vg && ip link set vh netns {HOST} && ip link set vg netns {GATEWAY}")
    sh(f"ip -n {HOST} link set lo up && ip -n {HOST} link set vh up && ip -n {GATEWAY} link set vg up")
    sh(f"ip -n {HOST} addr add 10.77.0.2/24 dev vh && ip -n {GATEWAY} addr add 10.77.0.1/24 dev vg")
    sh(f"ip -n {HOST} -6 addr add fd77::2/64 dev vh nodad && ip -n {GATEWAY} -6 addr add fd77::1/64 dev vg nodad")
    sh(f"ip -n {GATEWAY} addr add 192.0.2.80/32 dev lo && ip -n {GATEWAY} -6 addr add 2001:db8::80/128 dev lo")
    sh(f"ip -n {HOST} route add default via 10.77.0.1 && ip -n {HOST} -6 route add default via fd77::1")
    server = subprocess.Popen(["ip", "netns", "exec", GATEWAY, sys.executable, "-c", """
import socket, threading
def serve(family, address):
    s = socket.socket(family); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((address, 80)); s.listen()
    while True:
        c, _ = s.accept(); c.recv(100); c.sendall(b"HTTP/1.0 204 No Content\\r\\n\\r\\n"); c.close()
threading.Thread(target=serve, args=(socket.AF_INET6, "2001:db8::80"), daemon=True).start()
serve(socket.AF_INET, "192.0.2.80")
"""])
    listener = subprocess.Popen(["ip", "netns", "exec", HOST, sys.executable, __file__, "listen-closes"],
                                stdout=subprocess.PIPE, text=True)
    listener.stdout.readline()
    lines, lock = [], threading.Lock()

    def pump():
        for line in listener.stdout:
            with lock:
                lines.append(line.rstrip("\n"))

    threading.Thread(target=pump, daemon=True).start()
    time.sleep(0.5)
    out = header("closed-connections")
    out[2] = "# each 'netlink' line is one datagram of the TCP destroy groups (NETLINK_SOCK_DIAG), in hex"

    def step(description, command, wait=1.0):
        sh(command)
        time.sleep(wait)
        with lock:
            taken, lines[:] = list(lines), []
        out.append(f"# step: {description}")
        out.extend(taken)

    connect = f"ip netns exec {HOST} {sys.executable} -c '{CONNECT}'"
    step("answered: an HTTP exchange with 192.0.2.80:80 through the gateway", f"{connect} 192.0.2.80 80 2")
    step("answered: an HTTP exchange with [2001:db8::80]:80 through the gateway", f"{connect} 2001:db8::80 80 2")
    step("refused: a connect to 127.0.0.1:9, nothing listening", f"{connect} 127.0.0.1 9 2")
    sh(f"ip -n {GATEWAY} addr del 192.0.2.80/32 dev lo && ip -n {GATEWAY} route add blackhole 192.0.2.80/32")
    step("unanswered: a connect to 192.0.2.80:80 that the gateway drops, given up after 1 s",
         f"{connect} 192.0.2.80 80 1")
    server.terminate()
    listener.terminate()
    write("closed-connections", out)


def main():
    if len(sys.argv) in (3, 4) and sys.argv[1] == "lookup":
        return lookup(sys.argv[2], fib_match=len(sys.argv) == 4)
    if sys.argv[1:] == ["listen-closes"]:
        return listen_closes()
    if sys.argv[1:] in (["closed-connections"], ["route-lookups"]):
        if sys.argv[1] == "closed-connections":
            record_closes()
        else:
            record_lookups()
        for ns in (HOST, GATEWAY):
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)
        return
    h, g = f"ip -n {HOST}", f"ip -n {GATEWAY}"
    record_events("veth-lifecycle", [
        ("ip link set lo up", f"{h} link set lo up", None),
        ("veth vh moved into the namespace, peer vg up in the gateway namespace",
         f"ip link add vh type veth peer name vg && ip link set vg netns {GATEWAY} && {g} link set vg up"
         f" && {g} addr add 10.77.0.1/24 dev vg && ip link set vh netns {HOST}", None),
        ("ip link set vh up (then IPv6 duplicate address detection completes)", f"{h} link set vh up", 2.5),
        ("ip addr add 10.77.0.2/24 dev vh", f"{h} addr add 10.77.0.2/24 dev vh", None),
        ("ip route add default via 10.77.0.1", f"{h} route add default via 10.77.0.1", None),
        ("gateway side: ip link set vg down (vh loses carrier)", f"{g} link set vg down", None),
        ("gateway side: ip link set vg up (vh regains carrier)", f"{g} link set vg up", None),
        ("ip route del default", f"{h} route del default", None),
        ("ip -6 addr add 2001:db8:77::2/64 dev vh (tentative, then usable after DAD)",
         f"{h} -6 addr add 2001:db8:77::2/64 dev vh", 2.5),
        ("ip link del vh", f"{h} link del vh", None),
    ])
    record_events("bridge-port", [
        ("ip link set lo up", f"{h} link set lo up", None),
        ("veth vh moved into the namespace", f"ip link add vh type veth peer name vg && ip link set vg netns {GATEWAY}"
         f" && ip link set vh netns {HOST}", None),
        ("ip link add br0 type bridge", f"{h} link add br0 type bridge", None),
        ("ip link set vh master br0", f"{h} link set vh master br0", None),
        ("ip link set vh nomaster", f"{h} link set vh nomaster", None),
    ])
    record_lookups()
    for ns in (HOST, GATEWAY):
        subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
