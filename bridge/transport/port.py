"""The bridge's narrow port: what a connection says, answered, whatever carries it.

A transport (the Socket.IO adapter, :mod:`bridge.transport.socket`) opens a connection's
session here, hands over each frame a client sent, and delivers the :class:`Reply` it gets
back: ``ack`` to the sender, ``emissions`` to their rooms. Everything about *what* is
answered lives here: each connection's rate tokens, the frame's shape, size and nesting
(:mod:`bridge.transport.codec`),
unknown events, costed reads taking turns, the relay envelope (a GM's
connection speaking for its players, :mod:`bridge.transport.relay`) and binding (a player the GM's
client vouched for starts hearing its world, through ``on_bound``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from pydantic import ValidationError

from bridge.service import BridgeService, Reply, Session, error, ok, protocol
from bridge.service.intent_table import DECLARED
from bridge.service.session import validation_error
from bridge.store.codec import TooDeep
from bridge.transport.codec import MAX_NESTING, encoded_size
from bridge.transport.ratelimit import TokenBucket
from bridge.transport.relay import (
    RELAY_TOTAL_BURST,
    RELAY_TOTAL_RATE_PER_SECOND,
    RelayedUser,
    RelayTable,
    TooManyRelayedUsers,
)

log = logging.getLogger("bridge.server")

RATE_PER_SECOND = 20.0
RATE_BURST = 40.0

_Envelope = TypeVar("_Envelope", protocol.Relay, protocol.RelayLeave)
OnBound = Callable[[Session], Awaitable[None]]


async def _nothing(_session: Session) -> None:
    return None


@dataclass
class Budgets:
    """One connection's rate budgets: its own messages, and what it relays for others in
    all. They belong to the websocket, not to one join, so leaving ``/fate`` and joining
    again refills nothing."""

    messages: TokenBucket
    relayed: TokenBucket

    @classmethod
    def fresh(cls, now: float) -> Budgets:
        return cls(
            TokenBucket(RATE_PER_SECOND, RATE_BURST, stamp=now),
            TokenBucket(RELAY_TOTAL_RATE_PER_SECOND, RELAY_TOTAL_BURST, stamp=now),
        )


class IntentPort:
    """Sessions of one process's connections, keyed by connection id (``Session.sid``).

    ``on_bound(session)`` runs when a connection of this process was just vouched for
    (the transport lets it hear its world); it may run before the intent that bound it
    is answered."""

    def __init__(self, service: BridgeService, on_bound: OnBound = _nothing) -> None:
        self.service = service
        self.on_bound = on_bound
        self.sessions: dict[str, Session] = {}
        self.budgets: dict[str, Budgets] = {}
        self.relays = RelayTable()
        # Per connection (or relayed user): the turn its costed reads take.
        self.read_turns: dict[str, asyncio.Lock] = {}

    # --- connections --------------------------------------------------------------------

    def opened(self, session: Session, budgets: Budgets | None = None) -> None:
        """A connection joined as ``session``, spending from ``budgets`` (its websocket's,
        kept across joins; fresh ones when not given)."""
        self.sessions[session.sid] = session
        self.budgets[session.sid] = budgets or Budgets.fresh(time.monotonic())

    async def closed(self, sid: str) -> None:
        """The connection ``sid`` left: it, and every user it relayed for, is gone (no
        longer present). Idempotent."""
        gone = self.sessions.pop(sid, None)
        if gone is not None:
            await self.service.disconnect(gone)
        for relayed in self.relays.drop_connection(sid):
            self.read_turns.pop(relayed.session.sid, None)
            await self.service.disconnect(relayed.session)
        self.budgets.pop(sid, None)
        self.read_turns.pop(sid, None)

    def take_token(self, sid: str) -> bool:
        """Spend one of the connection's rate tokens; False when it has none (or is gone)."""
        budgets = self.budgets.get(sid)
        return budgets is not None and budgets.messages.take(time.monotonic())

    def take_relayed(self, sid: str) -> bool:
        """Spend one of the connection's relay tokens (shared by every user it relays)."""
        budgets = self.budgets.get(sid)
        return budgets is not None and budgets.relayed.take(time.monotonic())

    async def bind(self, session: Session) -> None:
        """Bind ``session`` (its nonce was vouched for) and let it hear its world."""
        await self.service.bind(session)
        await self.on_bound(session)

    # --- frames and intents -------------------------------------------------------------

    async def on_frame(self, sid: str, frame: object) -> Reply:
        """Answer one event frame (``[name, payload]``) from connection ``sid``: always a
        reply, never an exception, whatever the frame holds. Every frame spends a token,
        refusals too: the sender's own first; a relayed one the relayed user's own (its
        fair share of the GM connection's relay total, see :mod:`bridge.transport.relay`) and then
        the total, or only the total when it names no user the bridge would relay for."""
        session = self.sessions.get(sid)
        if session is None:
            return Reply(error("forbidden", "Not connected."))
        relaying = (
            session.role == "gm" and isinstance(frame, list) and bool(frame) and frame[0] == "relay"
        )
        if relaying:
            budgets = self.budgets.get(sid)
            if budgets is None or budgets.relayed.in_debt(time.monotonic()):
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
        refused = self.unreadable(payload)
        if refused is not None:
            return self.charged_to_total(session.sid, refused) if name == "relay" else refused
        if name == "relay":
            return await self.relay(session, payload)
        if name == "relay.leave":
            return await self.relay_leave(session, payload)
        try:
            was_bound = session.bound
            budgets = self.budgets.get(session.sid)
            bucket = budgets.messages if budgets is not None else None
            reply = await self.paid(session, name, payload, bucket)
            if session.bound and not was_bound:
                await self.on_bound(session)
            if reply.vouched is not None:
                await self.bind_local(reply.vouched)
            return reply
        except Exception:
            log.exception("handler for %s failed", name)
            return Reply(error("internal", "The bridge failed on this message; nothing changed."))

    @staticmethod
    def unreadable(payload: object) -> Reply | None:
        """The refusal of a payload too large, too deep or not JSON; None for one that is
        read."""
        try:
            size = encoded_size(payload, MAX_NESTING, protocol.MAX_MESSAGE_BYTES)
        except TooDeep:
            return Reply(error("invalid", f"The message nests deeper than {MAX_NESTING} levels."))
        except (TypeError, ValueError):
            return Reply(error("invalid", "The message is not JSON."))
        if size > protocol.MAX_MESSAGE_BYTES:
            return Reply(
                error("too_large", f"The message is over {protocol.MAX_MESSAGE_BYTES} bytes.")
            )
        return None

    def charged_to_total(self, sid: str, refused: Reply) -> Reply:
        """A relay envelope refused before it reached a user costs the connection's relay
        total a token (into debt, at most a burst deep: relaying is then refused until it
        has refilled); returns ``refused``."""
        budgets = self.budgets.get(sid)
        if budgets is not None:
            budgets.relayed.spend(1.0, time.monotonic())
        return refused

    async def paid(
        self, session: Session, event: str, payload: object, bucket: TokenBucket | None
    ) -> Reply:
        """The service's answer, its cost beyond the message's token charged to ``bucket``
        (the sender's). A costed read (its row in the intent table says so) waits for the
        sender's previous one, and is refused while the sender still owes a token for what
        it read before: a burst of heavy reads costs its sender."""
        if not DECLARED[event].costed or bucket is None:
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
        """One relayed intent: handled as its user's own, on that user's session. The
        user's own bucket is spent before the connection's total, so a user past its
        share is refused without spending anyone else's."""
        envelope = self.opened_envelope(gm, protocol.Relay, body)
        if isinstance(envelope, Reply):
            return self.charged_to_total(gm.sid, envelope)
        if envelope.event not in protocol.INTENTS:
            shown = protocol.shown(envelope.event)
            refused = Reply(error("unknown_event", f"The bridge has no event {shown!r}.", "event"))
            return self.charged_to_total(gm.sid, refused)
        if not DECLARED[envelope.event].relayed:
            refused = Reply(
                error("forbidden", f"{envelope.event!r} is not relayed for another user.", "event")
            )
            return self.charged_to_total(gm.sid, refused)
        now = time.monotonic()
        relayed = self.relays.get(gm.sid, envelope.user)
        if relayed is None:
            try:
                relayed = self.relays.add(gm, envelope.user, now)
            except TooManyRelayedUsers:
                refused = Reply(
                    error("rate_limited", "This connection relays for too many users.", "user")
                )
                return self.charged_to_total(gm.sid, refused)
            await self.service.connected(relayed.session)
        if not relayed.bucket.take(now):
            return Reply(error("rate_limited", "Too many messages from this user; slow down."))
        if not self.take_relayed(gm.sid):
            return Reply(error("rate_limited", "Too many relayed messages; slow down."))
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
        """A relayed user left: its session and read turn go (its rate bucket stays with
        the connection, so coming back refills nothing)."""
        relayed = self.relays.remove(sid, user_id, time.monotonic())
        if relayed is not None:
            self.read_turns.pop(relayed.session.sid, None)
            await self.service.disconnect(relayed.session)
        return relayed

    async def bind_local(self, vouched: tuple[str, str, str]) -> None:
        """Bind this process's connections that carry the vouched nonce, and let them
        hear the world at once (the notice itself goes out as an emission)."""
        for session in list(self.sessions.values()):
            if (session.world_id, session.user_id, session.bind_nonce) == vouched:
                await self.bind(session)
