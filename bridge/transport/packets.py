"""Socket.IO v5 packets: the wire's own codec, from the protocol's specification.

A packet is a type, a namespace (``/`` is the main one), an optional payload and an
optional acknowledgement id, written as one text message (Engine.IO's ``4`` goes before
it on the wire)::

    <type>[<attachments>-][<namespace>,][<ack id>][<JSON payload>]

The namespace is written only when it is not ``/`` and ends at the first comma; binary
packets (``BINARY_EVENT``, ``BINARY_ACK``) say how many binary messages follow, and their
payload holds ``{"_placeholder": true, "num": N}`` where the N-th of them belongs.

:func:`decode` returns a :class:`Packet` or raises :class:`MalformedPacket` saying why,
with whatever of the head (namespace, ack id) it could read before the fault, so the
server can still answer the right acknowledgement. It refuses what the specification
does not allow: an unknown type, a CONNECT payload that is not an object, a DISCONNECT
with a payload, an EVENT whose payload is not a non-empty array, an ACK without an id or
an array, a CONNECT_ERROR payload that is not an object, attachments on a packet that is
not binary, a binary packet that does not count them, an ack id past what a JavaScript
client counts to exactly, a payload that is not JSON or nests past the JSON decoder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from bridge.store import codec


class PacketType(IntEnum):
    CONNECT = 0
    DISCONNECT = 1
    EVENT = 2
    ACK = 3
    CONNECT_ERROR = 4
    BINARY_EVENT = 5
    BINARY_ACK = 6


MAIN_NAMESPACE = "/"
BINARY_TYPES = frozenset({PacketType.BINARY_EVENT, PacketType.BINARY_ACK})
# The largest integer a JavaScript client counts to exactly (Number.MAX_SAFE_INTEGER).
MAX_ACK_ID = 2**53 - 1
# Binary messages one packet may announce (socket.io-parser's own default).
MAX_ATTACHMENTS = 10
PLACEHOLDER = "_placeholder"

# type, then (binary packets) the attachment count, the namespace up to its comma (or the
# end of the message), the ack id; the payload is the rest.
_HEAD = re.compile(r"([0-9])(?:([0-9]+)-)?(/[^,]*(?:,|$))?([0-9]*)", re.ASCII)
_ID_DIGITS = len(str(MAX_ACK_ID))


@dataclass(frozen=True, slots=True)
class Packet:
    """One Socket.IO packet; ``data`` None is a packet without a payload."""

    type: PacketType
    namespace: str = MAIN_NAMESPACE
    data: Any = None
    id: int | None = None
    attachments: int = 0


class MalformedPacket(ValueError):
    """A message :func:`decode` refuses. ``reason`` says why; ``namespace`` and ``id`` are
    what its head named before the fault (the main namespace and no id when the fault was
    there; no id unless the packet was an event, the one kind whose id asks an answer)."""

    def __init__(self, reason: str, namespace: str = MAIN_NAMESPACE, id: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.namespace = namespace
        self.id = id


def head(
    kind: PacketType, namespace: str = MAIN_NAMESPACE, id: int | None = None, attachments: int = 0
) -> str:
    """A packet's encoding up to its payload (what every packet of that kind, namespace and
    id starts with: the fan-out writes it once for every emit)."""
    text = str(int(kind))
    if kind in BINARY_TYPES:
        text += f"{attachments}-"
    if namespace != MAIN_NAMESPACE:
        text += namespace + ","
    if id is not None:
        text += str(id)
    return text


def encode(packet: Packet) -> str:
    """The packet as one text message. Raises ``ValueError`` for a packet the
    specification does not allow (see :func:`check`), ``TypeError`` for a payload that is
    not JSON (bytes belong in binary packets: :func:`encode_binary`)."""
    check(packet)
    text = head(packet.type, packet.namespace, packet.id, packet.attachments)
    if packet.data is not None:
        text += codec.dumps(packet.data)
    return text


def encode_binary(packet: Packet) -> tuple[str, list[bytes]]:
    """A packet whose payload holds ``bytes``: its text message (a binary type, each bytes
    value replaced by its placeholder) and the binary messages to send after it, in order.
    An EVENT or ACK with bytes becomes a BINARY_EVENT or BINARY_ACK."""
    attachments: list[bytes] = []
    data = _extract(packet.data, attachments)
    kind = packet.type
    if kind == PacketType.EVENT:
        kind = PacketType.BINARY_EVENT
    elif kind == PacketType.ACK:
        kind = PacketType.BINARY_ACK
    binary = Packet(kind, packet.namespace, data, packet.id, len(attachments))
    return encode(binary), attachments


def _extract(value: Any, into: list[bytes]) -> Any:
    if isinstance(value, bytes | bytearray):
        into.append(bytes(value))
        return {PLACEHOLDER: True, "num": len(into) - 1}
    if isinstance(value, list | tuple):
        return [_extract(item, into) for item in value]
    if isinstance(value, dict):
        return {key: _extract(item, into) for key, item in value.items()}
    return value


def with_attachments(packet: Packet, attachments: list[bytes]) -> Packet:
    """A decoded binary packet with each placeholder replaced by its binary message.
    Raises :class:`MalformedPacket` when their number is not the one announced or a
    placeholder names none of them."""
    if len(attachments) != packet.attachments:
        raise MalformedPacket(
            f"{packet.attachments} attachments announced, {len(attachments)} received",
            packet.namespace,
            packet.id,
        )

    def fill(value: Any) -> Any:
        if isinstance(value, list):
            return [fill(item) for item in value]
        if isinstance(value, dict):
            if value.get(PLACEHOLDER) is True:
                num = value.get("num")
                if type(num) is not int or not 0 <= num < len(attachments):
                    raise MalformedPacket(
                        f"a placeholder names no attachment ({num!r})", packet.namespace, packet.id
                    )
                return attachments[num]
            return {key: fill(item) for key, item in value.items()}
        return value

    return Packet(packet.type, packet.namespace, fill(packet.data), packet.id, packet.attachments)


def decode(text: str) -> Packet:
    """Read one text message as a packet (a binary packet with its placeholders: see
    :func:`with_attachments`). Raises :class:`MalformedPacket`, never anything else."""
    found = _HEAD.match(text)
    if found is None:
        shown = repr(text[:1]) if text else "nothing"
        raise MalformedPacket(f"a packet starts with its type (0-6), not {shown}")
    kind_digit, count, namespace_part, id_digits = found.groups()
    if kind_digit > "6":
        raise MalformedPacket(f"packet type {kind_digit} is not one of Socket.IO's (0-6)")
    kind = PacketType(int(kind_digit))
    namespace = namespace_part.removesuffix(",") if namespace_part else MAIN_NAMESPACE
    if len(id_digits) > _ID_DIGITS or (id_digits and int(id_digits) > MAX_ACK_ID):
        raise MalformedPacket(f"an ack id past {MAX_ACK_ID}", namespace)
    ack_id = int(id_digits) if id_digits else None
    # What a refusal names: only an event's id asks for an answer.
    asked = ack_id if kind in (PacketType.EVENT, PacketType.BINARY_EVENT) else None
    attachments = 0
    if kind in BINARY_TYPES:
        if count is None:
            raise MalformedPacket("a binary packet counts its attachments", namespace, asked)
        if len(count) > 2 or int(count) > MAX_ATTACHMENTS:
            raise MalformedPacket(f"more than {MAX_ATTACHMENTS} attachments", namespace, asked)
        attachments = int(count)
    elif count is not None:
        raise MalformedPacket("only binary packets have attachments", namespace, asked)
    body = text[found.end() :]
    data: Any = None
    if body:
        try:
            data = codec.loads(body)
        except ValueError as exc:  # not JSON, or nested past the decoder
            detail = str(exc).split("\n", 1)[0][:120] or type(exc).__name__
            raise MalformedPacket(f"the payload is not JSON: {detail}", namespace, asked) from None
    packet = Packet(kind, namespace, data, ack_id, attachments)
    problem = _problem(packet)
    if problem is not None:
        raise MalformedPacket(problem, namespace, asked)
    return packet


def check(packet: Packet) -> None:
    """Raises ``ValueError`` when the specification does not allow ``packet``."""
    if not packet.namespace.startswith("/") or "," in packet.namespace:
        raise ValueError(f"a namespace starts with / and has no comma: {packet.namespace!r}")
    if packet.id is not None and not 0 <= packet.id <= MAX_ACK_ID:
        raise ValueError(f"an ack id from 0 to {MAX_ACK_ID}")
    if packet.attachments and packet.type not in BINARY_TYPES:
        raise ValueError("only binary packets have attachments")
    problem = _problem(packet)
    if problem is not None:
        raise ValueError(problem)


def _problem(packet: Packet) -> str | None:
    """What the specification says against a packet's payload and id, or None."""
    kind, data, ack_id = packet.type, packet.data, packet.id
    if kind in (PacketType.CONNECT, PacketType.DISCONNECT, PacketType.CONNECT_ERROR):
        if ack_id is not None:
            return f"a {kind.name} packet has no ack id"
        if kind == PacketType.DISCONNECT and data is not None:
            return "a DISCONNECT packet has no payload"
        if kind == PacketType.CONNECT and data is not None and not isinstance(data, dict):
            return "a CONNECT payload is an object"
        if kind == PacketType.CONNECT_ERROR and not isinstance(data, dict):
            return "a CONNECT_ERROR payload is an object"
        return None
    if kind in (PacketType.EVENT, PacketType.BINARY_EVENT):
        if not isinstance(data, list) or not data:
            return f"an {kind.name} payload is a non-empty array"
        return None
    if ack_id is None:
        return f"a {kind.name} packet has an ack id"
    if not isinstance(data, list):
        return f"a {kind.name} payload is an array"
    return None
