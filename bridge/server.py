"""The aiohttp app and the python-socketio server in front of the service.

Thin on purpose: it authenticates connections, keeps one session per socket,
bounds message size and rate, hands every event to the service and emits what
the service returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import engineio
import socketio
from aiohttp import web
from pydantic import ValidationError

from bridge import __version__, codec, protocol
from bridge.connections import (
    DEFAULT_PER_ADDRESS,
    DEFAULT_UNBOUND_PER_ADDRESS,
    AddressGate,
    Seats,
    peer_address,
)
from bridge.http_api import API_RATE_PER_SECOND, HttpApi
from bridge.module_package import ZIP_NAME, build_zip, document_routes, manifest
from bridge.ratelimit import TokenBucket
from bridge.relay import RelayedUser, RelayTable, TooManyRelayedUsers
from bridge.service import BridgeService, ConnectRefused, Reply, Session, error, ok
from bridge.service.session import user_room, validation_error
from bridge.websocket_session import BridgeEngineIO, BridgeWebSocket
from bridge.wire import GuardedPacket, MalformedFrame

log = logging.getLogger("bridge.server")

# Below engine.io's own limit, which drops the connection instead of answering.
TRANSPORT_LIMIT_BYTES = 1024 * 1024
RATE_PER_SECOND = 20.0
RATE_BURST = 40.0
# A connection must finish its HTTP request, and then join /fate, within this many seconds
# (a join refused does not count; a socket that leaves /fate must join again as soon).
HANDSHAKE_TIMEOUT_SECONDS = 5.0
# A player joined with a world id must be bound (the GM's client vouching for it, direct
# mode) within this many seconds, or it is told why and closed.
BIND_TIMEOUT_SECONDS = 30.0
# Namespace joins per websocket (a reconnecting client opens a new websocket).
JOIN_RATE_PER_SECOND = 1.0
JOIN_BURST = 5.0
# Reads whose answers say what they cost (Reply.cost): one connection's take turns, each
# after the last one's cost is paid, so a burst of heavy reads costs its sender (issue 26).
COSTED_READS = frozenset({"history.read", "history.stats"})

SERVICE_KEY = web.AppKey("service", BridgeService)
_Envelope = TypeVar("_Envelope", protocol.Relay, protocol.RelayLeave)
CONFIG_KEY = web.AppKey("config", dict[str, Any])


class FateNamespace(socketio.AsyncNamespace):  # type: ignore[misc]
    """``/fate``: one class-level instance, so per-socket state lives in dicts keyed by sid.

    ``trigger_event`` sees only the server's own connect and disconnect; what a client
    sends arrives at :meth:`client_event` (see :class:`FateServer`), so an event a client
    *names* ``connect`` can never reach the connect handler.
    """

    def __init__(self, service: BridgeService, on_commit: Callable[[], None] | None = None) -> None:
        super().__init__(protocol.NAMESPACE)
        self.service = service
        self.on_commit = on_commit
        self.sessions: dict[str, Session] = {}
        self.buckets: dict[str, TokenBucket] = {}
        self.relays = RelayTable()
        # Per connection (or relayed user): the turn its costed reads take.
        self._read_turns: dict[str, asyncio.Lock] = {}

    async def trigger_event(self, event: str, *args: Any) -> Any:
        if event == "connect":
            sid, _environ, auth = (*args, None)[:3]
            return await self._connect(sid, auth)
        if event == "disconnect":
            sid = args[0]
            if isinstance(self.server, FateServer):
                self.server.left(sid)
            gone = self.sessions.pop(sid, None)
            if gone is not None:
                await self.service.disconnect(gone)
            for relayed in self.relays.drop_connection(sid):
                self._read_turns.pop(relayed.session.sid, None)
                await self.service.disconnect(relayed.session)
            self.buckets.pop(sid, None)
            self._read_turns.pop(sid, None)
            return None
        return error("unknown_event", "Client events go through client_event.")

    async def client_event(self, sid: str, frame: object) -> dict[str, Any]:
        """Answer one event frame (``[name, payload]``) from a client: always an ack,
        never an exception, whatever the frame holds.

        The commit's ``emits`` frame goes to the world's room; a sender in that room gets
        its items in its ack instead (``protocol.AckOk``), so it is sent one frame, not
        two. Both leave in the order the frame alone would have: the frame's receivers
        hear it before any later commit's, and the ack is the sender's next frame."""
        reply = await self._dispatch(sid, frame)
        ack = reply.ack
        session = self.sessions.get(sid)
        for emission in reply.emissions:
            folded = (
                emission.event == protocol.EMITS_FRAME
                and session is not None
                and session.bound
                and emission.room == session.room
            )
            if folded:
                ack = {**ack, "emits": emission.payload["emits"]}
            await self.emit(
                emission.event,
                emission.payload,
                room=emission.room,
                skip_sid=sid if folded else None,
            )
        if reply.emissions and self.on_commit is not None:
            self.on_commit()
        return ack

    def take_token(self, sid: str) -> bool:
        """Spend one of the connection's rate tokens; False when it has none (or is gone)."""
        bucket = self.buckets.get(sid)
        return bucket is not None and bucket.take(time.monotonic())

    async def _connect(self, sid: str, auth: object) -> None:
        try:
            session = await self.service.authenticate(sid, auth)
        except ConnectRefused as refused:
            raise socketio.exceptions.ConnectionRefusedError(
                "refused", refused.refusal.model_dump(mode="json")
            ) from None
        if isinstance(self.server, FateServer):
            full = self.server.take_seat(sid, session)
            if full is not None:
                await self.service.disconnect(session)  # its binding nonce goes
                refusal = protocol.ConnectRefusal(reason="rate_limited", message=full)
                raise socketio.exceptions.ConnectionRefusedError(
                    "rate_limited", refusal.model_dump(mode="json")
                )
        self.sessions[sid] = session
        self.buckets[sid] = TokenBucket(RATE_PER_SECOND, RATE_BURST, stamp=time.monotonic())
        # A player hears the world only once the GM's client has vouched for it (the
        # "bound" notice reaches its user room); see _dispatch.
        await self.enter_room(sid, user_room(session.world_id, session.user_id))
        if session.bound:
            await self.enter_room(sid, session.room)
        await self.service.connected(session)
        log.info(
            "connected %s as %s %s in %s", sid, session.role, session.user_id, session.world_id
        )

    async def _dispatch(self, sid: str, frame: object) -> Reply:
        session = self.sessions.get(sid)
        if session is None:
            return Reply(error("forbidden", "Not connected."))
        relaying = (
            session.role == "gm" and isinstance(frame, list) and bool(frame) and frame[0] == "relay"
        )
        # Every frame spends a token first, whatever it is: refusals are not free. A
        # relayed intent spends the relayed user's (below), so one player's flood is that
        # player's; the GM connection's relay total bounds them all.
        if relaying:
            if not self.relays.take_total(sid, time.monotonic()):
                return Reply(error("rate_limited", "Too many relayed messages; slow down."))
        elif not self.take_token(sid):
            return Reply(error("rate_limited", "Too many messages; slow down."))
        if not isinstance(frame, list) or not frame:
            return Reply(error("invalid", "Send an event name and one JSON object."))
        event, *payload = frame
        if not isinstance(event, str) or event not in protocol.INTENTS:
            shown = event[:64] if isinstance(event, str) else type(event).__name__
            return Reply(error("unknown_event", f"The bridge has no event {shown!r}."))
        if len(payload) != 1:
            return Reply(error("invalid", "Send exactly one JSON object per event."))
        try:
            size = codec.encoded_size(payload[0], codec.MAX_NESTING, protocol.MAX_MESSAGE_BYTES)
        except codec.TooDeep:
            return Reply(
                error("invalid", f"The message nests deeper than {codec.MAX_NESTING} levels.")
            )
        except (TypeError, ValueError):
            return Reply(error("invalid", "The message is not JSON."))
        if size > protocol.MAX_MESSAGE_BYTES:
            return Reply(
                error("too_large", f"The message is over {protocol.MAX_MESSAGE_BYTES} bytes.")
            )
        if event == "relay":
            return await self._relay(session, payload[0])
        if event == "relay.leave":
            return await self._relay_leave(session, payload[0])
        try:
            was_bound = session.bound
            reply = await self._paid(session, event, payload[0], self.buckets.get(sid))
            if session.bound and not was_bound:
                await self.now_bound(sid, session)
            if reply.vouched is not None:
                await self._bind_local(reply.vouched)
            return reply
        except Exception:
            log.exception("handler for %s failed", event)
            return Reply(error("internal", "The bridge failed on this message; nothing changed."))

    async def _paid(
        self, session: Session, event: str, payload: object, bucket: TokenBucket | None
    ) -> Reply:
        """The service's answer, its cost beyond the message's token charged to ``bucket``
        (the sender's). A costed read waits for the sender's previous one, and is refused
        while the sender still owes a token for what it read before."""
        if event not in COSTED_READS or bucket is None:
            reply = await self.service.handle(session, event, payload)
        else:
            async with self._read_turns.setdefault(session.sid, asyncio.Lock()):
                if bucket.in_debt(time.monotonic()):
                    return Reply(error("rate_limited", "Too much read lately; slow down."))
                reply = await self.service.handle(session, event, payload)
        if bucket is not None and reply.cost > 1:
            bucket.spend(reply.cost - 1, time.monotonic())
        return reply

    @staticmethod
    def _opened(gm: Session, model: type[_Envelope], body: object) -> _Envelope | Reply:
        """A relay envelope from a GM's connection, validated; or the refusal to answer with."""
        if gm.role != "gm":
            return Reply(error("forbidden", "Only a GM's connection relays other users' intents."))
        try:
            return model.model_validate(body)
        except ValidationError as exc:
            return Reply(validation_error(exc))

    async def _relay(self, gm: Session, body: object) -> Reply:
        """One relayed intent: handled as its user's own, on that user's session."""
        envelope = self._opened(gm, protocol.Relay, body)
        if isinstance(envelope, Reply):
            return envelope
        if envelope.event not in protocol.INTENTS:
            shown = protocol.shown(envelope.event)
            return Reply(error("unknown_event", f"The bridge has no event {shown!r}.", "event"))
        if envelope.event in protocol.NOT_RELAYED:
            return Reply(
                error("forbidden", f"{envelope.event!r} is not relayed for another user.", "event")
            )
        now = time.monotonic()
        relayed = self.relays.get(gm.sid, envelope.user)
        if relayed is None:
            try:
                relayed = self.relays.add(gm, envelope.user, now)
            except TooManyRelayedUsers:
                return Reply(
                    error("rate_limited", "This connection relays for too many users.", "user")
                )
            await self.service.connected(relayed.session)
        if not relayed.bucket.take(now):
            return Reply(error("rate_limited", "Too many messages from this user; slow down."))
        try:
            return await self._paid(
                relayed.session, envelope.event, envelope.payload, relayed.bucket
            )
        except Exception:
            log.exception("relayed handler for %s failed", envelope.event)
            return Reply(error("internal", "The bridge failed on this message; nothing changed."))

    async def _relay_leave(self, gm: Session, body: object) -> Reply:
        """The GM's client says a relayed user left the table: no longer present."""
        leave = self._opened(gm, protocol.RelayLeave, body)
        if isinstance(leave, Reply):
            return leave
        left = await self._forget_relayed(gm.sid, leave.user)
        return Reply(ok(protocol.RelayLeaveData(user=leave.user, left=left is not None)))

    async def _forget_relayed(self, sid: str, user_id: str) -> RelayedUser | None:
        relayed = self.relays.remove(sid, user_id)
        if relayed is not None:
            await self.service.disconnect(relayed.session)
        return relayed

    async def _bind_local(self, vouched: tuple[str, str, str]) -> None:
        """Bind this process's connections that carry the vouched nonce, and let them
        hear the world at once (the notice itself goes out as an emission)."""
        for sid, session in list(self.sessions.items()):
            if (session.world_id, session.user_id, session.bind_nonce) == vouched:
                await self.service.bind(session)
                await self.now_bound(sid, session)

    async def now_bound(self, sid: str, session: Session) -> None:
        """A player's connection was just vouched for: it hears the world from now on, and
        moves from the unbound players' seats to the seated ones."""
        await self.enter_room(sid, session.room)
        if isinstance(self.server, FateServer):
            self.server.seated(sid)


