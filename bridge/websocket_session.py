"""Engine.IO over a websocket, as the bridge serves it: the same packets, order and
timeouts as python-engineio's own session, with less machinery per message.

Clients connect with the websocket transport only, so every Engine.IO session is a
websocket from its first packet. For such a session engineio runs a read loop that
starts a task and a timeout per message it waits for (``asyncio.wait_for`` around
``ensure_future``), and a writer task that waits for each packet to send the same way.
Those tasks, futures and timers cost about as much as the rest of an echo's work on
the event loop (tens of microseconds a message). Here the read loop awaits the socket
itself and the writer awaits its queue; a connection that stays silent for the
timeout Engine.IO allows (``ping_interval + ping_timeout``: a live client answers
every ping well within it) is cut by one timer per quiet spell, not one per message.

What a session does with each packet is still engineio's own (``AsyncSocket.receive``
and ``send``); only the waiting is done here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from aiohttp import web
from engineio import exceptions, packet
from engineio.async_drivers import aiohttp as engineio_aiohttp
from engineio.async_socket import AsyncSocket


class BridgeWebSocket(engineio_aiohttp.WebSocket):  # type: ignore[misc]
    """engineio's aiohttp websocket, serving its session with :func:`serve_session`,
    and without permessage-deflate unless ``compress``.

    Every browser offers the extension and aiohttp accepts it by default; then each frame
    is deflated once per receiver (each connection has its own compressor), which cost
    12-28% of an action's CPU with ten clients in a room. Socket.IO's own server leaves
    it off by default for that reason (``create_app(websocket_compression=True)`` turns
    it on, for a host where bandwidth is dearer than CPU)."""

    def __init__(self, handler: Any, server: Any, *, compress: bool = False) -> None:
        super().__init__(handler, server)
        self.compress = compress

    async def __call__(self, environ: dict[str, Any]) -> web.WebSocketResponse:
        request: web.Request = environ["aiohttp.request"]
        self._sock = web.WebSocketResponse(
            max_msg_size=self.server.max_http_buffer_size, compress=self.compress
        )
        await self._sock.prepare(request)
        self.environ = environ
        # engineio hands in its session's own handler: the session is its owner.
        session = getattr(self.handler, "__self__", None)
        if isinstance(session, AsyncSocket) and not session.connected:
            await serve_session(session, self, request)
        else:  # an upgrade from long-polling, which the bridge does not offer
            await self.handler(self)
        return self._sock


async def serve_session(session: AsyncSocket, ws: BridgeWebSocket, request: web.Request) -> None:
    """Run a websocket-only Engine.IO session until either side closes it, as
    ``AsyncSocket._websocket_handler`` does: every frame received goes to
    ``session.receive``; everything the session queues is sent in order; at the end the
    session closes as a lost transport. A frame over the server's size limit, or one
    that is not text or bytes, ends the session as there."""
    server = session.server
    session.connected = True
    session.upgraded = True
    writer = asyncio.ensure_future(_send_queued(session, ws))
    silence = Silence(server.ping_interval + server.ping_timeout, _abort(request))
    try:
        while True:
            try:
                data = await ws.wait()
            except Exception:  # closed, or a frame that is neither text nor bytes
                break
            silence.heard()
            if data and len(data) > server.max_http_buffer_size:
                break
            try:
                await session.receive(packet.Packet(encoded_packet=data))
            except exceptions.UnknownPacketError:
                pass
            except exceptions.SocketIsClosedError:
                server.logger.info("Receive error -- socket is closed")
                break
            except Exception:  # as engineio: log it and go on with the session
                server.logger.exception("Unknown receive error")
    finally:
        silence.cancel()
        await session.queue.put(None)  # the writer sends what is queued, then ends
        await writer
    await session.close(wait=False, abort=True, reason=server.reason.TRANSPORT_CLOSE)


async def _send_queued(session: AsyncSocket, ws: BridgeWebSocket) -> None:
    """Send the session's queued packets in order until it queues ``None`` (or the
    socket fails), then close the websocket."""
    queue = session.queue
    while True:
        item = await queue.get()
        queue.task_done()
        if item is None:
            break
        try:
            await ws.send(item.encode())
        except Exception:
            break
    await ws.close()


def _abort(request: web.Request) -> Callable[[], None]:
    def abort() -> None:
        transport = request.transport
        if transport is not None:
            transport.abort()

    return abort


class Silence:
    """Calls ``expire`` once nothing has been heard for ``limit`` seconds.

    :meth:`heard` only notes the time; the one timer, when it fires early, is set again
    for the end of the current quiet spell. So a busy connection costs a clock read per
    message, not a timer."""

    def __init__(self, limit: float, expire: Callable[[], None]) -> None:
        self.limit = limit
        self.expire = expire
        self._loop = asyncio.get_running_loop()
        self._last = self._loop.time()
        self._timer: asyncio.TimerHandle | None = self._loop.call_at(
            self._last + limit, self._check
        )

    def heard(self) -> None:
        self._last = self._loop.time()

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _check(self) -> None:
        due = self._last + self.limit
        if self._loop.time() < due:
            self._timer = self._loop.call_at(due, self._check)
            return
        self._timer = None
        self.expire()
