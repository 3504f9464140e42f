#!/usr/bin/env python3
"""Test origin server for mitm-proxy's live tests (python3 stdlib only).

Binds port 0, prints "PORT <n>" on stdout once listening, and logs only to
stderr. Exits when stdin reaches end of file (so a harness that dies never
leaks it) or on SIGTERM.

Endpoints (HEAD works on every GET path):
  GET  /hello              200 "hello from origin"
  GET  /bytes/N            N pattern bytes, Content-Length, written in 64 KiB pieces
  GET  /chunked/N          N pattern bytes, chunked, trailer X-Body-SHA256
  POST|PUT /digest         {"length": n, "sha256": "<hex>"} of the request body
  GET  /close-delimited/N  N pattern bytes, no framing, then the connection closes
  GET  /status/N           status N (200-599), bodiless for 204 and 304
  GET  /headers            JSON of the request line and headers as received
  GET  /ws                 with "Upgrade: websocket": 101, then raw echo until EOF
  GET  /slow/N[?ms=T]      N pattern bytes trickled over T ms (default 1000)
  GET  /seen               JSON list of "METHOD /path" of every request so far (itself excluded)

Pattern bytes: the byte at body offset i is i % 251.
"""

import argparse
import base64
import hashlib
import json
import os
import signal
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import TCPServer
from urllib.parse import parse_qs, urlsplit

PATTERN_PERIOD = 251
PATTERN = bytes(range(PATTERN_PERIOD))
PIECE = 64 * 1024
CHUNK_SIZES = (1000, 1, 65536, 17, 4096)
WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
BODILESS_STATUSES = (204, 304)


def pattern(offset, count):
    """Returns `count` pattern bytes starting at body offset `offset`."""
    start = offset % PATTERN_PERIOD
    repeats = (start + count) // PATTERN_PERIOD + 1
    return (PATTERN * repeats)[start:start + count]


def pattern_pieces(count, piece=PIECE):
    """Yields the first `count` pattern bytes in pieces of at most `piece` bytes."""
    offset = 0
    while offset < count:
        size = min(piece, count - offset)
        yield pattern(offset, size)
        offset += size