class RoomFanOut(socketio.AsyncManager):  # type: ignore[misc]
    """python-socketio's local delivery of an emit, without a task per receiver.

    The frame is encoded once per emit (as python-socketio does), not at all when nobody
    is left to hear it, and queued to each receiver's engine.io socket in turn: the queue
    is unbounded, so queuing never waits, and a task (plus ``asyncio.wait`` over all of
    them) per receiver per emit was pure overhead. Each receiver's own writer task still
    sends its frames in order. A receiver whose socket has just closed is skipped. Emits
    with a callback (not used by the bridge) take python-socketio's own path."""

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
        room = to or room
        if namespace not in self.rooms:
            return None
        skipped = skip_sid if isinstance(skip_sid, list) else [skip_sid]
        receivers = [e for sid, e in self.get_participants(namespace, room) if sid not in skipped]
        if not receivers:
            # A sender alone in its world hears its commit in its ack: nothing to encode.
            return None
        args = list(data) if isinstance(data, tuple) else [] if data is None else [data]
        encoded = self.server.packet_class(
            socketio.packet.EVENT, namespace=namespace, data=[event, *args]
        ).encode()
        frame = engineio.packet.Packet(engineio.packet.MESSAGE, encoded)
        for eio_sid in receivers:
            try:
                await self.server._send_eio_packet(eio_sid, frame)
            except engineio.exceptions.SocketIsClosedError:
                continue  # it disconnected while this emit was under way
        return None


