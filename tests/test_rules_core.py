"""The pure rules core: dice, ladder, outcomes, the overcome roll (R1-R3, R5.1)."""

from __future__ import annotations

import itertools
import math
import os
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.rules import actions
from bridge.rules.dice import ALL_ROLLS, FACES, QueuedDice, Roll, SecureDice, dice_total
from bridge.rules.errors import RuleViolation
from bridge.rules.outcome import outcome_for, shifts
from bridge.rules.ruleset import FATE_CONDENSED, UNWRITTEN, get_ruleset
from tests.rules_fixtures import (
    BROUSSEAU,
    GM_USER,
    PAUL,
    Table,
    dice,
    gm_confirms,
    sheet,
    world,
)

faces = st.sampled_from(FACES)
rolls = st.tuples(faces, faces, faces, faces)


def overcome(table: Table, roll: Roll, rating: int, skill: str = "Athletics") -> None:
    queued = dice(roll)
    table.run(
        lambda s: actions.start_action(
            s,
            actions.StartAction("overcome", "b", skill, passive_rating=rating),
            PAUL,
            queued,
            UNWRITTEN,
        )
    )
    gm_confirms(table, queued)  # R2.1: the player's rating is the GM's to confirm


def pass_actor(table: Table) -> None:
    table.run(lambda s: actions.pass_invokes(s, table.action().id, "actor", PAUL, UNWRITTEN))


# --- R1 ------------------------------------------------------------------------


def test_r1_1_secure_dice_only_roll_fate_faces() -> None:
    # R1.1
    source = SecureDice()
    for _ in range(2000):
        roll = source.roll()
        assert len(roll) == 4
        assert set(roll) <= {-1, 0, 1}
        assert -4 <= dice_total(roll) <= 4


def test_r1_1_one_draw_over_all_rolls_is_four_independent_dice() -> None:
    # R1.1: a uniform draw over a table holding each of the 3**4 ordered outcomes once
    # gives every die each face with 1/3 independently of the others.
    assert len(ALL_ROLLS) == 81
    assert set(ALL_ROLLS) == set(itertools.product(FACES, repeat=4))


def test_r1_1_secure_dice_are_fair() -> None:
    # R1.1: each face 1/3; chi-square over 30,000 dice with 2 degrees of freedom.
    # The 0.999 critical value is 13.82: a fair die fails this one run in a thousand.
    source = SecureDice()
    counts: Counter[int] = Counter()
    for _ in range(7500):
        counts.update(source.roll())
    expected = 30000 / 3
    chi_square = sum((counts[f] - expected) ** 2 / expected for f in FACES)
    assert chi_square < 13.82, counts


def test_r1_1_dice_sums_follow_the_4df_distribution() -> None:
    # R1.1: the sum of 4dF has P(0) = 19/81; checked within five standard deviations.
    source = SecureDice()
    n = 40500
    sums = Counter(dice_total(source.roll()) for _ in range(n))
    p_zero = 19 / 81
    sd = math.sqrt(n * p_zero * (1 - p_zero))
    assert abs(sums[0] - n * p_zero) < 5 * sd
    assert set(sums) <= set(range(-4, 5))


@given(rolls)
def test_r1_1_queued_dice_return_exactly_what_was_queued(roll: Roll) -> None:
    # R1.1: the dev queue hands out its faces in order, then falls back.
    source = QueuedDice(fallback=SecureDice(), rolls=[roll])
    assert source.roll() == roll
    assert source.pending == 0
    assert set(source.roll()) <= {-1, 0, 1}


def test_r1_1_empty_queue_without_fallback_is_an_error() -> None:
    with pytest.raises(LookupError):
        QueuedDice().roll()


@pytest.mark.parametrize(
    ("value", "word"),
    [
        (8, "Legendary"),
        (5, "Superb"),
        (4, "Great"),
        (1, "Average"),
        (0, "Mediocre"),
        (-2, "Terrible"),
        (9, "+9"),
        (-3, "-3"),
    ],
)
def test_r1_3_ladder_words_and_numbers(value: int, word: str) -> None:
    # R1.3: the ladder's word (the card shows it beside the number); beyond either end
    # the number.
    assert UNWRITTEN.ladder_label(value) == word


@given(rolls, st.integers(-5, 10))
def test_r1_2_total_is_dice_plus_skill(roll: Roll, rating: int) -> None:
    # R1.2 (stunts, teamwork and invokes are in test_rules_actions).
    table = Table(world(sheet("b", "B", owners=["paul"], skills={"Athletics": rating})))
    overcome(table, roll, 0)
    assert table.action().actor.roll.total == sum(roll) + rating
    assert table.action().actor.roll.skill_rating == rating


