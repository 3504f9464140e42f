#!/usr/bin/env python3
"""Stops mitm-proxy with a signal while transfers are in flight, for the interrupt tests.

usage: inflight_signal.py PROXY_PORT PROXY_PID ORIGIN_PORT PROXY_CA FINISHED IN_FLIGHT SIGNAL

First FINISHED requests complete through intercepted tunnels to localhost:ORIGIN_PORT (three per keep-alive
connection, each with a URL of its own); then IN_FLIGHT tunnels each ask for 100 MiB and read only its first
bytes, so every one of them is mid-response; then the proxy gets SIGNAL. Prints JSON: the URLs that finished
(whole body read) before the signal, the URLs in flight at the signal, and how each in-flight connection ended.
"""

import json
import os
import socket
import ssl
import sys

import proxyclient

proxy, pid, origin, ca = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
finished_count, in_flight_count, signal_number = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])


def request(path):
    return proxyclient.request("GET", path, host="localhost:%d" % origin)


finished = []
for first in range(0, finished_count, 3):
    tls = proxyclient.tls_tunnel(proxy, "localhost", origin, ca)
    reader = proxyclient.Reader(tls)
    for index in range(first, min(first + 3, finished_count)):
        path = "/hello?finished=%d" % index if index % 2 else "/bytes/%d?finished=%d" % (20000 + index, index)
        tls.sendall(request(path))
        status, headers, body, _, _ = reader.response()
        expected = 17 if index % 2 else 20000 + index
        if status != 200 or len(body) != expected:
            raise SystemExit("%s answered %d with %d bytes" % (path, status, len(body)))
        finished.append(path)
    tls.close()

in_flight = []
for index in range(in_flight_count):
    tls = proxyclient.tls_tunnel(proxy, "localhost", origin, ca)
    tls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    path = "/bytes/104857600?in-flight=%d" % index
    tls.sendall(request(path))
    reader = proxyclient.Reader(tls)
    status, _, _ = reader.head()
    if status != 200:
        raise SystemExit("%s answered %d" % (path, status))
    while not reader.buffer:
        reader.fill()
    in_flight.append((path, tls))

os.kill(pid, signal_number)

endings = {}
for path, tls in in_flight:
    tls.settimeout(30)
    ending = "eof"
    try:
        while tls.recv(1 << 20):
            pass
    except (ConnectionError, ssl.SSLError, OSError) as error:
        ending = type(error).__name__
    endings[ending] = endings.get(ending, 0) + 1
    tls.close()

print(json.dumps({"finished": finished, "in_flight": [path for path, _ in in_flight], "endings": endings}))
