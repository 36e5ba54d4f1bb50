"""The roll history's entries and the dice statistics."""

from __future__ import annotations

from bridge.rules import history
from bridge.rules.events import ActionCancelled, ActionResolved
from bridge.rules.ruleset import Ruleset
from bridge.rules.state import (
    WorldState,
)
from bridge.service import protocol
from bridge.service.cards.action import action_card
from bridge.service.cards.common import dice_list, who


def history_entry(
    event: ActionResolved | ActionCancelled,
    seq: int,
    digest: str,
    at: str,
    card_id: str,
    state: WorldState,
    ruleset: Ruleset,
    undone: bool,
) -> protocol.HistoryEntry:
    """One history entry as its card showed it; names as the world now knows them. A
    cancelled roll keeps its dice, invokes and effects (refunds, the GM's reason) and has
    no outcome, as its card says."""
    action = event.action
    cancelled = isinstance(event, ActionCancelled)
    card = action_card(action, state, ruleset, seq, digest)
    rolls = [
        {
            "character": who(state, roll.character),
            "side": roll.side,
            "dice": dice_list(roll.dice),
            "reroll": roll.reroll,
        }
        for roll in history.rolls_of(action)
    ]
    return protocol.HistoryEntry.model_validate(
        {
            "seq": seq,
            "hash": digest,
            "at": at,
            "scene": event.scene,
            "action_id": action.id,
            "card_id": card_id,
            "kind": history.kind_of(action),
            "action_type": action.type,
            "requested_by": action.requested_by,
            "actor": card["actor"],
            "opposition": card["opposition"],
            "opposition_kind": action.opposition_kind,
            "target": card["target"],
            "rolls": rolls,
            "invokes": card["invokes"],
            "shifts": card["shifts"],
            "outcome": None if cancelled else card["outcome"],
            "succeeded": None if cancelled else action.succeeded,
            "costs": [
                {"severity": c.severity, "kind": c.kind, "text": c.text} for c in action.costs
            ],
            "effects": card["effects"],
            "undone": undone,
            "cancelled": cancelled,
        }
    )


def dice_distribution(counts: list[int], cancelled: int = 0) -> protocol.DiceDistribution:
    """R1.1: the 4dF sums rolled against the expected share of each (x/81); ``cancelled``
    of them were rolled on actions the GM cancelled afterwards."""
    rolls = sum(counts)
    mean = sum((n - 4) * c for n, c in enumerate(counts)) / rolls if rolls else None
    return protocol.DiceDistribution(
        rolls=rolls,
        counts=counts,
        expected=[ways / 81 for ways in history.FOUR_DF_WAYS],
        mean=mean,
        cancelled=cancelled,
    )
