"""Invariants of the rules under arbitrary play (hypothesis)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from hypothesis import event, example, given
from hypothesis import strategies as st

from bridge.rules import actions
from bridge.rules.actions import (
    ChoiceValue,
    CostCommand,
    Helper,
    InvokeCommand,
    SideName,
    StartAction,
)
from bridge.rules.consequences import place_consequence, roll_up_slot
from bridge.rules.dice import Face, QueuedDice, SecureDice
from bridge.rules.draft import Draft, DraftEvents
from bridge.rules.engine import apply_all, replay, touched_keys
from bridge.rules.errors import RuleViolation
from bridge.rules.events import ActionResolved, Event
from bridge.rules.history import Logged, plan_undo
from bridge.rules.procedures import _moved, settle
from bridge.rules.ruleset import UNWRITTEN
from bridge.rules.scene import end_scene
from bridge.rules.state import GM, Aspect, WorldState
from bridge.store.chain import GENESIS_HASH, event_hash, verify_chain
from tests.rules_fixtures import ANNA, GM_USER, PAUL, sheet, with_aspect, world

# A played command ("start", principal, actor, ...) and a turn's drawn choices: tuples of
# mixed values, as the strategies below build them.
Command = tuple[Any, ...]
Turn = tuple[Any, ...]
Roll4 = tuple[Face, Face, Face, Face]

faces = st.sampled_from((-1, 0, 1))
rolls = st.tuples(faces, faces, faces, faces)
who = st.sampled_from([PAUL, ANNA, GM_USER])
characters = st.sampled_from(["b", "m", "g", "gm"])
aspect_ids = st.sampled_from(["b.hc", "g.hc", "sit-fog", "boost-x", "nope"])

commands = st.one_of(
    st.tuples(
        st.just("start"),
        who,
        st.sampled_from(["b", "m"]),
        st.sampled_from(["overcome", "create_advantage", "discover", "take_advantage"]),
        st.integers(-2, 8),
        st.booleans(),
        st.booleans(),
    ),
    st.tuples(
        st.just("invoke"),
        who,
        characters,
        aspect_ids,
        st.sampled_from(["fate_point", "free", "boost"]),
        st.sampled_from(["bonus", "reroll"]),
    ),
    st.tuples(st.just("pass"), who, st.sampled_from(["actor", "opposition"])),
    st.tuples(
        st.just("choose"), who, st.sampled_from(["fail", "succeed_at_cost", "aspect", "mark"])
    ),
    st.tuples(st.just("cost"), st.sampled_from(["mild_consequence", "wrinkle", "npc_boost"])),
    st.tuples(st.just("concede"), who, st.sampled_from(["b", "m"])),
    st.tuples(st.just("roll"), who),
    # R2.1, R9.1, R10.1: the GM confirms (maybe changing the rating); helpers answer.
    st.tuples(st.just("confirm"), who, st.one_of(st.none(), st.integers(-2, 8))),
    st.tuples(st.just("help"), who, st.sampled_from(["b", "m"]), st.booleans()),
)


def initial() -> WorldState:
    state = world(
        sheet(
            "b",
            "Brousseau",
            owners=["paul"],
            skills={"Athletics": 3, "Notice": 2},
            fate_points=2,
            aspects=[("hc", "Skeptic")],
        ),
        sheet("m", "Margot", owners=["anna"], skills={"Athletics": 2, "Notice": 4}, fate_points=1),
        sheet("g", "Ghoul", skills={"Athletics": 2}, aspects=[("hc", "Hungry")]),
        gm_fate_points=1,
    )
    state = with_aspect(
        state, Aspect(id="sit-fog", name="Fog", kind="situation", free_invokes={"b": 1, "m": 1})
    )
    return with_aspect(
        state, Aspect(id="boost-x", name="Edge", kind="boost", free_invokes={"b": 1})
    )


def run(state: WorldState, command: Command, dice: QueuedDice) -> list[Event]:
    kind = command[0]
    current = f"a{state.action_count}"
    if kind == "start":
        _, principal, actor, action_type, rating, dangerous, helped = command
        return actions.start_action(
            state,
            StartAction(
                action_type,
                actor,
                "Athletics",
                passive_rating=rating,
                aspect_name="Spot",
                target_aspect_id="sit-fog" if action_type == "take_advantage" else None,
                situation="room",
                dangerous_actor=dangerous,
                helpers=(Helper("m" if actor == "b" else "b"),) if helped else (),
            ),
            principal,
            dice,
            UNWRITTEN,
        )
    if kind == "invoke":
        _, principal, invoker, aspect_id, payment, effect = command
        return actions.invoke(
            state,
            # The GM names the side it invokes for; a character invokes for its own.
            InvokeCommand(
                current,
                invoker,
                aspect_id,
                payment,
                effect,
                "opposition" if invoker == GM else None,
            ),
            principal,
            dice,
            UNWRITTEN,
        )
    if kind == "pass":
        return actions.pass_invokes(state, current, command[2], command[1], UNWRITTEN)
    if kind == "choose":
        return actions.choose(state, current, command[2], command[1], consequence_name="Hurt")
    if kind == "cost":
        return actions.apply_cost(
            state,
            CostCommand(current, command[1], text="t", target_id="g", aspect_name="Ouch"),
            GM_USER,
            UNWRITTEN,
        )
    if kind == "end":
        return end_scene(state, GM_USER, scope=command[1])[0]
    if kind == "concede":
        return actions.concede(state, current, command[2], command[1])
    if kind == "confirm":
        return actions.confirm(state, current, command[1], dice, passive_rating=command[2])
    if kind == "help":
        return actions.answer_help(state, current, command[2], command[3], command[1], dice)
    return actions.roll_now(state, current, command[1], dice)


def check_invariants(before: WorldState, after: WorldState) -> None:
    # Fate points and free invokes never negative.
    for character in after.characters.values():
        assert character.fate_points >= 0
        assert character.pending_fate_points >= 0
    assert after.gm_fate_points >= 0
    for aspect in after.aspects.values():
        assert all(count > 0 for count in aspect.free_invokes.values()), aspect
        if aspect.kind == "boost":
            assert sum(aspect.free_invokes.values()) == 1  # R12.6
    # R4.3: an aspect is never fate-point-invoked twice by one side on one action.
    for action in after.actions.values():
        for side in ("actor", "opposition"):
            paid = Counter(
                i.aspect_id for i in action.invokes if i.side == side and i.payment == "fate_point"
            )
            assert all(n == 1 for n in paid.values()), action.invokes
    # Roll-up never drops or duplicates a consequence: each filled slot points at its own
    # consequence aspect, every consequence aspect sits in exactly one slot, and a filled
    # slot stays filled.
    slotted = Counter(
        s.aspect_id for c in after.characters.values() for s in c.consequences if s.aspect_id
    )
    consequence_aspects = {a.id for a in after.aspects.values() if a.kind == "consequence"}
    assert set(slotted) == consequence_aspects
    assert all(n == 1 for n in slotted.values())
    for character_id, old in before.characters.items():
        new = after.characters[character_id]
        for old_slot, new_slot in zip(old.consequences, new.consequences, strict=True):
            if old_slot.aspect_id:
                assert new_slot.aspect_id == old_slot.aspect_id


def check_draft_state_is_the_fold(
    before: WorldState, events: list[Event], after: WorldState
) -> None:
    # DESIGN functional core: apply_all takes the state a Draft built alongside its events;
    # it must be exactly the fold of those events (the replayed log), JSON and key order
    # included, since snapshots are written from it and must equal the replay of the log.
    folded = replay(events, before)
    assert json.dumps(after.model_dump(mode="json")) == json.dumps(folded.model_dump(mode="json"))
    assert after == folded
    if isinstance(events, DraftEvents) and events.after is not None:
        assert after is events.after
        event("the draft's own state")
        # R11.1, R11.2: settle skips the scan of a draft's events that put no action of
        # a contest or challenge; the scan finds nothing there for procedures either.
        if not events.contained:
            assert not _moved(before, events)
            assert settle(before, events) is events
            event("settled without a scan")
        else:
            event("an action of a procedure put")


OWNER = {"b": PAUL, "m": ANNA, "g": GM_USER, "gm": GM_USER}

turns = st.tuples(
    st.sampled_from(["b", "m"]),
    st.sampled_from(["overcome", "create_advantage", "discover", "take_advantage"]),
    st.integers(-1, 6),
    st.booleans(),
    st.booleans(),
    st.lists(
        st.tuples(
            characters,
            aspect_ids,
            st.sampled_from(["fate_point", "free", "boost"]),
            st.sampled_from(["bonus", "reroll"]),
        ),
        max_size=4,
    ),
    st.sampled_from(["fail", "succeed_at_cost", "aspect", "mark"]),
    st.sampled_from(["mild_consequence", "opponent_advantage", "npc_boost", "wrinkle"]),
    st.booleans(),
    st.sampled_from([None, None, None, "scene", "session", "scenario"]),
)


def play_turn(turn: Turn) -> list[Command]:
    """One action as a table would play it: the right people press the right buttons."""
    actor, action_type, rating, dangerous, helped, invokes, choice, cost_kind, concede, end = turn
    owner = OWNER[actor]
    script: list[Command] = [("start", owner, actor, action_type, rating, dangerous, helped)]
    # R2.1, R9.1: the GM confirms the player's numbers; R10.1: the helper's owner accepts.
    script.append(("confirm", GM_USER, None))
    if helped:
        helper = "m" if actor == "b" else "b"
        script.append(("help", OWNER[helper], helper, True))
    if dangerous:
        script.append(("concede", owner, actor) if concede else ("roll", owner))
    for invoker, aspect_id, payment, effect in invokes:
        script.append(("invoke", OWNER[invoker], invoker, aspect_id, payment, effect))
    script += [
        ("pass", GM_USER, "opposition"),
        ("pass", owner, "actor"),
        ("choose", owner, choice),
        ("cost", cost_kind),
    ]
    if end:
        script.append(("end", end))
    return script


# Found in CI: a scene end removes the aspect an open take-advantage is about.
@example(
    turns_list=[
        ("m", "take_advantage", 0, False, True, [], "fail", "mild_consequence", False, "scene"),
        ("b", "take_advantage", 0, False, False, [], "fail", "mild_consequence", False, None),
    ],
    faces_list=[(-1, -1, -1, -1)] * 60,
)
@given(st.lists(turns, max_size=8), st.lists(rolls, min_size=60, max_size=60))
def test_played_turns_keep_every_invariant_and_replay(
    turns_list: list[Turn], faces_list: list[Roll4]
) -> None:
    state = initial()
    start_state = state
    log = []
    dice = QueuedDice(fallback=SecureDice(), rolls=faces_list)
    applied = 0
    for turn in turns_list:
        for command in play_turn(turn):
            try:
                events = run(state, command, dice)
            except RuleViolation:
                continue
            after = apply_all(state, events)
            check_invariants(state, after)
            check_draft_state_is_the_fold(state, events, after)
            state = after
            log.extend(events)
            applied += 1
    assert replay(log, start_state) == state
    # Overwhelmed actors are refused, so not every turn lands; but the first always does.
    assert applied >= (1 if turns_list else 0)


@given(st.lists(commands, max_size=25), st.lists(rolls, min_size=40, max_size=40))
def test_arbitrary_play_keeps_every_invariant_and_replays(
    script: list[Command], faces_list: list[Roll4]
) -> None:
    state = initial()
    start_state = state
    log = []
    dice = QueuedDice(fallback=SecureDice(), rolls=faces_list)
    for command in script:
        try:
            events = run(state, command, dice)
        except RuleViolation:
            continue  # refused: nothing changed
        after = apply_all(state, events)
        check_invariants(state, after)
        check_draft_state_is_the_fold(state, events, after)
        # The view indexes derive each commit's maps from the keys its events touched.
        for collection in ("aspects", "actions"):
            old, new = getattr(state, collection), getattr(after, collection)
            differ = {k for k in old.keys() | new.keys() if old.get(k) is not new.get(k)}
            assert differ <= set(touched_keys(events, collection)), (collection, differ)
        state = after
        log.extend(events)
    assert replay(log, start_state) == state


@given(st.lists(st.sampled_from([2, 4, 6]), max_size=6))
def test_roll_up_places_each_consequence_in_the_lowest_fitting_slot_or_overwhelms(
    severities: list[int],
) -> None:
    # R7.2
    draft = Draft(initial(), "test")
    for n, severity in enumerate(severities):
        expected = roll_up_slot(draft.character("b"), severity)
        placement = place_consequence(draft, "b", severity, f"C{n}", caused_by="gm")
        if expected is None:
            assert placement.slot is None
            assert draft.character("b").overwhelmed
        else:
            assert placement.slot is not None
            assert placement.slot.id == expected.id
            assert placement.slot.severity >= severity
    filled = [s for s in draft.character("b").consequences if s.aspect_id]
    assert len(filled) == min(len(severities), len(filled))
    names = {draft.aspects[s.aspect_id].name for s in filled if s.aspect_id}
    assert len(names) == len(filled)


def test_r7_2_a_moderate_consequence_skips_an_empty_mild_slot() -> None:
    # R7.2: the lowest empty slot whose severity is at least the consequence's.
    draft = Draft(initial(), "test")
    placement = place_consequence(draft, "b", 4, "Broken Arm", caused_by="gm")
    assert placement.slot is not None and placement.slot.id == "moderate"
    mild = next(s for s in draft.character("b").consequences if s.id == "mild")
    assert mild.aspect_id is None


CHOICE_FOR: dict[str, ChoiceValue] = {
    "fail_or_cost": "fail",
    "advantage_fumble": "fail",
    "leave_mark": "aspect",
    "attack_style": "full_hit",
}


def gm_step(state: WorldState, action_id: str, dice: QueuedDice) -> list[Event]:
    """The GM's next press on an open action, whatever it waits for."""
    action = state.actions[action_id]
    if action.state == "confirming" and action.proposal is not None:
        return actions.confirm(state, action_id, GM_USER, dice)  # R2.1, R9.1
    if action.state in ("declared", "confirming"):
        # R10.1 Decision: rolling drops the helpers who have not answered.
        return actions.roll_now(state, action_id, GM_USER, dice)
    if action.state == "awaiting_opposition":
        return actions.oppose(state, action_id, "Athletics", GM_USER, dice)
    if action.state == "invoking":
        side: SideName = "actor" if not action.actor.passed else "opposition"
        return actions.pass_invokes(state, action_id, side, GM_USER, UNWRITTEN)
    if action.state == "choosing":
        choice = CHOICE_FOR[action.pending_choice or ""]
        return actions.choose(state, action_id, choice, GM_USER)
    if action.state == "costing":
        kind = UNWRITTEN.costs[action.cost_severity or "serious"][0]
        command = CostCommand(action_id, kind, text="t", target_id="g", aspect_name="Ouch")
        return actions.apply_cost(state, command, GM_USER, UNWRITTEN)
    return actions.cancel(state, action_id, GM_USER, "stuck")


