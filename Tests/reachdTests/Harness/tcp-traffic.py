"""The host's own TCP traffic, as an app's, for the passive evidence tests.

serve PORT
    answers every connection on PORT (both families) with one line, then
    closes it.
connect EVERY TIMEOUT SECONDS ADDRESS:PORT...
    every EVERY seconds, for SECONDS, starts a connection to the next
    address in turn (each on a thread of its own, so that one that hangs
    delays no other), gives it TIMEOUT seconds to connect and answer, and
    prints when it ended, as seconds since the epoch, and how: "ok" or
    "fail"; exits once every attempt has.
"""
import socket
import sys
import threading
import time


def serve(port):
    server = socket.socket(socket.AF_INET6)
    server.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("::", port))
    server.listen(128)
    print("ready", flush=True)
    while True:
        connection, _ = server.accept()
        try:
            connection.sendall(b"ok\n")
        except OSError:
            pass
        connection.close()


def attempt(address, timeout, lock):
    host, port = address.rsplit(":", 1)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family)
    s.settimeout(timeout)
    try:
        s.connect((host.strip("[]"), int(port)))
        outcome = "ok" if s.recv(3) else "fail"
    except OSError:
        outcome = "fail"
    s.close()
    with lock:
        print(f"{time.time():.6f} {outcome}", flush=True)


def connect(every, timeout, seconds, addresses):
    lock = threading.Lock()
    end = time.time() + seconds
    turn = 0
    attempts = []
    while time.time() < end:
        attempts.append(threading.Thread(target=attempt, args=(addresses[turn % len(addresses)], timeout, lock)))
        attempts[-1].start()
        turn += 1
        time.sleep(every)
    # Every attempt says how it ended: each is bounded by its timeouts.
    for started in attempts:
        started.join()


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(int(sys.argv[2]))
    else:
        connect(float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5:])
