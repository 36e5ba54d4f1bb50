"""Socket.IO v5 on one Engine.IO websocket session, for the bridge's one namespace.

A :class:`SocketIOLink` decodes each Engine.IO message with the wire's own codec
(:mod:`bridge.transport.packets`) and answers:

- CONNECT to ``/fate`` asks the :class:`Namespace` (``joining``), then sends
  ``0/fate,{"sid":...}``, or ``4/fate,{"message":...,"data":...}`` when it raised
  :class:`Refused`; CONNECT to any other namespace, or to ``/fate`` again while joined,
  gets ``4<namespace>,{"message":"Invalid namespace"}`` and changes nothing (a namespace
  name longer than ``MAX_NAMESPACE_CHARS`` is not echoed: the refusal names ``/``).
  CONNECTs that cannot succeed are counted (:meth:`SocketIOLink.may_connect`): past
  them the connection is cut.
- DISCONNECT from ``/fate`` leaves it (``left``); the websocket stays open. Leaving a
  namespace the connection is not in changes nothing.
- EVENT on ``/fate`` while joined runs in a task of its own, and its answer goes back as
  ``3/fate,<id>[answer]`` when the client asked for one; a client's ACKs are ignored (the
  bridge asks clients nothing).
- A message the codec refuses, or a packet the bridge does not take from clients
  (CONNECT_ERROR, binary packets and binary messages: every message of the bridge's
  protocol is JSON), reaches the namespace as ``malformed`` while joined, answered on
  ``/fate`` with the packet's ack id when it had one there.
- Before joining, a connection may send CONNECTs (and DISCONNECTs) only: any other
  packet, or a message that is none, ends it (:meth:`SocketIOLink.cut`), as the
  specification has a server close a connection whose first packet is not a CONNECT.
  Once joined, packets for other namespaces are ignored.
- The bridge answers a joined client's refused message rather than closing (the
  specification's receiver closes on an EVENT without a non-empty array): the client
  learns why, and nothing it had in flight is lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Coroutine
from typing import Any, Protocol

from bridge.service.protocol import NAMESPACE
from bridge.store import codec
from bridge.transport.engineio_ws import MESSAGE, EngineSession, new_id
from bridge.transport.fan_out import RoomFanOut
from bridge.transport.packets import MalformedPacket, Packet, PacketType, decode, encode, head

log = logging.getLogger("bridge.server")

# An ack's head (Engine.IO message, Socket.IO ACK, /fate), written once: every answered
# event is sent one.
ACKED = (MESSAGE + head(PacketType.ACK, NAMESPACE)).encode()
# Longer namespace names are not repeated back to the client that sent them.
MAX_NAMESPACE_CHARS = 64


class Refused(Exception):
    """Raised by :meth:`Namespace.joining` to refuse a CONNECT: the client gets the
    CONNECT_ERROR payload ``{"message": message}``, plus ``"data"`` when given."""

    def __init__(self, message: str, data: object = None) -> None:
        super().__init__(message)
        self.error: dict[str, object] = {"message": message}
        if data is not None:
            self.error["data"] = data


class Namespace(Protocol):
    """What a link asks of the bridge's namespace."""

    async def joining(self, link: SocketIOLink, sid: str, auth: object) -> None:
        """Let ``link`` join as ``sid`` (already a receiver in the fan-out, in its own
        room), or raise :class:`Refused`."""

    async def left(self, link: SocketIOLink, sid: str) -> None:
        """``sid`` left (a DISCONNECT, or its websocket closed)."""

    async def event(self, sid: str, frame: object) -> dict[str, Any]:
        """The answer to a client's event (its payload, ``[name, *args]``)."""

    async def malformed(self, sid: str, reason: str) -> dict[str, Any]:
        """The answer to a message the wire refused."""


def message(packet: Packet) -> bytes:
    """``packet`` as an Engine.IO message frame (UTF-8)."""
    return (MESSAGE + encode(packet)).encode()


def refusal(error: dict[str, object], namespace: str = NAMESPACE) -> bytes:
    """A CONNECT_ERROR for ``namespace`` (``/`` for a name too long to echo)."""
    if len(namespace) > MAX_NAMESPACE_CHARS:
        namespace = "/"
    return message(Packet(PacketType.CONNECT_ERROR, namespace, error))


