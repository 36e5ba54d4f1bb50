"""The Socket.IO adapter: python-socketio's public API in front of :class:`IntentPort`.

What a client sends reaches :class:`FateNamespace.trigger_event` already sorted by
:class:`GuardedPacket` (a client's event, a malformed frame, or the server's own connect
and disconnect); the namespace turns each into a port call and the reply into an ack (which
python-socketio sends) and room emits. What belongs to one websocket rather than one
namespace session (the join clock and join rate, malformed frames counted, the TCP gate's
claim, refusing Engine.IO junk) lives on a :class:`Connection`: the bridge serves
``/socket.io/`` with its own aiohttp route (:meth:`FateSocket.handle`), which makes the
connection, hands the request to the public ``AsyncServer.handle_request`` (for a
websocket it returns when the session ends) and cleans up after it. A namespace session
finds its connection through the ``environ`` python-socketio hands its connect handler
(``environ["aiohttp.request"]``, the request the route served).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import time
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any

import engineio
import socketio
from aiohttp import hdrs, web
from multidict import CIMultiDict

from bridge import protocol
from bridge.connections import AddressGate, Seats, peer_address
from bridge.ratelimit import TokenBucket
from bridge.service import BridgeService, ConnectRefused, Reply, Session, error
from bridge.service.session import user_room
from bridge.transport.packets import CLIENT_FRAME, MALFORMED_FRAME, GuardedPacket
from bridge.transport.port import IntentPort

log = logging.getLogger("bridge.server")

SOCKET_PATH = "/socket.io/"
# Joins of a namespace per websocket (a reconnecting client opens a new websocket).
JOIN_RATE_PER_SECOND = 1.0
JOIN_BURST = 5.0
# engineio asks a client that ignores its close packet to hang up; this long after, the
# TCP connection is closed anyway.
HANG_UP_GRACE_SECONDS = 1.0
CLOSE_WAIT_SECONDS = 5.0

# The connection whose request this task serves (engineio reads a websocket's frames in
# the task of the request that opened it): what its log records are about.
CURRENT: contextvars.ContextVar[Connection | None] = contextvars.ContextVar(
    "fate_connection", default=None
)
_ENGINEIO_DIR = os.path.dirname(engineio.__file__)


class Connection:
    """One HTTP request to ``/socket.io/``: for a websocket, the whole Engine.IO session."""

    def __init__(self, owner: FateSocket, request: web.Request) -> None:
        self.owner = owner
        self.request = request
        self.eio_sid: str | None = None
        # The /fate session while joined.
        self.sid: str | None = None
        self.joins = TokenBucket(JOIN_RATE_PER_SECOND, JOIN_BURST, stamp=time.monotonic())
        self.malformed = 0
        self.join_timer: asyncio.TimerHandle | None = None
        # Refused for what it sent, or told it has no seat: being closed.
        self.refused = False
        self.open = True
        # The task serving the request: engineio reads the websocket's frames in it.
        self.task = asyncio.current_task()

    @property
    def address(self) -> str:
        return peer_address(self.request.transport)

    def name(self) -> str:
        return self.eio_sid or f"from {self.address}"

    def stop_clock(self) -> None:
        if self.join_timer is not None:
            self.join_timer.cancel()
            self.join_timer = None


class EngineIOLogGuard(logging.Filter):
    """Engine.IO's logger's filter: a packet engineio cannot place (a type past 6, which
    it fails to name) is logged by engineio with a traceback, once per packet, and the
    session goes on; a loop of them filled the log. Here the first such record of a
    connection becomes one line and the connection is closed (:meth:`FateSocket.refuse`);
    later ones are dropped. Records of errors raised outside engineio's own code (a
    handler's) pass unchanged."""

    def filter(self, record: logging.LogRecord) -> bool:
        connection = CURRENT.get()
        # Only in the task reading the connection's frames (tasks started from it, e.g.
        # engineio's service task, inherit the context too).
        if (
            connection is None
            or asyncio.current_task() is not connection.task
            or not _raised_in_engineio(record.exc_info)
        ):
            return True
        if not connection.refused:
            connection.owner.refuse(connection, "an Engine.IO packet no client sends")
        return False


