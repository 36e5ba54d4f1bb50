"""Intents about the world, its actors and its users."""

from __future__ import annotations

from bridge import __version__
from bridge.rules import actions
from bridge.rules.engine import Sheet, SheetSlot, sync_character
from bridge.rules.events import ActionPut, Event
from bridge.rules.ruleset import get_ruleset
from bridge.rules.state import StressBox, StressTrack, Stunt, WorldState
from bridge.service import cards, protocol
from bridge.service.core import Committed, ServiceCore, Turn
from bridge.service.emits import CARD_WRITTEN
from bridge.service.session import (
    Emission,
    IntentError,
    Reply,
    Session,
    ok,
    user_room,
)

# world.sync answers at most this many emits; the client asks again from the last seq.
SYNC_PAGE = 500


def stress_track(data: protocol.StressTrackData) -> StressTrack:
    """A synced stress track in the rules' model, boxes and values as the sheet has them."""
    return StressTrack(
        id=data.id,
        name=data.name,
        kind=data.kind,
        boxes=tuple(StressBox(value=b.value, marked=b.marked) for b in data.boxes),
    )


async def hello(core: ServiceCore, session: Session, intent: protocol.Hello) -> Reply:
    snapshot, state = await core.current(session.world_id)
    ruleset = get_ruleset(state.ruleset)
    return Reply(
        ok(
            protocol.HelloData(
                bridge_version=__version__,
                protocol=protocol.PROTOCOL_VERSION,
                world=snapshot.world.id,
                world_name=snapshot.world.name,
                ruleset=state.ruleset,
                user=session.user_id,
                role=session.role,
                dev_dice=core.dev_dice,
                last_seq=snapshot.last_emit_seq,
                bound=session.bound,
                bind_nonce=None if session.bound else session.bind_nonce,
                actions=[protocol.ActionOption(id=a) for a in ruleset.actions],
                costs={k: list(v) for k, v in ruleset.costs.items()},
                hostile_invokes=ruleset.hostile_invokes,
                rules=cards.rules_info(ruleset, state),
            )
        )
    )


async def world_state(core: ServiceCore, session: Session, intent: protocol.WorldRead) -> Reply:
    _snapshot, state = await core.current(session.world_id)
    return Reply(ok(cards.world_summary(state)))


async def world_sync(core: ServiceCore, session: Session, intent: protocol.WorldSync) -> Reply:
    rows = await core.store.emits_since(session.world_id, intent.since, SYNC_PAGE)
    if rows:
        last = rows[-1].seq
    else:
        snapshot, _state = await core.current(session.world_id)
        last = max(intent.since, snapshot.last_emit_seq)
    emits = [
        protocol.StoredEmit.model_validate({"event": r.event, "data": r.payload}) for r in rows
    ]
    return Reply(ok(protocol.WorldSyncData(emits=emits, last_seq=last)))


async def actor_sync(core: ServiceCore, session: Session, intent: protocol.ActorSync) -> Reply:
    core.require_gm(session)
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
        else tuple(SheetSlot(c.id, c.severity, c.name, c.harm) for c in data.consequences),
        stress=None if data.stress is None else tuple(stress_track(t) for t in data.stress),
    )

    def decide(state: WorldState, _intent: protocol.ActorSync, turn: Turn) -> list[Event]:
        return sync_character(state, sheet, turn.ruleset)

    def answer(done: Committed) -> protocol.ActorSyncData:
        return protocol.ActorSyncData(actor_id=data.id, changed=bool(done.rows))

    return await core.mutate(session, intent, decide, answer)


async def user_bind(core: ServiceCore, session: Session, intent: protocol.UserBind) -> Reply:
    core.require_gm(session)
    if not await core.store.bind_nonce(session.world_id, intent.user_id, intent.nonce):
        raise IntentError(
            "not_found", "No player connection is waiting with that user and nonce.", "nonce"
        )
    notice = protocol.Notice(
        level="info", code="bound", message="The bridge confirmed who you are."
    )
    # The player's sockets share a room, reachable from any bridge process.
    room = user_room(session.world_id, intent.user_id)
    return Reply(
        ok(protocol.UserBindData(user_id=intent.user_id, bound=True)),
        [Emission("notice", notice.model_dump(mode="json"), room)],
        vouched=(session.world_id, intent.user_id, intent.nonce),
    )


async def world_verify(core: ServiceCore, session: Session, intent: protocol.WorldVerify) -> Reply:
    """GM only: the module's "Verify history" with one page of its chat-log anchors."""
    core.require_gm(session)
    anchors = [(a.seq, a.hash) for a in intent.anchors]
    return Reply(ok(await core.verify_history(session.world_id, anchors)))


async def card_written(core: ServiceCore, session: Session, intent: protocol.CardWritten) -> Reply:
    """Record who authored an action's chat message; the card's later writers follow it
    (:func:`bridge.service.emits.card_writer`). Naming the same author again changes
    nothing and emits nothing."""
    if session.role != "gm" and intent.author != session.user_id:
        raise IntentError(
            "forbidden", "A player may only name itself as a card's author.", "author"
        )

    def answer(done: Committed) -> protocol.CardWrittenData:
        return protocol.CardWrittenData(
            action_id=intent.action_id, author=intent.author, changed=bool(done.rows)
        )

    return await core.mutate(session, intent, _record_author, answer)


def _record_author(state: WorldState, intent: protocol.CardWritten, turn: Turn) -> list[Event]:
    action = state.actions.get(intent.action_id)
    if action is None:
        raise IntentError("not_found", f"No open action {intent.action_id!r}.", "action_id")
    if not turn.who.is_gm and action.requested_by != turn.who.user_id:
        raise IntentError(
            "forbidden", "A player may only report the card of its own action.", "action_id"
        )
    if action.card_author == intent.author:
        return []
    return [
        ActionPut(
            reason=CARD_WRITTEN,
            action=action.model_copy(update={"card_author": intent.author}),
        )
    ]


async def gm_budget(core: ServiceCore, session: Session, intent: protocol.GmBudget) -> Reply:
    core.require_gm(session)
    return await core.mutate(session, intent, _set_gm_budget, _gm_budget_now)


def _set_gm_budget(state: WorldState, intent: protocol.GmBudget, _turn: Turn) -> list[Event]:
    return actions.set_gm_budget(state, intent.fate_points)


def _gm_budget_now(done: Committed) -> protocol.GmBudgetData:
    return protocol.GmBudgetData(gm_fate_points=done.after.gm_fate_points)


async def dev_queue_dice(
    core: ServiceCore, session: Session, intent: protocol.DevQueueDice
) -> Reply:
    if not core.dev_dice:
        raise IntentError(
            "dev_dice_disabled",
            "Queued dice are a test feature; the bridge must run with --dev-dice.",
        )
    core.require_gm(session)
    rolls = [(r[0], r[1], r[2], r[3]) for r in intent.rolls]
    queue = core.dice_for(session.world_id)
    queued = queue.pending + len(rolls)
    # Queued only after the commit, so a repeated request id queues nothing twice.
    return await core.mutate(
        session,
        intent,
        lambda _state, _intent, _turn: [],
        lambda _done: protocol.DevQueueDiceData(queued=queued),
        after_commit=lambda: queue.queue(rolls),
    )
