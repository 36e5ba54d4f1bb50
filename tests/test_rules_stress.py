"""Stress per track (R5.10 Decision) and the kind of an attack (R11.3 Decision)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.rules import actions, conflict
from bridge.rules.actions import AbsorbCommand, StartAction, StressMark
from bridge.rules.dice import Roll
from bridge.rules.engine import replay
from bridge.rules.errors import RuleViolation
from bridge.rules.events import EVENT_ADAPTER, CharacterPut
from bridge.rules.ruleset import FATE_CONDENSED
from bridge.rules.settings import change_settings
from bridge.rules.state import Character, HarmKind, StressTrack
from bridge.service.session import worded
from tests.fuzzing import examples
from tests.rules_fixtures import (
    ANNA,
    BROUSSEAU,
    GM_USER,
    PAUL,
    STANDARD_SLOTS,
    ZERO,
    Table,
    dice,
    gm_confirms,
    mental,
    physical,
    refused,
    sheet,
    track,
    world,
)

# A Fate Core sheet in a Fate Condensed world: escalating boxes keep their values (R5.10
# Decision), a single "any" track as Fate Accelerated has, and DFA's Indebted (not stress).
ESCALATING = (physical(1, 2), mental(1, 2))
INDEBTED = track("indebted", "other", 1, 1, 1, 1, 1, name="Indebted")


def condensed(*ghoul_tracks: StressTrack, slots: bool = True) -> Table:
    ghoul = sheet(
        "g",
        "Ghoul",
        skills={"Athletics": 0, "Will": 0},
        stress=ghoul_tracks,
        slots=STANDARD_SLOTS if slots else (),
    )
    table = Table(world(BROUSSEAU, ghoul, ruleset=FATE_CONDENSED))
    # R2.1 Decision: this table trusts Paul's passive ratings; these tests are about stress.
    table.run(lambda s: change_settings(s, GM_USER, trust_player_ratings=True))
    return table


def attack(table: Table, hit: int, *, kind: HarmKind | None = None) -> str:
    """Brousseau (Athletics 3) attacks the ghoul against passive 0, on dice that land a
    plain success of exactly ``hit`` shifts (1 or 2)."""
    roll: Roll = (-1, 0, 0, 0) if hit == 2 else (-1, -1, 0, 0)
    command = StartAction(
        type="attack",
        actor_id="b",
        skill="Athletics",
        target_id="g",
        passive_rating=0,
        attack_kind=kind,
    )
    queued = dice(roll)
    table.run(lambda s: actions.start_action(s, command, PAUL, queued, table.ruleset))
    gm_confirms(table, queued)  # R2.1: Paul's rating is the GM's to confirm (if not trusted)
    action_id = table.action().id
    table.run(lambda s: actions.pass_invokes(s, action_id, "actor", PAUL, table.ruleset))
    assert table.action().pending_hit == hit
    return action_id


def absorb(table: Table, action_id: str, *marks: tuple[str, tuple[int, ...]], **slots: str) -> None:
    command = AbsorbCommand(
        action_id, tuple(StressMark(t, boxes) for t, boxes in marks), consequences=slots
    )
    table.run(lambda s: actions.absorb(s, command, GM_USER))


def boxes(character: Character) -> dict[str, list[bool]]:
    return {t.id: [b.marked for b in t.boxes] for t in character.stress}


def start_conflict(table: Table, kind: HarmKind) -> str:
    sides = (
        conflict.ConflictSideSpec("Hunters", ("b",)),
        conflict.ConflictSideSpec("Dead", ("g",)),
    )
    table.run(lambda s: conflict.start_conflict(s, "Crypt", kind, sides, GM_USER, table.ruleset))
    return next(iter(table.state.conflicts))


def test_r5_10_a_physical_hit_takes_only_physical_boxes_each_absorbing_its_value() -> None:
    # R5.10 Decision: the 2-box of an escalating physical track absorbs a 2-shift hit alone.
    table = condensed(*ESCALATING)
    action_id = attack(table, 2)
    assert table.action().attack_kind == "physical"
    refused("invalid", lambda: actions.absorb(table.state, _cmd(action_id, "mental", 1), GM_USER))
    refused("invalid", lambda: actions.absorb(table.state, _cmd(action_id, "physical", 0), GM_USER))
    absorb(table, action_id, ("physical", (1,)))
    assert boxes(table.character("g")) == {"physical": [False, True], "mental": [False, False]}
    effect = next(e for e in table.action().effects if e.kind == "stress")
    assert (effect.text, effect.count, effect.detail) == ("Physical Stress", 1, "2")
    assert table.action().state == "resolved"


def test_r5_10_a_mental_hit_takes_only_mental_boxes() -> None:
    # R5.10, R11.3: in a mental conflict the attack is mental; physical boxes don't absorb it.
    table = condensed(physical(1, 1, 1), mental(1, 1, 1))
    start_conflict(table, "mental")
    action_id = attack(table, 2)
    assert table.action().attack_kind == "mental"
    refused(
        "invalid", lambda: actions.absorb(table.state, _cmd(action_id, "physical", 0, 1), GM_USER)
    )
    absorb(table, action_id, ("mental", (0, 2)))
    assert boxes(table.character("g")) == {"physical": [False] * 3, "mental": [True, False, True]}


def test_r5_10_overflow_goes_into_consequences_and_beyond_them_takes_the_target_out() -> None:
    # R5.10: boxes of the hit's kind plus consequences must absorb all; R8.1 taken out.
    table = condensed(physical(1, 1, 1), mental(1, 1, 1))
    action_id = attack(table, 2)
    refused(
        "invalid",
        lambda: actions.absorb(table.state, _cmd(action_id, "physical", 0), GM_USER),
    )
    absorb(table, action_id, ("physical", (0,)), mild="Gashed")
    ghoul = table.character("g")
    assert boxes(ghoul)["physical"] == [True, False, False]
    assert next(s for s in ghoul.consequences if s.id == "mild").aspect_id is not None

    # Two physical boxes left and no slots: a 2-shift hit is absorbed, the next is too much
    # although three mental boxes are free (they can't take a physical hit).
    out = condensed(physical(1, 1), mental(1, 1, 1), slots=False)
    action_id = attack(out, 2)
    absorb(out, action_id, ("physical", (0, 1)))
    attack_out = StartAction(
        type="attack", actor_id="b", skill="Athletics", target_id="g", passive_rating=0
    )
    rolled = dice((-1, -1, 0, 0))
    out.run(lambda s: actions.start_action(s, attack_out, PAUL, rolled, out.ruleset))
    gm_confirms(out, rolled)  # consent to harm: the GM accepts for the ghoul
    next_id = out.action().id
    out.run(lambda s: actions.pass_invokes(s, next_id, "actor", PAUL, out.ruleset))
    assert out.character("g").overwhelmed
    assert out.action().state == "resolved"
    assert any(e.kind == "overwhelmed" for e in out.action().effects)


def test_r5_10_other_tracks_are_never_marked_and_any_tracks_take_both_kinds() -> None:
    # R5.10 Decision: "other" tracks (DFA's Indebted) are not stress; "any" (Accelerated).
    table = condensed(track("stress", "any", 1, 2, 3), INDEBTED)
    start_conflict(table, "mental")
    action_id = attack(table, 2)
    refused(
        "invalid", lambda: actions.absorb(table.state, _cmd(action_id, "indebted", 0, 1), GM_USER)
    )
    absorb(table, action_id, ("stress", (1,)))
    ghoul = table.character("g")
    assert boxes(ghoul) == {"stress": [False, True, False], "indebted": [False] * 5}

    # Only an "other" track and no slots: any hit takes the target out, Indebted untouched.
    out = condensed(INDEBTED, slots=False)
    attack_command = StartAction(
        type="attack", actor_id="b", skill="Athletics", target_id="g", passive_rating=0
    )
    rolled = dice((-1, -1, 0, 0))
    out.run(lambda s: actions.start_action(s, attack_command, PAUL, rolled, out.ruleset))
    gm_confirms(out, rolled)  # consent to harm: the GM accepts for the ghoul
    next_id = out.action().id
    out.run(lambda s: actions.pass_invokes(s, next_id, "actor", PAUL, out.ruleset))
    assert out.character("g").overwhelmed
    assert boxes(out.character("g")) == {"indebted": [False] * 5}


def test_r5_10_bad_absorbs_change_nothing() -> None:
    # R5.10: an unknown track, a box out of range or already marked, a repeat: refused whole.
    table = condensed(physical(1, 1, 1), mental(1, 1, 1))
    action_id = attack(table, 1)
    before = table.state
    for command in (
        _cmd(action_id, "nope", 0),
        _cmd(action_id, "physical", 3),
        _cmd(action_id, "physical", -1),
        AbsorbCommand(action_id, (StressMark("physical", ()),)),
    ):
        refused("invalid", lambda c=command: actions.absorb(table.state, c, GM_USER))  # type: ignore[misc]
    absorb(table, action_id, ("physical", (0,)))
    assert table.state != before
    again = condensed(track("physical", "physical", 1, 1, marked=(0,)))
    action_id = attack(again, 1)
    refused("invalid", lambda: actions.absorb(again.state, _cmd(action_id, "physical", 0), GM_USER))


def test_r11_3_an_attack_in_a_conflict_is_of_the_conflicts_kind() -> None:
    # R11.3 Decision: the GM set the kind at the conflict's start; a different kind is refused.
    table = condensed(physical(1, 1, 1), mental(1, 1, 1))
    start_conflict(table, "physical")
    wrong = StartAction(
        type="attack",
        actor_id="b",
        skill="Athletics",
        target_id="g",
        passive_rating=0,
        attack_kind="mental",
    )
    violation = refused(
        "invalid",
        lambda: actions.start_action(table.state, wrong, PAUL, dice(ZERO), table.ruleset),
    )
    assert violation.field == "attack_kind" and "physical conflict" in worded(
        violation.code, violation.message, violation.params
    )
    attack(table, 1, kind="physical")
    assert table.action().attack_kind == "physical"


def test_r11_3_outside_a_conflict_an_attack_has_the_kind_asked_for_physical_by_default() -> None:
    # R11.3 Decision; only attacks have a kind.
    table = condensed(physical(1), mental(1))
    attack(table, 1)
    assert table.action().attack_kind == "physical"
    other = condensed(physical(1), mental(1))
    attack(other, 1, kind="mental")
    assert other.action().attack_kind == "mental"
    overcome = StartAction(
        type="overcome", actor_id="b", skill="Athletics", passive_rating=0, attack_kind="mental"
    )
    refused(
        "invalid",
        lambda: actions.start_action(other.state, overcome, PAUL, dice(ZERO), other.ruleset),
    )


def test_r5_10_a_log_of_the_old_flat_stress_list_still_replays() -> None:
    # R5.10: worlds stored before named tracks held one list of 1-shift (physical) boxes.
    table = condensed(physical(1, 1))
    put = CharacterPut(reason="actor.sync", character=table.character("g"))
    stored = put.model_dump(mode="json")
    stored["character"]["stress"] = [True, False]
    old = EVENT_ADAPTER.validate_python(stored)
    state = replay([old])
    assert boxes(state.characters["g"]) == {"physical": [True, False]}
    assert [b.value for b in state.characters["g"].stress[0].boxes] == [1, 1]
    assert state.characters["g"].stress[0].kind == "physical"


def _cmd(action_id: str, track_id: str, *indexes: int) -> AbsorbCommand:
    return AbsorbCommand(action_id, (StressMark(track_id, indexes),))


# --- properties -----------------------------------------------------------------------

PROPERTY_TRACKS = (
    physical(1, 2),
    mental(1, 1, 1),
    track("stress", "any", 1),
    INDEBTED,
)
track_ids = st.sampled_from(["physical", "mental", "stress", "indebted", "nope"])
absorb_attempts = st.lists(
    st.tuples(
        st.lists(st.tuples(track_ids, st.lists(st.integers(-1, 5), max_size=4)), max_size=3),
        st.lists(st.sampled_from(["mild", "moderate", "severe", "nope"]), max_size=2),
    ),
    max_size=4,
)


@settings(max_examples=examples(150), deadline=None)
@given(kind=st.sampled_from(["physical", "mental"]), hit=st.integers(1, 5), tries=absorb_attempts)
def test_r5_10_no_absorb_ever_marks_another_kinds_track(
    kind: HarmKind, hit: int, tries: list[tuple[list[tuple[str, list[int]]], list[str]]]
) -> None:
    # R5.10, R11.3 under arbitrary absorbs: tracks of the other kind and "other" tracks never
    # change; an accepted absorb covers the whole hit; the log replays to the state.
    table = condensed(*PROPERTY_TRACKS)
    initial = table.state
    start_conflict(table, kind)
    command = StartAction(
        type="attack", actor_id="b", skill="Athletics", target_id="g", passive_rating=3 - hit
    )
    rolled = dice(ZERO)
    table.run(lambda s: actions.start_action(s, command, PAUL, rolled, table.ruleset))
    gm_confirms(table, rolled)  # R2.1 and consent to harm: the GM confirms for the ghoul
    action_id = table.action().id
    table.run(lambda s: actions.pass_invokes(s, action_id, "actor", PAUL, table.ruleset))
    if table.action().pending_choice == "attack_style":
        table.run(lambda s: actions.choose(s, action_id, "full_hit", PAUL))
    start = table.character("g")
    for marks, slots in tries:
        if table.action().state != "absorbing":
            break
        attempt = AbsorbCommand(
            action_id,
            tuple(StressMark(t, tuple(b)) for t, b in marks),
            consequences={s: "Hurt" for s in slots},
        )
        try:
            table.run(lambda s, c=attempt: actions.absorb(s, c, GM_USER))  # type: ignore[misc]
        except RuleViolation:
            continue
        after = table.character("g")
        gained = sum(
            box.value
            for old, new in zip(start.stress, after.stress, strict=True)
            for was, box in zip(old.boxes, new.boxes, strict=True)
            if box.marked and not was.marked
        )
        filled = sum(s.severity for s in after.consequences if not s.empty)
        assert gained + filled >= hit
    after = table.character("g")
    for old, new in zip(start.stress, after.stress, strict=True):
        if not old.absorbs(kind):
            assert new == old, f"{new.name} changed on a {kind} hit"
    assert boxes(after)["indebted"] == [False] * 5
    assert replay(table.log, initial) == table.state


def test_r5_10_the_targets_owner_or_the_gm_absorbs_nobody_else() -> None:
    # R5.10 with DESIGN Trust: only who controls the target picks its boxes.
    ghoul = sheet("g", "Ghoul", owners=["anna"], skills={"Athletics": 0}, stress=(physical(1, 1),))
    table = Table(world(BROUSSEAU, ghoul, ruleset=FATE_CONDENSED))
    action_id = attack(table, 1)
    refused("forbidden", lambda: actions.absorb(table.state, _cmd(action_id, "physical", 0), PAUL))
    table.run(lambda s: actions.absorb(s, _cmd(action_id, "physical", 0), ANNA))
    assert boxes(table.character("g")) == {"physical": [True, False]}
