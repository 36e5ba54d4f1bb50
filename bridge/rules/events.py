"""Domain events: the only way a world's state changes.

Events are upserts of whole records (a character, an aspect, an action, the
scene, the world counters) tagged with the intent that caused them. Every
random result sits inside a record, so replaying the log reproduces the state
exactly, without dice.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from pydantic import Field, TypeAdapter

from bridge.rules.state import (
    Action,
    Aspect,
    Challenge,
    Character,
    Compel,
    Conflict,
    Contest,
    Frozen,
    Scene,
    WorldSettings,
)


class CharacterPut(Frozen):
    type: Literal["character.put"] = "character.put"
    reason: str
    character: Character


class AspectPut(Frozen):
    type: Literal["aspect.put"] = "aspect.put"
    reason: str
    aspect: Aspect


class AspectRemoved(Frozen):
    type: Literal["aspect.removed"] = "aspect.removed"
    reason: str
    aspect_id: str


class ActionPut(Frozen):
    type: Literal["action.put"] = "action.put"
    reason: str
    action: Action


class ActionResolved(ActionPut):
    """An action reaching ``resolved`` (R3.2, R5): an upsert like :class:`ActionPut`,
    tagged so the roll history finds resolutions in the log by type alone."""

    type: Literal["action.resolved"] = "action.resolved"  # type: ignore[assignment]
    # The scene it was resolved in (R12): the history filters by it.
    scene: int


class ActionCancelled(ActionPut):
    """An action reaching ``cancelled`` (the GM called it off): an upsert like
    :class:`ActionPut`, tagged so the roll history finds cancellations by type alone;
    one whose dice were rolled is a roll of the table's record (bridge.rules.history)."""

    type: Literal["action.cancelled"] = "action.cancelled"  # type: ignore[assignment]
    # The scene it was cancelled in (R12): the history filters by it.
    scene: int


class HistoryUndone(Frozen):
    """The GM took back every change after event ``back_to`` (inside one scene).

    The restoring upserts come just before it in the same commit; this marker says
    which resolutions they took back, so the history and the cards can show it."""

    type: Literal["history.undone"] = "history.undone"
    reason: str
    back_to: int
    resolutions: tuple[int, ...]
    action_ids: tuple[str, ...]


class ScenePut(Frozen):
    type: Literal["scene.put"] = "scene.put"
    reason: str
    scene: Scene


class ContestPut(Frozen):
    type: Literal["contest.put"] = "contest.put"
    reason: str
    contest: Contest


class ChallengePut(Frozen):
    type: Literal["challenge.put"] = "challenge.put"
    reason: str
    challenge: Challenge


class ConflictPut(Frozen):
    type: Literal["conflict.put"] = "conflict.put"
    reason: str
    conflict: Conflict


class CompelPut(Frozen):
    type: Literal["compel.put"] = "compel.put"
    reason: str
    compel: Compel


class CarriedBoostsPut(Frozen):
    type: Literal["boosts.carried"] = "boosts.carried"
    reason: str
    aspect_ids: tuple[str, ...]


class SettingsPut(Frozen):
    type: Literal["settings.put"] = "settings.put"
    reason: str
    settings: WorldSettings


class RulesetPut(Frozen):
    """R13.9: the GM chose the rules the world plays from now on."""

    type: Literal["ruleset.put"] = "ruleset.put"
    reason: str
    ruleset: str


Collection = Literal["actions", "contests", "challenges", "conflicts", "compels"]


class RecordDropped(Frozen):
    """A finished record leaves the live state (its history stays in the log)."""

    type: Literal["record.dropped"] = "record.dropped"
    reason: str
    collection: Collection
    record_id: str


class CountersPut(Frozen):
    type: Literal["world.counters"] = "world.counters"
    reason: str
    gm_fate_points: int
    action_count: int
    aspect_count: int


Event = Annotated[
    CharacterPut
    | AspectPut
    | AspectRemoved
    | ActionPut
    | ActionResolved
    | ActionCancelled
    | HistoryUndone
    | ScenePut
    | CountersPut
    | ContestPut
    | ChallengePut
    | ConflictPut
    | CompelPut
    | CarriedBoostsPut
    | SettingsPut
    | RulesetPut
    | RecordDropped,
    Field(discriminator="type"),
]

# The Annotated union is a type to pydantic but a value to mypy, hence the cast.
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(cast(Any, Event))

RecordMap = Literal[
    "characters", "aspects", "actions", "contests", "challenges", "conflicts", "compels"
]

# Each event that upserts one record, with the state's map it goes in and the event's
# field that holds it: the one table the draft, the reducer and the undo read.
PUTS: dict[type[Frozen], tuple[RecordMap, str]] = {
    CharacterPut: ("characters", "character"),
    AspectPut: ("aspects", "aspect"),
    ActionPut: ("actions", "action"),
    ActionResolved: ("actions", "action"),
    ActionCancelled: ("actions", "action"),
    ContestPut: ("contests", "contest"),
    ChallengePut: ("challenges", "challenge"),
    ConflictPut: ("conflicts", "conflict"),
    CompelPut: ("compels", "compel"),
}
_PLAIN_PUTS: dict[RecordMap, tuple[type[Frozen], str]] = {
    records: (event_type, name)
    for event_type, (records, name) in PUTS.items()
    if event_type not in (ActionResolved, ActionCancelled)
}


def record_put(records: RecordMap, record: object, reason: str) -> Event:
    """The plain upsert of ``record`` into the state's map ``records`` (for an action, an
    ActionPut: never a resolution or a cancellation)."""
    event_type, name = _PLAIN_PUTS[records]
    return cast(Event, event_type(reason=reason, **{name: record}))