def _raised_in_engineio(
    exc_info: tuple[type[BaseException], BaseException, TracebackType | None]
    | tuple[None, None, None]
    | None,
) -> bool:
    """Whether the record's exception was raised in engineio's own code."""
    if not exc_info or exc_info[2] is None:
        return False
    tb = exc_info[2]
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename.startswith(_ENGINEIO_DIR)


class FateNamespace(socketio.AsyncNamespace):  # type: ignore[misc]
    """``/fate``: one instance per server. ``trigger_event`` gets the server's own
    ``connect`` and ``disconnect`` by name; a client's events only ever arrive under
    :data:`CLIENT_FRAME` or :data:`MALFORMED_FRAME` (see :class:`GuardedPacket`), so an
    event a client *names* ``connect`` can never reach the connect handler."""

    def __init__(self, socket: FateSocket) -> None:
        super().__init__(protocol.NAMESPACE)
        self.socket = socket

    async def trigger_event(self, event: str, *args: Any) -> Any:
        if event == CLIENT_FRAME and len(args) == 2:
            return await self.socket.client_event(args[0], args[1])
        if event == MALFORMED_FRAME and len(args) == 3:
            return await self.socket.malformed(args[0], str(args[1]))
        if event == "connect":
            sid, environ, auth = (*args, None, None)[:3]
            await self.socket.connect(sid, environ, auth)
            return None
        if event == "disconnect":
            await self.socket.disconnect(args[0])
            return None
        return error("unknown_event", "The bridge has no such event.")


