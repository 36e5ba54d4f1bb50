"""The table's record: which rolls a history shows, their dice, and the GM's undo.

Pure: the service hands in logged events (seq, time, event) and the current
state; nothing here reads a store or a clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from bridge.rules.dice import Face
from bridge.rules.engine import replay
from bridge.rules.errors import refused
from bridge.rules.events import (
    ActionCancelled,
    ActionPut,
    ActionResolved,
    AspectRemoved,
    CarriedBoostsPut,
    Collection,
    CountersPut,
    Event,
    HistoryUndone,
    RecordDropped,
    ScenePut,
    record_put,
)
from bridge.rules.state import (
    Action,
    Side,
    SideName,
    WorldState,
)

# How many of the 81 equally likely 4dF rolls give each sum, from -4 to +4 (R1.1).
FOUR_DF_WAYS: tuple[int, ...] = (1, 4, 10, 16, 19, 16, 10, 4, 1)
SCENE_END_REASON = "scene.end"
UNDO_REASON = "history.undo"
HistoryKind = Literal[
    "overcome", "create_advantage", "take_advantage", "discover", "attack", "contest", "challenge"
]
# The log's event types that may be history entries (see ``entry_of``): a reader skips
# every other row without decoding it.
ENTRY_TYPES: frozenset[str] = frozenset({"action.resolved", "action.cancelled"})
# A history entry's event: a resolution, or a cancellation after the dice were rolled.
Entry = ActionResolved | ActionCancelled


@dataclass(frozen=True)
class Logged:
    """One event as the log holds it: its number, when it was written, what it says."""

    seq: int
    created_at: str
    event: Event


@dataclass(frozen=True)
class RollMade:
    """One 4dF roll on an action: which side, who rolled it, its faces."""

    side: SideName
    character: str | None
    dice: tuple[Face, Face, Face, Face]
    reroll: bool


def rolls_of(action: Action) -> list[RollMade]:
    """Every 4dF roll made on an action, actor's side first.

    A side's first roll is its final dice, or the dice its first reroll replaced;
    each reroll's new dice are a roll of their own (R4.1)."""
    out: list[RollMade] = []
    sides: tuple[tuple[SideName, Side], ...] = (
        ("actor", action.actor),
        ("opposition", action.opposition),
    )
    for name, side in sides:
        rerolls = [i for i in action.invokes if i.side == name and i.effect == "reroll"]
        first = rerolls[0].replaced if rerolls and rerolls[0].replaced else side.roll.dice
        if first is not None:
            out.append(RollMade(name, side.leader, first, False))
        out.extend(RollMade(name, side.leader, r.dice, True) for r in rerolls if r.dice)
    return out


def entry_of(event: Event) -> Entry | None:
    """The event as a roll-history entry, or None when it is none.

    Guarantees: every resolution (R3.2, R5) is an entry, and so is every action the GM
    cancelled after dice were rolled on it (R1.1: a roll made is a roll of the record,
    or a GM could fish for rolls by calling the bad ones off). An action cancelled before
    any dice (confirming, declared, awaiting opposition) rolled nothing: no entry."""
    if isinstance(event, ActionResolved):
        return event
    if isinstance(event, ActionCancelled) and rolls_of(event.action):
        return event
    return None


def participants(action: Action) -> set[str]:
    """Everyone whose roll, help or opposition the entry is about."""
    people = {*action.actor.members, *action.opposition.members}
    if action.target_id:
        people.add(action.target_id)
    return people


def kind_of(action: Action) -> HistoryKind:
    if action.contest_id is not None:
        return "contest"
    if action.challenge_id is not None:
        return "challenge"
    return action.type


def matches(
    event: Entry,
    *,
    scene: int | None = None,
    character: str | None = None,
    kind: HistoryKind | None = None,
    cancelled: bool | None = None,
) -> bool:
    """Whether an entry passes the history's filters (each None: any). ``kind`` is the
    action's own kind, cancelled or not; ``cancelled`` picks cancelled rolls (True) or
    resolutions (False)."""
    action = event.action
    return (
        (scene is None or event.scene == scene)
        and (character is None or character in participants(action))
        and (kind is None or kind_of(action) == kind)
        and (cancelled is None or isinstance(event, ActionCancelled) == cancelled)
    )


# --- undo ---------------------------------------------------------------------------


