#!/usr/bin/env python3
"""Opens and abandons connections to mitm-proxy in every way a flaky client can, for leak tests.

usage: abort_connections.py PROXY_PORT ORIGIN_PORT PROXY_CA ROUNDS
Prints one line per kind: "<kind> <count>".
"""

import os
import socket
import ssl
import struct
import sys

import proxyclient

proxy, origin, ca, rounds = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
HALF_HELLO = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + os.urandom(20)


def reset(sock):
    """Closes with RST instead of FIN."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def connect_and_close():
    socket.create_connection(("127.0.0.1", proxy), timeout=10).close()


def half_request():
    sock = socket.create_connection(("127.0.0.1", proxy), timeout=10)
    sock.sendall(b"GET http://127.0.0.1:%d/hello HTTP/1.1\r\nHost: x" % origin)
    reset(sock)


def connect_then_close():
    proxyclient.open_tunnel(proxy, "localhost", origin).close()


def half_client_hello():
    sock = proxyclient.open_tunnel(proxy, "localhost", origin)
    sock.sendall(HALF_HELLO)
    sock.close()


def garbage_in_tunnel():
    sock = proxyclient.open_tunnel(proxy, "localhost", origin)
    sock.sendall(b"\x16\x03\x01\x00\x08" + os.urandom(8))
    sock.close()


def handshake_then_reset():
    tls = proxyclient.tls_tunnel(proxy, "localhost", origin, ca)
    reset(tls)


def reset_mid_response():
    tls = proxyclient.tls_tunnel(proxy, "localhost", origin, ca)
    tls.sendall(proxyclient.request("GET", "/bytes/20000000"))
    tls.recv(65536)
    reset(tls)


KINDS = [connect_and_close, half_request, connect_then_close, half_client_hello, garbage_in_tunnel,
         handshake_then_reset, reset_mid_response]

for kind in KINDS:
    done = 0
    for _ in range(rounds):
        try:
            kind()
            done += 1
        except OSError as error:
            print("%s failed: %s" % (kind.__name__, error), file=sys.stderr)
    print(kind.__name__, done)