# How often a node on Redis asks who else listens on the pub/sub channel (one PUBLISH),
# so that it stops publishing soon after its last peer has gone; a peer that starts is
# heard at once (its hello), never only at the next survey.
PEER_SURVEY_SECONDS = 5.0
# How long a survey waits for its own message to come back and for the peers' welcomes.
PEER_ANSWER_SECONDS = 3.0
# The bridge's own messages on the channel (python-socketio's listener ignores methods it
# does not know): each starts with this, so the listener tells them apart before decoding.
PEER_METHOD_PREFIX = b'{"method":"fate.'


def pubsub_channel(url: str) -> str:
    """The pub/sub channel of the bridges whose state is in ``url``'s database: Redis
    pub/sub ignores database numbers, so deployments in separate databases of one
    redis-server would otherwise hear each other's room emits (rooms are world ids)."""
    parts = urlsplit(url)
    # As redis-py reads it: ?db=N, else the path's number (redis://host:port/N), else 0.
    db = parse_qs(parts.query).get("db", [parts.path.strip("/") or "0"])[0]
    return f"fate-bridge.db{int(db) if db.isdigit() else 0}"


class RedisRoomFanOut(socketio.AsyncRedisManager, RoomFanOut):  # type: ignore[misc]
    """Rooms shared by every bridge process on one Redis (python-socketio's pub/sub
    manager), delivered locally by :class:`RoomFanOut` (it comes before
    ``AsyncManager`` in the method order, so the pub/sub manager's local delivery is
    RoomFanOut's), and published only when another process listens.

    Written against python-socketio 5.18.1 (``AsyncPubSubManager`` and
    ``AsyncRedisManager``): the channel carries JSON (the server's ``json=`` codec, never
    pickle); ``_thread`` decodes what ``_listen`` yields and ignores methods it does not
    know and messages carrying its own ``host_id``; ``_publish`` returns Redis's PUBLISH
    reply (the number of subscribers that got the message), or None when it gave up.

    A lone process pays nothing for the pub/sub: emits are not published while no other
    subscriber listens (``peers`` is False). Who listens is learned so that no emit a
    peer's client could have heard is ever skipped:

    - A process that (re)subscribes says ``fate.hello``; every other bridge process
      marks itself as having peers *before* it answers ``fate.welcome``, and a starting
      process waits for those answers (:meth:`start`, before the server listens): by the
      time its first client can join a room, every other process publishes again.
    - Every ``PEER_SURVEY_SECONDS`` a process publishes a ``fate.probe``: PUBLISH says how
      many subscribers got it. Only when that is 1 and the probe came back to this
      process's own subscription (so the one was itself), and no peer spoke meanwhile,
      does it stop publishing. Anything else (another bridge, an older bridge that says
      no hello, any other subscriber, a failed publish) keeps it publishing.

    The emit's message puts ``host_id`` first, so this process's listener drops its own
    emits by their first bytes instead of decoding them in full. The message goes out
    without python-socketio's scan for binary attachments: the bridge emits JSON only
    (see :class:`GuardedPacket`)."""

    def __init__(
        self,
        url: str,
        *,
        channel: str | None = None,
        survey_seconds: float = PEER_SURVEY_SECONDS,
        answer_seconds: float = PEER_ANSWER_SECONDS,
    ) -> None:
        super().__init__(url, channel=channel or pubsub_channel(url))
        self.survey_seconds = survey_seconds
        self.answer_seconds = answer_seconds
        # True until a survey proves this process alone: publishing is the safe default.
        self.peers = True
        # Bumped by everything another process says: a survey that began before it
        # cannot conclude "alone".
        self._peer_news = 0
        self._own_emit_prefix = codec.dumps_bytes({"host_id": self.host_id, "method": "emit"})[:-1]
        self._echoes: dict[int, asyncio.Future[None]] = {}
        self._welcomes: dict[int, tuple[set[str], asyncio.Event]] = {}
        self._tokens = 0
        self._subscribed = asyncio.Event()
        self._greeted: asyncio.Future[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    def initialize(self) -> None:
        # Before the listener starts: its first subscription's hello settles this.
        self._greeted = asyncio.get_running_loop().create_future()
        super().initialize()  # starts python-socketio's listener (``_thread``)
        self._spawn(self._survey_forever())

    async def start(self) -> None:
        """Initialise now rather than at the first connection (python-socketio's default),
        and return once this process is subscribed and every other bridge process has
        answered its hello (or ``answer_seconds`` have passed): from then on an emit
        anywhere reaches this process's clients."""
        if not self.server.manager_initialized:
            self.server.manager_initialized = True
            self.initialize()
        assert self._greeted is not None
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._greeted), 2 * self.answer_seconds)

    async def stop(self) -> None:
        """Stop listening (python-socketio's listener too): the subscription ends now, so
        the other processes' next survey finds them without this one."""
        tasks = [*self._tasks, *([self.thread] if getattr(self, "thread", None) else [])]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)  # keep a reference until it ends
        task.add_done_callback(self._tasks.discard)

    async def emit(
        self,
        event: str,
        data: Any,
        namespace: str | None = None,
        room: Any = None,
        skip_sid: Any = None,
        callback: Any = None,
        to: Any = None,
        **kwargs: Any,
    ) -> None:
        if callback is not None or kwargs.get("ignore_queue"):
            return await super().emit(
                event, data, namespace, room, skip_sid, callback, to, **kwargs
            )
        message = {
            "host_id": self.host_id,  # first: see _listen
            "method": "emit",
            "event": event,
            "data": list(data) if isinstance(data, tuple) else [data],
            "binary": False,
            "namespace": namespace or "/",
            "room": to or room,
            "skip_sid": skip_sid,
            "callback": None,
        }
        await self._handle_emit(message)  # this process's receivers
        await self._publish(message)  # the other processes', if any listen
        return None

    async def _publish(self, data: dict[str, Any]) -> Any:
        """python-socketio's messages (emits, remote disconnects and room changes) go out
        only while another process may listen; this bridge's own always do."""
        if not self.peers and not str(data.get("method", "")).startswith("fate."):
            return None
        return await super()._publish(data)

    async def _listen(self) -> Any:
        """The channel's messages for python-socketio's listener, minus this process's
        own emits and the bridge's peer messages (handled here). Reconnects like
        python-socketio 5.18.1's ``_redis_listen_with_retries``, and says hello on every
        (re)subscription, since peers may have come while it was away."""
        channel = self.channel.encode("utf-8")
        retry_seconds = 1.0
        while True:
            pubsub = None
            try:
                self._redis_connect()
                # Its own pubsub, not ignoring the subscribe confirmation: hello goes out
                # only once Redis counts this subscription.
                pubsub = self.redis.pubsub()
                await pubsub.subscribe(self.channel)
                async for message in pubsub.listen():
                    kind = message.get("type")
                    if kind == "subscribe":
                        retry_seconds = 1.0
                        self._subscribed.set()
                        self._spawn(self.survey(hello=True))
                        continue
                    if kind != "message" or message.get("channel") != channel:
                        continue
                    raw = message.get("data")
                    if not isinstance(raw, bytes) or raw.startswith(self._own_emit_prefix):
                        continue
                    if raw.startswith(PEER_METHOD_PREFIX):
                        await self._heard(raw)
                        continue
                    yield raw
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._subscribed.clear()
                self.peers = True  # unsure who listens: publish
                log.warning("redis pub/sub: %s; retrying in %.0fs", exc, retry_seconds)
                await asyncio.sleep(retry_seconds)
                retry_seconds = min(retry_seconds * 2, 60.0)
            finally:
                if pubsub is not None:
                    with contextlib.suppress(Exception):
                        await pubsub.aclose()

    async def _heard(self, raw: bytes) -> None:
        """One of the bridge's peer messages: a hello (answered), a probe, a welcome."""
        try:
            message = codec.loads(raw)
            method, host = message["method"], message["host_id"]
            token = message["token"]
        except (ValueError, TypeError, KeyError):
            return
        if host == self.host_id:
            echo = self._echoes.get(token)
            if echo is not None and not echo.done():
                echo.set_result(None)
            return
        # Another process listens; from now on this one publishes.
        self._peer_news += 1
        self.peers = True
        if method == "fate.hello":
            await super()._publish(
                {"method": "fate.welcome", "host_id": self.host_id, "to": host, "token": token}
            )
        elif method == "fate.welcome" and message.get("to") == self.host_id:
            waiting = self._welcomes.get(token)
            if waiting is not None:
                welcomed, arrived = waiting
                welcomed.add(host)
                arrived.set()

    async def survey(self, *, hello: bool) -> None:
        """Publish a hello or a probe and learn from it whether anyone else listens
        (``peers``); a hello also waits for every other process's welcome."""
        self._tokens += 1
        token = self._tokens
        news = self._peer_news
        loop = asyncio.get_running_loop()
        echo = self._echoes[token] = loop.create_future()
        welcomed: set[str] = set()
        arrived = asyncio.Event()
        self._welcomes[token] = (welcomed, arrived)
        try:
            method = "fate.hello" if hello else "fate.probe"
            receivers = await super()._publish(
                {"method": method, "host_id": self.host_id, "token": token}
            )
            heard_back = False
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(echo), self.answer_seconds)
                heard_back = True
            others = int(receivers) - 1 if isinstance(receivers, int) else -1
            if hello and others > 0:
                # Every other process answers once it publishes again (one that never
                # answers, e.g. an older bridge or a stranger, costs the wait).
                deadline = loop.time() + self.answer_seconds
                while len(welcomed) < others and loop.time() < deadline:
                    arrived.clear()
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(arrived.wait(), deadline - loop.time())
            # Alone only on proof: one receiver, which was this process, and nobody else
            # spoke since the survey began.
            self.peers = not (others == 0 and heard_back and self._peer_news == news)
        finally:
            del self._echoes[token], self._welcomes[token]
            if hello and self._greeted is not None and not self._greeted.done():
                self._greeted.set_result(None)

    async def _survey_forever(self) -> None:
        while True:
            await asyncio.sleep(self.survey_seconds)
            if not self._subscribed.is_set():
                continue  # the listener says hello when it is back
            try:
                await self.survey(hello=False)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.peers = True
                log.warning("redis pub/sub survey failed: %s", exc)


