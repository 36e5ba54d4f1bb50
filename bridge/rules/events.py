"""Domain events: the only way a world's state changes.

Events are upserts of whole records (a character, an aspect, an action, the
scene, the world counters) tagged with the intent that caused them. Every
random result sits inside a record, so replaying the log reproduces the state
exactly, without dice.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, TypeAdapter

from bridge.rules.state import Action, Aspect, Character, Frozen, Scene


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


class ScenePut(Frozen):
    type: Literal["scene.put"] = "scene.put"
    reason: str
    scene: Scene


class CountersPut(Frozen):
    type: Literal["world.counters"] = "world.counters"
    reason: str
    gm_fate_points: int
    action_count: int
    aspect_count: int


Event = Annotated[
    CharacterPut | AspectPut | AspectRemoved | ActionPut | ScenePut | CountersPut,
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
