"""A raw HTTP/1.1 origin with one misbehaviour (or one strict duty) per --behavior, for relay tests.

Same command line and PORT line as origin.py. Every connection is served by a thread that reads request
heads byte-exactly (no parsing library in between, so what the proxy sent is what is seen):

  record       answers each request 200 with a body that is the request head exactly as received
  chunked-head answers HEAD with `Transfer-Encoding: chunked` and no body (correct), GET with "hello"
  chunked-304  answers a request with If-None-Match with 304 + `Transfer-Encoding: chunked` and no body
  silent       reads the request and never answers
  late         answers each request after 2 seconds
  unrequested  answers the request together with (in the same write) a second response nobody asked for
  switching    answers every request `101 Switching Protocols` (asked for or not), then sends raw bytes and echoes
  faults       misbehaves by path: /reset-mid-body (Content-Length 1 MiB, 64 KiB of it, then a TCP reset),
               /reset-mid-chunked (a 64 KiB chunk, then a reset), /close-before-response (FIN right after the head),
               /reset-before-response, /half-close-after-response (a close-delimited 100,000-byte body, then
               close_notify and FIN while it keeps reading until the proxy closes), /half-close-before-response
               (close_notify and FIN instead of an answer); any other path gets 200 "ok"
  tap          keeps every byte every connection sends; answers `GET /shape/NAME` with the ambiguous response
               NAME (see AMBIGUOUS_RESPONSES), any other request 200 "ok"; a connection whose first bytes are
               `DUMP\r\n` gets back everything the other connections sent, and is closed
  h2-once      (TLS) chooses ALPN h2 on its first connection and closes it after the handshake; every later
               connection chooses http/1.1 and gets 200 "ok" to each request (an upstream that changed its protocol)
"""
import argparse
import os
import signal
import socket
import ssl
import struct
import sys
import threading
import time


def read_head(connection, pending):
    while b"\r\n\r\n" not in pending:
        data = connection.recv(65536)
        if not data:
            return None, pending
        pending += data
    end = pending.index(b"\r\n\r\n") + 4
    return pending[:end], pending[end:]


def response(status, headers, body=b""):
    lines = ["HTTP/1.1 %s" % status] + ["%s: %s" % pair for pair in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def respond(connection, status, headers, body=b""):
    connection.sendall(response(status, headers, body))


# Responses whose length a client and a proxy could read differently; each body holds SMUGGLED, which must never
# reach the client.
AMBIGUOUS_RESPONSES = {
    "cl-te": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n8\r\nSMUGGLED\r\n0\r\n\r\n",
    "two-cl": b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\nContent-Length: 3\r\n\r\nSMUGGLED",
    "te-not-chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nSMUGGLED",
    "te-chunked-not-final": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, identity\r\n\r\n8\r\nSMUGGLED\r\n0\r\n\r\n",
    "chunk-overflow": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000008\r\nSMUGGLED\r\n0\r\n\r\n",
    "cl-sign": b"HTTP/1.1 200 OK\r\nContent-Length: +8\r\n\r\nSMUGGLED",
    "cl-space": b"HTTP/1.1 200 OK\r\nContent-Length: 8 0\r\n\r\nSMUGGLED",
    "chunk-size-space": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n8 \r\nSMUGGLED\r\n0\r\n\r\n",
    "obs-fold": b"HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\nContent-Length: 8\r\n\r\nSMUGGLED",
    "bare-lf": b"HTTP/1.1 200 OK\nContent-Length: 8\n\nSMUGGLED",
    "nul-in-name": b"HTTP/1.1 200 OK\r\nX-A\x00B: 1\r\nContent-Length: 8\r\n\r\nSMUGGLED",
    "ctl-in-value": b"HTTP/1.1 200 OK\r\nX-A: a\x01b\r\nContent-Length: 8\r\n\r\nSMUGGLED",
}

AS_SENT_RESPONSE = b"HTTP/1.1 200 \xc7a va\r\nX-Tab:\tv\r\nX-Spaced:   kept  \r\nContent-Length: 2\r\n\r\nok"

tapped = []
tapped_lock = threading.Lock()


def tap(connection):
    """The `tap` behaviour: keeps every received byte, answers by path, and dumps on request."""
    received = bytearray()
    with tapped_lock:
        tapped.append(received)
    pending = b""
    while True:
        data = connection.recv(65536)
        if not data:
            return
        if not received and data.startswith(b"DUMP\r\n"):
            with tapped_lock:
                everything = b"".join(bytes(other) for other in tapped if other is not received)
            connection.sendall(everything)
            return
        received += data
        pending += data
        while b"\r\n\r\n" in pending:
            end = pending.index(b"\r\n\r\n") + 4
            head, pending = pending[:end], pending[end:]
            target = head.split(b" ", 2)[1].decode("latin-1")
            shape = target.rsplit("/shape/", 1)[1] if "/shape/" in target else None
            if shape in AMBIGUOUS_RESPONSES:
                connection.sendall(AMBIGUOUS_RESPONSES[shape])
            else:
                respond(connection, "200 OK", [("Content-Length", 2)], b"ok")


def reset(connection):
    """Closes with a TCP reset instead of a FIN (and without close_notify)."""
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()


def half_close(connection):
    """Ends this side's output (close_notify first under TLS) and reads until the peer closes too."""
    if isinstance(connection, ssl.SSLSocket):
        connection.setblocking(False)
        try:
            connection.unwrap()
        except (ssl.SSLError, OSError):
            pass  # close_notify went out; the peer's comes later, or never
        connection.setblocking(True)
    socket.socket.shutdown(connection, socket.SHUT_WR)
    connection.settimeout(60)
    while socket.socket.recv(connection, 65536):
        pass


def fault(connection, target):
    """The `faults` behaviour for one request; False once the connection is done."""
    path = target.split("?", 1)[0]
    if path == "/reset-mid-body":
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n" + b"r" * 65536)
        reset(connection)
    elif path == "/reset-mid-chunked":
        connection.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000\r\n" + b"r" * 65536 + b"\r\n")
        reset(connection)
    elif path == "/close-before-response":
        connection.close()
    elif path == "/reset-before-response":
        reset(connection)
    elif path == "/half-close-after-response":
        connection.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + b"h" * 100000)
        half_close(connection)
    elif path == "/half-close-before-response":
        half_close(connection)
    else:
        respond(connection, "200 OK", [("Content-Length", 2)], b"ok")
        return True
    return False


