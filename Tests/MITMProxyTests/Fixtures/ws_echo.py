"""WebSocket echo behaviour shared by the test origins (ws_origin.py over HTTP/1.1, h2_origin.py over RFC 8441).

Frames are handled with the sans-I/O layer of the `websockets` package, so every byte the origin sends is known:
each data frame is echoed as it came (a fragment stays a fragment, with the same opcode and FIN bit), pings are
answered by the library, and some texts are commands:
  "digest"               answered with "sha256:<hex>" of every byte sent after the handshake before this answer
  "close CODE REASON"    the origin sends a close frame with CODE and REASON
"""

import hashlib

from websockets.frames import Opcode


class Echo:
    def __init__(self, protocol):
        self.protocol = protocol
        self.sent = hashlib.sha256()
        self.text = None  # the text message being received, for commands

    def outgoing(self):
        """Bytes to write (counted in the digest) and whether the origin's side of the WebSocket ended."""
        pieces = self.protocol.data_to_send()
        data = b"".join(pieces)
        self.sent.update(data)
        return data, any(piece == b"" for piece in pieces)

    def received(self, data):
        """Handles bytes from the client."""
        if data:
            self.protocol.receive_data(data)
        else:
            self.protocol.receive_eof()
        for frame in self.protocol.events_received():
            self.handle(frame)

    def handle(self, frame):
        if frame.opcode == Opcode.TEXT:
            self.text = frame.data if not frame.fin else None
            if frame.fin and self.command(frame.data):
                return
            self.protocol.send_text(frame.data, fin=frame.fin)
        elif frame.opcode == Opcode.BINARY:
            self.text = None
            self.protocol.send_binary(frame.data, fin=frame.fin)
        elif frame.opcode == Opcode.CONT:
            if self.text is not None:
                self.text += frame.data
            self.protocol.send_continuation(frame.data, fin=frame.fin)

    def command(self, data):
        if data == b"digest":
            self.protocol.send_text(b"sha256:" + self.sent.hexdigest().encode())
            return True
        if data.startswith(b"close "):
            _, code, reason = data.decode().split(" ", 2)
            self.protocol.send_close(int(code), reason)
            return True
        return False
