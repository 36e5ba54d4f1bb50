"""Odds before rolling and before invoking: exact, from the 81 rolls of 4dF (R1.1, R3.1, R4.1)."""

from __future__ import annotations

import dataclasses
import itertools
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from bridge.rules.odds import FOUR_DF, ROLLS, invoke_odds, roll_odds
from bridge.rules.outcome import outcome_for
from bridge.rules.ruleset import get_ruleset
from tests.seats import BROUSSEAU, MARGOT, Seat, queue, start_action

UNWRITTEN = get_ruleset("unwritten")
EVERY_ROLL = list(itertools.product((-1, 0, 1), repeat=4))


def test_the_four_fate_dice_distribution() -> None:
    # R1.1: 3**4 equally likely rolls; sums -4..+4 come 1, 4, 10, 16, 19, 16, 10, 4, 1 ways.
    assert ROLLS == len(EVERY_ROLL) == 81
    assert dict(FOUR_DF) == {s: sum(1 for r in EVERY_ROLL if sum(r) == s) for s in range(-4, 5)}


def test_skill_three_against_passive_four() -> None:
    # R2.3, R3.1: Good (+3) against Great (+4) needs +2 or more on the dice to succeed.
    odds = roll_odds(3, 4, UNWRITTEN)
    assert odds.probability("succeed", "excel") == Fraction(15, 81)
    assert odds.probability("tie") == Fraction(16, 81)
    assert odds.probability("fumble") == Fraction(50, 81)
    assert odds.probability("excel") == Fraction(1, 81)


@given(st.integers(-12, 24), st.integers(-12, 24))
def test_odds_are_the_count_of_rolls_giving_each_outcome(modifier: int, opposition: int) -> None:
    # R1.2, R3.1: every one of the 81 rolls counted once, under the ruleset's thresholds.
    odds = roll_odds(modifier, opposition, UNWRITTEN)
    assert sum(odds.counts.values()) == odds.out_of == 81
    for outcome in ("fumble", "tie", "succeed", "excel"):
        expected = sum(
            1
            for r in EVERY_ROLL
            if outcome_for(modifier + sum(r) - opposition, UNWRITTEN) == outcome
        )
        assert odds.counts[outcome] == expected


@given(st.integers(-12, 24), st.integers(-12, 24))
def test_a_higher_modifier_never_lowers_the_chance_of_success(
    modifier: int, opposition: int
) -> None:
    # R1.2: every bonus helps.
    worse = roll_odds(modifier, opposition, UNWRITTEN).probability("succeed", "excel")
    better = roll_odds(modifier + 1, opposition, UNWRITTEN).probability("succeed", "excel")
    assert better >= worse


def test_thresholds_come_from_the_ruleset() -> None:
    # Ruleset as data: an excel threshold of 4 moves +3 shifts from excel to succeed.
    strict = dataclasses.replace(UNWRITTEN, excel_threshold=4)
    assert roll_odds(4, 0, UNWRITTEN).probability("excel") == Fraction(81 - 1 - 4 - 10, 81)
    assert roll_odds(4, 0, strict).probability("excel") == Fraction(81 - 1 - 4 - 10 - 16, 81)
    condensed = get_ruleset("fate-condensed")
    assert roll_odds(3, 4, condensed).counts == roll_odds(3, 4, UNWRITTEN).counts


def test_invoke_odds_for_the_acting_side() -> None:
    # R4.1: tied (+3 with dice 0 against +3): +2 makes it a success; a reroll keeps the +3 and
    # rolls four new dice, so its odds are those of a fresh roll at +3 against +3.
    odds = invoke_odds(shifts_now=0, side_dice_total=0, acting=True, ruleset=UNWRITTEN)
    assert (odds.now, odds.plus_two) == ("tie", "succeed")
    assert odds.reroll is not None
    assert odds.reroll.counts == roll_odds(3, 3, UNWRITTEN).counts
    assert odds.reroll.probability("tie") == Fraction(19, 81)
    # Dice of -2 are a poor roll: rerolling them improves the odds of success.
    poor = invoke_odds(shifts_now=-2, side_dice_total=-2, acting=True, ruleset=UNWRITTEN)
    assert poor.plus_two == "tie"
    assert poor.reroll is not None and poor.reroll.probability("succeed", "excel") == Fraction(
        31, 81
    )