def serve(connection, behavior):
    pending = b""
    try:
        if behavior == "tap":
            tap(connection)
            return
        while True:
            head, pending = read_head(connection, pending)
            if head is None:
                return
            method = head.split(b" ", 1)[0]
            if behavior == "faults":
                if fault(connection, head.split(b" ", 2)[1].decode("latin-1")):
                    continue
                return
            if behavior == "record":
                respond(connection, "200 OK", [("Content-Length", len(head))], head)
            elif behavior == "chunked-head":
                if method == b"HEAD":
                    respond(connection, "200 OK", [("Transfer-Encoding", "chunked")])
                else:
                    respond(connection, "200 OK", [("Content-Length", 5)], b"hello")
            elif behavior == "chunked-304":
                if b"if-none-match" in head.lower():
                    respond(connection, "304 Not Modified", [("ETag", '"v1"'), ("Transfer-Encoding", "chunked")])
                else:
                    respond(connection, "200 OK", [("Content-Length", 5)], b"fresh")
            elif behavior == "as-sent":
                # Valid, but not how the proxy would write it: a tab, spaces kept around a value, a reason phrase
                # that is not UTF-8.
                connection.sendall(AS_SENT_RESPONSE)
            elif behavior == "h2-once":
                respond(connection, "200 OK", [("Content-Length", 2)], b"ok")
            elif behavior == "late":
                time.sleep(2)  # a slow origin on purpose: it answers after the client's handshake deadline passed
                respond(connection, "200 OK", [("Content-Length", 4)], b"late")
            elif behavior == "silent":
                threading.Event().wait()
            elif behavior == "unrequested":
                # One write: the stray response reaches the proxy with the answer, before the client can ask again
                # (written apart, a loaded proxy could forward the next request first and take the stray as its answer).
                connection.sendall(response("200 OK", [("Content-Length", 2)], b"ok")
                                   + response("200 OK", [("Content-Length", 3)], b"bad"))
            elif behavior == "switching":
                connection.sendall(response("101 Switching Protocols", [("Upgrade", "raw"), ("Connection", "Upgrade")])
                                   + b"RAW BYTES NOBODY RECORDS")
                while True:
                    data = connection.recv(65536)
                    if not data:
                        return
                    connection.sendall(data)
    except (OSError, ssl.SSLError):
        pass
    finally:
        connection.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--behavior", required=True)
    arguments = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    context = None
    if arguments.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(arguments.cert, arguments.key)
        context.set_alpn_protocols(["http/1.1"])
    first_context = None
    if context is not None and arguments.behavior == "h2-once":
        first_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        first_context.load_cert_chain(arguments.cert, arguments.key)
        first_context.set_alpn_protocols(["h2"])
    listener = socket.create_server((arguments.host, 0), backlog=128)
    print("PORT %d" % listener.getsockname()[1], flush=True)

    def accept_forever():
        nonlocal first_context
        while True:
            connection, _ = listener.accept()
            if context is not None:
                once, first_context_used = first_context, first_context is not None
                try:
                    connection = (once or context).wrap_socket(connection, server_side=True)
                except (OSError, ssl.SSLError):
                    connection.close()
                    continue
                if first_context_used:
                    first_context = None
                    connection.close()
                    continue
            threading.Thread(target=serve, args=(connection, arguments.behavior), daemon=True).start()

    threading.Thread(target=accept_forever, daemon=True).start()
    while sys.stdin.buffer.read1(4096):
        pass
    os._exit(0)


if __name__ == "__main__":
    main()
