"""Rooms shared by every bridge process on one Redis: the bridge's own pub/sub on
redis-py's public asyncio client, delivering locally through :class:`RoomFanOut`.

The one cross-process operation the bridge needs is an emit to a room (a world's, a
user's, a sid's): every ``enter_room``, ``disconnect`` and seat change concerns a socket
of the process that does it, so only emits travel.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Coroutine
from typing import Any
from urllib.parse import parse_qs, urlsplit

from redis.asyncio import Redis

from bridge.store import codec
from bridge.transport.fan_out import RoomEmit, RoomFanOut

log = logging.getLogger("bridge.server")

# How often a node on Redis asks who else listens on the pub/sub channel (one PUBLISH),
# so that it stops publishing soon after its last peer has gone; a peer that starts is
# heard at once (its hello), never only at the next survey.
PEER_SURVEY_SECONDS = 5.0
# How long a survey waits for its own message to come back and for the peers' welcomes.
PEER_ANSWER_SECONDS = 3.0
# The bridge's peer messages on the channel: each starts with this, so the listener
# tells them apart from emits before decoding.
PEER_METHOD_PREFIX = b'{"method":"fate.'
RETRY_FIRST_SECONDS = 1.0
RETRY_MAX_SECONDS = 60.0


def pubsub_channel(url: str) -> str:
    """The pub/sub channel of the bridges whose state is in ``url``'s database: Redis
    pub/sub ignores database numbers, so deployments in separate databases of one
    redis-server would otherwise hear each other's room emits (rooms are world ids)."""
    parts = urlsplit(url)
    # As redis-py reads it: ?db=N, else the path's number (redis://host:port/N), else 0.
    db = parse_qs(parts.query).get("db", [parts.path.strip("/") or "0"])[0]
    return f"fate-bridge.db{int(db) if db.isdigit() else 0}"


