#!/usr/bin/env python3
"""Sends many plain-HTTP requests through mitm-proxy on one keep-alive connection, optionally while a web UI page
that has stopped reading holds its live feed open; prints a JSON summary.

Usage: web_ui_load.py --proxy PORT --url http://127.0.0.1:ORIGIN/path --requests N [--stalled-feed]

With --stalled-feed, a socket with a tiny receive buffer opens http://127.0.0.1:PROXY/events first, reads the
response head and the hello, then reads nothing while the requests go through; afterwards it reads the feed until
the proxy's drop notice (`event: resync`) arrives, within 60 seconds (a loaded machine records the requests late).
"""

import argparse
import json
import socket
import time


def read_response(stream):
    """Reads one response with a Content-Length body from the buffered reader; returns (status, body length)."""
    status_line = stream.readline()
    if not status_line:
        raise SystemExit("the proxy closed the connection")
    status = int(status_line.split()[1])
    length = 0
    while True:
        line = stream.readline()
        if line in (b"\r\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    body = stream.read(length)
    return status, len(body)


def open_stalled_feed(port):
    feed = socket.socket()
    feed.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    feed.connect(("127.0.0.1", port))
    feed.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
    seen = b""
    feed.settimeout(10)
    while b"event: hello" not in seen:
        chunk = feed.recv(4096)
        if not chunk:
            raise SystemExit("the feed closed before its hello")
        seen += chunk
    return feed


def read_until_resync(feed):
    feed.settimeout(1)
    deadline = time.monotonic() + 60
    seen = b""
    while time.monotonic() < deadline:
        try:
            chunk = feed.recv(65536)
        except socket.timeout:
            continue
        if not chunk:
            break
        seen += chunk
        marker = seen.find(b"event: resync\ndata: ")
        if marker >= 0 and b"\n" in seen[marker + 20:]:
            line = seen[marker + 20:].split(b"\n", 1)[0]
            return json.loads(line), len(seen)
    return None, len(seen)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy", type=int, required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--requests", type=int, required=True)
    parser.add_argument("--stalled-feed", action="store_true")
    args = parser.parse_args()
    feed = open_stalled_feed(args.proxy) if args.stalled_feed else None

    host = args.url.split("/")[2]
    request = f"GET {args.url} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
    connection = socket.create_connection(("127.0.0.1", args.proxy))
    stream = connection.makefile("rb")
    statuses = {}
    started = time.monotonic()
    batch = 32  # a few requests in flight at once, as a busy client has
    sent = 0
    received = 0
    while received < args.requests:
        while sent < args.requests and sent - received < batch:
            connection.sendall(request)
            sent += 1
        status, _ = read_response(stream)
        statuses[status] = statuses.get(status, 0) + 1
        received += 1
    seconds = time.monotonic() - started
    connection.close()

    out = {"statuses": statuses, "seconds": seconds}
    if feed:
        out["resync"], out["feedBytes"] = read_until_resync(feed)
        feed.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
