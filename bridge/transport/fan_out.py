"""Local delivery of an emit (python-socketio's client manager, a documented extension
point), through the public ``emit``/``send_packet`` of python-socketio and engineio."""

from __future__ import annotations

from typing import Any

import engineio
import socketio


class RoomFanOut(socketio.AsyncManager):  # type: ignore[misc]
    """python-socketio's local delivery of an emit, without a task per receiver.

    The frame is encoded once per emit (as python-socketio does), not at all when nobody
    is left to hear it, and handed to each receiver's engine.io socket in turn with
    ``engineio.AsyncServer.send_packet``: its queue is unbounded, so handing over never
    waits, and a task (plus ``asyncio.wait`` over all of them) per receiver per emit was
    pure overhead. Each receiver's own writer task still sends its frames in order. A
    receiver whose socket has just closed is skipped. Emits with a callback (not used by
    the bridge) take python-socketio's own path."""

    async def emit(
        self,
        event: str,
        data: Any,
        namespace: str | None,
        room: Any = None,
        skip_sid: Any = None,
        callback: Any = None,
        to: Any = None,
        **kwargs: Any,
    ) -> None:
        if callback is not None:
            return await super().emit(  # type: ignore[no-any-return]
                event, data, namespace, room, skip_sid, callback, to, **kwargs
            )
        await self.deliver(event, data, namespace, to or room, skip_sid)
        return None

    async def deliver(
        self, event: str, data: Any, namespace: str | None, room: Any, skip_sid: Any
    ) -> None:
        """Send the event to this process's receivers in ``room`` (all of the namespace
        when None), but ``skip_sid`` (a sid or a list of them)."""
        if namespace not in self.rooms:
            return
        skipped = skip_sid if isinstance(skip_sid, list) else [skip_sid]
        receivers = [e for sid, e in self.get_participants(namespace, room) if sid not in skipped]
        if not receivers:
            # A sender alone in its world hears its commit in its ack: nothing to encode.
            return
        args = list(data) if isinstance(data, tuple) else [] if data is None else [data]
        encoded = self.server.packet_class(
            socketio.packet.EVENT, namespace=namespace, data=[event, *args]
        ).encode()
        # One Engine.IO packet for all: it caches its encoding.
        frame = engineio.packet.Packet(engineio.packet.MESSAGE, encoded)
        eio = self.server.eio
        for eio_sid in receivers:
            try:
                await eio.send_packet(eio_sid, frame)
            except engineio.exceptions.SocketIsClosedError:
                continue  # it disconnected while this emit was under way
