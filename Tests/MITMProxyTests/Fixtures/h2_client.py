#!/usr/bin/env python3
"""HTTP/2 test client for mitm-proxy's live tests (python3 with the `h2` package).

Opens a CONNECT tunnel through the proxy, negotiates TLS with ALPN "h2" (trusting
--cafile), runs one scenario and prints its result as one JSON object on stdout.
Exits 0 when the scenario ran (whatever it observed), 2 on a setup failure.

Scenarios:
  get PATH...           GET each path on one connection, all at once; statuses, bodies' sha256, trailers
  concurrent N SIZE     N streams of GET /bytes/SIZE at once; checks every body against the pattern
  reset                 /bytes/10485760 reset by the client after its head, beside /hello and /bytes/100000
  upstream-reset CODE   /reset/CODE beside /hello: what the client sees of each
  slow-reader           GET /bytes/67108864 never read past the first window, then /wait-stalled on the same connection
  upload-trailers SIZE  POST SIZE bytes to /digest with trailer x-checksum
  headers               GET /headers with a never-indexed authorization field
  early-hints           GET /early-hints: interim and final status
  goaway                GET /goaway, then a GET on the same connection after the GOAWAY
  big-request-headers   GET /hello with a 70 KiB header field
  big-request-trailers  POST /digest with a 70 KiB trailer field
  flow-violation        POST with 300 KiB of DATA beyond a 256 KiB stream window, beside /hello
  stream-zero-data      a DATA frame on stream 0 after the preface
  preface-missing       HTTP/1.1 request bytes instead of the HTTP/2 preface
  preface-only          the connection preface and SETTINGS, then close
  client-goaway         GET /hello, then GOAWAY(NO_ERROR) from the client; reads until the proxy hangs up
  wait-for-goaway       GET /hello, then waits for the proxy's GOAWAY (when it stops) and the close
  rapid-reset N         N streams opened and reset at once (CVE-2023-44487)
  continuation-flood N  a HEADERS without END_HEADERS, then up to N CONTINUATION frames of one field each
  settings-flood N      N empty SETTINGS frames written without reading a byte, then reads to the end
  ping-flood N          N PING frames written without reading a byte, then reads to the end
  header-list KIB       GET /hello with KIB KiB of 100-byte fields, then GET /hello on the same connection
  header-bomb           one header block of a 4000-byte field then ~147,000 one-byte references to it
                        (HPACK: about 600 MB once decoded), then GET /hello on the same connection
  wait-stalled PATH     GET /wait-stalled?path=PATH: what the origin had sent on PATH when flow control stopped it
  zero-window PATH      SETTINGS_INITIAL_WINDOW_SIZE 0, GET PATH, never a WINDOW_UPDATE but a PING every half
                        second: reads until the proxy hangs up and reports what arrived and after how long
"""

import argparse
import hashlib
import json
import socket
import ssl
import struct
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
import hpack

PATTERN = bytes(range(251))


def pattern(offset, count):
    start = offset % len(PATTERN)
    repeats = (start + count) // len(PATTERN) + 1
    return (PATTERN * repeats)[start:start + count]


