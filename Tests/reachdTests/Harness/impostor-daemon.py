# A daemon that is not reachd, run as another user by the socket-owner
# tests: listens at PATH, answers every connection with LINE, and prints
# how many bytes each connection sent it before that, one line each: a
# client that does not trust it must send nothing.
# Usage: impostor-daemon.py PATH LINE
import os, socket, sys
path, line = sys.argv[1], sys.argv[2]
listener = socket.socket(socket.AF_UNIX)
listener.bind(path)
os.chmod(path, 0o666)
listener.listen(16)
print("listening", flush=True)
while True:
    connection, _ = listener.accept()
    connection.settimeout(0.3)
    received = b""
    try:
        while b"\n" not in received:
            chunk = connection.recv(4096)
            if not chunk:
                break
            received += chunk
    except OSError:
        pass
    print(f"connection sent {len(received)} bytes", flush=True)
    try:
        connection.sendall(line.encode() + b"\n")
    except OSError:
        pass
    connection.close()
