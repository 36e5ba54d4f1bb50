"""The bridge's narrow port: what a connection says, answered, whatever carries it.

A transport (the Socket.IO adapter, :mod:`bridge.transport.socket`) opens a connection's
session here, hands over each frame a client sent, and delivers the :class:`Reply` it gets
back: ``ack`` to the sender, ``emissions`` to their rooms. Everything about *what* is
answered lives here: each connection's rate tokens, the frame's shape, size and nesting
(:mod:`bridge.codec`), unknown events, costed reads taking turns, the relay envelope (a GM's
connection speaking for its players, :mod:`bridge.relay`) and binding (a player the GM's
client vouched for starts hearing its world, through ``on_bound``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from pydantic import ValidationError

from bridge import codec, protocol
from bridge.ratelimit import TokenBucket
from bridge.relay import RelayedUser, RelayTable, TooManyRelayedUsers
from bridge.service import BridgeService, Reply, Session, error, ok
from bridge.service.session import validation_error

log = logging.getLogger("bridge.server")

RATE_PER_SECOND = 20.0
RATE_BURST = 40.0
# Reads whose answers say what they cost (Reply.cost): one connection's take turns, each
# after the last one's cost is paid, so a burst of heavy reads costs its sender (issue 26).
COSTED_READS = frozenset({"history.read", "history.stats"})

_Envelope = TypeVar("_Envelope", protocol.Relay, protocol.RelayLeave)
OnBound = Callable[[Session], Awaitable[None]]


async def _nothing(_session: Session) -> None:
    return None


class IntentPort:
    """Sessions of one process's connections, keyed by connection id (``Session.sid``).

    ``on_bound(session)`` runs when a connection of this process was just vouched for
    (the transport lets it hear its world); it may run before the intent that bound it
    is answered."""

    def __init__(self, service: BridgeService, on_bound: OnBound = _nothing) -> None:
        self.service = service
        self.on_bound = on_bound
        self.sessions: dict[str, Session] = {}
        self.buckets: dict[str, TokenBucket] = {}
        self.relays = RelayTable()
        # Per connection (or relayed user): the turn its costed reads take.
        self.read_turns: dict[str, asyncio.Lock] = {}

    # --- connections --------------------------------------------------------------------

    def opened(self, session: Session) -> None:
        """A connection joined as ``session``: it gets its own rate budget."""
        self.sessions[session.sid] = session
        self.buckets[session.sid] = TokenBucket(RATE_PER_SECOND, RATE_BURST, stamp=time.monotonic())

    async def closed(self, sid: str) -> None:
        """The connection ``sid`` left: it, and every user it relayed for, is gone (no
        longer present). Idempotent."""
        gone = self.sessions.pop(sid, None)
        if gone is not None:
            await self.service.disconnect(gone)
        for relayed in self.relays.drop_connection(sid):
            self.read_turns.pop(relayed.session.sid, None)
            await self.service.disconnect(relayed.session)
        self.buckets.pop(sid, None)
        self.read_turns.pop(sid, None)

    def take_token(self, sid: str) -> bool:
        """Spend one of the connection's rate tokens; False when it has none (or is gone)."""
        bucket = self.buckets.get(sid)
        return bucket is not None and bucket.take(time.monotonic())

    async def bind(self, session: Session) -> None:
        """Bind ``session`` (its nonce was vouched for) and let it hear its world."""
        await self.service.bind(session)
        await self.on_bound(session)

    # --- frames and intents -------------------------------------------------------------

    async def on_frame(self, sid: str, frame: object) -> Reply:
        """Answer one event frame (``[name, payload]``) from connection ``sid``: always a
        reply, never an exception, whatever the frame holds. Every frame spends a token
        first, refusals too; a relayed one spends from the GM connection's relay total
        here, and the relayed user's own token in :meth:`on_intent`."""
        session = self.sessions.get(sid)
        if session is None:
            return Reply(error("forbidden", "Not connected."))
        relaying = (
            session.role == "gm" and isinstance(frame, list) and bool(frame) and frame[0] == "relay"
        )
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
        return await self.on_intent(session, event, payload[0])

    async def on_intent(self, session: Session, name: str, payload: object) -> Reply:
        """Answer intent ``name`` from ``session`` (its token already spent): the payload's
        size and nesting bounded, a relay envelope opened, a costed read charged. Never
        raises: a handler's failure is logged and answered ``internal``."""
        try:
            size = codec.encoded_size(payload, codec.MAX_NESTING, protocol.MAX_MESSAGE_BYTES)
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
        if name == "relay":
            return await self.relay(session, payload)
        if name == "relay.leave":
            return await self.relay_leave(session, payload)
        try:
            was_bound = session.bound
            reply = await self.paid(session, name, payload, self.buckets.get(session.sid))
            if session.bound and not was_bound:
                await self.on_bound(session)
            if reply.vouched is not None:
                await self.bind_local(reply.vouched)
            return reply
        except Exception:
            log.exception("handler for %s failed", name)
            return Reply(error("internal", "The bridge failed on this message; nothing changed."))

    async def paid(
        self, session: Session, event: str, payload: object, bucket: TokenBucket | None
    ) -> Reply:
        """The service's answer, its cost beyond the message's token charged to ``bucket``
        (the sender's). A costed read waits for the sender's previous one, and is refused
        while the sender still owes a token for what it read before."""
        if event not in COSTED_READS or bucket is None:
            reply = await self.service.handle(session, event, payload)
        else:
            async with self.read_turns.setdefault(session.sid, asyncio.Lock()):
                if bucket.in_debt(time.monotonic()):
                    return Reply(error("rate_limited", "Too much read lately; slow down."))
                reply = await self.service.handle(session, event, payload)
        if bucket is not None and reply.cost > 1:
            bucket.spend(reply.cost - 1, time.monotonic())
        return reply

    # --- relay mode ---------------------------------------------------------------------

    @staticmethod
    def opened_envelope(gm: Session, model: type[_Envelope], body: object) -> _Envelope | Reply:
        """A relay envelope from a GM's connection, validated; or the refusal to answer with."""
        if gm.role != "gm":
            return Reply(error("forbidden", "Only a GM's connection relays other users' intents."))
        try:
            return model.model_validate(body)
        except ValidationError as exc:
            return Reply(validation_error(exc))

    async def relay(self, gm: Session, body: object) -> Reply:
        """One relayed intent: handled as its user's own, on that user's session."""
        envelope = self.opened_envelope(gm, protocol.Relay, body)
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
            return await self.paid(
                relayed.session, envelope.event, envelope.payload, relayed.bucket
            )
        except Exception:
            log.exception("relayed handler for %s failed", envelope.event)
            return Reply(error("internal", "The bridge failed on this message; nothing changed."))

    async def relay_leave(self, gm: Session, body: object) -> Reply:
        """The GM's client says a relayed user left the table: no longer present."""
        leave = self.opened_envelope(gm, protocol.RelayLeave, body)
        if isinstance(leave, Reply):
            return leave
        left = await self.forget_relayed(gm.sid, leave.user)
        return Reply(ok(protocol.RelayLeaveData(user=leave.user, left=left is not None)))

    async def forget_relayed(self, sid: str, user_id: str) -> RelayedUser | None:
        relayed = self.relays.remove(sid, user_id)
        if relayed is not None:
            await self.service.disconnect(relayed.session)
        return relayed

    async def bind_local(self, vouched: tuple[str, str, str]) -> None:
        """Bind this process's connections that carry the vouched nonce, and let them
        hear the world at once (the notice itself goes out as an emission)."""
        for session in list(self.sessions.values()):
            if (session.world_id, session.user_id, session.bind_nonce) == vouched:
                await self.bind(session)
