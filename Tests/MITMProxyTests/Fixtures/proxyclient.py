"""Small HTTP/1.1 client pieces for the live tests' python clients that talk through mitm-proxy.

Raw sockets on purpose: the tests control every byte (pipelining, malformed input, 100-continue,
upgrades) and see every byte of the answer (chunk framing, trailers, interim responses).
"""

import socket
import ssl


def authority(host, port):
    """host:port, with brackets around an IPv6 literal."""
    return "[%s]:%d" % (host, port) if ":" in host else "%s:%d" % (host, port)


def open_tunnel(proxy_port, host, port, timeout=20):
    """Sends CONNECT host:port to the proxy on 127.0.0.1 and returns the socket once it answered 200."""
    sock = socket.create_connection(("127.0.0.1", proxy_port), timeout=timeout)
    target = authority(host, port).encode()
    sock.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target))
    reader = Reader(sock)
    status, _, _ = reader.head()
    if status != 200:
        raise RuntimeError("CONNECT %s answered %d" % (target.decode(), status))
    if reader.buffer:
        raise RuntimeError("bytes after the CONNECT response")
    return sock


def tls_tunnel(proxy_port, host, port, cafile, server_name=None, alpn=None, timeout=20):
    """A TLS connection to host:port through the proxy, verified with python's default context and `cafile`."""
    sock = open_tunnel(proxy_port, host, port, timeout)
    context = ssl.create_default_context(cafile=cafile)
    if alpn:
        context.set_alpn_protocols(alpn)
    return context.wrap_socket(sock, server_hostname=server_name or host)


class Reader:
    """Buffered reads of HTTP/1.1 messages from a socket."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""

    def fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise EOFError("connection closed with %d bytes buffered" % len(self.buffer))
        self.buffer += chunk

    def line(self):
        while b"\r\n" not in self.buffer:
            self.fill()
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def exactly(self, count):
        while len(self.buffer) < count:
            self.fill()
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def until_eof(self):
        while True:
            try:
                self.fill()
            except EOFError:
                data, self.buffer = self.buffer, b""
                return data

    def head(self):
        """(status, reason, [(name, value)]) of the next response head."""
        status_line = self.line().decode("latin-1")
        _, status, reason = (status_line.split(" ", 2) + [""])[:3]
        fields = []
        while True:
            line = self.line()
            if not line:
                return int(status), reason, fields
            name, value = line.decode("latin-1").split(":", 1)
            fields.append((name.strip(), value.strip()))

    def chunked(self):
        """(body, trailers) of a chunked body, checking the framing."""
        body = b""
        while True:
            size = int(self.line().split(b";")[0], 16)
            if size == 0:
                break
            body += self.exactly(size)
            if self.exactly(2) != b"\r\n":
                raise RuntimeError("chunk not followed by CRLF")
        trailers = []
        while True:
            line = self.line()
            if not line:
                return body, trailers
            name, value = line.decode("latin-1").split(":", 1)
            trailers.append((name.strip(), value.strip()))

    def response(self, method="GET"):
        """The next final response: (status, headers, body, trailers, interim statuses)."""
        interim = []
        while True:
            status, _, fields = self.head()
            if 100 <= status < 200 and status != 101:
                interim.append(status)
                continue
            break
        headers = {name.lower(): value for name, value in fields}
        trailers = []
        if method == "HEAD" or status in (101, 204, 304):
            body = b""
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            body, trailers = self.chunked()
        elif "content-length" in headers:
            body = self.exactly(int(headers["content-length"]))
        else:
            body = self.until_eof()
        return status, headers, body, trailers, interim


def request(method, path, host="x", headers=(), body=b""):
    """The bytes of a request with Content-Length when there is a body."""
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: %s" % host]
    lines += ["%s: %s" % field for field in headers]
    if body:
        lines.append("Content-Length: %d" % len(body))
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def pattern(count):
    """The origin's pattern bytes: byte i is i % 251."""
    period = bytes(range(251))
    return (period * (count // 251 + 1))[:count]
