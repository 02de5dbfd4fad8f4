# Asks the daemon at PATH to `reach` names that never resolve, keeping
# OUTSTANDING requests unanswered on each of CONNECTIONS connections for
# SECONDS: a new name for each answer, and after a refusal a pause, so the
# flood costs what the daemon does, not a busy loop here. Prints one line
# once the flood is under way, one for each new code of refusal, and one
# when it ends. Run as another user, in the daemon's network namespace, by
# the resolver fairness tests.
# Usage: flood-reach.py PATH CONNECTIONS OUTSTANDING SECONDS
import json, select, socket, sys, time
path, connections, outstanding, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
counter = 0
refusals = set()


def requests(count):
    global counter
    lines = b"".join(
        json.dumps({"op": "reach", "target": f"n{counter + i}.slow.test:443"}).encode() + b"\n" for i in range(count))
    counter += count
    return lines


opened = {}
for _ in range(connections):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(requests(outstanding))
    opened[s] = {"pending": b"", "paused_until": 0.0, "owed": 0}
print("flooding", flush=True)
end = time.monotonic() + seconds
while time.monotonic() < end:
    readable, _, _ = select.select(list(opened), [], [], 0.1)
    now = time.monotonic()
    for s in readable:
        state = opened[s]
        data = s.recv(65536)
        if not data:
            del opened[s]
            continue
        state["pending"] += data
        *lines, state["pending"] = state["pending"].split(b"\n")
        for line in lines:
            state["owed"] += 1
            if b'"type":"error"' in line:
                state["paused_until"] = now + 0.5
                code = json.loads(line).get("code")
                if code not in refusals:
                    refusals.add(code)
                    print(json.dumps({"refused": code}), flush=True)
    for s, state in opened.items():
        if state["owed"] and now >= state["paused_until"]:
            s.sendall(requests(state["owed"]))
            state["owed"] = 0
for s in opened:
    s.close()
print(json.dumps({"sent": counter}), flush=True)
