# A daemon that is not reachd, run as another user by the socket-owner
# tests: listens at PATH, answers every connection with LINE (naming the
# client's network namespace, as reachd does, by the accepted socket's
# cookie), and prints how many bytes each connection sent it before that,
# one line each: a client that does not trust it must send nothing.
# Usage: impostor-daemon.py PATH LINE
import os, socket, struct, sys
SO_NETNS_COOKIE = 71
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
    cookie = struct.unpack("Q", connection.getsockopt(socket.SOL_SOCKET, SO_NETNS_COOKIE, 8))[0]
    said = '{"netns":{"cookie":%d,"device":0,"inode":0},' % cookie + line[1:]
    try:
        connection.sendall(said.encode() + b"\n")
    except OSError:
        pass
    connection.close()