class FateServer(socketio.AsyncServer):  # type: ignore[misc]
    """python-socketio's server with the wire hardened where it dispatches.

    - Client events go to :meth:`FateNamespace.client_event`, never through the generic
      ``trigger_event`` that also runs the connect and disconnect handlers.
    - A frame the decoder cannot read (:class:`MalformedFrame`) is counted per connection,
      logged in one line, answered with an error ack when it carried an ack id, and the
      client gets a ``notice`` so its user sees an error instead of waiting for a timeout.
    - A websocket that has not joined ``/fate`` within ``join_timeout`` seconds is closed;
      a refused join does not stop the clock, and leaving ``/fate`` starts it again.
    - Joined sockets take seats per remote address (:class:`Seats`): a player nobody has
      vouched for takes one of the few unbound seats, and is told why and closed unless
      bound within ``bind_timeout`` seconds; a GM (the world's key) or a bound player
      takes a seated one. A joined socket is no longer a stranger at the TCP gate
      (:meth:`AddressGate.claim`), so unbound players never crowd a GM out of the
      socket or the HTTP API.
    """

    def __init__(
        self,
        namespace: FateNamespace,
        *,
        join_timeout: float,
        bind_timeout: float = BIND_TIMEOUT_SECONDS,
        seats: Seats | None = None,
        gate: AddressGate | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(serializer=GuardedPacket, **kwargs)
        self.fate = namespace
        self.register_namespace(namespace)
        self.join_timeout = join_timeout
        self.bind_timeout = bind_timeout
        self.seats = seats or Seats()
        self.gate = gate
        self._malformed: dict[str, int] = {}
        self._join_timers: dict[str, asyncio.TimerHandle] = {}
        self._bind_timers: dict[str, asyncio.TimerHandle] = {}
        # Connections whose join was refused for want of a seat: closed once told so.
        self._unseated: set[str] = set()
        self._joins: dict[str, TokenBucket] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)  # keep a reference until it ends
        task.add_done_callback(self._tasks.discard)

    def _engineio_server_class(self) -> type[BridgeEngineIO]:
        return BridgeEngineIO

    async def _handle_eio_connect(self, eio_sid: str, environ: Any) -> Any:
        result = await super()._handle_eio_connect(eio_sid, environ)
        self._start_join_clock(eio_sid)
        return result

    def _start_join_clock(self, eio_sid: str) -> None:
        timer = self._join_timers.pop(eio_sid, None)
        if timer is not None:
            timer.cancel()
        self._join_timers[eio_sid] = asyncio.get_running_loop().call_later(
            self.join_timeout, lambda: self._spawn(self._close_unjoined(eio_sid))
        )

    async def _close_unjoined(self, eio_sid: str) -> None:
        self._join_timers.pop(eio_sid, None)
        if self.manager.sid_from_eio_sid(eio_sid, protocol.NAMESPACE) is not None:
            return
        log.info("closing %s: no namespace joined within %ss", eio_sid, self.join_timeout)
        await self._hang_up(eio_sid)

    def _transport(self, eio_sid: str) -> Any:
        request = self.environ.get(eio_sid, {}).get("aiohttp.request")
        return getattr(request, "transport", None)

    async def _hang_up(self, eio_sid: str) -> None:
        """Close an Engine.IO connection (what was sent before goes first)."""
        transport = self._transport(eio_sid)
        await self.eio.disconnect(eio_sid)
        # Engine.IO's close packet asks the client to hang up; one that ignores it loses
        # its TCP connection a moment later.
        if transport is not None:
            asyncio.get_running_loop().call_later(1.0, transport.close)

    # --- seats ------------------------------------------------------------------------

    def take_seat(self, sid: str, session: Session) -> str | None:
        """Seat a socket joining ``/fate`` as ``session``; None when seated, else why not
        (the join is refused). An unbound player's bind clock starts here."""
        eio_sid = self.manager.eio_sid_from_sid(sid, protocol.NAMESPACE)
        transport = self._transport(eio_sid) if eio_sid is not None else None
        address = peer_address(transport)
        if not self.seats.take(sid, address, bound=session.bound):
            if eio_sid is not None:
                self._unseated.add(eio_sid)
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
            self._bind_timers[sid] = asyncio.get_running_loop().call_later(
                self.bind_timeout, lambda: self._spawn(self._bind_expired(sid))
            )
        return None

    def seated(self, sid: str) -> None:
        """A joined player was just bound: from an unbound seat to a seated one (closed
        with a notice when its address has no seat left)."""
        timer = self._bind_timers.pop(sid, None)
        if timer is not None:
            timer.cancel()
        if not self.seats.bind(sid):
            message = (
                f"Too many connections from your address ({self.seats.limit} GM and player "
                "connections); close some and try again."
            )
            self._spawn(self._close_seat(sid, "too_many_connections", message))

    def left(self, sid: str) -> None:
        """A socket left ``/fate`` (or closed): its seat is free."""
        timer = self._bind_timers.pop(sid, None)
        if timer is not None:
            timer.cancel()
        self.seats.leave(sid)
        eio_sid = self.manager.eio_sid_from_sid(sid, protocol.NAMESPACE)
        transport = self._transport(eio_sid) if eio_sid is not None else None
        if self.gate is not None and transport is not None:
            self.gate.unclaim(transport)

    async def _bind_expired(self, sid: str) -> None:
        self._bind_timers.pop(sid, None)
        session = self.fate.sessions.get(sid)
        if session is None or session.bound or not self.seats.is_unbound(sid):
            return
        # The GM's client may have vouched through another bridge process (Redis): this
        # process learns it from the store, as at the player's next intent.
        if session.bind_nonce is not None and await self.fate.service.store.nonce_bound(
            session.world_id, session.user_id, session.bind_nonce
        ):
            await self.fate.service.bind(session)
            await self.fate.now_bound(sid, session)
            return
        log.info("closing %s: not bound within %ss", sid, self.bind_timeout)
        message = (
            f"No GM confirmed which Foundry user this connection is within "
            f"{self.bind_timeout:g} s (a GM must be connected to the bridge); reconnecting "
            "starts again."
        )
        await self._close_seat(sid, "bind_timeout", message)

    async def _close_seat(self, sid: str, code: str, message: str) -> None:
        """Tell a joined socket why, then close its connection."""
        eio_sid = self.manager.eio_sid_from_sid(sid, protocol.NAMESPACE)
        if eio_sid is None:
            return
        notice = protocol.Notice(level="error", code=code, message=message)
        await self.emit(
            "notice", notice.model_dump(mode="json"), to=sid, namespace=protocol.NAMESPACE
        )
        await self._hang_up(eio_sid)

    async def _handle_eio_disconnect(self, eio_sid: str, reason: Any = None) -> None:
        self._joins.pop(eio_sid, None)
        count = self._malformed.pop(eio_sid, 0)
        if count:
            log.warning("connection %s closed after %d malformed frames", eio_sid, count)
        try:
            await super()._handle_eio_disconnect(eio_sid, reason)
        finally:
            # After the namespaces' disconnects, which start the join clock again.
            timer = self._join_timers.pop(eio_sid, None)
            if timer is not None:
                timer.cancel()

    async def _handle_disconnect(self, eio_sid: str, namespace: Any, reason: Any = None) -> None:
        await super()._handle_disconnect(eio_sid, namespace, reason)
        # Left /fate with the websocket open: it must join again in time, like a new one.
        if eio_sid in self.environ and namespace == protocol.NAMESPACE:
            self._start_join_clock(eio_sid)

    async def _handle_eio_message(self, eio_sid: str, data: Any) -> None:
        try:
            await super()._handle_eio_message(eio_sid, data)
        except MalformedFrame as bad:
            await self._answer_malformed(eio_sid, bad)

    async def _answer_malformed(self, eio_sid: str, bad: MalformedFrame) -> None:
        count = self._malformed.get(eio_sid, 0) + 1
        self._malformed[eio_sid] = count
        sid = self.manager.sid_from_eio_sid(eio_sid, protocol.NAMESPACE)
        # A flood of broken frames costs rate tokens like any other frame; past the limit
        # it is only counted (no log line, no notice).
        if sid is not None and not self.fate.take_token(sid):
            if bad.ack_id is not None and bad.namespace == protocol.NAMESPACE:
                await self._ack(
                    eio_sid, bad.ack_id, error("rate_limited", "Too many messages; slow down.")
                )
            return
        log.warning("malformed frame #%d on connection %s: %s", count, eio_sid, bad.reason)
        if sid is None:
            return
        message = f"The bridge could not read a message from this client ({bad.reason})."
        if bad.ack_id is not None and bad.namespace == protocol.NAMESPACE:
            await self._ack(eio_sid, bad.ack_id, error("invalid", message))
        notice = protocol.Notice(level="error", code="malformed_frame", message=message)
        await self.emit(
            "notice", notice.model_dump(mode="json"), to=sid, namespace=protocol.NAMESPACE
        )

    async def _ack(self, eio_sid: str, ack_id: int, ack: dict[str, Any]) -> None:
        answer = self.packet_class(
            socketio.packet.ACK, namespace=protocol.NAMESPACE, id=ack_id, data=[ack]
        )
        await self._send_packet(eio_sid, answer)

    async def _handle_connect(self, eio_sid: str, namespace: Any, data: Any) -> None:
        # A second CONNECT for a namespace this socket already joined is ignored: the
        # identity of a connection comes from its first handshake only.
        if namespace and self.manager.sid_from_eio_sid(eio_sid, namespace) is not None:
            return
        # Leaving and joining again is a fresh handshake (a store write each time): rate
        # limited per websocket, since each join would otherwise get a fresh bucket.
        joins = self._joins.setdefault(
            eio_sid, TokenBucket(JOIN_RATE_PER_SECOND, JOIN_BURST, stamp=time.monotonic())
        )
        if not joins.take(time.monotonic()):
            refused = protocol.ConnectRefusal(
                reason="rate_limited", message="Too many joins from this connection; slow down."
            )
            refusal = {"message": "rate_limited", "data": refused.model_dump(mode="json")}
            await self._send_packet(
                eio_sid,
                self.packet_class(
                    socketio.packet.CONNECT_ERROR, data=refusal, namespace=namespace or "/"
                ),
            )
            return
        await super()._handle_connect(eio_sid, namespace, data)
        if eio_sid in self._unseated:
            # Refused for want of a seat, and told so: the connection goes at once.
            self._unseated.discard(eio_sid)
            self._spawn(self._hang_up(eio_sid))
            return
        # Only a join that succeeded stops the clock: a socket sending wrong keys is closed
        # as one that sends nothing.
        if self.manager.sid_from_eio_sid(eio_sid, protocol.NAMESPACE) is not None:
            timer = self._join_timers.pop(eio_sid, None)
            if timer is not None:
                timer.cancel()

    async def _handle_event(self, eio_sid: str, namespace: Any, ack_id: Any, data: Any) -> None:
        namespace = namespace or "/"
        sid = self.manager.sid_from_eio_sid(eio_sid, namespace)
        if namespace != protocol.NAMESPACE or sid is None:
            return  # not joined: python-socketio drops these too
        if not self.manager.is_connected(sid, namespace):
            return
        self._spawn(self._answer_event(eio_sid, sid, ack_id, data))

    async def _answer_event(self, eio_sid: str, sid: str, ack_id: int | None, data: Any) -> None:
        ack = await self.fate.client_event(sid, data)
        if ack_id is not None:
            await self._ack(eio_sid, ack_id, ack)