def test_invoke_odds_for_the_opposing_side_are_the_actors_outcomes() -> None:
    # R4.1, R5.7: the opposition's +2 lowers the actor's shifts; its reroll replaces its dice.
    odds = invoke_odds(shifts_now=1, side_dice_total=1, acting=False, ruleset=UNWRITTEN)
    assert (odds.now, odds.plus_two) == ("succeed", "fumble")
    assert odds.reroll is not None
    # Actor shifts become 1 + 1 - new dice: a success needs new dice <= 1.
    assert odds.reroll.probability("succeed", "excel") == Fraction(1 + 4 + 10 + 16 + 19 + 16, 81)
    passive = invoke_odds(shifts_now=1, side_dice_total=None, acting=False, ruleset=UNWRITTEN)
    assert passive.reroll is None


async def test_the_roll_dialogs_odds_over_the_socket(table: dict[str, Seat]) -> None:
    # R1.1, R3.1, R10.1: the bridge counts the modifiers it will use (skill, stunts, teamwork).
    paul = table["paul"]
    # Brousseau's Athletics (+3) against Great (+4).
    ask = {"actor_id": BROUSSEAU["id"], "skill": "Athletics", "opposition": 4}
    alone = await paul.ok("action.odds", **ask)
    assert alone["modifier"] == 3 and alone["odds"]["out_of"] == 81
    assert (alone["odds"]["succeed"] + alone["odds"]["excel"], alone["odds"]["tie"]) == (15, 16)
    # The outcomes travel as ids with the ruleset that names them (DESIGN: every language).
    assert alone["outcomes"] == ["fumble", "tie", "succeed", "excel"]
    assert alone["ruleset"] == "unwritten"
    helped = await paul.ok("action.odds", **ask, helpers=[{"character_id": MARGOT["id"]}])
    assert helped["modifier"] == 4 and helped["odds"]["tie"] == 19
    unknown = await paul.send("action.odds", **{**ask, "actor_id": "nobody"})
    assert (unknown["error"]["code"], unknown["error"]["field"]) == ("unknown_actor", "actor_id")
    too_far = await paul.send("action.odds", **{**ask, "opposition": 99})
    assert (too_far["error"]["code"], too_far["error"]["field"]) == ("invalid", "opposition")
    twice = await paul.send("action.odds", **ask, helpers=[{"character_id": BROUSSEAU["id"]}])
    assert twice["error"]["field"] == "helpers.0"


async def test_the_invoke_phase_card_carries_the_invoke_odds(table: dict[str, Seat]) -> None:
    # R4.1: tied at +3 against +3 with dice 0: the card says +2 succeeds and what a reroll gives.
    gm, paul = table["gm"], table["paul"]
    await queue(gm, [1, -1, 0, 0])
    card = await start_action(paul, actor=BROUSSEAU["id"], rating=3)
    assert card["state"] == "invoking"
    odds = card["invoke_odds"]
    assert odds["actor"]["now"] == "tie" and odds["actor"]["plus_two"] == "succeed"
    assert odds["actor"]["reroll"] == {
        "out_of": 81,
        "fumble": 1 + 4 + 10 + 16,
        "tie": 19,
        "succeed": 16 + 10,
        "excel": 4 + 1,
    }
    assert odds["opposition"]["plus_two"] == "fumble" and odds["opposition"]["reroll"] is None
    done = await paul.card("action.pass", action_id=card["action_id"], side="actor")
    assert done["invoke_odds"] is None
