# Opens COUNT connections to the daemon's socket at PATH (subscribing on
# each, so none is closed as idle), waits for each one's first answer (5 s at
# most in all) and prints what the daemon did with them as one JSON line; then
# holds the kept ones open until killed. Run as
# another user, by HostileClientTests and by the checks under systemd.
# Usage: hold-connections.py PATH COUNT
import json, select, signal, socket, sys, time
path, count = sys.argv[1], int(sys.argv[2])
opened = []
for _ in range(count):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(0.5)
    try:
        s.connect(path)
        s.sendall(b'{"op":"subscribe"}\n')
        opened.append(s)
    except OSError:
        pass
deadline = time.monotonic() + 5
kept, refusals = [], []
for s in opened:
    # Its status, or its refusal: either makes it readable.
    select.select([s], [], [], max(0.0, deadline - time.monotonic()))
    s.setblocking(False)
    try:
        data = s.recv(65536)
    except BlockingIOError:
        data = b""
    if b'"too_many_clients"' in data:
        refusals.append(json.loads(data.split(b"\n")[0])["message"])
    elif b'"type":"status"' in data:
        kept.append(s)
print(json.dumps({"kept": len(kept), "refused": len(refusals), "message": (refusals or [""])[0]}), flush=True)
signal.pause()