@given(st.lists(commands, max_size=25), st.lists(rolls, min_size=40, max_size=40))
def test_every_open_action_can_be_driven_to_resolved_or_cancelled(
    script: list[Command],
    faces_list: list[Roll4],
) -> None:
    # After any sequence of intents (scene ends included), no action blocks the table: the
    # GM can press it through to resolved, and cancelling it always works.
    state = initial()
    dice = QueuedDice(fallback=SecureDice(), rolls=faces_list)
    for command in [*script, ("end", "scene"), *script]:
        try:
            state = apply_all(state, run(state, command, dice))
        except RuleViolation:
            continue
    for action_id in [a.id for a in state.actions.values() if not a.closed]:
        cancelled = apply_all(state, actions.cancel(state, action_id, GM_USER, "test"))
        assert cancelled.actions[action_id].state == "cancelled"
        check_invariants(state, cancelled)
        driven = state
        for _ in range(12):
            if driven.actions[action_id].closed:
                break
            try:
                after = apply_all(driven, gm_step(driven, action_id, dice))
            except RuleViolation:
                after = apply_all(driven, actions.cancel(driven, action_id, GM_USER, "stuck"))
            check_invariants(driven, after)
            driven = after
        assert driven.actions[action_id].closed, driven.actions[action_id]
        with_refused_cancel = driven
        try:
            actions.cancel(with_refused_cancel, action_id, GM_USER, "again")
        except RuleViolation as refusal:
            assert refusal.code == "wrong_state"
        else:
            raise AssertionError("a closed action was cancelled again")


