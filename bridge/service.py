"""Application layer: intent -> authorize -> load state -> rules -> persist -> outbox.

Transport-free: the server hands in a session, an event name and the raw
payload, and gets back the ack and the emissions to send. Writes to a world are
serialised by a per-world lock on this node and a version check-and-set in the
store across nodes.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from bridge import __version__, cards, protocol
from bridge.auth import hash_key, key_matches, new_key
from bridge.rules import actions
from bridge.rules import challenge as challenge_rules
from bridge.rules import conflict as conflict_rules
from bridge.rules import contest as contest_rules
from bridge.rules import fate as fate_rules
from bridge.rules import scene as scene_rules
from bridge.rules.dice import DiceSource, QueuedDice, SecureDice
from bridge.rules.engine import Sheet, SheetSlot, apply_all, replay, sync_character
from bridge.rules.errors import RuleViolation
from bridge.rules.events import EVENT_ADAPTER, ActionPut, AspectPut, CharacterPut, Event
from bridge.rules.ruleset import Ruleset, get_ruleset
from bridge.rules.state import Stunt, WorldState, Zone
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
# Intents an unbound player may send: enough to learn its nonce and catch up.
UNBOUND_ALLOWED = frozenset({"hello", "world.sync"})


def utc_now() -> datetime:
    return datetime.now(UTC)


class IntentError(Exception):
    """An intent refused with a machine-readable code and a message for people."""

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field


@dataclass
class Session:
    """Who is on one connection; lives for the connection only."""

    sid: str
    world_id: str
    user_id: str
    role: Role
    bound: bool
    bind_nonce: str | None = None

    @property
    def room(self) -> str:
        return world_room(self.world_id)

    @property
    def principal(self) -> actions.Principal:
        return actions.Principal(self.user_id, is_gm=self.role == "gm")


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


Decide = Callable[[WorldState, Ruleset, DiceSource], list[Event]]
Answer = Callable[[WorldState, list[EventRow], list[EmitRow]], BaseModel]


def card_id(world_id: str, action_id: str) -> str:
    return f"{world_id}.{action_id}"


ExtraCards = Callable[[WorldState], list[tuple[str, BaseModel]]]
GM_WRITER = "gm"


def derive_emits(
    world_id: str,
    before: WorldState,
    after: WorldState,
    events: list[Event],
    rows: list[EventRow],
    last_emit: int,
    ruleset: Ruleset,
    extra_cards: Sequence[tuple[str, BaseModel]] = (),
    present: Callable[[str], bool] = lambda _user: True,
) -> list[EmitRow]:
    """Cards for every action that changed, for each contest exchange and finished
    challenge; patches and statuses for every character whose written-back data
    changed (never for the GM's own sheet syncs); the scene state when it changed."""
    emits: list[EmitRow] = []
    seq = last_emit

    def add(event: str, model: BaseModel) -> None:
        emits.append(EmitRow(seq, event, model.model_dump(mode="json")))

    def gm_card(card_id_: str, card: BaseModel) -> None:
        nonlocal seq
        seq += 1
        add(
            "card",
            protocol.CardEmit.model_validate(
                {
                    "seq": seq,
                    "world": world_id,
                    "writer": GM_WRITER,
                    "op": "create",
                    "card_id": f"{world_id}.{card_id_}",
                    "card": card.model_dump(mode="json"),
                }
            ),
        )

    last_row_of_action: dict[str, EventRow] = {}
    touched: set[str] = set()
    for domain_event, row in zip(events, rows, strict=True):
        if isinstance(domain_event, ActionPut):
            last_row_of_action[domain_event.action.id] = row
        elif isinstance(domain_event, CharacterPut) and domain_event.reason != "actor.sync":
            touched.add(domain_event.character.id)
        elif isinstance(domain_event, AspectPut) and domain_event.aspect.kind == "boost":
            touched.update(domain_event.aspect.free_invokes)
    for aspect_id, aspect in before.aspects.items():
        if aspect.kind == "boost" and aspect_id not in after.aspects:
            touched.update(aspect.free_invokes)

    for action_id, row in last_row_of_action.items():
        action = after.actions[action_id]
        seq += 1
        add(
            "card",
            protocol.CardEmit(
                seq=seq,
                world=world_id,
                # The acting user writes its own card; if it has gone, the active GM does,
                # so nobody waits on an absent player to see the card move on.
                writer=action.requested_by if present(action.requested_by) else GM_WRITER,
                op="update" if action_id in before.actions else "create",
                card_id=card_id(world_id, action_id),
                card=cards.action_card(action, after, ruleset, row.seq, row.hash),
            ),
        )
    for contest_id, contest in after.contests.items():
        old_contest = before.contests.get(contest_id)
        grew = len(contest.history) > (len(old_contest.history) if old_contest else 0)
        finished = contest.state != "open" and (old_contest is None or old_contest.state == "open")
        if grew or finished:
            view = cards.contest_view(contest, after, ruleset)
            last = view.history[-1] if grew else None
            suffix = f"x{last.number}" if last else "end"
            gm_card(f"{contest_id}.{suffix}", protocol.ContestCard(contest=view, exchange=last))
    for challenge_id, challenge in after.challenges.items():
        old_challenge = before.challenges.get(challenge_id)
        if challenge.state == "complete" and (
            old_challenge is None or old_challenge.state != "complete"
        ):
            gm_card(
                challenge_id,
                protocol.ChallengeCard(challenge=cards.challenge_view(challenge, after, ruleset)),
            )
    for card_key, card in extra_cards:
        gm_card(card_key, card)
    for character_id in sorted(touched):
        new = after.characters.get(character_id)
        if new is None:
            continue
        old = before.characters.get(character_id)
        patch = cards.actor_patch(new, after, world_id, 0)
        if old is None or cards.actor_patch(old, before, world_id, 0) != patch:
            seq += 1
            add("actor.patch", patch.model_copy(update={"seq": seq}))
        status = cards.token_status(new, after, world_id, 0)
        if old is None or cards.token_status(old, before, world_id, 0) != status:
            seq += 1
            add("token.status", status.model_copy(update={"seq": seq}))
    scene_after = cards.scene_state(after)
    if cards.scene_state(before) != scene_after:
        seq += 1
        add("scene.state", protocol.SceneStateEmit(seq=seq, world=world_id, state=scene_after))
    return emits


class BridgeService:
    def __init__(self, store: Store, *, dev_dice: bool = False, clock: Clock = utc_now) -> None:
        self.store = store
        self.dev_dice = dev_dice
        self.clock = clock
        self._locks: dict[str, asyncio.Lock] = {}
        self._dice: dict[str, QueuedDice] = {}
        self._secure = SecureDice()
        self._nonces: dict[str, Session] = {}
        # Connections per (world, user) on this node, to pick who writes a card.
        self._present: dict[tuple[str, str], int] = {}
        self._handlers: dict[str, Callable[[Session, Any], Awaitable[Reply]]] = {
            "hello": self._hello,
            "world.sync": self._world_sync,
            "actor.sync": self._actor_sync,
            "world.state": self._world_state,
            "user.bind": self._user_bind,
            "action.start": self._action_start,
            "action.roll": self._action_roll,
            "action.oppose": self._action_oppose,
            "action.invoke": self._action_invoke,
            "action.pass": self._action_pass,
            "action.choose": self._action_choose,
            "action.cost": self._action_cost,
            "action.concede": self._action_concede,
            "action.absorb": self._action_absorb,
            "action.gift": self._action_gift,
            "aspect.give": self._aspect_give,
            "scene.end": self._scene_end,
            "scene.aspect": self._scene_aspect,
            "scene.read": self._scene_read,
            "contest.start": self._contest_start,
            "contest.roll": self._contest_roll,
            "contest.advantage": self._contest_advantage,
            "contest.twist": self._contest_twist,
            "contest.concede": self._contest_concede,
            "challenge.start": self._challenge_start,
            "challenge.roll": self._challenge_roll,
            "challenge.advantage": self._challenge_advantage,
            "challenge.carry": self._challenge_carry,
            "conflict.start": self._conflict_start,
            "conflict.order": self._conflict_order,
            "conflict.next": self._conflict_next,
            "conflict.move": self._conflict_move,
            "conflict.end": self._conflict_end,
            "fate.compel": self._fate_compel,
            "fate.compel_answer": self._fate_compel_answer,
            "fate.spend": self._fate_spend,
            "fate.sacrifice": self._fate_sacrifice,
            "fate.gm_budget": self._gm_budget,
            "dev.queue_dice": self._dev_queue_dice,
        }
        missing = set(protocol.INTENTS) ^ set(self._handlers)
        if missing:
            raise RuntimeError(f"intents without handlers or models: {sorted(missing)}")

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

    async def authenticate(self, sid: str, auth: object) -> Session:
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
            return Session(sid, world.id, parsed.user, "gm", bound=True)
        # DESIGN "Trust": a player proves who it is by writing this nonce into its own
        # User document, which only that user can do; the GM's client reports it.
        nonce = secrets.token_urlsafe(18)
        session = Session(sid, world.id, parsed.user, "player", bound=False, bind_nonce=nonce)
        self._nonces[nonce] = session
        return session

    def connected(self, session: Session) -> None:
        key = (session.world_id, session.user_id)
        self._present[key] = self._present.get(key, 0) + 1

    def disconnect(self, session: Session) -> None:
        if session.bind_nonce is not None:
            self._nonces.pop(session.bind_nonce, None)
        key = (session.world_id, session.user_id)
        left = self._present.get(key, 0) - 1
        if left > 0:
            self._present[key] = left
        else:
            self._present.pop(key, None)

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
        if session.role == "player" and not session.bound and event not in UNBOUND_ALLOWED:
            return Reply(
                error(
                    "unbound",
                    "The bridge has not yet confirmed which Foundry user you are; "
                    "this happens automatically while a GM is connected.",
                )
            )
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
        decide: Decide,
        answer: Answer,
        after_commit: Callable[[], None] | None = None,
        extra_cards: ExtraCards | None = None,
    ) -> Reply:
        """Run one state-changing intent exactly once per request id.

        Rules, persistence of state + events + emits + the answer, all in one
        transaction; on a version conflict (another node wrote first) retry.
        """
        async with self._lock(session.world_id):
            cached = await self.store.get_response(session.world_id, session.user_id, request_id)
            if cached is not None:
                return Reply(cached)
            for _ in range(COMMIT_ATTEMPTS):
                snapshot = await self._snapshot(session.world_id)
                before = WorldState.model_validate(snapshot.state)
                ruleset = get_ruleset(snapshot.world.ruleset)
                events = decide(before, ruleset, self.dice_for(session.world_id))
                after = apply_all(before, events)
                now = self.clock().isoformat()
                rows: list[EventRow] = []
                prev, seq = snapshot.last_event_hash, snapshot.last_event_seq
                for domain_event in events:
                    seq += 1
                    payload = domain_event.model_dump(mode="json")
                    digest = event_hash(prev, seq, domain_event.type, payload, now)
                    rows.append(EventRow(seq, domain_event.type, payload, now, prev, digest))
                    prev = digest
                emits = derive_emits(
                    session.world_id,
                    before,
                    after,
                    events,
                    rows,
                    snapshot.last_emit_seq,
                    ruleset,
                    extra_cards(after) if extra_cards else [],
                    lambda user: self._present.get((session.world_id, user), 0) > 0,
                )
                ack = ok(answer(after, rows, emits))
                try:
                    await self.store.commit(
                        CommitBatch(
                            world_id=session.world_id,
                            expected_version=snapshot.version,
                            state=after.model_dump(mode="json"),
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
                if after_commit is not None:
                    after_commit()
                room = session.room
                return Reply(ack, [Emission(e.event, e.payload, room) for e in emits])
            raise IntentError("conflict", "The world is busy; try again.")

    # --- handlers ---------------------------------------------------------------

    async def _hello(self, session: Session, intent: protocol.Hello) -> Reply:
        snapshot = await self._snapshot(session.world_id)
        ruleset = get_ruleset(snapshot.world.ruleset)
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
                    bound=session.bound,
                    bind_nonce=None if session.bound else session.bind_nonce,
                    actions=[
                        protocol.ActionOption(id=a, label=ruleset.action_names.get(a, a))
                        for a in ruleset.actions
                    ],
                    costs={k: list(v) for k, v in ruleset.costs.items()},
                    hostile_invokes=ruleset.hostile_invokes,
                )
            )
        )

    async def _world_state(self, session: Session, intent: protocol.WorldRead) -> Reply:
        snapshot = await self._snapshot(session.world_id)
        state = WorldState.model_validate(snapshot.state)
        return Reply(ok(cards.world_summary(state)))

    async def _world_sync(self, session: Session, intent: protocol.WorldSync) -> Reply:
        rows = await self.store.emits_since(session.world_id, intent.since, SYNC_PAGE)
        if rows:
            last = rows[-1].seq
        else:
            last = max(intent.since, (await self._snapshot(session.world_id)).last_emit_seq)
        emits = [
            protocol.StoredEmit.model_validate({"event": r.event, "data": r.payload}) for r in rows
        ]
        return Reply(ok(protocol.WorldSyncData(emits=emits, last_seq=last)))

    async def _actor_sync(self, session: Session, intent: protocol.ActorSync) -> Reply:
        self._require_gm(session)
        data = intent.actor
        sheet = Sheet(
            id=data.id,
            name=data.name,
            owners=tuple(data.owners),
            skills=dict(data.skills),
            stunts=tuple(
                Stunt(name=s.name, skill=s.skill, bonus=s.bonus, actions=tuple(s.actions))
                for s in data.stunts
            ),
            aspects=tuple((a.key, a.name) for a in data.aspects),
            fate_points=data.fate_points,
            refresh=data.refresh,
            consequences=None
            if data.consequences is None
            else tuple(SheetSlot(c.id, c.severity, c.name) for c in data.consequences),
            stress=None if data.stress is None else tuple(data.stress),
        )

        def decide(state: WorldState, ruleset: Ruleset, dice: DiceSource) -> list[Event]:
            return sync_character(state, sheet)

        return await self._mutate(
            session,
            intent.request_id,
            decide,
            lambda _s, rows, _e: protocol.ActorSyncData(actor_id=data.id, changed=bool(rows)),
        )

    async def _user_bind(self, session: Session, intent: protocol.UserBind) -> Reply:
        self._require_gm(session)
        player = self._nonces.get(intent.nonce)
        if (
            player is None
            or player.world_id != session.world_id
            or player.user_id != intent.user_id
        ):
            raise IntentError(
                "not_found", "No player connection is waiting with that user and nonce.", "nonce"
            )
        player.bound = True
        player.bind_nonce = None
        self._nonces.pop(intent.nonce, None)
        notice = protocol.Notice(
            level="info", code="bound", message="The bridge confirmed who you are."
        )
        return Reply(
            ok(protocol.UserBindData(user_id=intent.user_id, bound=True)),
            [Emission("notice", notice.model_dump(mode="json"), player.sid)],
        )

    async def _run_action(
        self,
        session: Session,
        request_id: str,
        decide: Callable[[WorldState, Ruleset, DiceSource, actions.Principal], list[Event]],
        action_id: str | None,
    ) -> Reply:
        """Every ``action.*`` intent: decide, persist, answer with the card."""
        principal = session.principal
        world_id = session.world_id

        def run(state: WorldState, ruleset: Ruleset, dice: DiceSource) -> list[Event]:
            return decide(state, ruleset, dice, principal)

        def answer(state: WorldState, rows: list[EventRow], emits: list[EmitRow]) -> BaseModel:
            ident = action_id or f"a{state.action_count}"
            card = next(
                (
                    e.payload["card"]
                    for e in emits
                    if e.event == "card" and e.payload["card"]["action_id"] == ident
                ),
                None,
            )
            if card is None:
                card = cards.action_card(
                    state.actions[ident], state, get_ruleset(state.ruleset), 0, ""
                ).model_dump(mode="json")
            return protocol.ActionData.model_validate(
                {"action_id": ident, "card_id": card_id(world_id, ident), "card": card}
            )

        return await self._mutate(session, request_id, run, answer)

    async def _action_start(self, session: Session, intent: protocol.ActionStart) -> Reply:
        opposition = intent.opposition
        recovery = intent.recovery
        command = actions.StartAction(
            type=intent.type,
            actor_id=intent.actor_id,
            skill=intent.skill,
            passive_rating=opposition.rating
            if isinstance(opposition, protocol.PassiveOppositionIn)
            else None,
            opposer_id=opposition.opposer_id
            if isinstance(opposition, protocol.ActiveOppositionIn)
            else None,
            target_id=intent.target_id,
            target_aspect_id=intent.target_aspect_id,
            aspect_name=intent.aspect_name,
            situation=intent.situation,
            helpers=tuple(actions.Helper(h.character_id, h.skill) for h in intent.helpers),
            dangerous_actor=intent.dangerous.actor,
            dangerous_opposition=intent.dangerous.opposition,
            recovery_of=(recovery.character_id, recovery.slot_id) if recovery else None,
            allow_repeat=intent.allow_repeat and session.role == "gm",
            description=intent.description,
        )
        return await self._run_action(
            session,
            intent.request_id,
            lambda state, ruleset, dice, who: actions.start_action(
                state, command, who, dice, ruleset
            ),
            None,
        )

    async def _action_roll(self, session: Session, intent: protocol.ActionRoll) -> Reply:
        return await self._run_action(
            session,
            intent.request_id,
            lambda state, _r, dice, who: actions.roll_now(state, intent.action_id, who, dice),
            intent.action_id,
        )

    async def _action_oppose(self, session: Session, intent: protocol.ActionOppose) -> Reply:
        return await self._run_action(
            session,
            intent.request_id,
            lambda state, _r, dice, who: actions.oppose(
                state, intent.action_id, intent.skill, who, dice
            ),
            intent.action_id,
        )

    async def _action_invoke(self, session: Session, intent: protocol.ActionInvoke) -> Reply:
        command = actions.InvokeCommand(
            action_id=intent.action_id,
            invoker=intent.invoker,
            aspect_id=intent.aspect_id,
            payment=intent.payment,
            effect=intent.effect,
            side=intent.side,
        )
        return await self._run_action(
            session,
            intent.request_id,
            lambda state, ruleset, dice, who: actions.invoke(state, command, who, dice, ruleset),
            intent.action_id,
        )

    async def _action_pass(self, session: Session, intent: protocol.ActionPass) -> Reply:
        return await self._run_action(
            session,
            intent.request_id,
            lambda state, ruleset, _d, who: actions.pass_invokes(
                state, intent.action_id, intent.side, who, ruleset
            ),
            intent.action_id,
        )

    async def _action_choose(self, session: Session, intent: protocol.ActionChoose) -> Reply:
        return await self._run_action(
            session,
            intent.request_id,
            lambda state, _r, _d, who: actions.choose(
                state,
                intent.action_id,
                intent.choice,
                who,
                aspect_name=intent.aspect_name,
                consequence_name=intent.consequence_name,
            ),
            intent.action_id,
        )

    async def _action_cost(self, session: Session, intent: protocol.ActionCost) -> Reply:
        command = actions.CostCommand(
            action_id=intent.action_id,
            kind=intent.kind,
            text=intent.text,
            target_id=intent.target_id,
            aspect_name=intent.aspect_name,
        )
        return await self._run_action(
            session,
            intent.request_id,
            lambda state, ruleset, _d, who: actions.apply_cost(state, command, who, ruleset),
            intent.action_id,
        )

    async def _action_concede(self, session: Session, intent: protocol.ActionConcede) -> Reply:
        return await self._run_action(
            session,
            intent.request_id,
            lambda state, _r, _d, who: actions.concede(
                state, intent.action_id, intent.character_id, who
            ),
            intent.action_id,
        )

    async def _action_absorb(self, session: Session, intent: protocol.ActionAbsorb) -> Reply:
        command = actions.AbsorbCommand(
            action_id=intent.action_id,
            stress_boxes=tuple(intent.stress_boxes),
            consequences=dict(intent.consequences),
        )
        return await self._run_action(
            session,
            intent.request_id,
            lambda state, _r, _d, who: actions.absorb(state, command, who),
            intent.action_id,
        )

    async def _action_gift(self, session: Session, intent: protocol.ActionGift) -> Reply:
        return await self._run_action(
            session,
            intent.request_id,
            lambda state, _r, _d, who: actions.gift_free_invoke(
                state, intent.action_id, intent.aspect_id, intent.holder, who
            ),
            intent.action_id,
        )

    async def _aspect_give(self, session: Session, intent: protocol.AspectGive) -> Reply:
        principal = session.principal

        def decide(state: WorldState, ruleset: Ruleset, dice: DiceSource) -> list[Event]:
            return actions.give_free_invokes(
                state, intent.aspect_id, intent.from_id, intent.to_id, intent.count, principal
            )

        def answer(state: WorldState, _rows: list[EventRow], _e: list[EmitRow]) -> BaseModel:
            aspect = state.aspects[intent.aspect_id]
            return protocol.AspectGiveData(
                aspect_id=aspect.id, free_invokes=dict(aspect.free_invokes)
            )

        return await self._mutate(session, intent.request_id, decide, answer)

    async def _scene_end(self, session: Session, intent: protocol.SceneEnd) -> Reply:
        principal = session.principal
        summaries: list[scene_rules.SceneEndSummary] = []

        def decide(state: WorldState, ruleset: Ruleset, dice: DiceSource) -> list[Event]:
            events, summary = scene_rules.end_scene(
                state, principal, tuple(intent.keep_aspects), intent.scope, intent.gm_budget
            )
            summaries[:] = [summary]
            return events

        def answer(state: WorldState, _rows: list[EventRow], _e: list[EmitRow]) -> BaseModel:
            return cards.scene_end(summaries[0], state)

        def scene_card(state: WorldState) -> list[tuple[str, BaseModel]]:
            summary = cards.scene_end(summaries[0], state)
            card = protocol.SceneEndCard(scope=intent.scope, summary=summary)
            return [(f"scene{summary.ended_scene}", card)]

        return await self._mutate(
            session, intent.request_id, decide, answer, extra_cards=scene_card
        )

    async def _scene_change(
        self,
        session: Session,
        request_id: str,
        decide: Callable[[WorldState, Ruleset, DiceSource, actions.Principal], list[Event]],
    ) -> Reply:
        """Intents on the scene and its procedures answer with the scene as it now is."""
        principal = session.principal
        return await self._mutate(
            session,
            request_id,
            lambda state, ruleset, dice: decide(state, ruleset, dice, principal),
            lambda state, _rows, _e: cards.scene_state(state),
        )

    async def _scene_read(self, session: Session, intent: protocol.SceneRead) -> Reply:
        snapshot = await self._snapshot(session.world_id)
        return Reply(ok(cards.scene_state(WorldState.model_validate(snapshot.state))))

    async def _scene_aspect(self, session: Session, intent: protocol.SceneAspect) -> Reply:
        return await self._scene_change(
            session,
            intent.request_id,
            lambda state, _r, _d, who: scene_rules.edit_aspect(
                state,
                who,
                intent.op,
                aspect_id=intent.aspect_id,
                name=intent.name,
                attached_to=intent.attached_to,
                free_invokes=intent.free_invokes,
            ),
        )

    async def _contest_start(self, session: Session, intent: protocol.ContestStart) -> Reply:
        sides = [contest_rules.SideSpec(s.name, tuple(s.members)) for s in intent.sides]
        return await self._scene_change(
            session,
            intent.request_id,
            lambda state, ruleset, _d, who: contest_rules.start_contest(
                state,
                intent.name,
                intent.mode,
                intent.skill,
                sides,
                who,
                ruleset,
                passive_rating=intent.passive_rating,
            ),
        )

    async def _contest_roll(self, session: Session, intent: protocol.ContestRoll) -> Reply:
        return await self._run_action(
            session,
            intent.request_id,
            lambda state, ruleset, dice, who: contest_rules.contest_roll(
                state, intent.contest_id, intent.side_id, who, dice, ruleset, intent.skill
            ),
            None,
        )

    async def _contest_advantage(
        self, session: Session, intent: protocol.ContestAdvantage
    ) -> Reply:
        opposition = intent.opposition
        return await self._run_action(
            session,
            intent.request_id,
            lambda state, ruleset, dice, who: contest_rules.contest_advantage(
                state,
                intent.contest_id,
                intent.side_id,
                intent.actor_id,
                intent.skill,
                intent.aspect_name,
                who,
                dice,
                ruleset,
                passive_rating=opposition.rating
                if isinstance(opposition, protocol.PassiveOppositionIn)
                else None,
                opposer_id=opposition.opposer_id
                if isinstance(opposition, protocol.ActiveOppositionIn)
                else None,
                target_id=intent.target_id,
            ),
            None,
        )

    async def _contest_twist(self, session: Session, intent: protocol.ContestTwist) -> Reply:
        return await self._scene_change(
            session,
            intent.request_id,
            lambda state, _r, _d, who: contest_rules.name_twist(
                state, intent.contest_id, intent.name, who
            ),
        )

    async def _contest_concede(self, session: Session, intent: protocol.ContestConcede) -> Reply:
        return await self._scene_change(
            session,
            intent.request_id,
            lambda state, _r, _d, who: contest_rules.concede_contest(
                state, intent.contest_id, intent.side_id, who
            ),
        )

    async def _challenge_start(self, session: Session, intent: protocol.ChallengeStart) -> Reply:
        tasks = [challenge_rules.TaskSpec(t.name, t.skill, t.rating) for t in intent.tasks]
        return await self._scene_change(
            session,
            intent.request_id,
            lambda state, _r, _d, who: challenge_rules.start_challenge(
                state, intent.name, tasks, who
            ),
        )

    async def _challenge_roll(self, session: Session, intent: protocol.ChallengeRoll) -> Reply:
        helpers = tuple(actions.Helper(h.character_id, h.skill) for h in intent.helpers)
        return await self._run_action(
            session,
            intent.request_id,
            lambda state, ruleset, dice, who: challenge_rules.roll_task(
                state,
                intent.challenge_id,
                intent.task_id,
                intent.actor_id,
                who,
                dice,
                ruleset,
                helpers,
                intent.skill,
            ),
            None,
        )

    async def _challenge_advantage(
        self, session: Session, intent: protocol.ChallengeAdvantage
    ) -> Reply:
        return await self._run_action(
            session,
            intent.request_id,
            lambda state, ruleset, dice, who: challenge_rules.try_advantage(
                state,
                intent.challenge_id,
                intent.actor_id,
                intent.skill,
                intent.aspect_name,
                intent.rating,
                who,
                dice,
                ruleset,
            ),
            None,
        )

    async def _challenge_carry(self, session: Session, intent: protocol.ChallengeCarry) -> Reply:
        return await self._scene_change(
            session,
            intent.request_id,
            lambda state, _r, _d, who: challenge_rules.carry_boosts(
                state, intent.challenge_id, intent.carry, who
            ),
        )

    async def _conflict_start(self, session: Session, intent: protocol.ConflictStart) -> Reply:
        sides = [conflict_rules.ConflictSideSpec(s.name, tuple(s.members)) for s in intent.sides]
        zones = [Zone(name=z.name, adjacent=tuple(z.adjacent)) for z in intent.zones]
        return await self._scene_change(
            session,
            intent.request_id,
            lambda state, ruleset, _d, who: conflict_rules.start_conflict(
                state,
                intent.name,
                intent.kind,
                sides,
                who,
                ruleset,
                zones=zones,
                positions=dict(intent.positions),
                order_skill=intent.order_skill,
                group_npcs=intent.group_npcs,
                tie_break=tuple(intent.tie_break),
            ),
        )

    async def _conflict_order(self, session: Session, intent: protocol.ConflictOrder) -> Reply:
        return await self._scene_change(
            session,
            intent.request_id,
            lambda state, _r, _d, who: conflict_rules.reorder(
                state, intent.conflict_id, tuple(intent.order), who
            ),
        )

    async def _conflict_next(self, session: Session, intent: protocol.ConflictNext) -> Reply:
        return await self._scene_change(
            session,
            intent.request_id,
            lambda state, _r, _d, who: conflict_rules.next_turn(state, intent.conflict_id, who),
        )

    async def _conflict_move(self, session: Session, intent: protocol.ConflictMove) -> Reply:
        return await self._scene_change(
            session,
            intent.request_id,
            lambda state, _r, _d, who: conflict_rules.move(
                state,
                intent.conflict_id,
                intent.character_id,
                intent.zone,
                who,
                force=intent.force,
            ),
        )

    async def _conflict_end(self, session: Session, intent: protocol.ConflictEnd) -> Reply:
        return await self._scene_change(
            session,
            intent.request_id,
            lambda state, _r, _d, who: conflict_rules.end_conflict(state, intent.conflict_id, who),
        )

    async def _fate_compel(self, session: Session, intent: protocol.FateCompel) -> Reply:
        return await self._scene_change(
            session,
            intent.request_id,
            lambda state, _r, _d, who: fate_rules.offer_compel(
                state, intent.character_id, intent.text, who, intent.aspect_id
            ),
        )

    async def _fate_compel_answer(
        self, session: Session, intent: protocol.FateCompelAnswer
    ) -> Reply:
        return await self._scene_change(
            session,
            intent.request_id,
            lambda state, _r, _d, who: fate_rules.answer_compel(
                state, intent.compel_id, intent.accept, who
            ),
        )

    async def _fate_spend(self, session: Session, intent: protocol.FateSpend) -> Reply:
        principal = session.principal
        return await self._mutate(
            session,
            intent.request_id,
            lambda state, _r, _d: fate_rules.spend(
                state, intent.character_id, intent.purpose, principal
            ),
            lambda state, _rows, _e: cards.world_summary(state),
        )

    async def _fate_sacrifice(self, session: Session, intent: protocol.FateSacrifice) -> Reply:
        principal = session.principal
        return await self._mutate(
            session,
            intent.request_id,
            lambda state, ruleset, _d: fate_rules.sacrifice(
                state, intent.character_id, intent.severity, intent.name, principal, ruleset
            ),
            lambda state, _rows, _e: cards.world_summary(state),
        )

    async def _gm_budget(self, session: Session, intent: protocol.GmBudget) -> Reply:
        self._require_gm(session)
        return await self._mutate(
            session,
            intent.request_id,
            lambda state, _r, _d: actions.set_gm_budget(state, intent.fate_points),
            lambda state, _rows, _e: protocol.GmBudgetData(gm_fate_points=state.gm_fate_points),
        )

    async def _dev_queue_dice(self, session: Session, intent: protocol.DevQueueDice) -> Reply:
        if not self.dev_dice:
            raise IntentError(
                "dev_dice_disabled",
                "Queued dice are a test feature; the bridge must run with --dev-dice.",
            )
        self._require_gm(session)
        rolls = [(r[0], r[1], r[2], r[3]) for r in intent.rolls]
        queue = self.dice_for(session.world_id)
        queued = queue.pending + len(rolls)
        # Queued only after the commit, so a repeated request id queues nothing twice.
        return await self._mutate(
            session,
            intent.request_id,
            lambda _s, _r, _d: [],
            lambda _s, _rows, _e: protocol.DevQueueDiceData(queued=queued),
            after_commit=lambda: queue.queue(rolls),
        )

    # --- audit --------------------------------------------------------------------

    async def replayed_state(self, world_id: str) -> WorldState:
        """The state rebuilt from the event log alone (for verification)."""
        snapshot = await self._snapshot(world_id)
        rows = await self.store.events(world_id)
        events = [EVENT_ADAPTER.validate_python(row.payload) for row in rows]
        return replay(events, WorldState(ruleset=snapshot.world.ruleset))