class FateSocket:
    """The bridge's Socket.IO server (``sio``, a plain :class:`socketio.AsyncServer`)
    with the wire hardened where it meets the port:

    - A malformed frame is counted per connection, logged in one line, answered with an
      error ack when it carried an ack id, and the client gets a ``notice``.
    - A websocket that has not joined ``/fate`` within ``join_timeout`` seconds is closed;
      a refused join does not stop the clock, and leaving ``/fate`` starts it again. Joins
      are rate limited per websocket.
    - Joined sockets take seats per remote address (:class:`Seats`): a player nobody has
      vouched for takes one of the few unbound seats, and is told why and closed unless
      bound within ``bind_timeout`` seconds; a GM or a bound player takes a seated one. A
      joined socket is no longer a stranger at the TCP gate (:meth:`AddressGate.claim`).
    - A second CONNECT for a namespace a socket already joined changes nothing (python-
      socketio's manager refuses it): identity comes from the first handshake only.
    - Websockets decline permessage-deflate unless ``compress``: every browser offers it,
      and deflating each frame once per receiver cost 12-28% of an action's CPU with ten
      clients in a room (the offer is taken off the request before engineio sees it).
    """

    def __init__(
        self,
        service: BridgeService,
        client_manager: socketio.AsyncManager,
        *,
        on_commit: Callable[[], None] | None = None,
        join_timeout: float,
        bind_timeout: float,
        seats: Seats | None = None,
        gate: AddressGate | None = None,
        compress: bool = False,
        **options: Any,
    ) -> None:
        self.port = IntentPort(service, on_bound=self.now_bound)
        self.service = service
        self.on_commit = on_commit
        self.join_timeout = join_timeout
        self.bind_timeout = bind_timeout
        self.seats = seats or Seats()
        self.gate = gate
        self.compress = compress
        engineio_log = logging.getLogger("bridge.engineio")
        engineio_log.setLevel(logging.ERROR)  # as engineio's own default
        if not any(isinstance(f, EngineIOLogGuard) for f in engineio_log.filters):
            engineio_log.addFilter(EngineIOLogGuard())
        self.sio = socketio.AsyncServer(
            client_manager=client_manager,
            serializer=GuardedPacket,
            engineio_logger=engineio_log,
            **options,
        )
        self.namespace = FateNamespace(self)
        self.sio.register_namespace(self.namespace)
        # Each request being served (its id: requests are not hashable) -> its connection;
        # a namespace's connect finds it through the environ's "aiohttp.request".
        self.by_request: dict[int, Connection] = {}
        # /fate sid -> its websocket's connection.
        self.connections: dict[str, Connection] = {}
        self.bind_timers: dict[str, asyncio.TimerHandle] = {}
        self.tasks: set[asyncio.Task[Any]] = set()

    @property
    def sessions(self) -> dict[str, Session]:
        return self.port.sessions

    def spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(work)
        self.tasks.add(task)  # keep a reference until it ends
        task.add_done_callback(self.tasks.discard)

    def attach(self, app: web.Application) -> None:
        """Serve ``/socket.io/`` on ``app`` (GET for websockets; engineio answers the rest)."""
        app.router.add_route("GET", SOCKET_PATH, self.handle)
        app.router.add_route("POST", SOCKET_PATH, self.handle)
        app.router.add_route("OPTIONS", SOCKET_PATH, self.handle)

    # --- one HTTP request, one websocket ------------------------------------------------

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Serve one request to ``/socket.io/`` through engineio; for a websocket, until
        its session ends. Guarantees: the connection's timers are cancelled and its
        counts logged when this returns, and a frame engineio cannot read ends the
        connection with one log line (never a traceback)."""
        if not self.compress and hdrs.SEC_WEBSOCKET_EXTENSIONS in request.headers:
            headers = CIMultiDict(request.headers)
            headers.popall(hdrs.SEC_WEBSOCKET_EXTENSIONS)
            request = request.clone(headers=headers)
        connection = Connection(self, request)
        self.by_request[id(request)] = connection
        websocket = request.headers.get(hdrs.UPGRADE, "").lower() == "websocket"
        if websocket:
            self.start_clock(connection)
        token = CURRENT.set(connection)
        try:
            response: web.StreamResponse = await self.sio.handle_request(request)
            return response
        except Exception as exc:
            if not websocket:
                raise
            # engineio's read loop ends on a frame that is no Engine.IO packet (not a
            # digit, empty) by raising out of the request.
            if not connection.refused:
                connection.refused = True
                log.warning(
                    "closed connection %s: a frame that is no Engine.IO packet (%s)",
                    connection.name(),
                    type(exc).__name__,
                )
                await self.hang_up(connection, abort=True)
            raise web.HTTPBadRequest() from None
        finally:
            CURRENT.reset(token)
            self.by_request.pop(id(request), None)
            connection.open = False
            connection.stop_clock()
            if connection.malformed:
                log.warning(
                    "connection %s closed after %d malformed frames",
                    connection.name(),
                    connection.malformed,
                )

    def refuse(self, connection: Connection, what: str) -> None:
        """The one log line of a connection closed for what it sent; closes it."""
        connection.refused = True
        log.warning("closed connection %s: %s", connection.name(), what)
        self.spawn(self.hang_up(connection, abort=True))

    def find_eio_sid(self, connection: Connection) -> str | None:
        """The Engine.IO session of ``connection``, once engineio opened it."""
        if connection.eio_sid is None:
            for eio_sid, environ in list(self.sio.environ.items()):
                if environ.get("aiohttp.request") is connection.request:
                    connection.eio_sid = eio_sid
                    break
        return connection.eio_sid

    async def hang_up(self, connection: Connection, *, abort: bool = False) -> None:
        """Close the connection: engineio's close packet (what was sent before goes
        first), then the TCP connection, at once when ``abort`` else a moment later for a
        client that ignores the close packet."""
        transport = connection.request.transport
        eio_sid = self.find_eio_sid(connection)
        if eio_sid is not None:
            # Bounded: engineio waits for the session's writer to send the close packet,
            # and a writer that already stopped (a broken transport) never does.
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.sio.eio.disconnect(eio_sid), CLOSE_WAIT_SECONDS)
        if transport is None:
            return
        if abort:
            transport.abort()
        else:
            asyncio.get_running_loop().call_later(HANG_UP_GRACE_SECONDS, transport.close)

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
        log.info("closing %s: no namespace joined within %ss", connection.name(), self.join_timeout)
        await self.hang_up(connection)

    # --- joining and leaving /fate ------------------------------------------------------

    async def connect(self, sid: str, environ: Any, auth: object) -> None:
        """A socket joins ``/fate`` as ``auth`` says; raises ConnectionRefusedError (which
        python-socketio answers with CONNECT_ERROR) when it may not."""
        request = environ.get("aiohttp.request") if isinstance(environ, dict) else None
        connection = self.by_request.get(id(request)) if request is not None else None
        if connection is None:  # served by another route: no websocket of the bridge's
            raise socketio.exceptions.ConnectionRefusedError("refused")
        connection.eio_sid = self.sio.manager.eio_sid_from_sid(sid, protocol.NAMESPACE)
        # Leaving and joining again is a fresh handshake (a store write each time): rate
        # limited per websocket, since each join would otherwise get a fresh bucket.
        if not connection.joins.take(time.monotonic()):
            refused = protocol.ConnectRefusal(
                reason="rate_limited", message="Too many joins from this connection; slow down."
            )
            raise socketio.exceptions.ConnectionRefusedError(
                "rate_limited", refused.model_dump(mode="json")
            )
        try:
            session = await self.service.authenticate(sid, auth)
        except ConnectRefused as refused_join:
            raise socketio.exceptions.ConnectionRefusedError(
                "refused", refused_join.refusal.model_dump(mode="json")
            ) from None
        full = self.take_seat(sid, session, connection)
        if full is not None:
            await self.service.disconnect(session)  # its binding nonce goes
            # Told so (the CONNECT_ERROR goes out before this task runs), then closed.
            connection.refused = True
            self.spawn(self.hang_up(connection))
            refusal = protocol.ConnectRefusal(reason="rate_limited", message=full)
            raise socketio.exceptions.ConnectionRefusedError(
                "rate_limited", refusal.model_dump(mode="json")
            )
        self.connections[sid] = connection
        connection.sid = sid
        # Only a join that succeeded stops the clock: a socket sending wrong keys is closed
        # as one that sends nothing.
        connection.stop_clock()
        self.port.opened(session)
        # A player hears the world only once the GM's client has vouched for it (the
        # "bound" notice reaches its user room); see IntentPort.
        await self.sio.enter_room(
            sid, user_room(session.world_id, session.user_id), namespace=protocol.NAMESPACE
        )
        if session.bound:
            await self.sio.enter_room(sid, session.room, namespace=protocol.NAMESPACE)
        await self.service.connected(session)
        log.info(
            "connected %s as %s %s in %s", sid, session.role, session.user_id, session.world_id
        )

    async def disconnect(self, sid: str) -> None:
        """``sid`` left ``/fate`` (or its websocket closed): its seat is free, its session
        gone; a websocket still open must join again in time."""
        connection = self.connections.pop(sid, None)
        self.left(sid, connection)
        await self.port.closed(sid)
        if connection is not None and connection.sid == sid:
            connection.sid = None
            if connection.open and not connection.refused:
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
        await self.sio.enter_room(sid, session.room, namespace=protocol.NAMESPACE)
        timer = self.bind_timers.pop(sid, None)
        if timer is not None:
            timer.cancel()
        if not self.seats.bind(sid):
            message = (
                f"Too many connections from your address ({self.seats.limit} GM and player "
                "connections); close some and try again."
            )
            self.spawn(self.close_seat(sid, "too_many_connections", message))

    def left(self, sid: str, connection: Connection | None) -> None:
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
        await self.sio.emit(
            "notice", notice.model_dump(mode="json"), to=sid, namespace=protocol.NAMESPACE
        )
        await self.hang_up(connection)

    # --- frames -------------------------------------------------------------------------

    async def client_event(self, sid: str, frame: object) -> dict[str, Any]:
        """Answer one event frame (``[name, payload]``) from a client: always an ack,
        never an exception, whatever the frame holds.

        The commit's ``emits`` frame goes to the world's room; a sender in that room gets
        its items in its ack instead (``protocol.AckOk``), so it is sent one frame, not
        two. Both leave in the order the frame alone would have: the frame's receivers
        hear it before any later commit's, and the ack is the sender's next frame."""
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
                ack = {**ack, "emits": emission.payload["emits"]}
            await self.sio.emit(
                emission.event,
                emission.payload,
                room=emission.room,
                skip_sid=sid if folded else None,
                namespace=protocol.NAMESPACE,
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
        await self.sio.emit(
            "notice", notice.model_dump(mode="json"), to=sid, namespace=protocol.NAMESPACE
        )
        return error("invalid", message)
