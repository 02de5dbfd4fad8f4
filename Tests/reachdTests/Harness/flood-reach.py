# Asks the daemon at PATH to `reach` names that never resolve, as fast as
# it takes them, on CONNECTIONS connections, for SECONDS, reading and
# dropping every answer; prints one line once the flood is under way and one
# when it ends. Run as another user by the resolver fairness tests.
# Usage: flood-reach.py PATH CONNECTIONS SECONDS
import json, select, socket, sys, time
path, connections, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
def connect():
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.setblocking(False)
    return s
opened = [connect() for _ in range(connections)]
sent, counter, announced = 0, 0, False
end = time.monotonic() + seconds
while time.monotonic() < end:
    for index, s in enumerate(opened):
        batch = b"".join(
            json.dumps({"op": "reach", "target": f"n{counter + i}.slow.test:443"}).encode() + b"\n" for i in range(32))
        try:
            s.send(batch)
            counter += 32
            sent += 32
        except BlockingIOError:
            pass
        except OSError:  # closed by the daemon: a new one takes its place
            opened[index] = connect()
            continue
        try:
            while s.recv(65536):
                pass
        except OSError:
            pass
    if not announced and sent >= 512:
        print("flooding", flush=True)
        announced = True
    select.select([], [], [], 0.05)
for s in opened:
    s.close()
print(json.dumps({"sent": sent}), flush=True)
