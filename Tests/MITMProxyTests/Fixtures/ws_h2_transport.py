"""A WebSocket over an HTTP/2 stream (RFC 8441 extended CONNECT) through mitm-proxy, for ws_client.py --h2."""

import socket
import ssl

import h2.config
import h2.connection
import h2.events
import h2.settings
import proxyclient
from websockets.client import ClientProtocol
from websockets.extensions.permessage_deflate import PerMessageDeflate
from websockets.protocol import State
from websockets.uri import parse_uri


class NotOffered(Exception):
    """The proxy's SETTINGS did not offer extended CONNECT."""


class HTTP2Transport:
    def __init__(self, arguments, extensions):
        self.sock = proxyclient.tls_tunnel(arguments.proxy_port, arguments.host, arguments.port, arguments.cafile,
                                           alpn=["h2"])
        if self.sock.selected_alpn_protocol() != "h2":
            raise SystemExit("the proxy did not negotiate h2")
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        self.send()
        self.data = b""
        self.ended = False
        self.response = None
        self.stream = None
        # Extended CONNECT may come in a second SETTINGS frame: after the first, one round trip (a PING) settles it.
        self.wait(lambda: self.conn.remote_settings.enable_connect_protocol == 1 or self.pinged)
        if self.conn.remote_settings.enable_connect_protocol != 1:
            raise NotOffered()
        self.stream = self.conn.get_next_available_stream_id()
        authority = "%s:%d" % (arguments.host, arguments.port)
        headers = [(":method", "CONNECT"), (":protocol", "websocket"), (":scheme", "https"), (":path", arguments.path),
                   (":authority", authority), ("sec-websocket-version", "13")]
        if extensions:
            headers.append(("sec-websocket-extensions", "permessage-deflate"))
        self.conn.send_headers(self.stream, headers)
        self.send()
        self.wait(lambda: self.response is not None)
        status = self.response.get(":status")
        if status != "200":
            print('{"status": %s}' % status)
            raise SystemExit(0)
        self.extensions = self.response.get("sec-websocket-extensions", "")
        self.protocol = ClientProtocol(parse_uri("wss://%s/chat" % authority), state=State.OPEN, max_size=None)
        if "permessage-deflate" in self.extensions:
            self.protocol.extensions = [PerMessageDeflate(False, False, 15, 15)]

    pinged = False

    def send(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def pump(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise SystemExit("the proxy closed the connection")
        for event in self.conn.receive_data(chunk):
            if isinstance(event, h2.events.RemoteSettingsChanged) and self.stream is None and not self.pinged:
                self.conn.ping(b"settings")
            elif isinstance(event, h2.events.PingAckReceived):
                self.pinged = True
            elif isinstance(event, h2.events.ResponseReceived) and event.stream_id == self.stream:
                self.response = dict(event.headers)
            elif isinstance(event, h2.events.DataReceived) and event.stream_id == self.stream:
                self.data += event.data
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded) and event.stream_id == self.stream:
                self.ended = True
            elif isinstance(event, h2.events.StreamReset) and event.stream_id == self.stream:
                self.ended = True
        self.send()

    def wait(self, condition):
        while not condition():
            self.pump()

    def write(self, data):
        while data:
            window = min(self.conn.local_flow_control_window(self.stream), self.conn.max_outbound_frame_size)
            if window <= 0:
                self.pump()
                continue
            self.conn.send_data(self.stream, data[:window])
            data = data[window:]
            self.send()

    def read(self):
        while not self.data and not self.ended:
            self.pump()
        data, self.data = self.data, b""
        return data

    def end(self):
        """Ends this side of the stream once the origin ended its own (the WebSocket's closing handshake)."""
        self.wait(lambda: self.ended)
        self.conn.end_stream(self.stream)
        self.send()