class Client:
    def __init__(self, arguments):
        self.authority = "%s:%d" % (arguments.host, arguments.port)
        raw = socket.create_connection((arguments.proxy_host, arguments.proxy_port), timeout=20)
        raw.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (self.authority, self.authority)).encode())
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = raw.recv(4096)
            if not chunk:
                raise SystemExit("proxy closed the CONNECT")
            answer += chunk
        if not answer.startswith(b"HTTP/1.1 200"):
            raise SystemExit("CONNECT refused: %r" % answer[:80])
        context = ssl.create_default_context(cafile=arguments.cafile)
        context.set_alpn_protocols(["h2", "http/1.1"])
        self.sock = context.wrap_socket(raw, server_hostname=arguments.host)
        self.alpn = self.sock.selected_alpn_protocol()
        config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        self.conn = h2.connection.H2Connection(config=config)
        self.streams = {}
        self.goaway = None
        self.closed = False

    def start(self):
        self.conn.initiate_connection()
        self.flush()

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def request(self, path, method="GET", extra=(), end_stream=True):
        stream_id = self.conn.get_next_available_stream_id()
        headers = [(":method", method), (":scheme", "https"), (":authority", self.authority), (":path", path)]
        self.conn.send_headers(stream_id, headers + list(extra), end_stream=end_stream)
        self.streams[stream_id] = {"path": path, "status": None, "informational": [], "headers": {},
                                   "body": hashlib.sha256(), "length": 0, "trailers": {}, "ended": False,
                                   "reset": None, "data": bytearray(), "keep": False}
        self.flush()
        return stream_id

    def step(self, acknowledge=lambda stream_id: True):
        """Reads once and handles the events; False when the connection is gone."""
        try:
            data = self.sock.recv(65536)
        except (ConnectionError, ssl.SSLError, OSError):
            data = b""
        if not data:
            self.closed = True
            return False
        for event in self.conn.receive_data(data):
            self.handle(event, acknowledge)
        self.flush()
        return True

    def handle(self, event, acknowledge):
        if isinstance(event, h2.events.InformationalResponseReceived):
            self.streams[event.stream_id]["informational"].append(dict(event.headers).get(":status"))
        elif isinstance(event, h2.events.ResponseReceived):
            stream = self.streams[event.stream_id]
            stream["headers"] = dict(event.headers)
            stream["status"] = int(stream["headers"][":status"])
        elif isinstance(event, h2.events.DataReceived):
            stream = self.streams.get(event.stream_id)
            if stream is not None:
                stream["body"].update(event.data)
                if stream["keep"]:
                    stream["data"] += event.data
                stream["length"] += len(event.data)
            if acknowledge(event.stream_id):
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif event.flow_controlled_length:
                # Unread on its stream, but the connection window reopens so siblings keep flowing.
                self.conn.increment_flow_control_window(event.flow_controlled_length)
        elif isinstance(event, h2.events.TrailersReceived):
            self.streams[event.stream_id]["trailers"] = dict(event.headers)
        elif isinstance(event, h2.events.StreamEnded):
            self.streams[event.stream_id]["ended"] = True
        elif isinstance(event, h2.events.StreamReset):
            if event.stream_id in self.streams:
                self.streams[event.stream_id]["reset"] = int(event.error_code)
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.goaway = {"code": int(event.error_code), "last_stream_id": event.last_stream_id,
                           "debug": (event.additional_data or b"").decode("utf-8", "replace")}

    def finished(self, stream_id):
        stream = self.streams[stream_id]
        return stream["ended"] or stream["reset"] is not None

    def run_until(self, condition, acknowledge=lambda stream_id: True):
        while not condition():
            if not self.step(acknowledge):
                break

    def summary(self, stream_id):
        stream = self.streams[stream_id]
        return {"path": stream["path"], "status": stream["status"], "length": stream["length"],
                "sha256": stream["body"].hexdigest(), "trailers": stream["trailers"], "ended": stream["ended"],
                "reset": stream["reset"], "informational": stream["informational"], "headers": stream["headers"]}

    def raw_frame(self, frame_type, flags, stream_id, payload):
        self.sock.sendall(struct.pack(">I", len(payload))[1:] + bytes([frame_type, flags])
                          + struct.pack(">I", stream_id) + payload)


FRAME_NAMES = {0: "DATA", 1: "HEADERS", 3: "RST_STREAM", 4: "SETTINGS", 6: "PING", 7: "GOAWAY", 8: "WINDOW_UPDATE",
               9: "CONTINUATION"}


