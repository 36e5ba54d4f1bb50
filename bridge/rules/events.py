"""Domain events: the only way a world's state changes.

Every random result is inside an event, so applying the log again gives the
same state without dice.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, TypeAdapter

from bridge.rules.state import ActionRecord, Boost, Character, Frozen


class CharacterSynced(Frozen):
    type: Literal["character.synced"] = "character.synced"
    character: Character


class ActionResolved(Frozen):
    """An action rolled and resolved in one step (no invoke phase yet)."""

    type: Literal["action.resolved"] = "action.resolved"
    action: ActionRecord


class BoostGained(Frozen):
    type: Literal["boost.gained"] = "boost.gained"
    boost: Boost


Event = Annotated[
    CharacterSynced | ActionResolved | BoostGained,
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
