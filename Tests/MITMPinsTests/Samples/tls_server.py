#!/usr/bin/env python3
"""Local TLS server for the `mitm-proxy pins --connect` tests.

Binds 127.0.0.1 on a port the kernel picks, prints that port on one line, and serves until its
standard input closes.

usage: tls_server.py tls CHAIN KEY [SNI_NAME SNI_CHAIN SNI_KEY]
       tls_server.py plain

tls:   TLS with CHAIN/KEY, or SNI_CHAIN/SNI_KEY when the client sends SNI_NAME. A connection that
       starts with CONNECT is answered like a proxy tunnelling to this same server (200, then TLS),
       except a CONNECT to refused.test, which gets 403.
plain: answers every connection with a plain-text HTTP 400, like a port that does not speak TLS.
"""
import socket
import ssl
import sys
import threading


def context(chain, key):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(chain, key)
    return ctx


def read_head(conn):
    data = b""
    while b"\r\n\r\n" not in data and len(data) < 65536:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def serve_tls(conn, ctx):
    if conn.recv(7, socket.MSG_PEEK) == b"CONNECT":
        target = read_head(conn).split(b" ")[1]
        if target.startswith(b"refused.test"):
            conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            return
        conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    tls = ctx.wrap_socket(conn, server_side=True)
    try:
        tls.recv(1)
    finally:
        tls.close()


def serve_plain(conn):
    conn.recv(4096)
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


def handle(conn, handler):
    conn.settimeout(10)
    try:
        handler(conn)
    except (OSError, ssl.SSLError):
        pass
    finally:
        conn.close()


def main():
    mode = sys.argv[1]
    if mode == "tls":
        ctx = context(sys.argv[2], sys.argv[3])
        if len(sys.argv) == 7:
            name, alternative = sys.argv[4], context(sys.argv[5], sys.argv[6])

            def choose(sslobj, server_name, _ctx):
                if server_name == name:
                    sslobj.context = alternative

            ctx.sni_callback = choose
        handler = lambda conn: serve_tls(conn, ctx)
    else:
        handler = serve_plain
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)

    def accept_forever():
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=handle, args=(conn, handler), daemon=True).start()

    threading.Thread(target=accept_forever, daemon=True).start()
    print(listener.getsockname()[1], flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
