"""Socket.IO frames as the bridge accepts them: text only, the four packet types a client
may send, and a decoder failure turned into a :class:`MalformedFrame` the server answers
(instead of an exception python-socketio would log with a traceback)."""

from __future__ import annotations

import re
from typing import Any

from socketio import packet

# What a client may send: joining and leaving a namespace, events and acks. Binary packets
# are not part of the protocol (everything is JSON); CONNECT_ERROR only flows to clients.
CLIENT_PACKET_TYPES = frozenset({packet.CONNECT, packet.DISCONNECT, packet.EVENT, packet.ACK})
# The head of an event frame: type, optional attachment count, optional namespace, ack id.
# python-socketio refuses ids of 100 digits or more; so does this.
_EVENT_HEAD = re.compile(r"^[25](?:\d+-)?(/[^,]*,)?(\d{1,99})(?!\d)")


class MalformedFrame(ValueError):
    """A frame the decoder cannot read; ``ack_id`` is set when the client awaits an ack."""

    def __init__(self, reason: str, namespace: str, ack_id: int | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.namespace = namespace
        self.ack_id = ack_id


def _frame_head(encoded: str) -> tuple[str, int | None]:
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
    """python-socketio's JSON packet, whose decoder raises only :class:`MalformedFrame`.

    Binary packets are not part of the protocol in either direction, so outgoing data is
    never scanned for bytes: python-socketio walks every value of every ack and emit
    looking for them otherwise (a tenth of the server's time with ten clients a room).
    Bytes handed to it fail to encode (TypeError) instead of becoming an attachment."""

    uses_binary_events = False

    def decode(self, encoded_packet: Any) -> int:
        if not isinstance(encoded_packet, str):
            raise MalformedFrame("binary frames are not part of the protocol", "/", None)
        # The frame's head is read (for the answer) only when the frame is refused.
        try:
            attachments: int = super().decode(encoded_packet)
        except RecursionError:
            raise MalformedFrame("nested too deeply", *_frame_head(encoded_packet)) from None
        except (ValueError, TypeError, IndexError) as exc:
            # Broken JSON, an id of 100 digits or more, an integer of more digits than
            # Python converts, a packet type that is not a digit.
            reason = str(exc).split("\n", 1)[0][:120] or type(exc).__name__
            raise MalformedFrame(reason, *_frame_head(encoded_packet)) from None
        if self.packet_type not in CLIENT_PACKET_TYPES:
            raise MalformedFrame(
                f"packet type {self.packet_type!r} is not accepted from clients",
                *_frame_head(encoded_packet),
            )
        return attachments
