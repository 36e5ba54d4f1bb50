"""Application layer: intent -> authorize -> load state -> rules -> persist -> outbox.

Transport-free: the server hands in a session, an event name and the raw
payload, and gets back the ack and the emissions to send. Writes to a world are
serialised by a per-world lock on this node and a version check-and-set in the
store across nodes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from bridge import __version__, protocol
from bridge.auth import hash_key, key_matches, new_key
from bridge.cards import action_card
from bridge.rules.dice import DiceSource, QueuedDice, SecureDice
from bridge.rules.engine import (
    OvercomeCommand,
    RuleViolation,
    replay,
    start_overcome,
    sync_character,
)
from bridge.rules.engine import apply as apply_event
from bridge.rules.events import EVENT_ADAPTER, ActionResolved, Event
from bridge.rules.ruleset import Ruleset, get_ruleset
from bridge.rules.state import Character, PassiveOpposition, WorldState
from bridge.store.base import (
    CommitBatch,
    EmitRow,
    EventRow,
    Snapshot,
    Store,
    VersionConflict,
    WorldRecord,
)
from bridge.store.chain import event_hash

Role = Literal["gm", "player"]
Clock = Callable[[], datetime]
SYNC_PAGE = 500
COMMIT_ATTEMPTS = 5


def utc_now() -> datetime:
    return datetime.now(UTC)


class IntentError(Exception):
    """An intent refused with a machine-readable code and a message for people."""

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field


@dataclass(frozen=True)
class Session:
    """Who is on one connection; lives for the connection only."""

    world_id: str
    user_id: str
    role: Role
    bound: bool

    @property
    def room(self) -> str:
        return world_room(self.world_id)


@dataclass(frozen=True)
class Emission:
    event: str
    payload: dict[str, Any]
    room: str


@dataclass
class Reply:
    ack: dict[str, Any]
    emissions: list[Emission] = field(default_factory=list)


def world_room(world_id: str) -> str:
    return f"world:{world_id}"


def ok(data: BaseModel) -> dict[str, Any]:
    return protocol.AckOk(data=data.model_dump(mode="json")).model_dump(mode="json")


def error(code: str, message: str, field_name: str | None = None) -> dict[str, Any]:
    info = protocol.ErrorInfo(code=code, message=message, field=field_name)
    return protocol.AckError(error=info).model_dump(mode="json")


def validation_error(exc: ValidationError) -> dict[str, Any]:
    """The first problem, said plainly, with the field's dotted path."""
    first = exc.errors(include_url=False)[0]
    location = ".".join(str(part) for part in first["loc"]) or None
    where = f" at {location}" if location else ""
    return error("invalid", f"Invalid message{where}: {first['msg']}.", location)


