"""Rooms of ``/fate`` sessions on this process, and the local delivery of an emit."""

from __future__ import annotations

from typing import Any, Protocol

from bridge.service.protocol import NAMESPACE
from bridge.transport import codec
from bridge.transport.engineio_ws import MESSAGE
from bridge.transport.packets import PacketType, head

EVENT = (MESSAGE + head(PacketType.EVENT, NAMESPACE)).encode()


class Receiver(Protocol):
    async def send(self, frame: bytes) -> None:
        """Put one Engine.IO text frame (UTF-8) on its way without waiting for the client."""


class RoomFanOut:
    """Who is in which room, and emits delivered to them.

    Every session is in a room named by its sid. An emit is encoded once (not at all when
    nobody is left to hear it) and handed to each receiver in turn: handing over never
    waits for a client (see :class:`EngineSession.send`), so there is no task per
    receiver. Only ``/fate`` has rooms; an emit to another namespace reaches nobody."""

    def __init__(self) -> None:
        self.receivers: dict[str, Receiver] = {}
        self.rooms: dict[str, set[str]] = {}
        self.memberships: dict[str, set[str]] = {}
        self.initialized = False

    def initialize(self) -> None:
        """Called once, before the first session connects (subclasses start here)."""
        self.initialized = True

    # --- membership ---------------------------------------------------------------------

    def connect(self, sid: str, receiver: Receiver) -> None:
        """``sid`` hears emits to its own room from now on."""
        if not self.initialized:
            self.initialize()
        self.receivers[sid] = receiver
        self.enter(sid, sid)

    def enter(self, sid: str, room: str) -> None:
        if sid not in self.receivers:
            return
        self.rooms.setdefault(room, set()).add(sid)
        self.memberships.setdefault(sid, set()).add(room)

    def leave(self, sid: str, room: str) -> None:
        members = self.rooms.get(room)
        if members is not None:
            members.discard(sid)
            if not members:
                del self.rooms[room]
        joined = self.memberships.get(sid)
        if joined is not None:
            joined.discard(room)

    def disconnect(self, sid: str) -> None:
        """``sid`` is in no room and hears nothing. Idempotent."""
        self.receivers.pop(sid, None)
        for room in self.memberships.pop(sid, set()):
            members = self.rooms.get(room)
            if members is not None:
                members.discard(sid)
                if not members:
                    del self.rooms[room]

    # --- emits --------------------------------------------------------------------------

    async def emit(
        self,
        event: str,
        data: Any,
        namespace: str | None = NAMESPACE,
        room: str | None = None,
        skip_sid: str | list[str] | None = None,
        to: str | None = None,
    ) -> None:
        """Send ``event`` with ``data`` (a tuple: several arguments) to ``room`` (all of
        the namespace when None), but ``skip_sid``; here, this process's receivers."""
        await self.deliver(event, data, namespace, to or room, skip_sid)

    async def deliver(
        self,
        event: str,
        data: Any,
        namespace: str | None,
        room: str | None,
        skip_sid: str | list[str] | None,
    ) -> None:
        """This process's part of an emit."""
        if namespace != NAMESPACE:
            return
        members = self.receivers.keys() if room is None else self.rooms.get(room, ())
        skipped = skip_sid if isinstance(skip_sid, list) else (skip_sid,)
        sids = [sid for sid in members if sid not in skipped]
        if not sids:
            # A sender alone in its world hears its commit in its ack: nothing to encode.
            return
        args = list(data) if isinstance(data, tuple) else [] if data is None else [data]
        frame = EVENT + codec.dumps_bytes([event, *args])
        receivers = self.receivers
        for sid in sids:
            receiver = receivers.get(sid)
            if receiver is not None:  # it may have left while this emit was under way
                await receiver.send(frame)