def _bookkeeping(state: WorldState) -> WorldState:
    """What an undo keeps as it is: the id counters and the undone list only grow."""
    return state.model_copy(update={"action_count": 0, "aspect_count": 0, "undone": ()})


# Found by `make fuzz`: an overcome still open when the GM ends the scene resolves after
# it; taking it back would reach past the scene's end (refused, R12.1).
@example(
    turns_list=[("b", "overcome", 0, False, False, [], "fail", "mild_consequence", False, None)] * 4
    + [
        ("b", "overcome", 0, False, False, [], "succeed_at_cost", "npc_boost", False, "scene"),
        ("b", "take_advantage", 0, False, False, [], "fail", "mild_consequence", False, None),
    ],
    faces_list=[(-1, -1, -1, -1)] * 60,
)
@given(st.lists(turns, min_size=1, max_size=6), st.lists(rolls, min_size=60, max_size=60))
def test_undoing_the_last_resolution_gives_exactly_the_state_before_it(
    turns_list: list[Turn],
    faces_list: list[Roll4],
) -> None:
    # R3.2/R5 resolutions taken back by the GM: fate points, free invokes, consequences,
    # boosts and scene bookkeeping return exactly; the log stays one hash chain.
    state = initial()
    start_state = state
    log: list[Logged] = []
    before_start: dict[str, WorldState] = {}  # action id -> the state before its start
    started_after: dict[str, int] = {}  # action id -> the last event before its start
    dice = QueuedDice(fallback=SecureDice(), rolls=faces_list)
    for turn in turns_list:
        for command in play_turn(turn):
            try:
                events = settle(state, run(state, command, dice))
            except RuleViolation:
                continue
            if command[0] == "start":
                before_start[f"a{state.action_count + 1}"] = state
                started_after[f"a{state.action_count + 1}"] = len(log)
            stamp = f"t{len(log):06d}"  # one stamp per commit, as the service writes them
            log += [Logged(len(log) + n + 1, stamp, e) for n, e in enumerate(events)]
            state = apply_all(state, events)

    scene_start = max((i.seq for i in log if i.event.reason == "scene.end"), default=0)
    standing = [i.event for i in log if isinstance(i.event, ActionResolved) and i.seq > scene_start]
    try:
        undo = plan_undo(log, start_state, state, None)
    except RuleViolation as refused:
        if refused.code == "scene_ended":
            # R12.1: an undo stays inside the current scene; this resolution's action
            # began before the scene's end, so taking it back would reach past it.
            assert standing and started_after[standing[-1].action.id] < scene_start
            event("refused: it would reach past the scene's end")
            return
        assert refused.code == "nothing_to_undo" and not standing
        event("nothing to undo")
        return
    assert started_after[standing[-1].action.id] >= scene_start
    event("undone")
    undone = apply_all(state, undo)
    expected = before_start[standing[-1].action.id]
    assert _bookkeeping(undone) == _bookkeeping(expected)
    assert undone.action_count == state.action_count  # ids are never given twice
    assert set(undone.undone) >= {i.seq for i in log if i.event is standing[-1]}
    # Replay-checked: the log with the undo appended rebuilds the undone state.
    stamp = f"t{len(log):06d}"
    log += [Logged(len(log) + n + 1, stamp, e) for n, e in enumerate(undo)]
    assert replay((i.event for i in log), start_state) == undone
    # The chain over the whole log, the undo included, verifies.
    rows, prev = [], GENESIS_HASH
    for item in log:
        payload = item.event.model_dump(mode="json")
        digest = event_hash(prev, item.seq, item.event.type, payload, item.created_at)
        rows.append((item.seq, item.event.type, payload, item.created_at, prev, digest))
        prev = digest
    assert verify_chain(rows) is None
