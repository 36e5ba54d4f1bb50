"""Socket.IO v5 on one Engine.IO websocket session, for the bridge's one namespace.

A :class:`SocketIOLink` reads each Engine.IO message with :class:`GuardedPacket` (which
never raises: what no client should send arrives as a marked "malformed" event on
``/fate``) and answers as python-socketio's server did:

- CONNECT to ``/fate`` asks the :class:`Namespace` (``joining``), then sends
  ``0/fate,{"sid":...}``, or ``4/fate,{"message":...,"data":...}`` when it raised
  :class:`Refused`; CONNECT to any other namespace, or to ``/fate`` again while joined,
  gets ``4<namespace>,"Unable to connect"`` and changes nothing (a namespace name longer
  than ``MAX_NAMESPACE_CHARS`` is not echoed: the refusal names no namespace);
- DISCONNECT from ``/fate`` leaves it (``left``); the websocket stays open;
- EVENT on ``/fate`` while joined runs in a task of its own, and its answer goes back as
  ``3/fate,<id>[answer]`` when the client asked for one; events of a socket that has not
  joined are not answered at all; a client's ACKs are ignored.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, Protocol

from socketio import packet

from bridge.service.protocol import NAMESPACE
from bridge.store import codec
from bridge.transport.engineio_ws import MESSAGE, EngineSession, new_id
from bridge.transport.fan_out import RoomFanOut
from bridge.transport.packets import CLIENT_FRAME, GuardedPacket

log = logging.getLogger("bridge.server")

# Engine.IO message + Socket.IO packet type + namespace, ahead of each kind of frame.
CONNECTED = f"{MESSAGE}{packet.CONNECT}{NAMESPACE},".encode()
ACKED = f"{MESSAGE}{packet.ACK}{NAMESPACE},".encode()
REFUSED = f"{MESSAGE}{packet.CONNECT_ERROR}".encode()
REFUSED_HERE = REFUSED + f"{NAMESPACE},".encode()
UNABLE = codec.dumps_bytes("Unable to connect")
# Longer namespace names are not repeated back to the client that sent them.
MAX_NAMESPACE_CHARS = 64


class Refused(Exception):
    """Raised by :meth:`Namespace.joining` to refuse a CONNECT: the client gets
    ``{"message": message}`` plus ``"data"`` when given (python-socketio's shape)."""

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
        """The answer to a client's event frame (``[name, *args]``)."""

    async def malformed(self, sid: str, reason: str) -> dict[str, Any]:
        """The answer to a frame that could not be read."""


def namespace_prefix(namespace: str) -> bytes:
    """The namespace as a refusal names it: none for ``/`` or a name too long to echo."""
    if namespace == "/" or len(namespace) > MAX_NAMESPACE_CHARS:
        return b""
    return f"{namespace},".encode()


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
        received = GuardedPacket(encoded_packet=data)
        kind = received.packet_type
        if kind == packet.EVENT:
            sid = self.sid
            if received.namespace == NAMESPACE and sid is not None:
                self.spawn(self.answer(sid, received.id, received.data))
        elif kind == packet.CONNECT:
            await self.join(received.namespace or "/", received.data)
        elif kind == packet.DISCONNECT and received.namespace == NAMESPACE:
            await self.leave()
        # A client's ACK answers nothing the bridge asked: ignored.

    async def answer(self, sid: str, ack_id: int | None, data: list[Any]) -> None:
        """Run one event (marked by :class:`GuardedPacket`) and send its ack."""
        try:
            if data[0] == CLIENT_FRAME:
                ack = await self.namespace.event(sid, data[1])
            else:
                ack = await self.namespace.malformed(sid, str(data[1]))
        except Exception:
            log.exception("event handler failed")
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
            await self.send(REFUSED + namespace_prefix(namespace) + UNABLE)
            return
        sid = new_id()
        # A receiver from the start: the connect handler puts it in rooms, and what they
        # hear meanwhile reaches it (before its CONNECT answer, as with python-socketio).
        self.fan_out.connect(sid, self.engine)
        try:
            # As python-socketio: an empty auth ({}, null) is no auth.
            await self.namespace.joining(self, sid, auth or None)
        except Refused as refused:
            self.fan_out.disconnect(sid)
            await self.send(REFUSED_HERE + codec.dumps_bytes(refused.error))
            return
        except Exception:
            self.fan_out.disconnect(sid)
            log.exception("connect handler failed")
            await self.send(REFUSED_HERE + codec.dumps_bytes({"message": "refused"}))
            return
        self.sid = sid
        if self.engine is not None:
            self.engine.set_joined(True)
        await self.send(CONNECTED + codec.dumps_bytes({"sid": sid}))

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