def test_r1_2_missing_skill_counts_as_mediocre() -> None:
    table = Table(world(BROUSSEAU))
    overcome(table, (0, 0, 0, 0), 0, skill="Sail")
    assert table.action().actor.roll.skill_rating == 0
    assert table.action().actor.roll.total == 0


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
    expected = (
        "fumble"
        if shift_count < 0
        else "tie"
        if shift_count == 0
        else "excel"
        if shift_count >= 3
        else "succeed"
    )
    assert outcome_for(shift_count, UNWRITTEN) == expected


def test_r3_2_outcome_is_decided_only_when_the_invoke_phase_ends() -> None:
    # R3.2
    table = Table(world(BROUSSEAU))
    overcome(table, (1, 1, 0, 0), 4)
    assert table.action().state == "invoking"
    assert table.action().outcome is None
    pass_actor(table)
    assert table.action().outcome == "succeed"


# --- R2.1 and R5.1 overcome ------------------------------------------------------


def test_r5_1_worked_example_good_plus_two_against_great() -> None:
    # R2.1 R5.1: seed 004: Athletics Good (+3), dice +2 -> Superb (+5) vs Great (+4).
    table = Table(world(BROUSSEAU))
    overcome(table, (1, 1, 0, 0), 4)
    pass_actor(table)
    action = table.action()
    assert action.actor.roll.total == 5
    assert UNWRITTEN.ladder_label(action.actor.roll.total) == "Superb"
    assert action.shifts == 1
    assert action.outcome == "succeed"
    assert action.state == "resolved"
    assert action.succeeded is True
    assert not any(e.kind == "boost" for e in action.effects)


def test_r5_1_excel_resolves_with_a_boost_for_the_actor() -> None:
    # R5.1 excel; R12.6 a boost is an aspect with one free invoke, held by the actor.
    table = Table(world(BROUSSEAU))
    overcome(table, (0, 0, 0, 0), 0)
    pass_actor(table)
    action = table.action()
    assert action.outcome == "excel" and action.state == "resolved"
    boost_effect = next(e for e in action.effects if e.kind == "boost")
    boost = table.state.aspects[boost_effect.aspect_id or ""]
    assert boost.kind == "boost"
    assert boost.free_invokes == {"b": 1}


@pytest.mark.parametrize(
    ("roll", "outcome", "severity"),
    [((-1, -1, 0, 0), "fumble", "serious"), ((0, 0, 0, 1), "tie", "minor")],
)
def test_r5_1_fumble_and_tie_wait_for_the_players_choice(
    roll: Roll, outcome: str, severity: str
) -> None:
    # R5.1: fumble -> fail or succeed at a serious cost; tie -> ... at a minor cost.
    table = Table(world(BROUSSEAU))
    overcome(table, roll, 4)
    pass_actor(table)
    action = table.action()
    assert action.outcome == outcome
    assert action.state == "choosing"
    assert action.pending_choice == "fail_or_cost"
    assert action.cost_severity == severity


def test_r2_1_passive_opposition_is_fixed_before_the_roll() -> None:
    # R2.1
    table = Table(world(BROUSSEAU))
    overcome(table, (0, 0, 0, 0), 2)
    assert table.action().opposition.roll.passive_rating == 2
    assert table.action().opposition.roll.dice is None


def test_unknown_actor_is_refused() -> None:
    with pytest.raises(RuleViolation) as refused:
        actions.start_action(
            world(BROUSSEAU),
            actions.StartAction("overcome", "nobody", "Athletics", passive_rating=2),
            GM_USER,
            dice(),
            UNWRITTEN,
        )
    assert refused.value.code == "unknown_actor"


def test_r1_1_secure_dice_map_every_accepted_byte_to_one_roll_evenly() -> None:
    # R1.1: of the 256 byte values, the 243 below 3 * 81 give each of the 81 rolls exactly
    # three times and the rest are skipped, so a uniform byte is a uniform roll.
    source = SecureDice(random_bytes=lambda n: bytes(range(256)) * (n // 256))
    drawn = Counter(source.roll() for _ in range(243))
    assert set(drawn) == set(ALL_ROLLS) and set(drawn.values()) == {3}
    # The next draw starts the following 256 bytes again at 0: bytes 243..255 were skipped.
    assert source.roll() == ALL_ROLLS[0]


def test_r1_1_a_forked_process_never_rolls_its_parents_dice() -> None:
    # R1.1: the CSPRNG's bytes are read ahead; a child forked from the bridge must not
    # replay the rolls the parent still holds.
    source = SecureDice()
    source.roll()  # the pool is filled and partly read
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child only reports its rolls
        os.write(writer, repr([source.roll() for _ in range(40)]).encode())
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as pipe:
        child_rolls = pipe.read()
    os.waitpid(child, 0)
    parent_rolls = repr([source.roll() for _ in range(40)])
    # 40 rolls alike by chance: 81 ** -40.
    assert child_rolls and child_rolls != parent_rolls