class RedisRoomFanOut(RoomFanOut):
    """Room emits published to every bridge process on the channel, and theirs
    delivered here; published only when another process listens.

    An emit's message is JSON (``host_id`` first, then ``method: "emit"``, the event, its
    data as a list, namespace, room and skip_sid): plain JSON any subscriber can read.
    This process's listener drops its own emits by their first bytes instead of decoding
    them.

    A lone process pays nothing for the pub/sub: emits are not published while no other
    subscriber listens (``peers`` is False). Who listens is learned so that no emit a
    peer's client could have heard is ever skipped:

    - A process that (re)subscribes says ``fate.hello``; every other bridge process
      marks itself as having peers *before* it answers ``fate.welcome``, and a starting
      process waits for those answers (:meth:`start`, before the server listens): by the
      time its first client can join a room, every other process publishes again.
    - Every ``survey_seconds`` a process publishes a ``fate.probe``: PUBLISH says how
      many subscribers got it. Only when that is 1 and the probe came back to this
      process's own subscription (so the one was itself), and no peer spoke meanwhile,
      does it stop publishing. Anything else (another bridge, an older bridge that says
      no hello, any other subscriber, a failed publish) keeps it publishing."""

    def __init__(
        self,
        url: str,
        *,
        channel: str | None = None,
        survey_seconds: float = PEER_SURVEY_SECONDS,
        answer_seconds: float = PEER_ANSWER_SECONDS,
    ) -> None:
        super().__init__()
        self.url = url
        self.channel = channel or pubsub_channel(url)
        self.host_id = uuid.uuid4().hex
        self.survey_seconds = survey_seconds
        self.answer_seconds = answer_seconds
        self.redis: Redis | None = None
        # True until a survey proves this process alone: publishing is the safe default.
        self.peers = True
        # Bumped by everything another process says: a survey that began before it
        # cannot conclude "alone".
        self.peer_news = 0
        self.own_emit_prefix = codec.dumps_bytes({"host_id": self.host_id, "method": "emit"})[:-1]
        self.echoes: dict[int, asyncio.Future[None]] = {}
        self.welcomes: dict[int, tuple[set[str], asyncio.Event]] = {}
        self.tokens = 0
        self.subscribed = asyncio.Event()
        self.greeted: asyncio.Future[None] | None = None
        self.tasks: set[asyncio.Task[Any]] = set()

    def initialize(self) -> None:
        """Start listening and surveying (called before the first session connects;
        :meth:`start` calls it sooner)."""
        super().initialize()
        # Before the listener starts: its first subscription's hello settles this.
        self.greeted = asyncio.get_running_loop().create_future()
        self.spawn(self.listen_forever())
        self.spawn(self.survey_forever())

    async def start(self) -> None:
        """Initialise now rather than at the first connection, and return once this
        process is subscribed and every other bridge process has answered its hello (or
        ``answer_seconds`` have passed): from then on an emit anywhere reaches this
        process's clients."""
        if not self.initialized:
            self.initialize()
        assert self.greeted is not None
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.greeted), 2 * self.answer_seconds)

    async def stop(self) -> None:
        """Stop listening: the subscription ends now, so the other processes' next
        survey finds them without this one."""
        tasks = list(self.tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self.redis is not None:
            with contextlib.suppress(Exception):
                await self.redis.aclose()
            self.redis = None

    def spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(work)
        self.tasks.add(task)  # keep a reference until it ends
        task.add_done_callback(self.tasks.discard)

    def client(self) -> Redis:
        """The connection pool for publishing (made on first use, again after a failure)."""
        if self.redis is None:
            self.redis = Redis.from_url(self.url)
        return self.redis

    # --- emits --------------------------------------------------------------------------

    async def forward(self, sent: RoomEmit) -> None:
        """Published to the other processes, if any listen."""
        if self.peers:
            await self.publish(
                {
                    "host_id": self.host_id,  # first: see own_emit_prefix
                    "method": "emit",
                    "event": sent.event,
                    "data": sent.arguments(),
                    "binary": False,
                    "namespace": sent.namespace or "/",
                    "room": sent.room,
                    "skip_sid": sent.skip_sid,
                    "callback": None,
                }
            )

    async def publish(self, message: dict[str, Any]) -> int | None:
        """PUBLISH ``message`` on the channel: the number of subscribers that got it, or
        None when Redis could not be reached (tried twice, on a fresh connection the
        second time)."""
        payload = codec.dumps_bytes(message)
        for attempt in (1, 2):
            try:
                receivers = await self.client().publish(self.channel, payload)
                return int(receivers)
            except Exception as exc:
                log.error("redis publish failed (%s)%s", exc, "; retrying" if attempt == 1 else "")
                broken, self.redis = self.redis, None
                if broken is not None:
                    with contextlib.suppress(Exception):
                        await broken.aclose()
        return None

    async def heard_emit(self, raw: bytes) -> None:
        """Another process's emit: delivered to this process's receivers."""
        try:
            message = codec.loads(raw)
            if message.get("method") != "emit":
                return
            data = message.get("data")
            heard = RoomEmit(
                str(message["event"]),
                tuple(data) if isinstance(data, list) else data,
                message.get("namespace") or "/",
                message.get("room"),
                message.get("skip_sid"),
            )
            await self.deliver(heard)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            log.warning("redis pub/sub: unreadable message (%s)", exc)

    # --- the listener -------------------------------------------------------------------

    async def listen_forever(self) -> None:
        """Deliver every other process's emit here; reconnects with backoff (1 s doubling
        to 60 s) and says hello on every (re)subscription, since peers may have come while
        it was away."""
        async for raw in self.messages():
            if raw.startswith(PEER_METHOD_PREFIX):
                await self.heard(raw)
            else:
                await self.heard_emit(raw)

    async def messages(self) -> AsyncIterator[bytes]:
        """The channel's messages, minus this process's own emits."""
        channel = self.channel.encode("utf-8")
        retry_seconds = RETRY_FIRST_SECONDS
        while True:
            listener: Redis | None = None
            pubsub = None
            try:
                listener = Redis.from_url(self.url)
                # Its own connection, not ignoring the subscribe confirmation: hello goes
                # out only once Redis counts this subscription.
                pubsub = listener.pubsub()
                await pubsub.subscribe(self.channel)
                async for message in pubsub.listen():
                    kind = message.get("type")
                    if kind == "subscribe":
                        retry_seconds = RETRY_FIRST_SECONDS
                        self.subscribed.set()
                        self.spawn(self.survey(hello=True))
                        continue
                    if kind != "message" or message.get("channel") != channel:
                        continue
                    raw = message.get("data")
                    if isinstance(raw, bytes) and not raw.startswith(self.own_emit_prefix):
                        yield raw
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.subscribed.clear()
                self.peers = True  # unsure who listens: publish
                log.warning("redis pub/sub: %s; retrying in %.0fs", exc, retry_seconds)
                await asyncio.sleep(retry_seconds)
                retry_seconds = min(retry_seconds * 2, RETRY_MAX_SECONDS)
            finally:
                if pubsub is not None:
                    with contextlib.suppress(Exception):
                        await pubsub.aclose()  # type: ignore[no-untyped-call]
                if listener is not None:
                    with contextlib.suppress(Exception):
                        await listener.aclose()

    async def heard(self, raw: bytes) -> None:
        """One of the bridge's peer messages: a hello (answered), a probe, a welcome."""
        try:
            message = codec.loads(raw)
            method, host = message["method"], message["host_id"]
            token = message["token"]
        except (ValueError, TypeError, KeyError):
            return
        if host == self.host_id:
            echo = self.echoes.get(token)
            if echo is not None and not echo.done():
                echo.set_result(None)
            return
        # Another process listens; from now on this one publishes.
        self.peer_news += 1
        self.peers = True
        if method == "fate.hello":
            await self.publish(
                {"method": "fate.welcome", "host_id": self.host_id, "to": host, "token": token}
            )
        elif method == "fate.welcome" and message.get("to") == self.host_id:
            waiting = self.welcomes.get(token)
            if waiting is not None:
                welcomed, arrived = waiting
                welcomed.add(host)
                arrived.set()

    async def survey(self, *, hello: bool) -> None:
        """Publish a hello or a probe and learn from it whether anyone else listens
        (``peers``); a hello also waits for every other process's welcome."""
        self.tokens += 1
        token = self.tokens
        news = self.peer_news
        loop = asyncio.get_running_loop()
        echo = self.echoes[token] = loop.create_future()
        welcomed: set[str] = set()
        arrived = asyncio.Event()
        self.welcomes[token] = (welcomed, arrived)
        try:
            method = "fate.hello" if hello else "fate.probe"
            receivers = await self.publish(
                {"method": method, "host_id": self.host_id, "token": token}
            )
            heard_back = False
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(echo), self.answer_seconds)
                heard_back = True
            others = receivers - 1 if receivers is not None else -1
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
            self.peers = not (others == 0 and heard_back and self.peer_news == news)
        finally:
            del self.echoes[token], self.welcomes[token]
            if hello and self.greeted is not None and not self.greeted.done():
                self.greeted.set_result(None)

    async def survey_forever(self) -> None:
        while True:
            await asyncio.sleep(self.survey_seconds)
            if not self.subscribed.is_set():
                continue  # the listener says hello when it is back
            try:
                await self.survey(hello=False)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.peers = True
                log.warning("redis pub/sub survey failed: %s", exc)
