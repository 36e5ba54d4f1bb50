"""Rooms of ``/fate`` sessions on this process, and the local delivery of an emit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from bridge.service.protocol import NAMESPACE
from bridge.store import codec
from bridge.transport.engineio_ws import MESSAGE
from bridge.transport.packets import PacketType, head

EVENT = (MESSAGE + head(PacketType.EVENT, NAMESPACE)).encode()


@dataclass(frozen=True, slots=True)
class RoomEmit:
    """One emit: ``event`` with ``data`` (a tuple: several arguments) to ``room`` (all of
    the namespace when None), but ``skip_sid``."""

    event: str
    data: Any
    namespace: str | None
    room: str | None
    skip_sid: str | list[str] | None

    def arguments(self) -> list[Any]:
        data = self.data
        return list(data) if isinstance(data, tuple) else [] if data is None else [data]


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
    ) -> None:
        """Send ``event`` with ``data`` (a tuple: several arguments) to ``room`` (all of
        the namespace when None), but ``skip_sid``: this process's receivers, then the
        other processes' (:meth:`forward`)."""
        sent = RoomEmit(event, data, namespace, room, skip_sid)
        await self.deliver(sent)
        await self.forward(sent)

    async def forward(self, sent: RoomEmit) -> None:
        """The other processes' part of an emit: none for a process alone."""

    async def deliver(self, sent: RoomEmit) -> None:
        """This process's part of an emit."""
        if sent.namespace != NAMESPACE:
            return
        room = sent.room
        members = self.receivers.keys() if room is None else self.rooms.get(room, ())
        skipped = sent.skip_sid if isinstance(sent.skip_sid, list) else (sent.skip_sid,)
        sids = [sid for sid in members if sid not in skipped]
        if not sids:
            # A sender alone in its world hears its commit in its ack: nothing to encode.
            return
        frame = EVENT + codec.dumps_bytes([sent.event, *sent.arguments()])
        receivers = self.receivers
        for sid in sids:
            receiver = receivers.get(sid)
            if receiver is not None:  # it may have left while this emit was under way
                await receiver.send(frame)
