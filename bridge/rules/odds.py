"""Odds before rolling and before invoking: exact, from the 81 equally likely 4dF rolls (R1.1).

Pure functions over plain numbers: the chance of each outcome (R3.1, the ruleset's thresholds)
for the modifiers known so far against a known opposition total (a passive rating, or an
opposing total already rolled), and in the invoke phase what a +2 or a reroll (R4.1) would do.
Outcomes are always the acting side's (R5.7: an opposition's outcome mirrors the actor's).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType

from bridge.rules.dice import DICE_PER_ROLL, FACES
from bridge.rules.outcome import outcome_for
from bridge.rules.ruleset import Outcome, Ruleset
from bridge.rules.state import Action

OUTCOMES: tuple[Outcome, ...] = ("fumble", "tie", "succeed", "excel")
# How many of the 3**4 = 81 rolls give each dice sum -4..+4 (1, 4, 10, 16, 19, 16, 10, 4, 1).
FOUR_DF: Mapping[int, int] = MappingProxyType(
    dict(sorted(Counter(sum(r) for r in itertools.product(FACES, repeat=DICE_PER_ROLL)).items()))
)
ROLLS = sum(FOUR_DF.values())
INVOKE_BONUS = 2


@dataclass(frozen=True)
class OutcomeOdds:
    """How many of ``out_of`` equally likely rolls give each outcome (exact)."""

    counts: Mapping[Outcome, int]
    out_of: int

    def probability(self, *outcomes: Outcome) -> Fraction:
        return Fraction(sum(self.counts[o] for o in outcomes), self.out_of)


def _odds(base_shifts: int, sign: int, ruleset: Ruleset) -> OutcomeOdds:
    """The actor's outcomes when its shifts are ``base_shifts + sign * dice`` over a fresh 4dF."""
    key = (base_shifts, sign, ruleset.excel_threshold)
    known = _KNOWN_ODDS.get(key)
    if known is None:
        if len(_KNOWN_ODDS) >= 4096:
            _KNOWN_ODDS.clear()
        known = _KNOWN_ODDS[key] = _count_odds(base_shifts, sign, ruleset)
    return known


# Every invoke-phase card asks for these; the shifts seen in play are a handful of values
# (bounded all the same: cleared when full). Outcomes depend on the ruleset only through
# its excel threshold (R3.1, ``outcome_for``).
_KNOWN_ODDS: dict[tuple[int, int, int], OutcomeOdds] = {}


def _count_odds(base_shifts: int, sign: int, ruleset: Ruleset) -> OutcomeOdds:
    counts = dict.fromkeys(OUTCOMES, 0)
    for dice_sum, ways in FOUR_DF.items():
        counts[outcome_for(base_shifts + sign * dice_sum, ruleset)] += ways
    return OutcomeOdds(MappingProxyType(counts), ROLLS)


def roll_odds(modifier: int, opposition_total: int, ruleset: Ruleset) -> OutcomeOdds:
    """R1.2, R2.3, R3.1: the actor rolls 4dF + ``modifier`` (skill, stunts, teamwork, invokes)
    against a known ``opposition_total``."""
    return _odds(modifier - opposition_total, 1, ruleset)


@dataclass(frozen=True)
class InvokeOdds:
    """For one side in the invoke phase: the actor's outcome now, after a +2 invoke for this
    side, and the odds after this side rerolls (None for a side without dice)."""

    now: Outcome
    plus_two: Outcome
    reroll: OutcomeOdds | None


def invoke_odds(
    shifts_now: int, side_dice_total: int | None, acting: bool, ruleset: Ruleset
) -> InvokeOdds:
    """R4.1 for the acting side (``acting``) or the opposing side: a +2 moves the actor's shifts
    by ±2; a reroll replaces this side's dice (sum ``side_dice_total``), bonuses stay."""
    sign = 1 if acting else -1
    reroll = None
    if side_dice_total is not None:
        reroll = _odds(shifts_now - sign * side_dice_total, sign, ruleset)
    return InvokeOdds(
        now=outcome_for(shifts_now, ruleset),
        plus_two=outcome_for(shifts_now + sign * INVOKE_BONUS, ruleset),
        reroll=reroll,
    )


def action_invoke_odds(action: Action, ruleset: Ruleset) -> dict[str, InvokeOdds]:
    """``invoke_odds`` for each side of a rolled action (keys "actor", "opposition"); empty
    before the actor's dice are known."""
    actor, opposition = action.actor.roll, action.opposition.roll
    if actor.dice is None or (opposition.passive_rating is None and opposition.dice is None):
        return {}
    shifts_now = actor.total - opposition.total
    return {
        "actor": invoke_odds(shifts_now, sum(actor.dice), True, ruleset),
        "opposition": invoke_odds(
            shifts_now, sum(opposition.dice) if opposition.dice else None, False, ruleset
        ),
    }
