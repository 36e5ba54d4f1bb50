"""Decisions (state + command + dice -> events) and the reducer (state + event -> state)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bridge.rules.dice import DiceSource, dice_total
from bridge.rules.events import ActionResolved, BoostGained, CharacterSynced, Event
from bridge.rules.outcome import outcome_for, shifts
from bridge.rules.ruleset import Ruleset
from bridge.rules.state import (
    ActionRecord,
    ActionState,
    Boost,
    Character,
    PassiveOpposition,
    WorldState,
)


class RuleViolation(Exception):
    """A command the rules refuse; ``code`` is machine-readable, the message is for people."""

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field


@dataclass(frozen=True)
class OvercomeCommand:
    actor_id: str
    skill: str
    opposition: PassiveOpposition
    requested_by: str
    description: str | None = None


def sync_character(state: WorldState, character: Character) -> list[Event]:
    """Record the character as the GM's client sees it; no event when nothing changed."""
    if state.characters.get(character.id) == character:
        return []
    return [CharacterSynced(character=character)]


def skill_rating(character: Character, skill: str) -> int:
    """A skill's rating; a skill the character lacks is Mediocre (+0)."""
    return character.skills.get(skill, 0)


def start_overcome(
    state: WorldState, command: OvercomeCommand, dice: DiceSource, ruleset: Ruleset
) -> list[Event]:
    """Roll and resolve an overcome against passive opposition (R1, R2.1, R2.3, R3, R5.1).

    Succeed and excel resolve at once (excel adds a boost for the actor). A fumble
    or tie waits in ``choosing`` for the actor's owner: fail, or succeed at a cost.
    """
    character = state.characters.get(command.actor_id)
    if character is None:
        raise RuleViolation(
            "unknown_actor",
            f"The bridge does not know actor {command.actor_id!r}; sync it first.",
            "actor_id",
        )
    rating = skill_rating(character, command.skill)
    faces = dice.roll()
    total = dice_total(faces) + rating
    shift_count = shifts(total, command.opposition.rating)
    outcome = outcome_for(shift_count, ruleset)
    action_id = f"a{state.action_count + 1}"
    resolved: ActionState = "resolved" if outcome in ("succeed", "excel") else "choosing"
    boost: Boost | None = None
    if outcome == "excel":
        boost = Boost(
            id=f"{action_id}-boost",
            name=f"{character.name}: {command.skill} flourish",
            holder_id=character.id,
            source_action_id=action_id,
        )
    record = ActionRecord(
        id=action_id,
        type="overcome",
        actor_id=character.id,
        requested_by=command.requested_by,
        skill=command.skill,
        skill_rating=rating,
        opposition=command.opposition,
        dice=faces,
        total=total,
        shifts=shift_count,
        outcome=outcome,
        state=resolved,
        description=command.description,
        boost_id=boost.id if boost else None,
    )
    events: list[Event] = [ActionResolved(action=record)]
    if boost is not None:
        events.append(BoostGained(boost=boost))
    return events


def apply(state: WorldState, event: Event) -> WorldState:
    """Apply one event; the only function that produces a new state."""
    if isinstance(event, CharacterSynced):
        characters = {**state.characters, event.character.id: event.character}
        return state.model_copy(update={"characters": characters})
    if isinstance(event, ActionResolved):
        actions = {**state.actions, event.action.id: event.action}
        return state.model_copy(update={"actions": actions, "action_count": state.action_count + 1})
    if isinstance(event, BoostGained):
        boosts = {**state.boosts, event.boost.id: event.boost}
        return state.model_copy(update={"boosts": boosts})
    raise TypeError(f"unhandled event {event!r}")


def replay(events: Iterable[Event], initial: WorldState | None = None) -> WorldState:
    """Fold events over a state; replaying a world's log reproduces its state."""
    state = initial if initial is not None else WorldState()
    for event in events:
        state = apply(state, event)
    return state
