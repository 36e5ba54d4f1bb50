"""The pure rules core: dice, ladder, outcomes and overcome (R1-R3, R5.1)."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.rules.dice import FACES, QueuedDice, Roll, SecureDice, dice_total
from bridge.rules.engine import (
    OvercomeCommand,
    RuleViolation,
    replay,
    start_overcome,
    sync_character,
)
from bridge.rules.engine import apply as apply_event
from bridge.rules.events import ActionResolved, BoostGained
from bridge.rules.outcome import outcome_for, shifts
from bridge.rules.ruleset import FATE_CONDENSED, UNWRITTEN, get_ruleset
from bridge.rules.state import Character, PassiveOpposition, WorldState

faces = st.sampled_from(FACES)
rolls = st.tuples(faces, faces, faces, faces)

BROUSSEAU = Character(id="b", name="Brousseau", owners=("paul",), skills={"Athletics": 3})


def world_with(*characters: Character) -> WorldState:
    state = WorldState()
    for character in characters:
        for event in sync_character(state, character):
            state = apply_event(state, event)
    return state


def overcome(
    state: WorldState, roll: Roll, rating: int, skill: str = "Athletics"
) -> ActionResolved:
    events = start_overcome(
        state,
        OvercomeCommand("b", skill, PassiveOpposition(rating=rating), requested_by="paul"),
        QueuedDice(rolls=[roll]),
        UNWRITTEN,
    )
    first = events[0]
    assert isinstance(first, ActionResolved)
    return first


# --- R1 ------------------------------------------------------------------------


def test_r1_1_secure_dice_only_roll_fate_faces() -> None:
    # R1.1
    dice = SecureDice()
    for _ in range(2000):
        roll = dice.roll()
        assert len(roll) == 4
        assert set(roll) <= {-1, 0, 1}
        assert -4 <= dice_total(roll) <= 4


def test_r1_1_secure_dice_are_fair() -> None:
    # R1.1: each face 1/3; chi-square over 30,000 dice with 2 degrees of freedom.
    # The 0.999 critical value is 13.82, so a fair die fails this one time in a thousand.
    dice = SecureDice()
    counts: Counter[int] = Counter()
    for _ in range(7500):
        counts.update(dice.roll())
    expected = 30000 / 3
    chi_square = sum((counts[f] - expected) ** 2 / expected for f in FACES)
    assert chi_square < 13.82, counts


def test_r1_1_dice_sums_follow_the_4df_distribution() -> None:
    # R1.1: the sum of 4dF has P(0) = 19/81 and P(+4) = 1/81.
    dice = SecureDice()
    n = 40500
    sums = Counter(dice_total(dice.roll()) for _ in range(n))
    p_zero = 19 / 81
    sd = math.sqrt(n * p_zero * (1 - p_zero))
    assert abs(sums[0] - n * p_zero) < 5 * sd
    assert set(sums) <= set(range(-4, 5))


@given(rolls)
def test_r1_1_queued_dice_return_exactly_what_was_queued(roll: Roll) -> None:
    # R1.1: the dev queue hands out its faces in order, then falls back.
    dice = QueuedDice(fallback=SecureDice(), rolls=[roll])
    assert dice.roll() == roll
    assert dice.pending == 0
    assert set(dice.roll()) <= {-1, 0, 1}


def test_r1_1_empty_queue_without_fallback_is_an_error() -> None:
    with pytest.raises(LookupError):
        QueuedDice().roll()


@pytest.mark.parametrize(
    ("value", "word", "shown"),
    [
        (8, "Legendary", "Legendary (+8)"),
        (5, "Superb", "Superb (+5)"),
        (4, "Great", "Great (+4)"),
        (1, "Average", "Average (+1)"),
        (0, "Mediocre", "Mediocre (+0)"),
        (-2, "Terrible", "Terrible (-2)"),
        (9, "+9", "+9"),
        (-3, "-3", "-3"),
    ],
)
def test_r1_3_ladder_words_and_numbers(value: int, word: str, shown: str) -> None:
    # R1.3: both word and number; beyond either end the number.
    assert UNWRITTEN.ladder_label(value) == word
    assert UNWRITTEN.describe(value) == shown


@given(rolls, st.integers(-5, 10))
def test_r1_2_total_is_dice_plus_skill(roll: Roll, rating: int) -> None:
    # R1.2 (skill and dice; stunts, teamwork and invokes arrive with issue 3).
    hero = Character(id="b", name="B", skills={"Athletics": rating})
    resolved = overcome(world_with(hero), roll, 0)
    assert resolved.action.total == sum(roll) + rating
    assert resolved.action.skill_rating == rating


def test_r1_2_missing_skill_counts_as_mediocre() -> None:
    resolved = overcome(world_with(BROUSSEAU), (0, 0, 0, 0), 0, skill="Lore")
    assert resolved.action.skill_rating == 0
    assert resolved.action.total == 0


# --- R2, R3 --------------------------------------------------------------------


@given(st.integers(-20, 20), st.integers(-20, 20))
def test_r2_3_shifts_are_total_minus_opposition(total: int, opposition: int) -> None:
    # R2.3
    assert shifts(total, opposition) == total - opposition


@pytest.mark.parametrize(
    ("shift_count", "outcome"),
    [
        (-4, "fumble"),
        (-1, "fumble"),
        (0, "tie"),
        (1, "succeed"),
        (2, "succeed"),
        (3, "excel"),
        (7, "excel"),
    ],
)
def test_r3_1_outcome_thresholds(shift_count: int, outcome: str) -> None:
    # R3.1
    assert outcome_for(shift_count, UNWRITTEN) == outcome
    assert outcome_for(shift_count, FATE_CONDENSED) == outcome


def test_r3_1_fate_condensed_names_its_outcomes() -> None:
    # R3.1: fail, tie, succeed, succeed with style.
    assert get_ruleset("fate-condensed").outcome_names == {
        "fumble": "Fail",
        "tie": "Tie",
        "succeed": "Succeed",
        "excel": "Succeed with Style",
    }


@given(st.integers(-30, 30))
def test_r3_1_every_shift_count_has_exactly_one_outcome(shift_count: int) -> None:
    outcome = outcome_for(shift_count, UNWRITTEN)
    expected = (
        "fumble"
        if shift_count < 0
        else "tie"
        if shift_count == 0
        else "excel"
        if shift_count >= 3
        else "succeed"
    )
    assert outcome == expected


# --- R2.1 and R5.1 overcome ------------------------------------------------------


def test_r5_1_worked_example_good_plus_two_against_great() -> None:
    # R2.1 R5.1: seed 004: Athletics Good (+3), dice +2 -> Superb (+5) vs Great (+4).
    resolved = overcome(world_with(BROUSSEAU), (1, 1, 0, 0), 4)
    action = resolved.action
    assert action.total == 5
    assert UNWRITTEN.ladder_label(action.total) == "Superb"
    assert action.shifts == 1
    assert action.outcome == "succeed"
    assert action.state == "resolved"
    assert action.boost_id is None


def test_r5_1_excel_resolves_with_a_boost_for_the_actor() -> None:
    # R5.1 excel; R12.6 a boost is an aspect with one free invoke, held by the actor.
    events = start_overcome(
        world_with(BROUSSEAU),
        OvercomeCommand("b", "Athletics", PassiveOpposition(rating=0), requested_by="paul"),
        QueuedDice(rolls=[(0, 0, 0, 0)]),
        UNWRITTEN,
    )
    resolved, gained = events
    assert isinstance(resolved, ActionResolved) and isinstance(gained, BoostGained)
    assert resolved.action.outcome == "excel"
    assert resolved.action.state == "resolved"
    assert gained.boost.holder_id == "b"
    assert resolved.action.boost_id == gained.boost.id


@pytest.mark.parametrize(("roll", "outcome"), [((-1, -1, 0, 0), "fumble"), ((0, 0, 0, 1), "tie")])
def test_r5_1_fumble_and_tie_wait_for_the_players_choice(roll: Roll, outcome: str) -> None:
    # R5.1: fumble/tie -> fail or succeed at a cost, chosen by the actor's owner.
    resolved = overcome(world_with(BROUSSEAU), roll, 4)
    assert resolved.action.outcome == outcome
    assert resolved.action.state == "choosing"


def test_r2_1_opposition_is_fixed_before_the_roll_and_recorded() -> None:
    # R2.1
    resolved = overcome(world_with(BROUSSEAU), (0, 0, 0, 0), 2)
    assert resolved.action.opposition == PassiveOpposition(rating=2)


def test_unknown_actor_is_refused() -> None:
    with pytest.raises(RuleViolation) as refused:
        overcome(WorldState(), (0, 0, 0, 0), 2)
    assert refused.value.code == "unknown_actor"


# --- replay -----------------------------------------------------------------------


@given(st.lists(st.tuples(rolls, st.integers(-2, 8)), max_size=12))
def test_replaying_the_events_reproduces_the_state(plays: list[tuple[Roll, int]]) -> None:
    state = world_with(BROUSSEAU)
    log = list(sync_character(WorldState(), BROUSSEAU))
    for roll, rating in plays:
        events = start_overcome(
            state,
            OvercomeCommand("b", "Athletics", PassiveOpposition(rating=rating), "paul"),
            QueuedDice(rolls=[roll]),
            UNWRITTEN,
        )
        for event in events:
            state = apply_event(state, event)
        log.extend(events)
    assert replay(log) == state
    assert len(state.actions) == len(plays)
    assert len(state.boosts) == sum(1 for a in state.actions.values() if a.outcome == "excel")
