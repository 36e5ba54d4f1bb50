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

What a session does with each packet it receives is still engineio's own (a message
goes to python-socketio's handler, any other packet to ``AsyncSocket.receive``). A
packet to send goes straight to the websocket when nothing waits to go before it
(:class:`Lane`), else through the session's queue as engineio sends it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import engineio
from aiohttp import web
from engineio import exceptions, packet
from engineio.async_drivers import aiohttp as engineio_aiohttp
from engineio.async_socket import AsyncSocket

log = logging.getLogger("bridge.websocket_session")

# What a websocket-only client sends: a close, pongs to the server's pings, messages. An
# open, ping, upgrade or noop comes only from a long-polling client upgrading (which the
# bridge does not offer), and a type past 6 from nobody; engineio logs a traceback for
# each packet it cannot place (an IndexError naming the type), so a loop of them filled
# the log. Such a packet, or a frame that is no packet at all, ends the connection.
CLIENT_PACKETS = frozenset({packet.CLOSE, packet.PONG, packet.MESSAGE})


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

    async def send(self, message: str | bytes) -> None:
        """engineio's ``send``, without asking on every frame which sends are coroutines."""
        if isinstance(message, str):
            await self._sock.send_str(message)
        else:
            await self._sock.send_bytes(message)


async def serve_session(session: AsyncSocket, ws: BridgeWebSocket, request: web.Request) -> None:
    """Run a websocket-only Engine.IO session until either side closes it, as
    ``AsyncSocket._websocket_handler`` does: every frame received goes to
    ``session.receive``; everything the session queues is sent in order; at the end the
    session closes as a lost transport. A frame over the server's size limit, or one
    that is not text or bytes, ends the session as there; so does a packet no
    websocket client sends (:data:`CLIENT_PACKETS`) or a frame that is no packet, with
    one log line for the connection (:func:`_refuse_packet`)."""
    server = session.server
    session.connected = True
    session.upgraded = True
    # A message goes straight to the server's handler (python-socketio's, awaited in
    # order as engineio does for it), skipping the log line engineio formats for each.
    on_message = server.handlers.get("message")
    if server.async_handlers or not asyncio.iscoroutinefunction(on_message):
        on_message = None
    lane = Lane(session, ws, request)
    lanes: dict[str, Lane] | None = getattr(server, "lanes", None)
    if lanes is not None:
        lanes[session.sid] = lane
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
                received = packet.Packet(encoded_packet=data)
            except Exception:  # no type digit, an empty frame, bad base64
                _refuse_packet(session, request, data, "a frame that is no Engine.IO packet")
                break
            if received.packet_type not in CLIENT_PACKETS:
                _refuse_packet(session, request, data, "an Engine.IO packet no client sends")
                break
            try:
                if on_message is not None and received.packet_type == packet.MESSAGE:
                    await on_message(session.sid, received.data)
                else:
                    await session.receive(received)
            except exceptions.UnknownPacketError:
                pass
            except exceptions.SocketIsClosedError:
                server.logger.info("Receive error -- socket is closed")
                break
            except Exception:  # as engineio: log it and go on with the session
                server.logger.exception("Unknown receive error")
    finally:
        silence.cancel()
        if lanes is not None:
            lanes.pop(session.sid, None)
        await lane.finish()
    await session.close(wait=False, abort=True, reason=server.reason.TRANSPORT_CLOSE)


def _refuse_packet(
    session: AsyncSocket, request: web.Request, data: str | bytes, what: str
) -> None:
    """The one log line of a connection closed for what it sent (its first bytes shown,
    escaped): the connection ends here, so a flood of such packets is one line."""
    log.warning("closed connection %s from %s: %s (%.20r)", session.sid, request.remote, what, data)


class BridgeEngineIO(engineio.AsyncServer):  # type: ignore[misc]
    """engineio's server, whose websocket sessions (:func:`serve_session`) send each
    packet through their :class:`Lane`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Engine.IO session id -> the way out of a session served here.
        self.lanes: dict[str, Lane] = {}

    async def send_packet(self, sid: str, pkt: packet.Packet) -> None:
        lane = self.lanes.get(sid)
        if lane is None:
            await super().send_packet(sid, pkt)
        else:
            await lane.send(pkt)


class Lane:
    """A session's packets to the websocket, in the order they are sent.

    A packet goes straight out when nothing is queued before it and the socket's buffer
    is empty (an uncompressed frame is written to the transport at once, before any
    wait, so nothing can overtake it); otherwise it joins the session's queue, which one
    task sends in order. Compressed frames always queue: aiohttp may compress a large
    one in a thread. So an answer costs no task switch, and a slow client's backlog
    never makes a sender wait."""

    def __init__(self, session: AsyncSocket, ws: BridgeWebSocket, request: web.Request) -> None:
        self.session = session
        self.ws = ws
        self.request = request
        self._sender = asyncio.ensure_future(self._send_queued())

    async def send(self, pkt: packet.Packet) -> None:
        """As ``AsyncSocket.send``: nothing for a session past its ping timeout (engineio
        closes it), else the packet is on its way in order."""
        session = self.session
        if not await session.check_ping_timeout():
            return
        transport = self.request.transport
        if (
            self.ws.compress
            or not session.queue.empty()
            or transport is None
            or transport.get_write_buffer_size()
        ):
            await session.queue.put(pkt)
            return
        # A failure means the socket is closing: its read loop ends the session.
        with contextlib.suppress(Exception):
            await self.ws.send(pkt.encode())

    async def finish(self) -> None:
        """Send what is queued, then close the websocket."""
        await self.session.queue.put(None)
        await self._sender

    async def _send_queued(self) -> None:
        queue = self.session.queue
        while True:
            item = await queue.get()
            queue.task_done()
            if item is None:
                break
            try:
                await self.ws.send(item.encode())
            except Exception:
                break
        await self.ws.close()


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