class ConnectRefused(Exception):
    def __init__(self, refusal: protocol.ConnectRefusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


@dataclass
class _Mutation:
    """What a mutating handler decided: events, and how to answer once they have seqs."""

    events: list[Event]
    answer: Callable[[WorldState, list[EventRow], int], tuple[BaseModel, list[EmitRow]]]
    # Side effects outside the store (e.g. the dev dice queue) run once, after the commit.
    after_commit: Callable[[], None] | None = None


class BridgeService:
    def __init__(self, store: Store, *, dev_dice: bool = False, clock: Clock = utc_now) -> None:
        self.store = store
        self.dev_dice = dev_dice
        self.clock = clock
        self._locks: dict[str, asyncio.Lock] = {}
        self._dice: dict[str, QueuedDice] = {}
        self._secure = SecureDice()
        self._handlers: dict[str, Callable[[Session, Any], Awaitable[Reply]]] = {
            "hello": self._hello,
            "world.sync": self._world_sync,
            "actor.sync": self._actor_sync,
            "action.start": self._action_start,
            "dev.queue_dice": self._dev_queue_dice,
        }

    # --- worlds -------------------------------------------------------------

    async def add_world(
        self, world_id: str, name: str, ruleset: str = "unwritten"
    ) -> tuple[WorldRecord, str]:
        """Register a world; returns it and its GM key (shown once, stored hashed)."""
        get_ruleset(ruleset)
        key = new_key()
        record = WorldRecord(
            id=world_id,
            name=name,
            ruleset=ruleset,
            key_hash=hash_key(key),
            created_at=self.clock().isoformat(),
        )
        await self.store.add_world(record, WorldState(ruleset=ruleset).model_dump(mode="json"))
        return record, key

    async def rotate_key(self, world_id: str) -> str | None:
        key = new_key()
        return key if await self.store.set_key_hash(world_id, hash_key(key)) else None

    # --- connections ----------------------------------------------------------

    async def authenticate(self, auth: object) -> Session:
        """Check a handshake; raises :class:`ConnectRefused` with the reason."""

        def refuse(reason: Any, message: str) -> ConnectRefused:
            return ConnectRefused(protocol.ConnectRefusal(reason=reason, message=message))

        if isinstance(auth, dict) and auth.get("protocol") != protocol.PROTOCOL_VERSION:
            theirs = auth.get("protocol")
            raise refuse(
                "protocol_mismatch",
                f"This module speaks protocol {theirs!r} but the bridge speaks "
                f"{protocol.PROTOCOL_VERSION}; update the module from the bridge's manifest URL.",
            )
        try:
            parsed = protocol.Auth.model_validate(auth)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"]) or "auth"
            raise refuse("invalid_auth", f"Invalid handshake at {where}: {first['msg']}.") from exc
        world = await self.store.get_world(parsed.world)
        if world is None:
            raise refuse("unknown_world", f"The bridge has no world {parsed.world!r}.")
        if parsed.role == "gm":
            if not parsed.key or not key_matches(parsed.key, world.key_hash):
                raise refuse("bad_key", "The GM key is wrong for this world.")
            return Session(world.id, parsed.user, "gm", bound=True)
        return Session(world.id, parsed.user, "player", bound=False)

    # --- intents ----------------------------------------------------------------

    async def handle(self, session: Session, event: str, payload: object) -> Reply:
        """Answer one intent; never raises for bad input, always returns an ack."""
        model = protocol.INTENTS.get(event)
        handler = self._handlers.get(event)
        if model is None or handler is None:
            return Reply(error("unknown_event", f"The bridge has no event {event!r}."))
        try:
            intent = model.model_validate(payload)
        except ValidationError as exc:
            return Reply(validation_error(exc))
        try:
            return await handler(session, intent)
        except IntentError as exc:
            return Reply(error(exc.code, exc.message, exc.field))
        except RuleViolation as exc:
            return Reply(error(exc.code, exc.message, exc.field))

    def _lock(self, world_id: str) -> asyncio.Lock:
        return self._locks.setdefault(world_id, asyncio.Lock())

    def dice_for(self, world_id: str) -> QueuedDice:
        return self._dice.setdefault(world_id, QueuedDice(fallback=self._secure))

    async def _snapshot(self, world_id: str) -> Snapshot:
        snapshot = await self.store.load(world_id)
        if snapshot is None:
            raise IntentError("not_found", f"The bridge has no world {world_id!r}.")
        return snapshot

    @staticmethod
    def _require_gm(session: Session) -> None:
        if session.role != "gm":
            raise IntentError("forbidden", "Only the GM may do that.")

    async def _mutate(
        self,
        session: Session,
        request_id: str,
        decide: Callable[[WorldState, Ruleset, DiceSource], _Mutation],
    ) -> Reply:
        """Run one state-changing intent exactly once per request id."""
        async with self._lock(session.world_id):
            cached = await self.store.get_response(session.world_id, session.user_id, request_id)
            if cached is not None:
                return Reply(cached)
            for _ in range(COMMIT_ATTEMPTS):
                snapshot = await self._snapshot(session.world_id)
                state = WorldState.model_validate(snapshot.state)
                ruleset = get_ruleset(snapshot.world.ruleset)
                mutation = decide(state, ruleset, self.dice_for(session.world_id))
                now = self.clock().isoformat()
                rows: list[EventRow] = []
                prev, seq = snapshot.last_event_hash, snapshot.last_event_seq
                for domain_event in mutation.events:
                    state = apply_event(state, domain_event)
                    seq += 1
                    payload = domain_event.model_dump(mode="json")
                    digest = event_hash(prev, seq, domain_event.type, payload, now)
                    rows.append(EventRow(seq, domain_event.type, payload, now, prev, digest))
                    prev = digest
                data, emits = mutation.answer(state, rows, snapshot.last_emit_seq)
                ack = ok(data)
                try:
                    await self.store.commit(
                        CommitBatch(
                            world_id=session.world_id,
                            expected_version=snapshot.version,
                            state=state.model_dump(mode="json"),
                            events=rows,
                            emits=emits,
                            user_id=session.user_id,
                            request_id=request_id,
                            response=ack,
                            created_at=now,
                        )
                    )
                except VersionConflict:
                    continue
                if mutation.after_commit is not None:
                    mutation.after_commit()
                room = session.room
                return Reply(ack, [Emission(e.event, e.payload, room) for e in emits])
            raise IntentError("conflict", "The world is busy; try again.")

    async def _hello(self, session: Session, intent: protocol.Hello) -> Reply:
        snapshot = await self._snapshot(session.world_id)
        return Reply(
            ok(
                protocol.HelloData(
                    bridge_version=__version__,
                    protocol=protocol.PROTOCOL_VERSION,
                    world=snapshot.world.id,
                    world_name=snapshot.world.name,
                    ruleset=snapshot.world.ruleset,
                    user=session.user_id,
                    role=session.role,
                    dev_dice=self.dev_dice,
                    last_seq=snapshot.last_emit_seq,
                )
            )
        )

    async def _world_sync(self, session: Session, intent: protocol.WorldSync) -> Reply:
        rows = await self.store.emits_since(session.world_id, intent.since, SYNC_PAGE)
        cards = [
            protocol.CardEmit.model_validate(row.payload) for row in rows if row.event == "card"
        ]
        last = rows[-1].seq if rows else intent.since
        if not rows:
            last = max(intent.since, (await self._snapshot(session.world_id)).last_emit_seq)
        return Reply(ok(protocol.WorldSyncData(emits=cards, last_seq=last)))

    async def _actor_sync(self, session: Session, intent: protocol.ActorSync) -> Reply:
        self._require_gm(session)
        character = Character(
            id=intent.actor.id,
            name=intent.actor.name,
            owners=tuple(intent.actor.owners),
            skills=dict(intent.actor.skills),
        )

        def decide(state: WorldState, ruleset: Ruleset, dice: DiceSource) -> _Mutation:
            events = sync_character(state, character)
            return _Mutation(
                events,
                lambda _s, _r, _seq: (
                    protocol.ActorSyncData(actor_id=character.id, changed=bool(events)),
                    [],
                ),
            )

        return await self._mutate(session, intent.request_id, decide)

    def _authorize_actor(self, session: Session, state: WorldState, actor_id: str) -> None:
        if session.role == "gm":
            return
        if not session.bound:
            raise IntentError(
                "unbound",
                "The bridge has not yet confirmed which Foundry user you are; "
                "a GM must be connected to confirm it.",
            )
        character = state.characters.get(actor_id)
        if character is None or session.user_id not in character.owners:
            raise IntentError("forbidden", "You may only act for actors you own.", "actor_id")

    async def _action_start(self, session: Session, intent: protocol.ActionStart) -> Reply:
        command = OvercomeCommand(
            actor_id=intent.actor_id,
            skill=intent.skill,
            opposition=PassiveOpposition(rating=intent.opposition.rating),
            requested_by=session.user_id,
            description=intent.description,
        )
        world_id = session.world_id

        def decide(state: WorldState, ruleset: Ruleset, dice: DiceSource) -> _Mutation:
            self._authorize_actor(session, state, intent.actor_id)
            events = start_overcome(state, command, dice, ruleset)
            resolved = next(e for e in events if isinstance(e, ActionResolved))
            action_id = resolved.action.id

            def answer(
                new_state: WorldState, rows: list[EventRow], last_emit: int
            ) -> tuple[BaseModel, list[EmitRow]]:
                last_row = rows[-1]
                card = action_card(
                    new_state.actions[action_id], new_state, ruleset, last_row.seq, last_row.hash
                )
                card_id = f"{world_id}.{action_id}"
                emit = protocol.CardEmit(
                    seq=last_emit + 1,
                    world=world_id,
                    writer=session.user_id,
                    op="create",
                    card_id=card_id,
                    card=card,
                )
                data = protocol.ActionStartData(action_id=action_id, card_id=card_id, card=card)
                return data, [EmitRow(emit.seq, "card", emit.model_dump(mode="json"))]

            return _Mutation(events, answer)

        return await self._mutate(session, intent.request_id, decide)

    async def _dev_queue_dice(self, session: Session, intent: protocol.DevQueueDice) -> Reply:
        if not self.dev_dice:
            raise IntentError(
                "dev_dice_disabled",
                "Queued dice are a test feature; the bridge must run with --dev-dice.",
            )
        self._require_gm(session)
        rolls = [(r[0], r[1], r[2], r[3]) for r in intent.rolls]

        def decide(state: WorldState, ruleset: Ruleset, dice: DiceSource) -> _Mutation:
            queue = self.dice_for(session.world_id)
            queued = queue.pending + len(rolls)
            return _Mutation(
                [],
                lambda _s, _r, _seq: (protocol.DevQueueDiceData(queued=queued), []),
                after_commit=lambda: queue.queue(rolls),
            )

        return await self._mutate(session, intent.request_id, decide)

    # --- audit --------------------------------------------------------------------

    async def replayed_state(self, world_id: str) -> WorldState:
        """The state rebuilt from the event log alone (for verification)."""
        snapshot = await self._snapshot(world_id)
        events = [
            EVENT_ADAPTER.validate_python(row.payload) for row in await self.store.events(world_id)
        ]
        return replay(events, WorldState(ruleset=snapshot.world.ruleset))
