"""Socket.IO frames as the bridge reads them: every client event arrives *marked*, and a
frame the decoder cannot read arrives as a marked "malformed" event, never as an exception.

The bridge's Socket.IO layer (:mod:`bridge.transport.socketio_server`) decodes every
Engine.IO message with :class:`GuardedPacket`, which decodes as python-socketio's own
:class:`socketio.packet.Packet` and then rewrites what the server must not see as is:

- an EVENT's data becomes ``[CLIENT_FRAME, original]``: a client's event is told apart
  from the marked malformed frames by its mark, whatever name the client gave it;
- a frame that is no Socket.IO packet the bridge accepts (broken JSON, a binary frame, a
  packet type a client never sends, nesting past the decoder, a huge ack id, an empty or
  non-text Engine.IO message) becomes an EVENT on ``/fate`` whose data is
  ``[MALFORMED_FRAME, reason, namespace]``, with the frame's ack id when it was on ``/fate``,
  so the namespace answers it (and that answer goes back as the ack).
"""

from __future__ import annotations

import re
from typing import Any

from socketio import packet

from bridge.service.protocol import NAMESPACE
from bridge.store import codec

# Event names no client can send: every client event is wrapped under CLIENT_FRAME.
CLIENT_FRAME = "fate.client-frame"
MALFORMED_FRAME = "fate.malformed-frame"

# What a client may send: joining and leaving a namespace, events and acks. Binary packets
# are not part of the protocol (everything is JSON); CONNECT_ERROR only flows to clients.
CLIENT_PACKET_TYPES = frozenset({packet.CONNECT, packet.DISCONNECT, packet.EVENT, packet.ACK})
# The head of an event frame: type, optional attachment count, optional namespace, ack id.
# python-socketio refuses ids of 100 digits or more; so does this.
_EVENT_HEAD = re.compile(r"^[25](?:\d+-)?(/[^,]*,)?(\d{1,99})(?!\d)")
# Told from an explicit ``encoded_packet=None`` (a message whose JSON was ``null``).
_OUTGOING: Any = object()


def frame_head(encoded: str) -> tuple[str, int | None]:
    """The namespace and ack id of an event frame, read without parsing its JSON."""
    head = _EVENT_HEAD.match(encoded)
    if head is None:
        namespace = "/"
        if encoded[1:2] == "/":
            namespace = encoded[1:].split(",", 1)[0].split("?", 1)[0]
        return namespace, None
    namespace = (head.group(1) or "/,")[:-1].split("?", 1)[0]
    return namespace, int(head.group(2))


class GuardedPacket(packet.Packet):  # type: ignore[misc]
    """python-socketio's JSON packet, whose decoder never raises (see the module's doc).

    Binary packets are not part of the protocol in either direction, so outgoing data is
    never scanned for bytes: python-socketio walks every value of every ack and emit
    looking for them otherwise (a tenth of the server's time with ten clients a room).
    Bytes handed to it fail to encode (TypeError) instead of becoming an attachment."""

    uses_binary_events = False
    # orjson for every packet (bridge.store.codec adapts it to the json module's interface).
    json = codec
    data: Any

    def __init__(
        self,
        packet_type: int = packet.EVENT,
        data: Any = None,
        namespace: str | None = None,
        id: int | None = None,  # python-socketio's keyword
        binary: bool | None = None,
        encoded_packet: Any = _OUTGOING,
    ) -> None:
        super().__init__(packet_type, data, namespace, id, binary)
        if encoded_packet is not _OUTGOING:
            # Whatever Engine.IO handed over: python-socketio skips decoding a falsy one
            # ("", [], {}, null, false), which would reach its event handler as no event.
            self.attachment_count = self.decode(encoded_packet)

    def decode(self, encoded_packet: Any) -> int:
        """Decode a client's frame; always returns 0 attachments and never raises."""
        if not isinstance(encoded_packet, str) or not encoded_packet:
            shown = "binary frames are" if isinstance(encoded_packet, bytes) else "this is"
            return self.as_malformed(f"{shown} not part of the protocol", "/", None)
        try:
            super().decode(encoded_packet)
        except RecursionError:
            return self.as_malformed("nested too deeply", *frame_head(encoded_packet))
        except (ValueError, TypeError, IndexError) as exc:
            # Broken JSON, an id of 100 digits or more, an integer of more digits than
            # Python converts, a packet type that is not a digit.
            reason = str(exc).split("\n", 1)[0][:120] or type(exc).__name__
            return self.as_malformed(reason, *frame_head(encoded_packet))
        if self.packet_type not in CLIENT_PACKET_TYPES:
            return self.as_malformed(
                f"packet type {self.packet_type!r} is not accepted from clients",
                *frame_head(encoded_packet),
            )
        if self.packet_type == packet.EVENT:
            self.data = [CLIENT_FRAME, self.data]
        return 0

    def as_malformed(self, reason: str, namespace: str, ack_id: int | None) -> int:
        self.packet_type = packet.EVENT
        # Answered on /fate (a socket that has not joined it is not answered at all); the
        # ack id only where the client awaits it.
        self.id = ack_id if namespace == NAMESPACE else None
        self.namespace = NAMESPACE
        self.data = [MALFORMED_FRAME, reason, namespace]
        return 0
