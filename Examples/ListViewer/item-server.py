#!/usr/bin/env python3
"""A tiny item server for trying the list viewer.

    python3 Examples/ListViewer/item-server.py [--port 8080] [--state state.json]

GET /items answers with what the state file says, re-read on every request:
{"status": 200, "items": ["apple", "pear"]}. Edit the file to change the
answer: an empty list, another status (500), {"status": 200, "body": "junk"}
for an answer that does not decode, or "delay": SECONDS for a slow server
(the loading placeholder): the headers at once, then a space each second
before the body, so that a client's idle timeout never fires. Without a
state file it serves a fixed list.
"""
import argparse
import http.server
import json
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--bind", default="0.0.0.0")
    parser.add_argument("--state")
    args = parser.parse_args()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            state = {"status": 200, "items": ["apple", "pear", "plum"]}
            if args.state:
                with open(args.state) as f:
                    state = json.load(f)
            delay = int(min(max(float(state.get("delay", 0)), 0), 60))
            body = state.get("body")
            if body is None:
                body = json.dumps(state.get("items", []))
            payload = body.encode()
            self.send_response(state.get("status", 200))
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(delay + len(payload)))
            self.end_headers()
            self.wfile.flush()
            # Leading whitespace, which JSON allows, keeps the answer coming.
            for _ in range(delay):
                time.sleep(1)
                self.wfile.write(b" ")
                self.wfile.flush()
            self.wfile.write(payload)

        def log_message(self, *_):
            pass

    http.server.ThreadingHTTPServer((args.bind, args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