class SocketIOLink:
    """One websocket's Socket.IO side: ``sid`` is its ``/fate`` session while joined."""

    def __init__(self, namespace: Namespace, fan_out: RoomFanOut) -> None:
        self.namespace = namespace
        self.fan_out = fan_out
        self.engine: EngineSession | None = None
        self.sid: str | None = None
        self.tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(work)
        self.tasks.add(task)  # keep a reference until it ends
        task.add_done_callback(self.tasks.discard)

    async def send(self, frame: bytes) -> None:
        if self.engine is not None:
            await self.engine.send(frame)

    async def on_message(self, data: str | bytes) -> None:
        """One Engine.IO message from the client. Never raises."""
        if isinstance(data, bytes):
            self.refuse("binary messages are not part of the protocol", NAMESPACE, None)
            return
        try:
            received = decode(data)
        except MalformedPacket as bad:
            self.refuse(bad.reason, bad.namespace, bad.id)
            return
        kind = received.type
        if kind == PacketType.CONNECT:
            await self.join(received.namespace, received.data)
            return
        sid = self.sid
        if kind == PacketType.DISCONNECT:
            if received.namespace == NAMESPACE:
                await self.leave()  # leaving where it is not changes nothing
        elif sid is None:
            self.cut(f"a {kind.name} packet before joining a namespace")
        elif received.namespace != NAMESPACE:
            pass  # a namespace it never joined: nothing there to answer
        elif kind == PacketType.EVENT:
            self.spawn(self.answer(received.id, self.namespace.event(sid, received.data)))
        elif kind != PacketType.ACK:  # a client's ACK answers nothing the bridge asked
            refused = f"a {kind.name} packet is not accepted from clients"
            self.refuse(refused, NAMESPACE, received.id)

    def refuse(self, reason: str, namespace: str, ack_id: int | None) -> None:
        """A message the wire does not take: answered on ``/fate`` while joined (with its
        ack id when it was sent there), else the connection is cut."""
        sid = self.sid
        if sid is None:
            self.cut(reason)
            return
        asked = ack_id if namespace == NAMESPACE else None
        self.spawn(self.answer(asked, self.namespace.malformed(sid, reason)))

    def cut(self, reason: str) -> None:
        """End the connection for what it sent (a subclass logs and counts it)."""
        if self.engine is not None:
            self.engine.abort()

    async def answer(self, ack_id: int | None, answering: Awaitable[dict[str, Any]]) -> None:
        """Await the namespace's answer to a client's message, and send it as the ack when
        the client asked for one."""
        try:
            ack = await answering
        except Exception:
            log.exception("answering a client's message failed")
            return
        if ack_id is not None:
            await self.send(ACKED + str(ack_id).encode() + codec.dumps_bytes([ack]))

    def may_connect(self) -> bool:
        """Whether one more CONNECT that cannot succeed is answered (counted per
        websocket by a subclass); when not, the connection is cut."""
        return True

    async def join(self, namespace: str, auth: object) -> None:
        if namespace != NAMESPACE or self.sid is not None or self.engine is None:
            if not self.may_connect():
                if self.engine is not None:
                    self.engine.abort()
                return
            await self.send(refusal({"message": "Invalid namespace"}, namespace))
            return
        sid = new_id()
        # A receiver from the start: the connect handler puts it in rooms, and what they
        # hear meanwhile reaches it (before its CONNECT answer).
        self.fan_out.connect(sid, self.engine)
        try:
            # An empty auth ({} or none) is no auth.
            await self.namespace.joining(self, sid, auth or None)
        except Refused as refused:
            self.fan_out.disconnect(sid)
            await self.send(refusal(refused.error))
            return
        except Exception:
            self.fan_out.disconnect(sid)
            log.exception("connect handler failed")
            await self.send(refusal({"message": "refused"}))
            return
        self.sid = sid
        if self.engine is not None:
            self.engine.set_joined(True)
        await self.send(message(Packet(PacketType.CONNECT, NAMESPACE, {"sid": sid})))

    async def leave(self) -> None:
        """Leave ``/fate`` (if joined): out of every room, then the namespace is told."""
        sid = self.sid
        if sid is None:
            return
        self.sid = None
        if self.engine is not None:
            self.engine.set_joined(False)
        self.fan_out.disconnect(sid)
        await self.namespace.left(self, sid)