def restore(current: WorldState, target: WorldState, reason: str = UNDO_REASON) -> list[Event]:
    """Upserts and removals that turn ``current`` into ``target``, for the reducer.

    Guarantees, applied to ``current``: every aspect, action, contest, challenge,
    conflict, compel, the scene, the GM's budget and the carried boosts equal
    ``target``'s; characters in ``target`` equal it. Kept as they are now: the id
    counters and the undone list (they only grow, so no id is ever given twice and
    a taken-back card keeps its own), and characters that came from a sheet after
    the target (with their own character aspects): a sheet's actor does not vanish
    from the bridge because a roll was taken back.
    """
    out: list[Event] = []
    for cid, character in target.characters.items():
        if current.characters.get(cid) != character:
            out.append(record_put("characters", character, reason))

    def kept(aspect_id: str) -> bool:
        aspect = current.aspects[aspect_id]
        return (
            aspect.kind == "character"
            and aspect.attached_to is not None
            and aspect.attached_to not in target.characters
        )

    for aid, aspect in target.aspects.items():
        if current.aspects.get(aid) != aspect:
            out.append(record_put("aspects", aspect, reason))
    for aid in current.aspects:
        if aid not in target.aspects and not kept(aid):
            out.append(AspectRemoved(reason=reason, aspect_id=aid))

    collections: tuple[Collection, ...] = get_args(Collection)
    for collection in collections:
        now, then = getattr(current, collection), getattr(target, collection)
        for rid, record in then.items():
            if now.get(rid) != record:
                # A plain upsert, never ActionResolved: an undo resolves nothing.
                out.append(record_put(collection, record, reason))
        for rid in now:
            if rid not in then:
                out.append(RecordDropped(reason=reason, collection=collection, record_id=rid))
    if current.scene != target.scene:
        out.append(ScenePut(reason=reason, scene=target.scene))
    if current.gm_fate_points != target.gm_fate_points:
        out.append(
            CountersPut(
                reason=reason,
                gm_fate_points=target.gm_fate_points,
                action_count=current.action_count,
                aspect_count=current.aspect_count,
            )
        )
    if current.carried_boosts != target.carried_boosts:
        out.append(CarriedBoostsPut(reason=reason, aspect_ids=target.carried_boosts))
    return out


def commit_start(log: Sequence[Logged], index: int) -> int:
    """The index of the first event written in the same commit as ``log[index]``.

    One commit's events share their time stamp (the service keeps each commit's
    stamp later than the one before)."""
    at = log[index].created_at
    while index > 0 and log[index - 1].created_at == at:
        index -= 1
    return index


def before_resolution(log: Sequence[Logged], current: WorldState, seq: int | None = None) -> int:
    """``back_to`` that takes back a history entry, a resolution or a cancelled roll (the
    newest one standing in this scene when ``seq`` is None), and everything after it:
    the event just before the commit that started its action."""
    for index in range(len(log) - 1, -1, -1):
        item = log[index]
        if item.event.reason == SCENE_END_REASON:
            break
        if seq is not None and item.seq != seq:
            continue
        entry = entry_of(item.event)
        if entry is not None and item.seq not in current.undone:
            action_id = entry.action.id
            first = next(
                i
                for i, earlier in enumerate(log[: index + 1])
                if isinstance(earlier.event, ActionPut) and earlier.event.action.id == action_id
            )
            return log[commit_start(log, first)].seq - 1
        if seq is not None:
            break
    if seq is not None:
        raise refused("not_found", "no_roll_at", "resolution", seq=seq)
    raise refused("nothing_to_undo", "no_roll_to_undo")


def plan_undo(
    log: Sequence[Logged],
    initial: WorldState,
    current: WorldState,
    back_to: int | None,
    resolution: int | None = None,
) -> list[Event]:
    """The events of an undo back to event ``back_to``; without it, of the history entry
    logged as event ``resolution`` and all after it (None: the last entry standing).
    The marker lists every entry standing after ``back_to`` (resolutions and cancelled
    rolls alike), so the history shows each of them undone.

    ``log`` is the whole log in seq order, ``initial`` the state it starts from and
    ``current`` its replayed state.
    Refused: a target that is not the end of a commit, nothing to undo, and any
    target before the current scene's end of scene (R12.1 paid out, cleared and
    recovered what cannot be taken back card by card)."""
    if back_to is None:
        back_to = before_resolution(log, current, resolution)
    last_seq = log[-1].seq if log else 0
    if back_to < 0 or back_to >= last_seq:
        raise refused("nothing_to_undo", "nothing_after", "back_to", seq=back_to)
    position = {item.seq: i for i, item in enumerate(log)}
    after = log[position[back_to + 1] :]
    scene_end = next((item for item in after if item.event.reason == SCENE_END_REASON), None)
    if scene_end is not None:
        raise refused("scene_ended", "undo_past_scene_end", "back_to", seq=scene_end.seq)
    if back_to > 0 and log[position[back_to]].created_at == after[0].created_at:
        end = max(i.seq for i in after if i.created_at == after[0].created_at)
        start = log[commit_start(log, position[back_to])].seq - 1
        raise refused("mid_commit", "mid_change", "back_to", seq=back_to, end=end, start=start)
    kept = log[: position[back_to] + 1] if back_to > 0 else []
    target = replay((item.event for item in kept), initial)
    resolutions = tuple(
        item.seq
        for item in after
        if entry_of(item.event) is not None and item.seq not in current.undone
    )
    action_ids = tuple(
        dict.fromkeys(item.event.action.id for item in after if isinstance(item.event, ActionPut))
    )
    events = restore(current, target)
    events.append(
        HistoryUndone(
            reason=UNDO_REASON, back_to=back_to, resolutions=resolutions, action_ids=action_ids
        )
    )
    return events
