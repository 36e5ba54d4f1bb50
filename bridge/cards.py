"""Project rules records into the chat cards the module renders."""

from __future__ import annotations

from bridge.protocol import ActionCard, CardActor, CardBoost, Rated
from bridge.rules.dice import dice_total
from bridge.rules.ruleset import Ruleset
from bridge.rules.state import ActionRecord, WorldState


def rated(value: int, ruleset: Ruleset) -> Rated:
    """A ladder value with its word (R1.3)."""
    return Rated(value=value, label=ruleset.ladder_label(value))


def action_card(
    action: ActionRecord,
    state: WorldState,
    ruleset: Ruleset,
    event_seq: int,
    event_hash: str,
) -> ActionCard:
    """The card for one action, as of the event that last changed it."""
    actor = state.characters[action.actor_id]
    boost = state.boosts.get(action.boost_id) if action.boost_id else None
    return ActionCard(
        action_id=action.id,
        ruleset=ruleset.id,
        action_type=action.type,
        action_label=ruleset.action_names.get(action.type, action.type),
        state=action.state,
        actor=CardActor(id=actor.id, name=actor.name),
        skill=action.skill,
        skill_rating=rated(action.skill_rating, ruleset),
        dice=action.dice,
        dice_total=dice_total(action.dice),
        total=rated(action.total, ruleset),
        opposition=rated(action.opposition.rating, ruleset),
        opposition_kind=action.opposition.kind,
        shifts=action.shifts,
        outcome=action.outcome,
        outcome_label=ruleset.outcome_names[action.outcome],
        description=action.description,
        boost=CardBoost(id=boost.id, name=boost.name, holder_id=boost.holder_id) if boost else None,
        event_seq=event_seq,
        event_hash=event_hash,
    )