class BadRequest(Exception):
    pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mitm-proxy-test-origin"
    disable_nagle_algorithm = True
    # How long an idle keep-alive connection stays open. Longer than a test's pause between two clients can be on a
    # loaded run (the test pool has resumed a test a minute late): a pooled upstream must not be closed by the origin.
    timeout = 600

    def setup(self):
        if isinstance(self.request, ssl.SSLSocket):
            self.request.settimeout(10)
            self.request.do_handshake()
        super().setup()

    def version_string(self):
        return self.server_version

    def log_message(self, format, *args):
        if self.server.verbose:
            sys.stderr.write("origin: %s %s\n" % (self.address_string(), format % args))

    def do_GET(self):
        self.route(head=False)

    def do_HEAD(self):
        self.route(head=True)

    def do_POST(self):
        self.route_upload()

    def do_PUT(self):
        self.route_upload()

    def route(self, head):
        url = urlsplit(self.path)
        if url.path == "/seen":
            self.send_body(200, json.dumps(self.server.seen).encode(), "application/json", head)
            return
        self.server.seen.append("%s %s" % (self.command, self.path))
        parts = url.path.strip("/").split("/")
        name, argument = parts[0], parts[1] if len(parts) == 2 else None
        query = parse_qs(url.query)
        try:
            if url.path == "/hello":
                self.send_body(200, b"hello from origin", "text/plain; charset=utf-8", head)
            elif url.path == "/headers":
                self.send_body(200, self.headers_json(), "application/json", head)
            elif url.path == "/ws":
                self.websocket(head)
            elif name == "digest" and argument is None:
                self.send_plain(405, "use POST or PUT for /digest\n", head, {"Allow": "POST, PUT"})
            elif argument is None:
                self.send_plain(404, "not found\n", head)
            elif name == "bytes":
                self.send_pattern(count(argument), head)
            elif name == "chunked":
                self.send_chunked(count(argument), head)
            elif name == "close-delimited":
                self.send_close_delimited(count(argument), head)
            elif name == "status":
                self.send_status(count(argument), head)
            elif name == "slow":
                milliseconds = count(query.get("ms", ["1000"])[0])
                self.send_slow(count(argument), milliseconds / 1000, head)
            else:
                self.send_plain(404, "not found\n", head)
        except BadRequest as error:
            self.send_plain(400, "%s\n" % error, head)

    def route_upload(self):
        self.server.seen.append("%s %s" % (self.command, self.path))
        if urlsplit(self.path).path != "/digest":
            self.discard_body()
            self.send_plain(404, "not found\n", False)
            return
        try:
            length, digest = self.digest_body()
        except BadRequest as error:
            self.close_connection = True
            self.send_plain(400, "%s\n" % error, False)
            return
        answer = json.dumps({"length": length, "sha256": digest}).encode()
        self.send_body(200, answer, "application/json", False)

    def send_body(self, status, body, content_type, head, extra_headers=None):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (extra_headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def send_plain(self, status, text, head, extra_headers=None):
        self.send_body(status, text.encode(), "text/plain; charset=utf-8", head, extra_headers)

    def send_pattern(self, size, head):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        if not head:
            for piece in pattern_pieces(size):
                self.wfile.write(piece)

    def send_chunked(self, size, head):
        if self.request_version == "HTTP/1.0":
            self.send_close_delimited(size, head)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Trailer", "X-Body-SHA256")
        self.end_headers()
        if head:
            return
        digest = hashlib.sha256()
        offset = 0
        index = 0
        while offset < size:
            piece = pattern(offset, min(CHUNK_SIZES[index % len(CHUNK_SIZES)], size - offset))
            digest.update(piece)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            offset += len(piece)
            index += 1
        self.wfile.write(b"0\r\nX-Body-SHA256: %s\r\n\r\n" % digest.hexdigest().encode())

    def send_close_delimited(self, size, head):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.end_headers()
        if head:
            return
        self.close_connection = True
        for piece in pattern_pieces(size):
            self.wfile.write(piece)

    def send_status(self, status, head):
        if not 200 <= status <= 599:
            raise BadRequest("status must be between 200 and 599")
        if status in BODILESS_STATUSES:
            self.send_response(status)
            self.end_headers()
        elif status == 205:
            self.send_body(status, b"", "text/plain; charset=utf-8", head)
        else:
            self.send_plain(status, "status %d\n" % status, head)

    def send_slow(self, size, seconds, head):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        if head or size == 0:
            return
        pieces = min(size, 20)
        piece_size = -(-size // pieces)
        for index, piece in enumerate(pattern_pieces(size, piece_size)):
            if index > 0:
                time.sleep(seconds / pieces)
            self.wfile.write(piece)

    def headers_json(self):
        request_line = self.raw_requestline.decode("latin-1").rstrip("\r\n")
        described = {
            "request_line": request_line,
            "method": self.command,
            "target": self.path,
            "version": self.request_version,
            "headers": [[name, value] for name, value in self.headers.items()],
        }
        return json.dumps(described, indent=1).encode()

    def websocket(self, head):
        upgrade = self.headers.get("Upgrade", "")
        if head or upgrade.strip().lower() != "websocket":
            self.send_plain(426, "send GET /ws with Upgrade: websocket\n", head, {"Upgrade": "websocket"})
            return
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        key = self.headers.get("Sec-WebSocket-Key")
        if key is not None:
            accept = hashlib.sha1((key.strip() + WEBSOCKET_GUID).encode()).digest()
            self.send_header("Sec-WebSocket-Accept", base64.b64encode(accept).decode())
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        self.request.settimeout(None)
        while True:
            data = self.rfile.read1(PIECE)
            if not data:
                break
            self.wfile.write(data)

    def discard_body(self):
        for _ in self.body_pieces():
            pass

    def digest_body(self):
        digest = hashlib.sha256()
        length = 0
        for piece in self.body_pieces():
            digest.update(piece)
            length += len(piece)
        return length, digest.hexdigest()

    def body_pieces(self):
        encoding = self.headers.get("Transfer-Encoding")
        if encoding is not None:
            if encoding.strip().lower() != "chunked":
                raise BadRequest("unsupported Transfer-Encoding %r" % encoding)
            yield from self.chunked_pieces()
            return
        remaining = count(self.headers.get("Content-Length", "0"))
        while remaining > 0:
            piece = self.rfile.read(min(PIECE, remaining))
            if not piece:
                raise BadRequest("request body ended early")
            remaining -= len(piece)
            yield piece

    def chunked_pieces(self):
        while True:
            line = self.rfile.readline(1024)
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise BadRequest("bad chunk size line %r" % line)
            if size < 0:
                raise BadRequest("negative chunk size")
            if size == 0:
                break
            remaining = size
            while remaining > 0:
                piece = self.rfile.read(min(PIECE, remaining))
                if not piece:
                    raise BadRequest("chunk ended early")
                remaining -= len(piece)
                yield piece
            if self.rfile.readline(3) != b"\r\n":
                raise BadRequest("chunk data not followed by CRLF")
        while True:
            line = self.rfile.readline(8192)
            if line in (b"\r\n", b"\n", b""):
                break


def count(text):
    """Parses a non-negative decimal count, raising BadRequest otherwise."""
    if not text.isdigit():
        raise BadRequest("expected a non-negative decimal number, got %r" % text)
    return int(text)


class OriginServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    # socketserver's default backlog of 5 drops SYNs when dozens of clients connect at once.
    request_queue_size = 128

    def __init__(self, address, tls_context, verbose):
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.tls_context = tls_context
        self.verbose = verbose
        self.seen = []
        super().__init__(address, Handler)

    def server_bind(self):
        TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def get_request(self):
        connection, address = super().get_request()
        if self.tls_context is not None:
            connection = self.tls_context.wrap_socket(
                connection, server_side=True, do_handshake_on_connect=False)
        return connection, address

    def shutdown_request(self, request):
        if isinstance(request, ssl.SSLSocket):
            request.setblocking(False)
            try:
                request.unwrap()
            except (ssl.SSLError, OSError):
                pass
        super().shutdown_request(request)

    def handle_error(self, request, client_address):
        error = sys.exc_info()[1]
        if isinstance(error, (ssl.SSLError, ConnectionError, TimeoutError, BadRequest)):
            if self.verbose:
                sys.stderr.write("origin: %s: %s\n" % (client_address, error))
            return
        super().handle_error(request, client_address)


def exit_when_stdin_closes():
    while sys.stdin.buffer.read1(4096):
        pass
    os._exit(0)


def main():
    parser = argparse.ArgumentParser(description="mitm-proxy test origin server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--cert", help="PEM certificate chain (leaf first); omit for plain HTTP")
    parser.add_argument("--key", help="PEM private key for --cert")
    parser.add_argument("--ignore-stdin", action="store_true",
                        help="keep running when stdin closes (for manual demos)")
    parser.add_argument("--verbose", action="store_true", help="log requests to stderr")
    arguments = parser.parse_args()
    if (arguments.cert is None) != (arguments.key is None):
        parser.error("--cert and --key go together")

    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))

    tls_context = None
    if arguments.cert is not None:
        tls_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls_context.load_cert_chain(arguments.cert, arguments.key)
        tls_context.set_alpn_protocols(["http/1.1"])

    server = OriginServer((arguments.host, 0), tls_context, arguments.verbose)
    print("PORT %d" % server.server_address[1], flush=True)
    if not arguments.ignore_stdin:
        threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
