"""Shifts and outcomes (R2.3, R3.1)."""

from __future__ import annotations

from bridge.rules.ruleset import Outcome, Ruleset


def shifts(actor_total: int, opposition_total: int) -> int:
    """R2.3: shifts are the actor's total minus the opposition's total."""
    return actor_total - opposition_total


def outcome_for(shift_count: int, ruleset: Ruleset) -> Outcome:
    """R3.1: below 0 fumble, 0 tie, 1..threshold-1 succeed, threshold or more excel."""
    if shift_count < 0:
        return "fumble"
    if shift_count == 0:
        return "tie"
    if shift_count >= ruleset.excel_threshold:
        return "excel"
    return "succeed"
