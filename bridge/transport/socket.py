"""The Socket.IO adapter: the bridge's own websocket-only Engine.IO / Socket.IO server
(:mod:`bridge.transport.engineio_ws`, :mod:`bridge.transport.socketio_server`) in front of
:class:`IntentPort`.

What a client sends reaches the namespace already decoded and sorted by
:class:`SocketIOLink` (a client's event, a refused message, a join or a leave);
:class:`FateSocket` turns each into a port call and the reply into an ack and room emits.
What belongs to one websocket rather than one namespace session (the join clock and join
rate, malformed frames counted, the TCP gate's claim) lives on its :class:`Connection`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from aiohttp import web

from bridge.service import BridgeService, ConnectRefused, Reply, Session, error, protocol
from bridge.service.session import folded_ack, user_room
from bridge.transport.connections import (
    AddressGate,
    HandshakeRate,
    RefusalLog,
    Seats,
    ignore_refusal,
    peer_address,
)
from bridge.transport.engineio_ws import (
    PING_INTERVAL_SECONDS,
    PING_TIMEOUT_SECONDS,
    EngineOptions,
    EngineSession,
    refusal,
)
from bridge.transport.fan_out import RoomFanOut
from bridge.transport.port import Budgets, IntentPort
from bridge.transport.ratelimit import TokenBucket
from bridge.transport.socketio_server import Refused, SocketIOLink

log = logging.getLogger("bridge.server")

SOCKET_PATH = "/socket.io/"
# Joins of a namespace per websocket (a reconnecting client opens a new websocket).
JOIN_RATE_PER_SECOND = 1.0
JOIN_BURST = 5.0
# A client that ignores the close packet is hung up on this long after it.
HANG_UP_GRACE_SECONDS = 1.0


class Connection(SocketIOLink):
    """One websocket to ``/socket.io/``: its Engine.IO session and its ``/fate`` join."""

    def __init__(self, owner: FateSocket, request: web.Request) -> None:
        super().__init__(owner, owner.fan_out)
        self.owner = owner
        self.request = request
        now = time.monotonic()
        self.joins = TokenBucket(JOIN_RATE_PER_SECOND, JOIN_BURST, stamp=now)
        # The websocket's rate budgets, whichever join spends them.
        self.budgets = Budgets.fresh(now)
        self.malformed = 0
        self.join_timer: asyncio.TimerHandle | None = None
        # Refused for what it sent, or told it has no seat: being closed.
        self.refused = False
        self.open = True

    @property
    def address(self) -> str:
        return peer_address(self.request.transport)

    def name(self) -> str:
        return self.engine.sid if self.engine is not None else f"from {self.address}"

    def may_connect(self) -> bool:
        """A CONNECT that cannot succeed spends a join token too (one CONNECT flood is
        as costly as joins); past them the connection is cut, counted and logged once
        (what it sent before the cut is still read, and refused without a word)."""
        if self.refused:
            return False
        if self.joins.take(time.monotonic()):
            return True
        self.refused = True
        self.owner.count_refusal("connect_flood")
        self.owner.refusals.note(
            self.address, "cut a connection sending CONNECTs past the join rate"
        )
        return False

    def cut(self, reason: str) -> None:
        """Sent what no Socket.IO client sends before joining: cut, counted, logged at a
        bounded rate."""
        if not self.refused:
            self.owner.refuse(self, reason)

    def stop_clock(self) -> None:
        if self.join_timer is not None:
            self.join_timer.cancel()
            self.join_timer = None


class FateSocket:
    """The bridge's Socket.IO server, with the wire hardened where it meets the port:

    - A malformed frame is counted per connection, logged in one line, answered with an
      error ack when it carried an ack id, and the client gets a ``notice``; a frame that
      is no Engine.IO packet (or one no client sends) ends the connection with one line.
    - A websocket that has not joined ``/fate`` within ``join_timeout`` seconds is closed;
      a refused join does not stop the clock, and leaving ``/fate`` starts it again. Joins
      are rate limited per websocket.
    - Joined sockets take seats per remote address (:class:`Seats`): a player nobody has
      vouched for takes one of the few unbound seats, and is told why and closed unless
      bound within ``bind_timeout`` seconds; a GM or a bound player takes a seated one. A
      joined socket is no longer a stranger at the TCP gate (:meth:`AddressGate.claim`).
    - A second CONNECT for ``/fate`` while joined is refused and changes nothing:
      identity comes from the first handshake only.
    - Websocket handshakes are rate limited per address (``handshakes``); CONNECTs that
      cannot succeed spend join tokens too, and past them the connection is cut.
    - :meth:`stop` ends serving gracefully: running intents finish, later ones are
      answered "send it again", every websocket closes with 1012 (clients reconnect).
    - Websockets decline permessage-deflate unless ``compress``: every browser offers it,
      and deflating each frame once per receiver costs a large share of an action's CPU
      in a full room, for frames that are small anyway (the README's bench table).
    """

    def __init__(
        self,
        service: BridgeService,
        fan_out: RoomFanOut,
        *,
        on_commit: Callable[[], None] | None = None,
        join_timeout: float,
        bind_timeout: float,
        seats: Seats | None = None,
        gate: AddressGate | None = None,
        compress: bool = False,
        ping_interval: float = PING_INTERVAL_SECONDS,
        ping_timeout: float = PING_TIMEOUT_SECONDS,
        max_payload: int = 1_000_000,
        cors_origins: str | Sequence[str] = "*",
        handshakes: HandshakeRate | None = None,
        count_refusal: Callable[[str], None] = ignore_refusal,
    ) -> None:
        # Handed each reason the wire refuses, cuts or holds back a client for
        # (:class:`bridge.transport.connections.RefusalCounts`, read by /metrics).
        self.count_refusal = count_refusal
        self.port = IntentPort(service, on_bound=self.now_bound)
        self.handshakes = handshakes or HandshakeRate(0)
        self.service = service
        self.fan_out = fan_out
        self.on_commit = on_commit
        self.join_timeout = join_timeout
        self.bind_timeout = bind_timeout
        self.seats = seats or Seats()
        self.gate = gate
        self.compress = compress
        self.options = EngineOptions(
            ping_interval=ping_interval,
            ping_timeout=ping_timeout,
            max_payload=max_payload,
            compress=compress,
            cors_origins=cors_origins,
        )
        # /fate sid -> its websocket's connection.
        self.connections: dict[str, Connection] = {}
        # Every open websocket, joined or not.
        self.live: set[Connection] = set()
        self.refusals = RefusalLog(log)
        self.bind_timers: dict[str, asyncio.TimerHandle] = {}
        self.tasks: set[asyncio.Task[Any]] = set()
        # Set by :meth:`stop`: intents arriving from then on are answered, not run.
        self.stopping = False

    @property
    def sessions(self) -> dict[str, Session]:
        return self.port.sessions

    def spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(work)
        self.tasks.add(task)  # keep a reference until it ends
        task.add_done_callback(self.tasks.discard)

    def attach(self, app: web.Application) -> None:
        """Serve ``/socket.io/`` on ``app`` (GET for websockets; the rest is refused)."""
        app.router.add_route("GET", SOCKET_PATH, self.handle)
        app.router.add_route("POST", SOCKET_PATH, self.handle)
        app.router.add_route("OPTIONS", SOCKET_PATH, self.handle)

    # --- one HTTP request, one websocket ------------------------------------------------

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Serve one request to ``/socket.io/``: a refusal, or a websocket until its
        session ends. Guarantees: when this returns the connection has left ``/fate``,
        its timers are cancelled and its counts logged, and a frame that is no Engine.IO
        packet ended it with one log line (never a traceback)."""
        refused = self.options.refuse(request)
        if refused is not None:
            return refused
        address = peer_address(request.transport)
        if not self.handshakes.take(address, time.monotonic()):
            self.count_refusal("handshake_rate")
            self.refusals.note(address, "refused websocket handshakes past the rate")
            return refusal("Too many connections from your address; try again in a moment.", 429)
        connection = Connection(self, request)
        self.live.add(connection)
        self.start_clock(connection)
        # aiohttp refuses a frame of max_msg_size bytes or more; Engine.IO's maxPayload is
        # the largest accepted (a deflated message's size is checked again once inflated).
        ws = web.WebSocketResponse(
            compress=self.compress, max_msg_size=self.options.max_payload + 1
        )
        try:
            await ws.prepare(request)
            engine = connection.engine = EngineSession(
                ws, request, self.options, connection.on_message, self.count_refusal
            )
            what = await engine.serve()
            if what is not None and not connection.refused:
                self.refuse(connection, what, engine.cut_reason)
        except ConnectionError:
            pass  # gone before or while it opened
        finally:
            self.live.discard(connection)
            connection.open = False
            connection.stop_clock()
            try:
                await connection.leave()
            except Exception:
                log.exception("leaving /fate failed for connection %s", connection.name())
            if connection.engine is not None:
                await connection.engine.finish()
            if connection.malformed:
                log.warning(
                    "connection %s closed after %d malformed frames",
                    connection.name(),
                    connection.malformed,
                )
        return ws

    def refuse(self, connection: Connection, what: str, reason: str = "bad_packet") -> None:
        """Cut a connection for what it sent: counted as ``reason``, and one log line (at
        the refusal log's bounded rate)."""
        connection.refused = True
        self.count_refusal(reason)
        self.refusals.note(connection.address, f"closed connection {connection.name()}: {what}")
        if connection.engine is not None:
            connection.engine.abort()
        elif connection.request.transport is not None:
            connection.request.transport.abort()

    async def hang_up(self, connection: Connection, *, abort: bool = False) -> None:
        """Close the connection: Engine.IO's close packet (what was sent before goes
        first), then the TCP connection, at once when ``abort`` else a moment later for a
        client that ignores the close packet."""
        transport = connection.request.transport
        if connection.engine is not None:
            await connection.engine.close()
        if transport is None:
            return
        if abort:
            transport.abort()
        else:
            # abort, not close: close waits for the write buffer to drain, which a client
            # that does not read never lets happen.
            asyncio.get_running_loop().call_later(HANG_UP_GRACE_SECONDS, transport.abort)

    def start_clock(self, connection: Connection) -> None:
        """The websocket must join ``/fate`` within ``join_timeout`` seconds."""
        connection.stop_clock()
        connection.join_timer = asyncio.get_running_loop().call_later(
            self.join_timeout, lambda: self.spawn(self.close_unjoined(connection))
        )

    async def close_unjoined(self, connection: Connection) -> None:
        connection.join_timer = None
        if connection.sid is not None or not connection.open:
            return
        self.count_refusal("join_timeout")
        log.info("closing %s: no namespace joined within %ss", connection.name(), self.join_timeout)
        await self.hang_up(connection)

    async def stop(self, grace: float) -> None:
        """Stop serving, within about ``grace`` seconds: intents that arrive from now on
        are answered "send it again" without running; those already running finish and
        their acks go out; then every websocket is closed as a restarting server closes
        it (:meth:`EngineSession.restart`: clients reconnect by themselves) and whatever
        is left is cut. Idempotent."""
        self.stopping = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        running = [task for connection in self.live for task in connection.tasks]
        if running:
            await asyncio.wait(running, timeout=max(0.1, grace / 2))
        closing = [
            asyncio.ensure_future(connection.engine.restart(max(0.1, deadline - loop.time())))
            for connection in list(self.live)
            if connection.engine is not None
        ]
        if closing:
            await asyncio.wait(closing, timeout=max(0.1, deadline - loop.time()))
        for connection in list(self.live):
            transport = connection.request.transport
            if transport is not None:
                transport.abort()

    # --- joining and leaving /fate ------------------------------------------------------

    async def joining(self, link: SocketIOLink, sid: str, auth: object) -> None:
        """A socket joins ``/fate`` as ``auth`` says; raises :class:`Refused` (answered
        with CONNECT_ERROR) when it may not."""
        if not isinstance(link, Connection):
            raise Refused("refused")
        connection = link
        # Leaving and joining again is a fresh handshake (a store write each time): rate
        # limited per websocket, since each join would otherwise get a fresh bucket.
        if not connection.joins.take(time.monotonic()):
            self.count_refusal("join_rate")
            refused = protocol.ConnectRefusal(
                reason="rate_limited", message="Too many joins from this connection; slow down."
            )
            raise Refused("rate_limited", refused.model_dump(mode="json"))
        try:
            session = await self.service.authenticate(sid, auth)
        except ConnectRefused as refused_join:
            raise Refused("refused", refused_join.refusal.model_dump(mode="json")) from None
        full = self.take_seat(sid, session, connection)
        if full is not None:
            self.count_refusal("seats_full")
            await self.service.disconnect(session)  # its binding nonce goes
            # Told so (the CONNECT_ERROR goes out before this task runs), then closed.
            connection.refused = True
            self.spawn(self.hang_up(connection))
            refusal = protocol.ConnectRefusal(reason="rate_limited", message=full)
            raise Refused("rate_limited", refusal.model_dump(mode="json"))
        self.connections[sid] = connection
        # Only a join that succeeded stops the clock: a socket sending wrong keys is closed
        # as one that sends nothing.
        connection.stop_clock()
        self.port.opened(session, connection.budgets)
        # A player hears the world only once the GM's client has vouched for it (the
        # "bound" notice reaches its user room); see IntentPort.
        self.fan_out.enter(sid, user_room(session.world_id, session.user_id))
        if session.bound:
            self.fan_out.enter(sid, session.room)
        await self.service.connected(session)
        log.info(
            "connected %s as %s %s in %s", sid, session.role, session.user_id, session.world_id
        )

    async def left(self, link: SocketIOLink, sid: str) -> None:
        """``sid`` left ``/fate`` (or its websocket closed): its seat is free, its session
        gone; a websocket still open must join again in time."""
        connection = self.connections.pop(sid, None)
        self.release(sid, connection)
        await self.port.closed(sid)
        if connection is not None and connection.open and not connection.refused:
            self.start_clock(connection)

    # --- seats --------------------------------------------------------------------------

    def take_seat(self, sid: str, session: Session, connection: Connection) -> str | None:
        """Seat a socket joining ``/fate`` as ``session``; None when seated, else why not
        (the join is refused). An unbound player's bind clock starts here."""
        transport = connection.request.transport
        if not self.seats.take(sid, connection.address, bound=session.bound):
            if session.bound:
                return (
                    f"Too many connections from your address ({self.seats.limit} GM and "
                    "player connections); close some and try again."
                )
            return (
                f"Too many players from your address wait to be confirmed by a GM "
                f"({self.seats.unbound_limit}); try again in a moment."
            )
        if self.gate is not None and transport is not None:
            self.gate.claim(transport)
        if not session.bound:
            self.bind_timers[sid] = asyncio.get_running_loop().call_later(
                self.bind_timeout, lambda: self.spawn(self.bind_expired(sid))
            )
        return None

    async def now_bound(self, session: Session) -> None:
        """A player's connection was just vouched for: it hears the world from now on, and
        moves from the unbound players' seats to the seated ones (closed with a notice when
        its address has no seat left)."""
        sid = session.sid
        if sid not in self.connections:
            return
        self.fan_out.enter(sid, session.room)
        timer = self.bind_timers.pop(sid, None)
        if timer is not None:
            timer.cancel()
        if not self.seats.bind(sid):
            message = (
                f"Too many connections from your address ({self.seats.limit} GM and player "
                "connections); close some and try again."
            )
            self.count_refusal("seats_full")
            self.spawn(self.close_seat(sid, "too_many_connections", message))

    def release(self, sid: str, connection: Connection | None) -> None:
        """A socket left ``/fate`` (or closed): its seat is free."""
        timer = self.bind_timers.pop(sid, None)
        if timer is not None:
            timer.cancel()
        self.seats.leave(sid)
        transport = connection.request.transport if connection is not None else None
        if self.gate is not None and transport is not None:
            self.gate.unclaim(transport)

    async def bind_expired(self, sid: str) -> None:
        self.bind_timers.pop(sid, None)
        session = self.port.sessions.get(sid)
        if session is None or session.bound or not self.seats.is_unbound(sid):
            return
        # The GM's client may have vouched through another bridge process (Redis): this
        # process learns it from the store, as at the player's next intent.
        if session.bind_nonce is not None and await self.service.store.nonce_bound(
            session.world_id, session.user_id, session.bind_nonce
        ):
            await self.port.bind(session)
            return
        self.count_refusal("bind_timeout")
        log.info("closing %s: not bound within %ss", sid, self.bind_timeout)
        message = (
            f"No GM confirmed which Foundry user this connection is within "
            f"{self.bind_timeout:g} s (a GM must be connected to the bridge); reconnecting "
            "starts again."
        )
        await self.close_seat(sid, "bind_timeout", message)

    async def close_seat(self, sid: str, code: str, message: str) -> None:
        """Tell a joined socket why, then close its connection."""
        connection = self.connections.get(sid)
        if connection is None:
            return
        notice = protocol.Notice(level="error", code=code, message=message)
        await self.fan_out.emit("notice", notice.model_dump(mode="json"), room=sid)
        await self.hang_up(connection)

    # --- frames -------------------------------------------------------------------------

    async def event(self, sid: str, frame: object) -> dict[str, Any]:
        """Answer one event frame (``[name, payload]``) from a client: always an ack,
        never an exception, whatever the frame holds.

        The commit's ``emits`` frame goes to the world's room; a sender in that room gets
        its items in its ack instead (``protocol.AckOk``), so it is sent one frame, not
        two. Both leave in the order the frame alone would have: the frame's receivers
        hear it before any later commit's, and the ack is the sender's next frame."""
        if self.stopping:
            return error(
                "internal",
                "The bridge is restarting; nothing changed: send it again.",
                params={"reason": "restarting"},
            )
        reply: Reply = await self.port.on_frame(sid, frame)
        ack = reply.ack
        session = self.port.sessions.get(sid)
        for emission in reply.emissions:
            folded = (
                emission.event == protocol.EMITS_FRAME
                and session is not None
                and session.bound
                and emission.room == session.room
            )
            if folded:
                ack = folded_ack(ack, emission.payload["emits"])
            await self.fan_out.emit(
                emission.event,
                emission.payload,
                room=emission.room,
                skip_sid=sid if folded else None,
            )
        if reply.emissions and self.on_commit is not None:
            self.on_commit()
        return ack

    async def malformed(self, sid: str, reason: str) -> dict[str, Any]:
        """A frame the decoder could not read, from joined socket ``sid``: counted per
        connection, a rate token spent; then (while tokens last) one log line and a
        ``notice``. Returns the error ack (sent only when the frame carried an ack id)."""
        connection = self.connections.get(sid)
        count = 1
        if connection is not None:
            connection.malformed += 1
            count = connection.malformed
        # A flood of broken frames costs rate tokens like any other frame; past the limit
        # it is only counted (no log line, no notice).
        if not self.port.take_token(sid):
            return error("rate_limited", "Too many messages; slow down.")
        name = connection.name() if connection is not None else sid
        log.warning("malformed frame #%d on connection %s: %s", count, name, reason)
        message = f"The bridge could not read a message from this client ({reason})."
        notice = protocol.Notice(level="error", code="malformed_frame", message=message)
        await self.fan_out.emit("notice", notice.model_dump(mode="json"), room=sid)
        return error("invalid", message)
