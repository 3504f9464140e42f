#!/usr/bin/env python3
"""HTTP/2 test origin for mitm-proxy's live tests (python3 with the `h2` package).

TLS with ALPN "h2" only. Binds port 0, prints "PORT <n>" on stdout once
listening, logs only to stderr, and exits when stdin reaches end of file (so a
harness that dies never leaks it) or on SIGTERM. Sends body data only as the
peer's flow-control windows allow.

Endpoints:
  GET  /hello             200 "hello from h2 origin"
  GET  /bytes/N           N pattern bytes (the byte at offset i is i % 251)
  POST|PUT /digest        {"length", "sha256", "trailers"} of the request body and trailers
  GET  /trailers          body "trailers follow\\n", then trailers x-body-sha256 and grpc-status
  GET  /headers           JSON list of [name, value, never_indexed] as received, pseudo-headers included
  GET  /early-hints       103 with a Link field, then 200
  GET  /reset/CODE        response head and 1000 bytes, then RST_STREAM(CODE)
  GET  /refuse            RST_STREAM(REFUSED_STREAM) before any response
  GET  /goaway            200 "bye", then GOAWAY(NO_ERROR) naming this stream as the last
  GET  /big-headers       a response head with ten 8 KiB fields (80 KiB in all)
  GET  /huge-field        a response head with one 100 KiB field (more than an HPACK decoder takes)
  GET  /wait-stalled?path=P  answers once the stream serving P is stalled on flow control
                          ({"sent": n, "stalled": true}) or has sent everything ("stalled": false)
  GET  /connection        {"connection": n, "accepted": total}: which TLS connection (numbered from 1 in
                          the order accepted) served the stream, and how many the origin accepted in all
  GET  /hold?ms=N         the same JSON, after N ms
  GET  /hold?ms=N&until=accepted:K   the same JSON once the origin has accepted K connections (at most N ms)
  GET  /hold?ms=N&until=streams:K    the same JSON once this connection has received K requests (at most N ms)
  GET  /hold?...&mark=PATH  also creates the file PATH when the hold begins (the request has reached the origin)
  CONNECT :protocol websocket (RFC 8441, with --extended-connect, which sends SETTINGS_ENABLE_CONNECT_PROTOCOL)
                          on /chat: 200, then a WebSocket echo on the stream (ws_echo.py), with
                          permessage-deflate when the client offers it; 403 on any other path
"""

import argparse
import asyncio
import hashlib
import json
import os
import signal
import ssl
import sys
import threading
from urllib.parse import parse_qs, urlsplit

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings
import hpack
from websockets.extensions.permessage_deflate import PerMessageDeflate
from websockets.protocol import State
from websockets.server import ServerProtocol

from ws_echo import Echo

PATTERN = bytes(range(251))


def pattern(offset, count):
    start = offset % len(PATTERN)
    repeats = (start + count) // len(PATTERN) + 1
    return (PATTERN * repeats)[start:start + count]


class Progress:
    """What every stream serving a path has sent, shared by all connections for /wait-stalled."""

    def __init__(self):
        self.sent = {}
        self.stalled = {}
        self.done = {}
        self.changed = asyncio.Event()

    def update(self, path, sent, stalled=False, done=False):
        self.sent[path] = sent
        self.stalled[path] = stalled
        self.done[path] = done
        self.changed.set()
        self.changed = asyncio.Event()

    async def wait_stalled(self, path):
        while not (self.stalled.get(path) or self.done.get(path)):
            await self.changed.wait()
        return {"sent": self.sent[path], "stalled": bool(self.stalled.get(path))}


class Stream:
    def __init__(self, headers):
        self.headers = headers
        self.body = hashlib.sha256()
        self.length = 0
        self.trailers = []
        self.window_open = asyncio.Event()
        self.reset = False


