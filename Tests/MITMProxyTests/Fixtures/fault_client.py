#!/usr/bin/env python3
"""One request through mitm-proxy inside an intercepted tunnel, for the fault tests; prints what came back as JSON.

usage: fault_client.py PROXY_PORT ORIGIN_PORT PROXY_CA PATH [half-close|half-close-notify]

With `half-close` the client shuts its TCP write side right after the request (no close_notify); with
`half-close-notify` it sends close_notify first, as a TLS client that is done sending does. Either way it
then reads the response to its end. The JSON: the status (null if none came), the body bytes received, the
Content-Length (null if none), whether the body arrived complete by its framing, and how the connection
ended ("eof", "reset", or the error).

TLS runs over memory BIOs: python's SSLSocket.unwrap() would, right after sending close_notify, read on and
throw away whatever response had already arrived.
"""

import json
import socket
import ssl
import sys

import proxyclient


class TLSClient:
    """A TLS client over a connected socket, driven through memory BIOs."""

    def __init__(self, sock, cafile, hostname):
        self.sock = sock
        self.incoming = ssl.MemoryBIO()
        self.outgoing = ssl.MemoryBIO()
        self.tls = ssl.create_default_context(cafile=cafile).wrap_bio(self.incoming, self.outgoing,
                                                                      server_hostname=hostname)
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self.flush()
                self.fill()
        self.flush()

    def flush(self):
        data = self.outgoing.read()
        if data:
            self.sock.sendall(data)

    def fill(self):
        data = self.sock.recv(65536)
        if data:
            self.incoming.write(data)
        else:
            self.incoming.write_eof()

    def sendall(self, data):
        self.tls.write(data)
        self.flush()

    def close_notify(self):
        """Sends close_notify without waiting for the proxy's (reading stays possible)."""
        try:
            self.tls.unwrap()
        except ssl.SSLWantReadError:
            pass
        self.flush()

    def recv(self, count):
        """Up to `count` bytes; b"" at close_notify or a bare TCP end."""
        while True:
            try:
                return self.tls.read(count)
            except ssl.SSLWantReadError:
                self.fill()
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                return b""


proxy, origin, ca, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
mode = sys.argv[5] if len(sys.argv) > 5 else ""

raw = proxyclient.open_tunnel(proxy, "localhost", origin, timeout=30)
tls = TLSClient(raw, ca, "localhost")
tls.sendall(proxyclient.request("GET", path, host="localhost:%d" % origin, headers=[("Connection", "close")]))
if mode == "half-close-notify":
    tls.close_notify()
if mode.startswith("half-close"):
    raw.shutdown(socket.SHUT_WR)

reader = proxyclient.Reader(tls)
result = {"status": None, "body": 0, "declared": None, "complete": False, "ended": None}
try:
    status, _, fields = reader.head()
    headers = {name.lower(): value for name, value in fields}
    result["status"] = status
    if "content-length" in headers:
        result["declared"] = int(headers["content-length"])
    if headers.get("transfer-encoding", "").lower() == "chunked":
        result["body"] = len(reader.buffer)  # what arrived, should the body break off
        body, _ = reader.chunked()
        result["body"] = len(body)
        result["complete"] = True
    elif result["declared"] is not None:
        body = reader.until_eof()
        result["body"] = min(len(body), result["declared"])
        result["complete"] = len(body) >= result["declared"]
    else:
        result["body"] = len(reader.until_eof())
        result["complete"] = True
    result["ended"] = "eof" if not reader.until_eof() else "more bytes"
except EOFError:
    result["ended"] = "eof"
except ConnectionResetError:
    result["ended"] = "reset"
except (ssl.SSLError, OSError, ValueError, RuntimeError) as error:
    result["ended"] = type(error).__name__
print(json.dumps(result))