def frame(frame_type, flags, stream_id, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([frame_type, flags]) + struct.pack(">I", stream_id) + payload


def hpack_integer(value, prefix_bits, flags=0):
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([flags | value])
    encoded = bytearray([flags | limit])
    value -= limit
    while value >= 128:
        encoded.append((value & 127) | 128)
        value >>= 7
    encoded.append(value)
    return bytes(encoded)


def literal(name, value):
    """An HPACK literal field with a new name, without indexing and without Huffman coding."""
    name, value = name.encode(), value.encode()
    return b"\x00" + hpack_integer(len(name), 7) + name + hpack_integer(len(value), 7) + value


class FrameTally:
    """Frames read straight off the connection, past h2's state machine (which a flood leaves behind)."""

    def __init__(self):
        self.pending = bytearray()
        self.counts = {}
        self.goaway = None
        self.resets = {}

    def feed(self, data):
        self.pending += data
        offset = 0
        while len(self.pending) - offset >= 9:
            length = int.from_bytes(self.pending[offset:offset + 3], "big")
            if len(self.pending) - offset < 9 + length:
                break
            kind, flags = self.pending[offset + 3], self.pending[offset + 4]
            stream_id = int.from_bytes(self.pending[offset + 5:offset + 9], "big") & 0x7FFFFFFF
            payload = bytes(self.pending[offset + 9:offset + 9 + length])
            offset += 9 + length
            name = FRAME_NAMES.get(kind, "type-%d" % kind) + ("_ACK" if kind in (4, 6) and flags & 1 else "")
            self.counts[name] = self.counts.get(name, 0) + 1
            if kind == 7 and self.goaway is None:
                self.goaway = {"code": int.from_bytes(payload[4:8], "big"),
                               "last_stream_id": int.from_bytes(payload[:4], "big") & 0x7FFFFFFF,
                               "debug": payload[8:].decode("utf-8", "replace")}
            elif kind == 3:
                self.resets[str(stream_id)] = int.from_bytes(payload[:4], "big")
        del self.pending[:offset]

    def drain_available(self, sock):
        """Reads what has arrived without waiting; False once the connection is gone."""
        sock.setblocking(False)
        try:
            while True:
                try:
                    chunk = sock.recv(65536)
                except (ssl.SSLWantReadError, BlockingIOError):
                    return True
                except (ConnectionError, ssl.SSLError, OSError):
                    return False
                if not chunk:
                    return False
                self.feed(chunk)
        finally:
            sock.settimeout(30)

    def read_to_end(self, sock):
        sock.settimeout(30)
        while True:
            try:
                chunk = sock.recv(65536)
            except (ConnectionError, ssl.SSLError, OSError):
                return
            if not chunk:
                return
            self.feed(chunk)

    def result(self, **extra):
        extra.update({"goaway": self.goaway, "frames": self.counts, "resets": self.resets, "closed": True})
        return extra


def scenario_get(client, paths):
    ids = [client.request(path) for path in paths]
    client.run_until(lambda: all(client.finished(i) for i in ids))
    return {"streams": [client.summary(i) for i in ids]}


def scenario_concurrent(client, count, size):
    ids = []
    for _ in range(count):
        while client.conn.open_outbound_streams >= client.conn.remote_settings.max_concurrent_streams:
            client.step()
        ids.append(client.request("/bytes/%d" % size))
    client.run_until(lambda: all(client.finished(i) for i in ids))
    expected = hashlib.sha256(pattern(0, size)).hexdigest()
    good = [i for i in ids if client.streams[i]["status"] == 200 and client.streams[i]["body"].hexdigest() == expected]
    return {"ok": len(good), "statuses": [client.streams[i]["status"] for i in ids],
            "resets": [client.streams[i]["reset"] for i in ids if client.streams[i]["reset"] is not None]}


def scenario_reset(client):
    big = client.request("/bytes/10485760")
    small = [client.request("/hello"), client.request("/bytes/100000")]
    client.run_until(lambda: client.streams[big]["status"] is not None)
    client.conn.reset_stream(big, error_code=8)
    client.flush()
    client.run_until(lambda: all(client.finished(i) for i in small))
    return {"reset": client.summary(big), "siblings": [client.summary(i) for i in small]}


def scenario_upstream_reset(client, code):
    doomed = client.request("/reset/%d" % code)
    sibling = client.request("/hello")
    client.run_until(lambda: client.finished(doomed) and client.finished(sibling))
    return {"reset": client.summary(doomed), "sibling": client.summary(sibling)}


def scenario_slow_reader(client):
    big = client.request("/bytes/67108864")
    # Acknowledge nothing on the big stream: once its first window is in, the client reads no more of it.
    client.run_until(lambda: client.streams[big]["length"] >= 65535 or client.finished(big),
                     acknowledge=lambda stream_id: stream_id != big)
    wait = client.request("/wait-stalled?path=/bytes/67108864")
    client.streams[wait]["keep"] = True
    client.run_until(lambda: client.finished(wait), acknowledge=lambda stream_id: stream_id != big)
    answer = json.loads(bytes(client.streams[wait]["data"]) or b"{}")
    return {"received": client.streams[big]["length"], "origin": answer, "wait_status": client.streams[wait]["status"]}


def scenario_upload_trailers(client, size):
    stream_id = client.request("/digest", method="POST", end_stream=False)
    client.streams[stream_id]["keep"] = True
    body = pattern(0, size)
    offset = 0
    while offset < size:
        window = min(client.conn.local_flow_control_window(stream_id), client.conn.max_outbound_frame_size)
        if window <= 0:
            client.step()
            continue
        piece = body[offset:offset + window]
        client.conn.send_data(stream_id, piece)
        offset += len(piece)
        client.flush()
    client.conn.send_headers(stream_id, [("x-checksum", hashlib.sha256(body).hexdigest())], end_stream=True)
    client.flush()
    client.run_until(lambda: client.finished(stream_id))
    summary = client.summary(stream_id)
    summary["answer"] = json.loads(bytes(client.streams[stream_id]["data"]) or b"{}")
    summary["expected_sha256"] = hashlib.sha256(body).hexdigest()
    return summary


def scenario_headers(client):
    secret = hpack.NeverIndexedHeaderTuple("authorization", "Bearer secret-token")
    stream_id = client.request("/headers", extra=[("x-first", "1"), secret, ("x-last", "2")])
    client.streams[stream_id]["keep"] = True
    client.run_until(lambda: client.finished(stream_id))
    summary = client.summary(stream_id)
    summary["received"] = json.loads(bytes(client.streams[stream_id]["data"]) or b"[]")
    return summary


def scenario_goaway(client):
    first = client.request("/goaway")
    client.run_until(lambda: client.finished(first) and client.goaway is not None)
    result = {"first": client.summary(first), "goaway": client.goaway}
    try:
        late = client.request("/hello")
        client.run_until(lambda: client.finished(late) or client.closed)
        result["late"] = client.summary(late)
    except h2.exceptions.ProtocolError as error:
        result["late_refused_locally"] = str(error)
    client.run_until(lambda: client.closed)
    result["closed"] = client.closed
    return result


def scenario_big_request_headers(client):
    stream_id = client.request("/hello", extra=[("x-big", "b" * 70 * 1024)])
    sibling = client.request("/hello")
    client.run_until(lambda: client.finished(stream_id) and client.finished(sibling))
    return {"big": client.summary(stream_id), "sibling": client.summary(sibling)}


def scenario_big_request_trailers(client):
    stream_id = client.request("/digest", method="POST", end_stream=False)
    client.conn.send_data(stream_id, b"body")
    client.conn.send_headers(stream_id, [("x-big", "t" * 70 * 1024)], end_stream=True)
    client.flush()
    sibling = client.request("/hello")
    client.run_until(lambda: client.finished(stream_id) and client.finished(sibling))
    return {"big": client.summary(stream_id), "sibling": client.summary(sibling)}


def scenario_flow_violation(client):
    stream_id = client.request("/digest", method="POST", end_stream=False)
    client.run_until(lambda: client.conn.remote_settings.initial_window_size > 65535)
    window = client.conn.remote_settings.initial_window_size
    frame = 16384
    for offset in range(0, window + 300 * 1024, frame):
        client.raw_frame(0x0, 0, stream_id, pattern(offset, frame))
    sibling = client.request("/hello")
    client.run_until(lambda: client.finished(sibling) and client.streams[stream_id]["reset"] is not None)
    return {"violator": client.summary(stream_id), "sibling": client.summary(sibling), "window": window,
            "goaway": client.goaway}


def scenario_stream_zero_data(client):
    client.raw_frame(0x0, 0, 0, b"x" * 10)
    client.run_until(lambda: client.goaway is not None)
    client.run_until(lambda: client.closed)
    return {"goaway": client.goaway, "closed": client.closed}


def scenario_preface_missing(client):
    client.sock.sendall(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
    received = b""
    while True:
        try:
            chunk = client.sock.recv(65536)
        except (ConnectionError, ssl.SSLError, OSError):
            chunk = b""
        if not chunk:
            break
        received += chunk
    frames = []
    offset = 0
    while offset + 9 <= len(received):
        length = int.from_bytes(received[offset:offset + 3], "big")
        frames.append({"type": received[offset + 3],
                       "payload": received[offset + 9:offset + 9 + length].hex()})
        offset += 9 + length
    goaway = [f for f in frames if f["type"] == 7]
    code = int(goaway[0]["payload"][8:16], 16) if goaway else None
    return {"goaway_code": code, "closed": True}


def scenario_preface_only(client):
    # FIN after the preface, then read until the proxy hangs up: closing with unread bytes would
    # send a reset that can overtake the preface.
    client.sock.shutdown(socket.SHUT_WR)
    while True:
        try:
            if not client.sock.recv(65536):
                break
        except (ConnectionError, ssl.SSLError, OSError):
            break
    client.sock.close()
    return {"closed": True}


def scenario_client_goaway(client):
    first = client.request("/hello")
    client.run_until(lambda: client.finished(first))
    client.conn.close_connection(error_code=0)
    client.flush()
    while not client.closed:
        try:
            data = client.sock.recv(65536)
        except (ConnectionError, ssl.SSLError, OSError):
            data = b""
        client.closed = not data
    return {"first": client.summary(first), "closed": client.closed}


def scenario_wait_for_goaway(client):
    first = client.request("/hello")
    client.run_until(lambda: client.finished(first))
    client.run_until(lambda: client.goaway is not None)
    while not client.closed:
        try:
            data = client.sock.recv(65536)
        except (ConnectionError, ssl.SSLError, OSError):
            data = b""
        client.closed = not data
    return {"first": client.summary(first), "goaway": client.goaway, "closed": client.closed}


def scenario_rapid_reset(client, count):
    """Opens `count` streams and resets each at once (CVE-2023-44487), writing without waiting for answers; reports
    how many went out before the proxy ended the session, and how it ended it."""
    sent = 0
    client.sock.setblocking(False)
    while sent < count and client.goaway is None and not client.closed:
        for _ in range(100):
            stream_id = client.conn.get_next_available_stream_id()
            client.conn.send_headers(stream_id, [(":method", "GET"), (":scheme", "https"),
                                                 (":authority", client.authority), (":path", "/hello")])
            client.conn.reset_stream(stream_id, error_code=8)
            sent += 1
        data = client.conn.data_to_send()
        try:
            client.sock.setblocking(True)
            client.sock.sendall(data)
        except (ConnectionError, ssl.SSLError, OSError):
            client.closed = True
        client.sock.setblocking(False)
        while True:
            try:
                chunk = client.sock.recv(65536)
            except (ssl.SSLWantReadError, BlockingIOError):
                break
            except (ConnectionError, ssl.SSLError, OSError):
                chunk = b""
            if not chunk:
                client.closed = True
                break
            try:
                for event in client.conn.receive_data(chunk):
                    if isinstance(event, h2.events.ConnectionTerminated):
                        client.goaway = {"code": int(event.error_code), "last_stream_id": event.last_stream_id}
            except h2.exceptions.ProtocolError:
                pass
    client.sock.setblocking(True)
    while not client.closed:
        try:
            data = client.sock.recv(65536)
        except (ConnectionError, ssl.SSLError, OSError):
            data = b""
        if not data:
            client.closed = True
            break
        try:
            for event in client.conn.receive_data(data):
                if isinstance(event, h2.events.ConnectionTerminated) and client.goaway is None:
                    client.goaway = {"code": int(event.error_code), "last_stream_id": event.last_stream_id}
        except h2.exceptions.ProtocolError:
            pass
    return {"sent": sent, "goaway": client.goaway, "closed": client.closed}


def scenario_continuation_flood(client, count):
    """A request head that never ends: HEADERS without END_HEADERS, then CONTINUATION frames of one field each, in
    batches, until `count` went out or the proxy answered."""
    tally = FrameTally()
    stream_id = client.conn.get_next_available_stream_id()
    head = b"".join(literal(name, value) for name, value in [
        (":method", "GET"), (":scheme", "https"), (":authority", client.authority), (":path", "/hello")])
    batch = frame(0x9, 0, stream_id, literal("x-flood", "f" * 100)) * 100
    sent = 0
    try:
        client.sock.sendall(frame(0x1, 0x1, stream_id, head))
        while sent < count and tally.goaway is None:
            client.sock.sendall(batch)
            sent += 100
            if not tally.drain_available(client.sock):
                break
    except (ConnectionError, ssl.SSLError, OSError):
        pass
    tally.read_to_end(client.sock)
    return tally.result(sent=sent)


def scenario_ack_flood(client, frame_type, count):
    """`count` frames that each ask for an ACK (SETTINGS or PING), written without reading a byte (the proxy's
    answers pile up), then everything read to the end."""
    tally = FrameTally()
    one = frame(frame_type, 0, 0, b"" if frame_type == 0x4 else b"\x00" * 8)
    batch = one * 1000
    sent = 0
    try:
        while sent < count:
            client.sock.sendall(batch)
            sent += 1000
    except (ConnectionError, ssl.SSLError, OSError):
        pass
    tally.read_to_end(client.sock)
    return tally.result(sent=sent)


def scenario_header_list(client, kib):
    """A request whose header list is `kib` KiB (100-byte fields: 12-byte names, 56-byte values, 32 bytes of
    HPACK overhead each), then a plain request on the same connection."""
    fields = [("x-field-%05d" % index, "v" * 56) for index in range(kib * 1024 // 100)]
    big = client.request("/hello", extra=fields)
    sibling = client.request("/hello")
    client.run_until(lambda: (client.finished(big) and client.finished(sibling)) or client.goaway is not None)
    client.run_until(lambda: client.closed or (client.finished(big) and client.finished(sibling)))
    return {"big": client.summary(big), "sibling": client.summary(sibling), "goaway": client.goaway,
            "closed": client.closed}


def scenario_header_bomb(client):
    """HPACK's amplification: a 4000-byte field enters the dynamic table once, then 140,000 one-byte references to
    it fill the rest of a HEADERS frame and eight CONTINUATION frames; decoded, the list is about 565 MB."""
    big = client.request("/hello", extra=[("x-bomb", "b" * 4000)] * 140000)
    sibling = client.request("/hello")
    client.run_until(lambda: (client.finished(big) and client.finished(sibling)) or client.goaway is not None)
    return {"big": client.summary(big), "sibling": client.summary(sibling), "goaway": client.goaway,
            "closed": client.closed}


def scenario_zero_window(client, path):
    """Holds every stream window at zero (SETTINGS_INITIAL_WINDOW_SIZE 0, never a WINDOW_UPDATE) while asking for
    `path`, and keeps the connection busy with a PING every half second until the proxy hangs up (at most 60 s)."""
    client.conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
    client.flush()
    stream_id = client.request(path)
    client.run_until(lambda: client.streams[stream_id]["status"] is not None or client.goaway is not None)
    headed = time.monotonic()
    tally = FrameTally()
    pings = 0
    client.sock.settimeout(0.5)
    while time.monotonic() - headed < 60:
        try:
            chunk = client.sock.recv(65536)
        except TimeoutError:
            client.sock.sendall(frame(0x6, 0, 0, b"\x00" * 8))
            pings += 1
            continue
        except (ConnectionError, ssl.SSLError, OSError):
            break
        if not chunk:
            break
        tally.feed(chunk)
    return tally.result(status=client.streams[stream_id]["status"], body=client.streams[stream_id]["length"],
                        pings=pings, seconds_after_head=round(time.monotonic() - headed, 2))

def scenario_wait_stalled(client, path):
    stream_id = client.request("/wait-stalled?path=" + path)
    client.streams[stream_id]["keep"] = True
    client.run_until(lambda: client.finished(stream_id))
    return {"status": client.streams[stream_id]["status"],
            "origin": json.loads(bytes(client.streams[stream_id]["data"]) or b"{}")}


def main():
    parser = argparse.ArgumentParser(description="mitm-proxy HTTP/2 test client")
    parser.add_argument("--proxy-host", default="127.0.0.1")
    parser.add_argument("--proxy-port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1", help="the origin's name (SNI and :authority)")
    parser.add_argument("--port", type=int, required=True, help="the origin's port")
    parser.add_argument("--cafile", required=True, help="the proxy's CA certificate")
    parser.add_argument("scenario")
    parser.add_argument("arguments", nargs="*")
    arguments = parser.parse_args()
    client = Client(arguments)
    if client.alpn != "h2":
        print(json.dumps({"alpn": client.alpn}))
        sys.exit(2)
    if arguments.scenario != "preface-missing":
        client.start()
    extra = arguments.arguments
    runners = {
        "get": lambda: scenario_get(client, extra),
        "concurrent": lambda: scenario_concurrent(client, int(extra[0]), int(extra[1])),
        "reset": lambda: scenario_reset(client),
        "upstream-reset": lambda: scenario_upstream_reset(client, int(extra[0])),
        "slow-reader": lambda: scenario_slow_reader(client),
        "upload-trailers": lambda: scenario_upload_trailers(client, int(extra[0])),
        "headers": lambda: scenario_headers(client),
        "early-hints": lambda: scenario_get(client, ["/early-hints"]),
        "goaway": lambda: scenario_goaway(client),
        "big-request-headers": lambda: scenario_big_request_headers(client),
        "big-request-trailers": lambda: scenario_big_request_trailers(client),
        "flow-violation": lambda: scenario_flow_violation(client),
        "stream-zero-data": lambda: scenario_stream_zero_data(client),
        "preface-missing": lambda: scenario_preface_missing(client),
        "preface-only": lambda: scenario_preface_only(client),
        "client-goaway": lambda: scenario_client_goaway(client),
        "wait-for-goaway": lambda: scenario_wait_for_goaway(client),
        "rapid-reset": lambda: scenario_rapid_reset(client, int(extra[0])),
        "continuation-flood": lambda: scenario_continuation_flood(client, int(extra[0])),
        "settings-flood": lambda: scenario_ack_flood(client, 0x4, int(extra[0])),
        "ping-flood": lambda: scenario_ack_flood(client, 0x6, int(extra[0])),
        "header-list": lambda: scenario_header_list(client, int(extra[0])),
        "header-bomb": lambda: scenario_header_bomb(client),
        "zero-window": lambda: scenario_zero_window(client, extra[0]),
        "wait-stalled": lambda: scenario_wait_stalled(client, extra[0]),
    }
    result = runners[arguments.scenario]()
    result["alpn"] = client.alpn
    print(json.dumps(result))


if __name__ == "__main__":
    main()
