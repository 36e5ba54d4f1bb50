"""Engine.IO v4 over a websocket, the only transport the bridge offers: the handshake's
refusals, the open packet, pings, the silence deadline, close packets both ways, and a
send path that costs no task switch.

A client connects with ``GET /socket.io/?EIO=4&transport=websocket`` and an upgrade; every
other request is refused with HTTP 400 and Engine.IO's error body (a JSON string; a
long-polling request's also names the transports offered). Once open, the server pings
every ``ping_interval`` seconds after the last pong (so a client that never answers is
pinged once), and a connection that sends no pong for ``ping_interval + ping_timeout``
(a live client answers every ping well within it) is cut, whatever else it sends, by one
timer per quiet spell, never one per message (:class:`Silence`).

Both directions are bounded before anything is decoded: what waits to be sent to a client
(:attr:`EngineSession.backlog`) is capped in bytes, and a session over its cap is cut and
its backlog dropped; what a client sends is measured by an :class:`InboundBudget` of
frames and bytes a second. A connection that has joined no namespace has a small budget
(a CONNECT, a pong, little else) and is cut the moment it passes it, before the frame is
decoded; a joined one has a far larger budget and past it is read no slower than it
allows (a flood waits in the kernel's buffers, TCP slows the sender, and its late pongs
end it). A session cut for what it sent is not read any further: what it had sent and
the server had not read is dropped with the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from aiohttp import WSCloseCode, WSMsgType, hdrs, web

from bridge.store import codec
from bridge.transport.connections import ignore_refusal
from bridge.transport.ratelimit import InboundBudget, Pace

# Engine.IO v4 packet types, as the first character of a text frame.
OPEN = "0"
CLOSE = "1"
PING = "2"
PONG = "3"
MESSAGE = "4"
# Frames go out as UTF-8 bytes: a room's frame is encoded once for all its receivers.
PING_FRAME = PING.encode()
CLOSE_FRAME = CLOSE.encode()
# Engine.IO's customary intervals (what clients are tuned for).
PING_INTERVAL_SECONDS = 25.0
PING_TIMEOUT_SECONDS = 20.0
# A frame this long or longer is queued even on an idle socket: written at once, a frame
# past the transport's high-water mark (64 KiB) would make aiohttp wait for it to drain,
# and a sender must never wait for a slow client.
DIRECT_LIMIT = 16 * 1024
# How long closing waits for what is queued to reach a client that does not read.
FLUSH_SECONDS = 5.0
# What may wait to be sent to one client, in bytes: a session past it is cut (a client
# that does not read must not park the server's memory). One that has not joined a
# namespace is sent only refusals and pings.
UNJOINED_BACKLOG_BYTES = 64 * 1024
JOINED_BACKLOG_BYTES = 8 * 1024 * 1024

# What one connection may send before it joins a namespace (a CONNECT and little else: past
# it, the connection is cut), and once joined (a GM's connection relays its players': up to
# 200 intents a second; past it, frames are read late).
UNJOINED_PACE = Pace(
    frames_per_second=5, frame_burst=10, bytes_per_second=16 * 1024, byte_burst=64 * 1024
)
JOINED_PACE = Pace(
    frames_per_second=300,
    frame_burst=600,
    bytes_per_second=1024 * 1024,
    byte_burst=2 * 1024 * 1024 + 64,
)

BAD_VERSION = "The client is using an unsupported version of the Socket.IO or Engine.IO protocols"

OnMessage = Callable[[str | bytes], Awaitable[None]]


def new_id() -> str:
    """A session id: 20 URL-safe characters, 120 random bits."""
    return secrets.token_urlsafe(15)


def refusal(message: str, status: int = 400) -> web.Response:
    """Engine.IO's refusal of an HTTP request: the status and the message as a JSON string
    (what Engine.IO clients show for a refused transport, version, origin or upgrade)."""
    return web.Response(status=status, text=codec.dumps(message), content_type="text/plain")


def polling_refusal() -> web.Response:
    """The answer to a long-polling request: HTTP 400 with a JSON body saying that only
    websockets are served (socket.io-client surfaces it in its ``connect_error``)."""
    body = {
        "code": 0,
        "message": "Invalid transport: this server accepts websockets only; "
        'set transports: ["websocket"] in the client',
        "transports": ["websocket"],
    }
    return web.Response(status=400, text=codec.dumps(body), content_type="application/json")


@dataclass(frozen=True)
class EngineOptions:
    """What the server tells a client in its open packet, and whom it lets in."""

    ping_interval: float = PING_INTERVAL_SECONDS
    ping_timeout: float = PING_TIMEOUT_SECONDS
    max_payload: int = 1_000_000
    compress: bool = False
    # "*" lets any page in; a list (or one origin) only those.
    cors_origins: str | Sequence[str] = "*"

    def allows(self, origin: str) -> bool:
        if self.cors_origins == "*":
            return True
        allowed = [self.cors_origins] if isinstance(self.cors_origins, str) else self.cors_origins
        return origin in allowed

    def refuse(self, request: web.Request) -> web.Response | None:
        """The answer to a request that opens no websocket session, or None for one that
        does: an origin not allowed, a transport other than websocket (long-polling
        included), an Engine.IO version other than 4, a GET without the upgrade, or any
        other method (OPTIONS is answered ``OK``, as a CORS preflight). An answer to an
        allowed origin carries the CORS headers a browser needs to read it."""
        origin = request.headers.get(hdrs.ORIGIN)
        if origin and not self.allows(origin):
            return refusal(f"{origin} is not an accepted origin.")
        answer = self.answer(request)
        if answer is not None and origin:
            headers = answer.headers
            headers[hdrs.ACCESS_CONTROL_ALLOW_ORIGIN] = origin
            headers[hdrs.ACCESS_CONTROL_ALLOW_CREDENTIALS] = "true"
            if request.method == hdrs.METH_OPTIONS:
                headers[hdrs.ACCESS_CONTROL_ALLOW_METHODS] = "OPTIONS, GET, POST"
                asked = request.headers.get(hdrs.ACCESS_CONTROL_REQUEST_HEADERS)
                if asked:
                    headers[hdrs.ACCESS_CONTROL_ALLOW_HEADERS] = asked
        return answer

    def answer(self, request: web.Request) -> web.Response | None:
        """:meth:`refuse` before CORS: what the request itself gets. A long-polling
        request (a default socket.io-client's first) is told which transport to use."""
        query = request.query
        if query.get("transport", "polling") != "websocket":
            return polling_refusal()
        if "sid" in query:  # a session continued over HTTP: there are none
            return refusal(f"Invalid session {query['sid']}")
        if query.getall("EIO", []) != ["4"]:
            return refusal(BAD_VERSION)
        if request.method == hdrs.METH_OPTIONS:
            return web.Response(text="OK", content_type="text/plain")
        if request.method != hdrs.METH_GET:
            return refusal("Invalid session None")
        if request.headers.get(hdrs.UPGRADE, "").lower() != "websocket":
            return refusal("Invalid websocket upgrade")
        return None

    def open_packet(self, sid: str) -> bytes:
        opened = {
            "sid": sid,
            "upgrades": [],
            "pingTimeout": int(self.ping_timeout * 1000),
            "pingInterval": int(self.ping_interval * 1000),
            "maxPayload": self.max_payload,
        }
        return OPEN.encode() + codec.dumps_bytes(opened)


class EngineSession:
    """One websocket's Engine.IO session.

    :meth:`serve` reads frames until either side closes, handing each message's payload
    (text after the ``4``, or a binary frame whole) to ``on_message``, awaited in order.
    :meth:`send` puts a frame on the wire in the order sent: straight to the socket when
    nothing is queued and the transport's buffer is empty, else through the session's
    backlog, which one writer task (started when needed) sends in order. So an answer
    costs no task switch, and a slow client's backlog never makes a sender wait. A
    backlog past ``backlog_limit`` bytes cuts the session and is dropped at once; frames
    are read no faster than ``inbound`` allows (see :meth:`set_joined`)."""

    def __init__(
        self,
        ws: web.WebSocketResponse,
        request: web.Request,
        options: EngineOptions,
        on_message: OnMessage,
        count_refusal: Callable[[str], None] = ignore_refusal,
    ) -> None:
        self.ws = ws
        # Handed each reason the session refuses, cuts or holds back a client for.
        self.count_refusal = count_refusal
        self.request = request
        self.options = options
        self.on_message = on_message
        self.sid = new_id()
        self.backlog: deque[bytes] = deque()
        self.backlog_bytes = 0
        self.backlog_limit = UNJOINED_BACKLOG_BYTES
        self.overflowed = False
        # Cut by the server: nothing more is read, sent or flushed.
        self.aborted = False
        self.joined = False
        # What :meth:`serve` returning a reason to cut the session counts as.
        self.cut_reason = "bad_packet"
        self.writer: asyncio.Task[None] | None = None
        self.closed = False
        self.loop = asyncio.get_running_loop()
        self.inbound = InboundBudget(UNJOINED_PACE, self.loop.time())
        self.ping_timer: asyncio.TimerHandle | None = None
        self.awaiting_pong = False
        self.silence = Silence(options.ping_interval + options.ping_timeout, self.unanswered)

    # --- sending ------------------------------------------------------------------------

    async def send(self, frame: bytes) -> None:
        """Send one Engine.IO text frame, UTF-8 (``4`` and a Socket.IO packet, for a
        message). Never raises and never waits for the client: on a closed session it is
        dropped."""
        if self.closed:
            return
        transport = self.request.transport
        if (
            self.writer is not None
            or self.options.compress  # aiohttp may deflate a large frame in a thread
            or len(frame) >= DIRECT_LIMIT
            or transport is None
            or transport.get_write_buffer_size()
        ):
            self.post(frame)
            return
        # Written to the transport before the first await: nothing can overtake it. A
        # failure means the socket is closing, and its read loop ends the session.
        with contextlib.suppress(Exception):
            await self.ws.send_frame(frame, WSMsgType.TEXT)

    def post(self, frame: bytes) -> None:
        """Queue ``frame`` behind whatever waits to be sent (callable from a timer). A
        backlog that would pass ``backlog_limit`` bytes cuts the session instead."""
        if self.closed:
            return
        size = len(frame)
        if self.backlog_bytes + size > self.backlog_limit:
            self.overflow()
            return
        self.backlog.append(frame)
        self.backlog_bytes += size
        if self.writer is None:
            self.writer = asyncio.ensure_future(self.write_backlog())

    def overflow(self) -> None:
        """The client reads too slowly for what it is sent: its backlog is dropped, the
        session closed and the TCP connection cut (the read loop then ends)."""
        self.overflowed = True
        self.count_refusal("backlog")
        self.drop_backlog()
        if self.writer is not None:
            self.writer.cancel()
        self.abort()

    def drop_backlog(self) -> None:
        self.backlog.clear()
        self.backlog_bytes = 0

    def set_joined(self, joined: bool) -> None:
        """A session that joined a namespace may send and be sent more."""
        self.joined = joined
        self.backlog_limit = JOINED_BACKLOG_BYTES if joined else UNJOINED_BACKLOG_BYTES
        # A debt run up at the joined pace is not a stranger's flood: a connection that
        # leaves starts the stranger's small pace whole, room for its next CONNECT (far
        # less than the joined pace it had; joins themselves are rate-limited).
        self.inbound.pace(
            JOINED_PACE if joined else UNJOINED_PACE, self.loop.time(), fresh=not joined
        )

    async def write_backlog(self) -> None:
        try:
            while self.backlog:
                frame = self.backlog.popleft()
                self.backlog_bytes -= len(frame)
                await self.ws.send_frame(frame, WSMsgType.TEXT)
        except Exception:
            self.drop_backlog()  # the socket is closing: nothing more gets through
        finally:
            self.writer = None

    # --- pings and silence --------------------------------------------------------------

    def ping(self) -> None:
        self.ping_timer = None
        if not self.closed:
            self.awaiting_pong = True
            self.post(PING_FRAME)

    def pong(self) -> None:
        """The next ping goes out ``ping_interval`` after the answer to the last one."""
        if self.awaiting_pong and not self.closed:
            self.awaiting_pong = False
            self.ping_timer = self.loop.call_later(self.options.ping_interval, self.ping)

    def unanswered(self) -> None:
        """No pong within ``ping_interval + ping_timeout``: the client is cut."""
        self.count_refusal("pong_timeout")
        self.abort()

    def abort(self) -> None:
        """Cut the TCP connection: nothing more is sent, and the read loop ends the session
        without reading what the client sent before the cut."""
        self.aborted = True
        self.closed = True
        transport = self.request.transport
        if transport is not None:
            transport.abort()

    # --- the session --------------------------------------------------------------------

    async def serve(self) -> str | None:
        """Open the session and read until it ends. Returns None when either side closed
        it or the connection broke, else what the client sent that no Engine.IO client
        does (a packet type past ``4`` or an open, ping or upgrade, which come only from
        long-polling clients, or a frame that is no packet): the session is then over.
        Guarantees: the timers are cancelled when this returns."""
        await self.ws.send_frame(self.options.open_packet(self.sid), WSMsgType.TEXT)
        self.ping_timer = self.loop.call_later(self.options.ping_interval, self.ping)
        self.awaiting_pong = False
        ws = self.ws
        silence = self.silence
        on_message = self.on_message
        try:
            while True:
                try:
                    received = await ws.receive()
                except Exception:  # the transport broke mid-frame
                    return None
                if self.aborted:
                    return None
                kind = received.type
                if kind is WSMsgType.TEXT or kind is WSMsgType.BINARY:
                    if self.options.compress and self.inflated_too_large(received.data):
                        self.count_refusal("max_payload")
                        return None
                    # Charged before it is decoded: a stranger past its budget is cut, a
                    # joined sender read later.
                    wait = self.inbound.charge(len(received.data), self.loop.time())
                    if wait > 0:
                        if not self.joined:
                            self.cut_reason = "inbound_budget"
                            return "more than a connection that joined nothing may send"
                        self.count_refusal("inbound_budget")
                        await asyncio.sleep(wait)
                        if self.aborted:
                            return None
                if kind is WSMsgType.TEXT:
                    data: str = received.data
                    head = data[:1]
                    if head == MESSAGE:
                        await on_message(data[1:])
                    elif head == PONG:
                        silence.heard()  # only an answered ping proves a live client
                        self.pong()
                    elif head == CLOSE:
                        return None
                    elif head.isdigit() and head.isascii():
                        return "an Engine.IO packet no client sends"
                    else:
                        return "a frame that is no Engine.IO packet"
                elif kind is WSMsgType.BINARY:
                    await on_message(received.data)  # a binary message, as Engine.IO reads it
                else:  # closed, closing, over the size limit, a broken frame
                    if ws.close_code == WSCloseCode.MESSAGE_TOO_BIG:
                        self.count_refusal("max_payload")
                    return None
        finally:
            self.stop_timers()

    def inflated_too_large(self, data: str | bytes) -> bool:
        """Whether a message (inflated by permessage-deflate) is over ``maxPayload``:
        aiohttp lets an inflated one through at one byte over its limit."""
        size = len(data.encode()) if isinstance(data, str) else len(data)
        return size > self.options.max_payload

    def stop_timers(self) -> None:
        silence = self.silence
        silence.cancel()
        if self.ping_timer is not None:
            self.ping_timer.cancel()
            self.ping_timer = None

    async def close(self) -> None:
        """Say goodbye: Engine.IO's close packet after whatever was queued before it
        (waiting at most ``FLUSH_SECONDS`` for a client that does not read), then the
        websocket's close. Idempotent; never raises."""
        if self.closed:
            return
        self.post(CLOSE_FRAME)
        await self._flush_and_close(cancel_writer=False)

    async def restart(self, flush_seconds: float) -> None:
        """The server is stopping: what was queued (at most ``flush_seconds``), then the
        websocket's close with code 1012 (service restart) and no Engine.IO close packet.
        Clients read that as the transport closing, and reconnect by themselves: a close
        packet makes python-socketio's client give up (``server disconnect``), and
        socket.io-client ignores it. Idempotent; never raises."""
        if self.closed:
            return
        await self._flush_and_close(
            cancel_writer=True, flush_seconds=flush_seconds, code=WSCloseCode.SERVICE_RESTART
        )

    async def finish(self) -> None:
        """After the read loop: send what is still queued (bounded), then close the
        websocket if it is not closed yet. Idempotent; never raises."""
        await self._flush_and_close(cancel_writer=True)

    async def _flush_and_close(
        self,
        *,
        cancel_writer: bool,
        flush_seconds: float = FLUSH_SECONDS,
        code: int = WSCloseCode.OK,
    ) -> None:
        """Stop the timers, let the writer send what is queued for at most
        ``flush_seconds`` (then cancel it, if asked), and close the websocket with
        ``code``."""
        self.closed = True
        self.stop_timers()
        if self.overflowed or self.aborted:
            return  # already cut: nothing it sent is read, nothing queued is sent
        writer = self.writer
        if writer is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(writer), flush_seconds)
            if cancel_writer:
                writer.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ws.close(code=code), flush_seconds)


class Silence:
    """Calls ``expire`` once nothing has been heard for ``limit`` seconds (for a session:
    no pong).

    :meth:`heard` only notes the time; the one timer, when it fires early, is set again
    for the end of the current quiet spell. So a busy connection costs a clock read per
    message, not a timer."""

    def __init__(self, limit: float, expire: Callable[[], None]) -> None:
        self.limit = limit
        self.expire = expire
        self.loop = asyncio.get_running_loop()
        self.last = self.loop.time()
        self.timer: asyncio.TimerHandle | None = self.loop.call_at(self.last + limit, self.check)

    def heard(self) -> None:
        self.last = self.loop.time()

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def check(self) -> None:
        due = self.last + self.limit
        if self.loop.time() < due:
            self.timer = self.loop.call_at(due, self.check)
            return
        self.timer = None
        self.expire()
