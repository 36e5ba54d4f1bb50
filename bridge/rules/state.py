"""The game state of one world, as plain immutable data."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bridge.rules.dice import Face
from bridge.rules.ruleset import Outcome


class Frozen(BaseModel):
    """Immutable and closed: state is replaced, never mutated."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Character(Frozen):
    """What the bridge knows of an actor; synced from the GM's client."""

    id: str
    name: str
    owners: tuple[str, ...] = ()
    skills: dict[str, int] = Field(default_factory=dict)


class Boost(Frozen):
    """R12.6: a temporary aspect with exactly one free invoke."""

    id: str
    name: str
    holder_id: str
    source_action_id: str


ActionState = Literal["rolled", "invoking", "choosing", "resolved"]


class PassiveOpposition(Frozen):
    kind: Literal["passive"] = "passive"
    rating: int


class ActionRecord(Frozen):
    """One action's resolution so far (R2-R5)."""

    id: str
    type: Literal["overcome"]
    actor_id: str
    requested_by: str
    skill: str
    skill_rating: int
    opposition: PassiveOpposition
    dice: tuple[Face, Face, Face, Face]
    total: int
    shifts: int
    outcome: Outcome
    state: ActionState
    description: str | None = None
    boost_id: str | None = None


class WorldState(Frozen):
    """Everything the rules need about one world."""

    ruleset: str = "unwritten"
    characters: dict[str, Character] = Field(default_factory=dict)
    actions: dict[str, ActionRecord] = Field(default_factory=dict)
    boosts: dict[str, Boost] = Field(default_factory=dict)
    action_count: int = 0
