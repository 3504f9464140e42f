#!/usr/bin/env python3
"""TLS WebSocket echo origin for mitm-proxy's live tests (python3 with the `websockets` package).

Binds port 0, prints "PORT <n>" on stdout once listening, logs only to stderr, and exits when stdin
reaches end of file or on SIGTERM. Every connection must open a WebSocket (any path); permessage-deflate is
accepted when the client offers it, unless --no-compression. What the WebSocket does: see ws_echo.py.
"""

import argparse
import asyncio
import os
import signal
import ssl
import sys
import threading

from websockets.extensions.permessage_deflate import ServerPerMessageDeflateFactory
from websockets.server import ServerProtocol

from ws_echo import Echo


async def serve_connection(reader, writer, arguments):
    extensions = None if arguments.no_compression else [ServerPerMessageDeflateFactory()]
    protocol = ServerProtocol(extensions=extensions, max_size=None)
    echo = None
    try:
        while True:
            data = await reader.read(65536)
            if echo is None:
                protocol.receive_data(data) if data else protocol.receive_eof()
                requests = protocol.events_received()
                if requests:
                    protocol.send_response(protocol.accept(requests[0]))
                    writer.write(b"".join(protocol.data_to_send()))
                    echo = Echo(protocol)
                    for frame in requests[1:]:
                        echo.handle(frame)
            else:
                echo.received(data)
                out, ended = echo.outgoing()
                if out:
                    writer.write(out)
                    await writer.drain()
                if ended:
                    break
            if not data:
                break
    except (ConnectionError, ssl.SSLError, OSError) as error:
        sys.stderr.write("ws_origin: %s\n" % error)
    finally:
        writer.close()


async def serve(arguments):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(arguments.cert, arguments.key)
    context.set_alpn_protocols(["http/1.1"])
    server = await asyncio.start_server(lambda r, w: serve_connection(r, w, arguments), arguments.host, 0, ssl=context)
    print("PORT %d" % server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


def exit_when_stdin_closes():
    while sys.stdin.buffer.read1(4096):
        pass
    os._exit(0)


def main():
    parser = argparse.ArgumentParser(description="mitm-proxy WebSocket test origin")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--no-compression", action="store_true")
    arguments = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    asyncio.run(serve(arguments))


if __name__ == "__main__":
    main()