class Connection:
    accepted = 0
    # (condition, future) pairs of /hold?until=...: resolved once the condition holds.
    holds = []

    @classmethod
    def wake_holds(cls):
        for condition, future in list(cls.holds):
            if condition() and not future.done():
                future.set_result(None)
        cls.holds = [(condition, future) for condition, future in cls.holds if not future.done()]

    def __init__(self, reader, writer, arguments, progress):
        Connection.accepted += 1
        self.number = Connection.accepted
        self.requests = 0
        self.reader = reader
        self.writer = writer
        self.progress = progress
        config = h2.config.H2Configuration(client_side=False, header_encoding=None)
        self.conn = h2.connection.H2Connection(config=config)
        initial = {h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: arguments.max_concurrent_streams}
        if arguments.extended_connect:
            initial[h2.settings.SettingCodes.ENABLE_CONNECT_PROTOCOL] = 1
        self.conn.local_settings = h2.settings.Settings(client=False, initial_values=initial)
        self.streams = {}
        self.websockets = {}
        self.tasks = set()
        self.closed = False

    async def hold(self, query):
        milliseconds = int(query.get("ms", ["0"])[0])
        for mark in query.get("mark", []):
            with open(mark, "w"):
                pass
        until = query.get("until", [""])[0]
        kind, _, count = until.partition(":")
        if kind not in ("accepted", "streams") or not count.isdigit():
            await asyncio.sleep(milliseconds / 1000)
            return
        target = int(count)
        condition = (lambda: Connection.accepted >= target) if kind == "accepted" else (lambda: self.requests >= target)
        future = asyncio.get_running_loop().create_future()
        Connection.holds.append((condition, future))
        Connection.wake_holds()
        try:
            await asyncio.wait_for(future, milliseconds / 1000)
        except asyncio.TimeoutError:
            pass

    async def run(self):
        Connection.wake_holds()
        self.conn.initiate_connection()
        await self.flush()
        try:
            while not self.closed:
                data = await self.reader.read(65536)
                if not data:
                    break
                try:
                    events = self.conn.receive_data(data)
                except h2.exceptions.ProtocolError as error:
                    sys.stderr.write("h2_origin: protocol error from the peer: %s\n" % error)
                    await self.flush()
                    break
                for event in events:
                    self.handle(event)
                await self.flush()
        except (ConnectionError, ssl.SSLError, OSError):
            pass
        finally:
            self.closed = True
            for stream in self.streams.values():
                stream.reset = True
                stream.window_open.set()
            self.writer.close()

    def handle(self, event):
        if isinstance(event, h2.events.RequestReceived):
            self.requests += 1
            Connection.wake_holds()
            stream = Stream(event.headers)
            self.streams[event.stream_id] = stream
            fields = dict(event.headers)
            if fields.get(b":method") == b"CONNECT" and fields.get(b":protocol") == b"websocket":
                if fields.get(b":path") == b"/chat":
                    self.open_websocket(event.stream_id, fields)
                else:
                    self.conn.send_headers(event.stream_id, [(":status", "403")], end_stream=True)
            elif event.stream_ended is not None:
                self.start(event.stream_id)
        elif isinstance(event, h2.events.DataReceived) and event.stream_id in self.websockets:
            self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            self.websockets[event.stream_id][0].received(event.data)
            self.spawn(self.websocket_flush(event.stream_id))
        elif isinstance(event, h2.events.StreamEnded) and event.stream_id in self.websockets:
            self.websockets[event.stream_id][0].received(b"")
            self.spawn(self.websocket_flush(event.stream_id))
        elif isinstance(event, h2.events.DataReceived):
            stream = self.streams.get(event.stream_id)
            if stream is not None:
                stream.body.update(event.data)
                stream.length += len(event.data)
            self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.TrailersReceived):
            stream = self.streams.get(event.stream_id)
            if stream is not None:
                stream.trailers = event.headers
        elif isinstance(event, h2.events.StreamEnded):
            if event.stream_id in self.streams:
                self.start(event.stream_id)
        elif isinstance(event, h2.events.StreamReset):
            stream = self.streams.get(event.stream_id)
            if stream is not None:
                stream.reset = True
                stream.window_open.set()
        elif isinstance(event, (h2.events.WindowUpdated, h2.events.RemoteSettingsChanged)):
            for stream in self.streams.values():
                stream.window_open.set()
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.closed = True

    def start(self, stream_id):
        self.spawn(self.respond(stream_id))

    def spawn(self, coroutine):
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def open_websocket(self, stream_id, fields):
        offered = b"permessage-deflate" in fields.get(b"sec-websocket-extensions", b"")
        protocol = ServerProtocol(state=State.OPEN, max_size=None)
        headers = [(":status", "200")]
        if offered:
            protocol.extensions = [PerMessageDeflate(False, False, 15, 15)]
            headers.append(("sec-websocket-extensions", "permessage-deflate"))
        self.websockets[stream_id] = (Echo(protocol), asyncio.Lock())
        self.conn.send_headers(stream_id, headers)

    async def websocket_flush(self, stream_id):
        echo, lock = self.websockets[stream_id]
        async with lock:
            data, ended = echo.outgoing()
            try:
                if data:
                    await self.send_data(stream_id, data, None, end_stream=ended)
                elif ended:
                    self.conn.end_stream(stream_id)
            except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
                pass
            await self.flush()

    async def flush(self):
        data = self.conn.data_to_send()
        if data and not self.writer.is_closing():
            self.writer.write(data)
            try:
                await self.writer.drain()
            except (ConnectionError, ssl.SSLError, OSError):
                self.closed = True

    async def respond(self, stream_id):
        stream = self.streams[stream_id]
        fields = {field[0]: field[1] for field in stream.headers}
        method = fields.get(b":method", b"").decode()
        url = urlsplit(fields.get(b":path", b"/").decode())
        parts = url.path.strip("/").split("/")
        try:
            await self.route(stream_id, stream, method, url, parts)
        except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
            pass
        await self.flush()

    async def route(self, stream_id, stream, method, url, parts):
        if method in ("POST", "PUT") and url.path == "/digest":
            trailers = {name.decode(): value.decode() for name, value in stream.trailers}
            answer = {"length": stream.length, "sha256": stream.body.hexdigest(), "trailers": trailers}
            await self.send(stream_id, 200, json.dumps(answer).encode(), "application/json")
        elif url.path == "/hello":
            await self.send(stream_id, 200, b"hello from h2 origin", "text/plain; charset=utf-8")
        elif url.path == "/headers":
            listed = [[field[0].decode(), field[1].decode("latin-1"), isinstance(field, hpack.NeverIndexedHeaderTuple)]
                      for field in stream.headers]
            await self.send(stream_id, 200, json.dumps(listed).encode(), "application/json")
        elif url.path == "/trailers":
            body = b"trailers follow\n"
            self.conn.send_headers(stream_id, [(":status", "200"), ("content-type", "text/plain")])
            await self.send_data(stream_id, body, url.path, end_stream=False)
            self.conn.send_headers(stream_id, [("x-body-sha256", hashlib.sha256(body).hexdigest()),
                                               ("grpc-status", "0")], end_stream=True)
        elif url.path == "/early-hints":
            self.conn.send_headers(stream_id, [(":status", "103"), ("link", "</style.css>; rel=preload")])
            await self.flush()
            await self.send(stream_id, 200, b"after hints", "text/plain")
        elif parts[0] == "bytes" and len(parts) == 2 and parts[1].isdigit():
            count = int(parts[1])
            self.conn.send_headers(stream_id, [(":status", "200"), ("content-length", str(count)),
                                               ("content-type", "application/octet-stream")],
                                   end_stream=count == 0)
            await self.send_pattern(stream_id, count, url.path)
        elif parts[0] == "reset" and len(parts) == 2 and parts[1].isdigit():
            self.conn.send_headers(stream_id, [(":status", "200")])
            self.conn.send_data(stream_id, pattern(0, 1000))
            await self.flush()
            self.conn.reset_stream(stream_id, int(parts[1]))
        elif url.path == "/refuse":
            self.conn.reset_stream(stream_id, h2.errors.ErrorCodes.REFUSED_STREAM)
        elif url.path == "/goaway":
            await self.send(stream_id, 200, b"bye", "text/plain")
            self.conn.close_connection(error_code=0, last_stream_id=stream_id)
            await self.flush()
        elif url.path == "/big-headers":
            fields = [("x-big-%d" % index, "b" * 8 * 1024) for index in range(10)]
            await self.send(stream_id, 200, b"too big", "text/plain", fields)
        elif url.path == "/huge-field":
            await self.send(stream_id, 200, b"too big", "text/plain", [("x-huge", "h" * 100 * 1024)])
        elif url.path in ("/connection", "/hold"):
            if url.path == "/hold":
                await self.hold(parse_qs(url.query))
            answer = {"connection": self.number, "accepted": Connection.accepted}
            await self.send(stream_id, 200, json.dumps(answer).encode(), "application/json")
        elif url.path == "/wait-stalled":
            path = parse_qs(url.query).get("path", ["/"])[0]
            answer = await self.progress.wait_stalled(path)
            await self.send(stream_id, 200, json.dumps(answer).encode(), "application/json")
        else:
            await self.send(stream_id, 404, b"not found\n", "text/plain")

    async def send(self, stream_id, status, body, content_type, extra=()):
        headers = [(":status", str(status)), ("content-type", content_type), ("content-length", str(len(body)))]
        self.conn.send_headers(stream_id, headers + list(extra), end_stream=not body)
        if body:
            await self.send_data(stream_id, body, None, end_stream=True)
        else:
            await self.flush()

    async def send_pattern(self, stream_id, count, path):
        sent = 0
        stream = self.streams[stream_id]
        while sent < count and not stream.reset and not self.closed:
            window = min(self.conn.local_flow_control_window(stream_id), self.conn.max_outbound_frame_size)
            if window <= 0:
                stream.window_open.clear()
                self.progress.update(path, sent, stalled=True)
                await stream.window_open.wait()
                continue
            size = min(window, count - sent, 65536)
            self.conn.send_data(stream_id, pattern(sent, size), end_stream=sent + size == count)
            sent += size
            self.progress.update(path, sent, done=sent == count)
            await self.flush()

    async def send_data(self, stream_id, body, path, end_stream):
        offset = 0
        stream = self.streams[stream_id]
        while offset < len(body) and not stream.reset and not self.closed:
            window = min(self.conn.local_flow_control_window(stream_id), self.conn.max_outbound_frame_size)
            if window <= 0:
                stream.window_open.clear()
                await stream.window_open.wait()
                continue
            piece = body[offset:offset + window]
            offset += len(piece)
            self.conn.send_data(stream_id, piece, end_stream=end_stream and offset == len(body))
            await self.flush()


def exit_when_stdin_closes():
    while sys.stdin.buffer.read1(4096):
        pass
    os._exit(0)


async def serve(arguments):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(arguments.cert, arguments.key)
    context.set_alpn_protocols(["h2"])
    progress = Progress()

    async def accept(reader, writer):
        await Connection(reader, writer, arguments, progress).run()

    server = await asyncio.start_server(accept, arguments.host, 0, ssl=context)
    print("PORT %d" % server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


def main():
    parser = argparse.ArgumentParser(description="mitm-proxy HTTP/2 test origin")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--cert", required=True, help="PEM certificate chain (leaf first)")
    parser.add_argument("--key", required=True, help="PEM private key for --cert")
    parser.add_argument("--max-concurrent-streams", type=int, default=100)
    parser.add_argument("--extended-connect", action="store_true", help="accept WebSockets over HTTP/2 (RFC 8441)")
    parser.add_argument("--ignore-stdin", action="store_true", help="keep running when stdin closes")
    arguments = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    if not arguments.ignore_stdin:
        threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    asyncio.run(serve(arguments))


if __name__ == "__main__":
    main()
