#!/usr/bin/env python3
"""WebSocket test client for mitm-proxy's live tests (python3 with the `websockets` package).

Opens a CONNECT tunnel through the proxy, TLS inside it (trusting --cafile), and a WebSocket to the echo origin
(ws_origin.py, or h2_origin.py with --h2: RFC 8441 extended CONNECT on an HTTP/2 stream). Frames are written
and read with the sans-I/O layer of `websockets`, so the client knows every byte it received. Prints one JSON
object on stdout; exits 0 when the scenario ran, 2 on a setup failure.

Scenarios:
  session    text, binary, a text in three fragments, ping, a large compressible text, "digest" (the origin's
             hash of what it sent must equal the hash of what arrived), then a close from the client
  unmasked   sends an unmasked text frame (a protocol error only the origin may judge) and reports the
             origin's answer
  server-close  asks the origin to close with 4001 "origin leaves"
"""

import argparse
import base64
import hashlib
import json
import socket
import ssl
import sys

import proxyclient
from websockets.client import ClientProtocol
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory, PerMessageDeflate
from websockets.frames import Opcode
from websockets.protocol import State
from websockets.uri import parse_uri

LARGE = ("WebSocket through mitm-proxy, the same words again and again. " * 2000)


class HTTP1Transport:
    """A WebSocket over a TLS tunnel: the HTTP/1.1 Upgrade handshake, then the frames."""

    def __init__(self, arguments, extensions):
        self.sock = proxyclient.tls_tunnel(arguments.proxy_port, arguments.host, arguments.port, arguments.cafile,
                                           alpn=["http/1.1"])
        uri = parse_uri("wss://%s:%d%s" % (arguments.host, arguments.port, arguments.path))
        self.protocol = ClientProtocol(uri, extensions=extensions, max_size=None)
        self.protocol.send_request(self.protocol.connect())
        self.sock.sendall(b"".join(self.protocol.data_to_send()))
        buffer = b""
        while b"\r\n\r\n" not in buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise SystemExit("the connection closed during the handshake")
            buffer += chunk
        head, rest = buffer.split(b"\r\n\r\n", 1)
        self.protocol.receive_data(head + b"\r\n\r\n")
        response = self.protocol.events_received()[0]
        if response.status_code != 101:
            raise SystemExit("handshake answered %d" % response.status_code)
        self.extensions = response.headers.get("Sec-WebSocket-Extensions", "")
        self.leftover = rest

    def write(self, data):
        self.sock.sendall(data)

    def end(self):
        """The closing handshake is over: the origin closes the TCP connection, then the client."""
        while self.read():
            pass

    def read(self):
        if self.leftover:
            data, self.leftover = self.leftover, b""
            return data
        try:
            return self.sock.recv(65536)
        except (ConnectionError, ssl.SSLError):
            return b""


class Session:
    def __init__(self, transport):
        self.transport = transport
        self.protocol = transport.protocol
        self.received = hashlib.sha256()
        self.events = []
        self.message = None

    def flush(self):
        data = b"".join(self.protocol.data_to_send())
        if data:
            self.transport.write(data)

    def next(self):
        """The next complete message, pong or close from the origin, as (kind, payload, frames)."""
        while True:
            while self.events:
                frame = self.events.pop(0)
                if frame.opcode in (Opcode.TEXT, Opcode.BINARY):
                    self.message = [frame.opcode, frame.data, 1]
                elif frame.opcode == Opcode.CONT:
                    self.message[1] += frame.data
                    self.message[2] += 1
                elif frame.opcode == Opcode.PONG:
                    return ("pong", frame.data, 1)
                elif frame.opcode == Opcode.CLOSE:
                    self.flush()
                    return ("close", frame.data, 1)
                else:
                    continue
                if frame.fin:
                    opcode, data, frames = self.message
                    return ("text" if opcode == Opcode.TEXT else "binary", data, frames)
            data = self.transport.read()
            self.received.update(data)
            if data:
                self.protocol.receive_data(data)
            else:
                self.protocol.receive_eof()
            self.events += self.protocol.events_received()
            if not data and not self.events:
                return ("eof", b"", 0)


def describe(kind, data, frames):
    text = kind == "text"
    if kind == "close":
        code = int.from_bytes(data[:2], "big") if len(data) >= 2 else None
        return {"type": kind, "code": code, "reason": data[2:].decode()}
    return {"type": kind, "data": data.decode() if text else base64.b64encode(data).decode(), "frames": frames}


def session(transport):
    s = Session(transport)
    p = s.protocol
    received = []
    p.send_text("hello ✓".encode())
    s.flush()
    received.append(describe(*s.next()))
    p.send_binary(bytes(range(256)))
    s.flush()
    received.append(describe(*s.next()))
    p.send_text(b"frag", fin=False)
    p.send_continuation(b"mented ", fin=False)
    p.send_continuation(b"message", fin=True)
    s.flush()
    received.append(describe(*s.next()))
    p.send_ping(b"are you there")
    s.flush()
    received.append(describe(*s.next()))
    p.send_text(LARGE.encode())
    s.flush()
    kind, data, frames = s.next()
    received.append({"type": kind, "length": len(data), "matches": data == LARGE.encode()})
    snapshot = s.received.hexdigest()
    p.send_text(b"digest")
    s.flush()
    kind, data, _ = s.next()
    digest_matches = data.decode() == "sha256:" + snapshot
    p.send_close(1000, "client done")
    s.flush()
    received.append(describe(*s.next()))
    transport.end()
    return {"extensions": transport.extensions, "received": received, "digestMatches": digest_matches,
            "digestReply": data.decode()}


def unmasked(transport):
    s = Session(transport)
    transport.write(b"\x81\x05hello")
    return {"answer": describe(*s.next())}


def server_close(transport):
    s = Session(transport)
    s.protocol.send_text(b"close 4001 origin leaves")
    s.flush()
    return {"answer": describe(*s.next()), "state": s.protocol.state.name}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy-port", type=int, required=True)
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--cafile", required=True)
    parser.add_argument("--no-compression", action="store_true")
    parser.add_argument("--h2", action="store_true")
    parser.add_argument("--path", default="/chat", help="the WebSocket's path (--h2: the origin refuses all but /chat)")
    parser.add_argument("scenario", choices=["session", "unmasked", "server-close"])
    arguments = parser.parse_args()
    extensions = None if arguments.no_compression else [ClientPerMessageDeflateFactory()]
    if arguments.h2:
        from ws_h2_transport import HTTP2Transport, NotOffered
        try:
            transport = HTTP2Transport(arguments, extensions)
        except NotOffered:
            print(json.dumps({"extendedConnect": False}))
            return
    else:
        transport = HTTP1Transport(arguments, extensions)
    scenario = {"session": session, "unmasked": unmasked, "server-close": server_close}[arguments.scenario]
    print(json.dumps(scenario(transport)))


if __name__ == "__main__":
    main()