# Every collection's survivors are frozen (GcFreezer), so a collection walks only what was
# allocated since the last one, and the young threshold alone sets the pause. The young
# generation holds more objects than its threshold when a collection starts (it counts
# allocations net of frees, and every commit frees the old state's objects as it builds
# the new one's). Measured in the 100-world run, when survivors were frozen only after
# middle collections: (5,000, 4) paused up to 24-32 ms of CPU, (2,000, 4) 15-20 ms,
# (1,000, 4) 12-14 ms for 40-70% more collector CPU in all; freezing after young ones too,
# (2,000, 4) pauses 9-17 ms, with about 30% less collector time in all.
GC_THRESHOLDS = (2_000, 4, 10)
# The frozen heap is counted this often, and everything is thawed for one full collection
# once it has grown by GC_THAW_GROWTH since the last (see GcFreezer).
GC_THAW_SECONDS = 60.0
GC_THAW_GROWTH = 0.25


class GcFreezer:
    """Keeps every garbage-collection pause proportional to what was allocated lately,
    never to the whole heap.

    CPython's full collection walks every tracked object: with 100 worlds and 1,000
    connections that is ~300,000 objects and ~200 ms, far over a request's budget. So
    after every collection, young ones included, what survived it is frozen, and no
    later collection walks it again. Before, only a middle collection's survivors were
    frozen, so each survivor was walked twice, and the middle collection, walking four
    young collections' survivors (20,000-30,000 objects in the 100-world run, none of
    them garbage), made the longest pauses (15-27 ms).
    Frozen objects are still freed by reference counting the moment they are dropped;
    only garbage in reference cycles among them waits, for the rare collection that
    thaws everything first: the frozen heap is looked at every ``thaw_seconds``, and
    thawed when it has grown by ``thaw_growth`` since the last thaw. Steady play leaves
    no such garbage (a full collection found none after 20 s of the 100-world run);
    closed connections do (about 45 objects, 16 KiB, each), so a stream of reconnects
    is reclaimed within a minute of its growing the heap by a quarter. That collection
    pauses as long as walking the whole heap takes (~150-400 ms at 100 worlds and 1,000
    connections on a shared 2-core machine), at most once a minute and only then."""

    def __init__(
        self,
        schedule: Callable[[Callable[[], None]], Any],
        thaw_seconds: float = GC_THAW_SECONDS,
        thaw_growth: float = GC_THAW_GROWTH,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.schedule = schedule
        self.thaw_seconds = thaw_seconds
        self.thaw_growth = thaw_growth
        self.clock = clock
        self.checked_at = clock()
        self.baseline = gc.get_freeze_count()
        self.thawing = False

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        generation = info.get("generation")
        if phase != "stop":
            return
        if self.thawing:
            # A full collection of everything is scheduled; once one has run, its
            # survivors are frozen again and are the new baseline.
            if generation == 2:
                self.thawing = False
                gc.freeze()
                self.baseline = gc.get_freeze_count()
            return
        gc.freeze()
        now = self.clock()
        # Counting the frozen objects walks all of them (~1 ms per 300,000): only when due.
        if now - self.checked_at < self.thaw_seconds:
            return
        self.checked_at = now
        if gc.get_freeze_count() > self.baseline * (1 + self.thaw_growth):
            # Not here: a collection cannot start inside a collector callback, and
            # CPython's own heuristics may not run a full one for a long time.
            self.thawing = True
            try:
                self.schedule(self.collect_everything)
            except RuntimeError:  # the event loop has closed: the process is ending
                self.thawing = False

    def collect_everything(self) -> None:
        """Thaw and collect the whole heap: the one long pause, when it is due."""
        gc.unfreeze()
        gc.collect()


def tune_gc() -> None:
    """Set the collector up for a long-running server, once start-up is done (called on
    the running event loop).

    ``gc.freeze`` moves everything alive now (imported modules, pydantic schemas, the
    app) into a permanent generation that no collection traverses again; from then on
    :class:`GcFreezer` freezes each collection's survivors likewise."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    if not any(isinstance(callback, GcFreezer) for callback in gc.callbacks):
        # Collections run in whichever thread allocates (the store's worker too): the
        # thaw's full collection runs on the event loop's.
        loop = asyncio.get_running_loop()
        gc.callbacks.append(GcFreezer(loop.call_soon_threadsafe))


def public_base_url(request: web.Request) -> str:
    configured: str | None = request.app[CONFIG_KEY].get("public_url")
    return configured or f"{request.scheme}://{request.host}"


async def healthz(request: web.Request) -> web.Response:
    health = protocol.Health(ok=True, version=__version__, protocol=protocol.PROTOCOL_VERSION)
    return web.json_response(health.model_dump(mode="json"))


async def module_manifest(request: web.Request) -> web.Response:
    return web.json_response(manifest(public_base_url(request)))


async def module_zip(request: web.Request) -> web.Response:
    try:
        body = build_zip(public_base_url(request))
    except FileNotFoundError as exc:
        raise web.HTTPServiceUnavailable(text=str(exc)) from exc
    return web.Response(
        body=body,
        content_type="application/zip",
        headers={"Content-Disposition": f'attachment; filename="{ZIP_NAME}"'},
    )


def create_app(
    service: BridgeService,
    *,
    cors_origins: str | list[str] = "*",
    public_url: str | None = None,
    redis_url: str | None = None,
    handshake_timeout: float = HANDSHAKE_TIMEOUT_SECONDS,
    on_commit: Callable[[], None] | None = None,
    api_rate: float = API_RATE_PER_SECOND,
    websocket_compression: bool = False,
    gate: AddressGate | None = None,
    bind_timeout: float = BIND_TIMEOUT_SECONDS,
    max_per_address: int = DEFAULT_PER_ADDRESS,
    max_unbound_per_address: int = DEFAULT_UNBOUND_PER_ADDRESS,
) -> web.Application:
    """Build the app; the caller opens and closes the service's store around it.

    With ``redis_url`` several bridge processes share rooms: an emit on one reaches
    the clients of all (python-socketio's AsyncRedisManager). ``on_commit`` is called
    after any intent that committed something (it wakes the webhook outbox).
    Websockets decline permessage-deflate unless ``websocket_compression``
    (see :class:`bridge.websocket_session.BridgeWebSocket`). ``gate`` is the TCP listener's
    (its strangers stop counting once they join ``/fate``); joined sockets are capped per
    address at ``max_per_address`` GMs and bound players and ``max_unbound_per_address``
    players not yet bound, who must be bound within ``bind_timeout`` seconds (0: no cap).
    """
    app = web.Application(client_max_size=TRANSPORT_LIMIT_BYTES)
    app[SERVICE_KEY] = service
    app[CONFIG_KEY] = {"public_url": public_url}
    fan_out = RedisRoomFanOut(redis_url) if redis_url else RoomFanOut()
    sio = FateServer(
        FateNamespace(service, on_commit),
        join_timeout=handshake_timeout,
        bind_timeout=bind_timeout,
        seats=Seats(max_per_address, max_unbound_per_address),
        gate=gate,
        async_mode="aiohttp",
        cors_allowed_origins=cors_origins,
        max_http_buffer_size=TRANSPORT_LIMIT_BYTES,
        transports=["websocket"],
        # orjson for every packet (bridge.codec adapts it to python-socketio's json=).
        json=codec,
        client_manager=fan_out,
    )
    # Per server, not engine.io's shared table: another server in this process keeps its
    # own websockets.
    sio.eio._async = {
        **sio.eio._async,
        "websocket": functools.partial(BridgeWebSocket, compress=websocket_compression),
    }
    sio.attach(app)
    if isinstance(fan_out, RedisRoomFanOut):
        shared: RedisRoomFanOut = fan_out

        async def start_fan_out(_app: web.Application) -> None:
            await shared.start()

        async def stop_fan_out(_app: web.Application) -> None:
            await shared.stop()

        # Before the server listens: its first client already hears every process.
        app.on_startup.append(start_fan_out)
        app.on_cleanup.append(stop_fan_out)
    HttpApi(service, sio, on_commit, rate_per_second=api_rate).register(app)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/module/module.json", module_manifest)
    app.router.add_get(f"/module/{ZIP_NAME}", module_zip)
    # The documents the manifest links to (readme, bugs, license, changelog).
    app.router.add_routes(document_routes())
    return app
