"""Application layer core: intent -> authorize -> load state -> rules -> persist -> outbox.

Transport-free: the dispatcher (:class:`bridge.service.BridgeService`) hands in a session
and a validated intent, and gets back the ack and the emissions to send. Writes to a world
are serialised by a per-world lock on this node and a version check-and-set in the store
across nodes."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from bridge.rules import actions
from bridge.rules.dice import DiceSource, QueuedDice, SecureDice
from bridge.rules.engine import apply_all, replay
from bridge.rules.errors import RuleViolation
from bridge.rules.events import EVENT_ADAPTER, ActionPut, Event
from bridge.rules.procedures import settle
from bridge.rules.ruleset import Ruleset, get_ruleset
from bridge.rules.state import WorldState
from bridge.service import cards, protocol
from bridge.service.auth import hash_key, key_matches, new_key
from bridge.service.commit import (
    COMMIT_ATTEMPTS,
    AttemptDice,
    answered_card,
    created_record,
    rebuild,
    snapshot_due,
    state_json,
)
from bridge.service.emits import (
    ExtraCards,
    card_id,
    card_writer_candidate,
    derive_emits,
    known_views_cache,
)
from bridge.service.history_index import index_rows
from bridge.service.session import (
    ConnectRefused,
    IntentError,
    Reply,
    Requested,
    Session,
    emits_frame,
    ok,
    request_key,
    utc_now,
)
from bridge.service.stats import ServiceStats
from bridge.store.base import (
    AlreadyAnswered,
    CommitBatch,
    EmitRow,
    EventRow,
    Snapshot,
    Store,
    VersionConflict,
    WorldRecord,
)
from bridge.store.chain import (
    GENESIS_HASH,
    chained_record,
    disagreeing_anchors,
    verify_chain,
)

Clock = Callable[[], datetime]


@dataclass(frozen=True, slots=True)
class Turn:
    """What a rule runs with beside the state and the intent: the world's ruleset, the
    dice, and who asks."""

    ruleset: Ruleset
    dice: DiceSource
    who: actions.Principal


@dataclass(frozen=True, slots=True)
class Committed:
    """One intent's commit as its answer reads it: the state before and after, the events
    the rules decided, their log rows, and the emits they caused."""

    before: WorldState
    after: WorldState
    events: list[Event]
    rows: list[EventRow]
    emits: list[EmitRow]


_Intent = TypeVar("_Intent")
# A rule: a pure function of the state, the intent as it came off the wire and the Turn,
# the one place where the wire's fields become the rule's arguments.
IntentRule = Callable[[WorldState, _Intent, Turn], list[Event]]
# An intent that changes the world, as the commit takes it.
In = TypeVar("In", bound=Requested)
# The answer: a validated model, or the JSON form of one (see session.ok).
Answer = Callable[[Committed], BaseModel | Mapping[str, Any]]


class ServiceCore:
    """The machinery every intent shares: sessions, the per-world lock, the commit."""

    def __init__(self, store: Store, *, dev_dice: bool = False, clock: Clock = utc_now) -> None:
        self.store = store
        self.dev_dice = dev_dice
        self.clock = clock
        self._locks: dict[str, asyncio.Lock] = {}
        self._dice: dict[str, QueuedDice] = {}
        # Per world: the last snapshot this process committed or loaded, and its state.
        self.states: dict[str, tuple[Snapshot, WorldState]] = {}
        # Per world: the load under way, which every caller meanwhile shares.
        self._loading: dict[str, asyncio.Task[tuple[Snapshot, WorldState]]] = {}
        self._secure = SecureDice()
        # Per world: the time stamp of the last commit this process wrote.
        self._stamps: dict[str, datetime] = {}
        # Filled by BridgeService: event name -> handler.
        # The views this service's last commits built, for the next commit to compare with:
        # its own (states are this service's), never another service's.
        self.known_views = known_views_cache()
        # What /metrics reports (bridge.transport.metrics).
        self.stats = ServiceStats()

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

    async def authenticate(self, sid: str, auth: object) -> Session:
        """Check a handshake; raises :class:`ConnectRefused` with the reason."""

        def refuse(reason: Any, message: str) -> ConnectRefused:
            self.stats.refusals[reason] += 1
            return ConnectRefused(protocol.ConnectRefusal(reason=reason, message=message))

        if isinstance(auth, dict) and auth.get("protocol") != protocol.PROTOCOL_VERSION:
            theirs = auth.get("protocol")
            raise refuse(
                "protocol_mismatch",
                f"This Fate Bridge module speaks protocol {theirs!r:.20} but the bridge speaks "
                f"{protocol.PROTOCOL_VERSION}: the GM must update the Fate Bridge module "
                "(Foundry's Add-on Modules, Update) to the bridge's version.",
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
        await self.store.put_nonce(world.id, parsed.user, nonce)
        return session

    async def connected(self, session: Session) -> None:
        """Count the connection as present once it is vouched for (a GM at once)."""
        self.stats.joined[id(session)] = session.role
        if session.bound:
            await self._count_present(session)

    async def bind(self, session: Session) -> None:
        """The GM's client vouched for this player's connection: it may act, and its
        user now counts as present."""
        session.bound = True
        await self._count_present(session)

    async def _count_present(self, session: Session) -> None:
        if not session.present:
            session.present = True
            await self.store.add_presence(session.world_id, session.user_id, 1)

    async def disconnect(self, session: Session) -> None:
        self.stats.joined.pop(id(session), None)
        if session.present:
            session.present = False
            await self.store.add_presence(session.world_id, session.user_id, -1)
        if session.bind_nonce is not None:
            await self.store.drop_nonce(session.world_id, session.bind_nonce)

    def _lock(self, world_id: str) -> asyncio.Lock:
        return self._locks.setdefault(world_id, asyncio.Lock())

    def _stamp(self, world_id: str) -> str:
        """A commit's time stamp, later than this process's previous one for the world:
        one commit's events share it, so it marks where a commit begins (GM undo)."""
        now = self.clock()
        previous = self._stamps.get(world_id)
        if previous is not None and now <= previous:
            now = previous + timedelta(microseconds=1)
        self._stamps[world_id] = now
        return now.isoformat()

    def dice_for(self, world_id: str) -> QueuedDice:
        return self._dice.setdefault(world_id, QueuedDice(fallback=self._secure))

    async def snapshot(self, world_id: str) -> Snapshot:
        snapshot = await self.store.load(world_id)
        if snapshot is None:
            raise IntentError("not_found", f"The bridge has no world {world_id!r}.")
        return snapshot

    @staticmethod
    def require_gm(session: Session) -> None:
        if session.role != "gm":
            # The message is worded from en.json's Refusal.gm_only (IntentError renders it).
            raise IntentError("forbidden", "gm_only", params={"reason": "gm_only"})

    async def current(self, world_id: str) -> tuple[Snapshot, WorldState]:
        """The world as of its latest version: from this process's cache when no other
        writer has committed since, else loaded and validated afresh."""
        cached = self.states.get(world_id)
        if cached is not None and await self.store.version(world_id) == cached[0].version:
            return cached
        joined = world_id in self._loading
        entry = await self._load(world_id)
        if joined and await self.store.version(world_id) != entry[0].version:
            # The shared load began before this call; another writer has committed since.
            self.forget(world_id)
            entry = await self._load(world_id)
        return entry

    async def _trusted(self, world_id: str) -> tuple[Snapshot, WorldState]:
        """The world as this process last saw it, unchecked (loaded when not cached): a
        commit checks the version itself, so a writer need not ask first."""
        cached = self.states.get(world_id)
        return cached if cached is not None else await self._load(world_id)

    async def _load(self, world_id: str) -> tuple[Snapshot, WorldState]:
        """The world read from the store and rebuilt, then cached. Callers that ask while
        a load of the world is under way share it: after a restart every client's hello
        asks at once, and a large world costs tens of milliseconds to rebuild. A caller
        cancelled while waiting does not cancel the load the others wait on."""
        loading = self._loading.get(world_id)
        if loading is None:
            loading = asyncio.ensure_future(self._read_world(world_id))
            self._loading[world_id] = loading
            loading.add_done_callback(lambda task: self._load_done(world_id, task))
        return await asyncio.shield(loading)

    async def _read_world(self, world_id: str) -> tuple[Snapshot, WorldState]:
        snapshot = await self.snapshot(world_id)
        state = rebuild(snapshot)
        # The cache keeps the parsed state; the snapshot's JSON copy is not needed again.
        entry = (replace(snapshot, state={}, tail=()), state)
        if self._loading.get(world_id) is asyncio.current_task():
            # Not when the world was forgotten meanwhile: what this read may be stale.
            self.states[world_id] = entry
        return entry

    def _load_done(self, world_id: str, task: asyncio.Task[tuple[Snapshot, WorldState]]) -> None:
        if self._loading.get(world_id) is task:
            del self._loading[world_id]
        if not task.cancelled():
            # Seen here, so a failure every waiter gave up on is not reported as unseen.
            task.exception()

    def forget(self, world_id: str) -> None:
        """Drop the cached state and any load under way: the next intent loads afresh."""
        self.states.pop(world_id, None)
        self._loading.pop(world_id, None)

    async def mutate(
        self,
        session: Session,
        intent: In,
        decide: IntentRule[In],
        answer: Answer,
        after_commit: Callable[[], None] | None = None,
        extra_cards: ExtraCards | None = None,
    ) -> Reply:
        """Run one state-changing intent exactly once per request (its
        :func:`~bridge.service.session.request_key`, the event and the request id):
        ``decide`` gives its events, ``answer`` its answer once they are committed.

        Rules, then persistence of the events + emits + answer (+ now and then a
        snapshot) in one store round trip: the commit answers a request id it has
        answered before, and refuses a stale version, so the cached state is trusted
        without asking; on a version conflict (another node wrote first) reload and
        retry. A refusal, decided on that trusted state, is checked before it is sent.
        """
        world_id = session.world_id
        request = request_key(intent)
        async with self._lock(world_id):
            for _ in range(COMMIT_ATTEMPTS):
                snapshot, before = await self._trusted(world_id)
                # R13.9: the state's own ruleset (the GM may have changed it since).
                ruleset = get_ruleset(before.ruleset)
                dice = AttemptDice(self.dice_for(world_id))
                try:
                    # Procedures react to the actions they contain (R11): one stream.
                    events = settle(
                        before, decide(before, intent, Turn(ruleset, dice, session.principal))
                    )
                except (IntentError, RuleViolation):
                    dice.put_back()
                    # A retry of a request already answered, or a world another writer
                    # moved on, must not be refused on this process's view of it.
                    answered = await self.store.get_response(world_id, session.user_id, request)
                    if answered is not None:
                        return Reply(answered)
                    if await self.store.version(world_id) != snapshot.version:
                        self.forget(world_id)
                        continue
                    raise
                after = apply_all(before, events)
                now = self._stamp(world_id)
                rows: list[EventRow] = []
                prev, seq = snapshot.last_event_hash, snapshot.last_event_seq
                tail_size = snapshot.tail_size
                for domain_event in events:
                    seq += 1
                    # The store keeps the payload in the canonical form the hash took.
                    digest, canonical = chained_record(
                        prev, seq, domain_event.type, domain_event, now
                    )
                    encoded = canonical.decode("utf-8")
                    tail_size += len(encoded)
                    rows.append(
                        EventRow.of_encoded(seq, domain_event.type, encoded, now, prev, digest)
                    )
                    prev = digest
                writers = {
                    card_writer_candidate(e.action) for e in events if isinstance(e, ActionPut)
                }
                # The sender itself, counted present on this process, needs no store trip.
                present = {
                    user: (user == session.user_id and session.present)
                    or await self.store.is_present(world_id, user)
                    for user in writers
                }
                emits = derive_emits(
                    world_id,
                    before,
                    after,
                    events,
                    rows,
                    snapshot.last_emit_seq,
                    ruleset,
                    extra_cards(after) if extra_cards else [],
                    present.__getitem__,
                    known_views=self.known_views,
                )
                data = answer(Committed(before, after, events, rows, emits))
                ack = ok(data)
                head_seq = rows[-1].seq if rows else snapshot.last_event_seq
                saved = (
                    state_json(after)
                    if snapshot_due(snapshot.state_size, tail_size, events)
                    else None
                )
                try:
                    committed = self.stats.timer()
                    version = await self.store.commit(
                        CommitBatch(
                            world_id=world_id,
                            expected_version=snapshot.version,
                            snapshot=saved,
                            events=rows,
                            emits=emits,
                            user_id=session.user_id,
                            request_id=request,
                            response=ack,
                            response_card_emit=answered_card(data, emits),
                            created_at=now,
                            history=index_rows(rows, events),
                        )
                    )
                except AlreadyAnswered as done:
                    dice.put_back()
                    return Reply(done.response)
                except VersionConflict:
                    dice.put_back()
                    self.forget(world_id)
                    continue
                committed()
                self.states[world_id] = (
                    replace(
                        snapshot,
                        version=version,
                        state_seq=snapshot.state_seq if saved is None else head_seq,
                        last_event_seq=head_seq,
                        last_event_hash=rows[-1].hash if rows else snapshot.last_event_hash,
                        last_emit_seq=emits[-1].seq if emits else snapshot.last_emit_seq,
                        state_size=snapshot.state_size if saved is None else len(saved),
                        tail_size=tail_size if saved is None else 0,
                    ),
                    after,
                )
                if after_commit is not None:
                    after_commit()
                return Reply(ack, [emits_frame(emits, session.room)] if emits else [])
            raise IntentError("conflict", "The world is busy; try again.")

    async def run_action(self, session: Session, intent: In, rule: IntentRule[In]) -> Reply:
        """An intent that starts or moves an action: decided by ``rule``, answered with the
        card of the action it names (an ``ActionRef``), else of the one it started."""
        named = intent.action_id if isinstance(intent, protocol.ActionRef) else None
        world_id = session.world_id

        def answer(done: Committed) -> dict[str, Any]:
            """protocol.ActionData as JSON, its card the object the commit's card emit
            carries (the store then keeps it once), built here only when the commit
            emitted no card for the action."""
            ident = named or f"a{done.after.action_count}"
            card = next(
                (
                    e.payload["card"]
                    for e in done.emits
                    if e.event == "card" and e.payload["card"]["action_id"] == ident
                ),
                None,
            )
            if card is None:
                action = done.after.actions[ident]
                card = cards.action_card(action, done.after, get_ruleset(done.after.ruleset), 0, "")
            return {"action_id": ident, "card_id": card_id(world_id, ident), "card": card}

        return await self.mutate(session, intent, rule, answer)

    async def scene_change(self, session: Session, intent: In, rule: IntentRule[In]) -> Reply:
        """An intent on the scene or its procedures: decided by ``rule``, answered with the
        scene as it now is and the id of the record it created, if any."""

        def answer(done: Committed) -> dict[str, Any]:
            created = created_record(done.before, done.events)
            return {**cards.scene_state(done.after), "created_id": created}

        return await self.mutate(session, intent, rule, answer)

    async def replayed_state(self, world_id: str, upto: int | None = None) -> WorldState:
        """The state rebuilt from the event log alone, from the world's first event to
        event ``upto`` (the whole log by default): what verification compares with."""
        snapshot = await self.snapshot(world_id)
        rows = await self.store.events(world_id)
        events = [
            EVENT_ADAPTER.validate_python(row.payload)
            for row in rows
            if upto is None or row.seq <= upto
        ]
        return replay(events, WorldState(ruleset=snapshot.world.ruleset))

    async def verify_history(
        self, world_id: str, anchors: Sequence[tuple[int, str]] = ()
    ) -> protocol.WorldVerifyData:
        """Check a world's history every way the bridge can: the hash chain is intact, its
        head is the head the world row stored, replaying it gives the stored state, and it
        agrees with every ``(seq, hash)`` anchor kept outside the bridge (Foundry's chat log).

        A log rewritten and re-hashed passes the first three; only the anchors catch it."""
        snapshot = await self.snapshot(world_id)
        rows = await self.store.events(world_id)
        problems: list[str] = []
        broken = verify_chain(
            (r.seq, r.type, r.payload, r.created_at, r.prev_hash, r.hash) for r in rows
        )
        if broken is not None:
            problems.append(f"the hash chain fails at event {broken}")
        head_seq, head = (rows[-1].seq, rows[-1].hash) if rows else (0, GENESIS_HASH)
        stored_head_matches = (head_seq, head) == (
            snapshot.last_event_seq,
            snapshot.last_event_hash,
        )
        if not stored_head_matches:
            problems.append(
                f"the log ends at event {head_seq} ({head[:12]}…) but the world row stores "
                f"event {snapshot.last_event_seq} ({snapshot.last_event_hash[:12]}…)"
            )
        try:
            # The saved snapshot is what the log gives up to it, and the latest state
            # (snapshot + the events after it) is what the whole log gives.
            events = [EVENT_ADAPTER.validate_python(row.payload) for row in rows]
            initial = WorldState(ruleset=snapshot.world.ruleset)
            upto = [e for e, row in zip(events, rows, strict=True) if row.seq <= snapshot.state_seq]
            snapshot_matches = replay(upto, initial).model_dump(mode="json") == snapshot.state
            replay_matches = snapshot_matches and replay(events, initial) == rebuild(snapshot)
        except Exception:  # a tampered log can break replay any way: report, never crash
            snapshot_matches = replay_matches = False
        if not snapshot_matches:
            problems.append(
                f"replaying the log to event {snapshot.state_seq} does not give the saved snapshot"
            )
        elif not replay_matches:
            problems.append("replaying the log does not give the stored state")
        mismatched = disagreeing_anchors({r.seq: r.hash for r in rows}, anchors)
        if mismatched:
            first = mismatched[0][0]
            problems.append(
                f"{len(mismatched)} chat-log anchor(s) disagree with the log, the first at "
                f"event {first}: the log was rewritten at or before it"
            )
        return protocol.WorldVerifyData(
            ok=not problems,
            events=len(rows),
            head=head,
            chain_broken_at=broken,
            stored_head_matches=stored_head_matches,
            replay_matches=replay_matches,
            anchors_checked=len(set(anchors)),
            anchors_mismatched=[
                protocol.AnchorMismatch(seq=seq, hash=digest, log_hash=log_hash)
                for seq, digest, log_hash in mismatched[:20]
            ],
            anchors_mismatched_count=len(mismatched),
            problems=problems,
        )

    async def latest_state(self, world_id: str) -> WorldState:
        """The world as of its last event, read afresh from the store (no cache)."""
        return rebuild(await self.snapshot(world_id))
