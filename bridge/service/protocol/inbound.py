"""What intents carry beside their own fields: an actor as the GM's client syncs it, and
the parts of actions and procedures (opposition, helpers, sides, tasks, zones, stress marks)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from bridge.service.protocol.base import (
    ActionTypeName,
    HarmKindName,
    Identifier,
    Inbound,
    Name,
    Rating,
    StressKindName,
)

StuntNames = Annotated[list[Name], Field(max_length=20)]
"""R13.8: stunts a roll names (checked by the rules: the roller's, matching, once each)."""


class StuntData(Inbound):
    """A stunt's bonus: +``bonus`` to ``skill`` on the listed actions (all when empty)."""

    name: Name
    skill: Name
    bonus: Annotated[int, Field(ge=0, le=6)] = 2
    actions: Annotated[list[Literal[ActionTypeName, "oppose", "defend"]], Field(max_length=8)] = []


class AspectData(Inbound):
    key: Identifier
    name: Name


class ConsequenceSlotData(Inbound):
    """A consequence slot: its severity (2 mild, 4 moderate, 6 severe) and text, if filled."""

    id: Identifier
    severity: Annotated[int, Field(ge=1, le=12)]
    name: Name | None = None
    # R13.3: the extra mild slot of Physique or Will at Superb takes only this harm.
    harm: HarmKindName | None = None


class StressBoxData(Inbound):
    """One stress box: the shifts it absorbs and whether it is marked."""

    value: Annotated[int, Field(ge=1, le=12)] = 1
    marked: bool = False


class StressTrackData(Inbound):
    """A named stress track (R5.10): its kind and its boxes, in the sheet's order.

    Kind "any" takes every kind of harm (one track for all); kind "other" is not stress
    and the bridge never marks it."""

    id: Identifier
    name: Name
    kind: StressKindName
    boxes: Annotated[list[StressBoxData], Field(max_length=20)] = []


class ActorData(Inbound):
    """An actor as the adapters map it to the bridge's character model.

    Fields left out are left as the bridge has them.
    """

    id: Identifier
    name: Name
    owners: Annotated[list[Identifier], Field(max_length=64)] = []
    skills: Annotated[dict[Name, Rating], Field(max_length=200)] = {}
    stunts: Annotated[list[StuntData], Field(max_length=60)] = []
    aspects: Annotated[list[AspectData], Field(max_length=40)] = []
    fate_points: Annotated[int, Field(ge=0, le=99)] | None = None
    refresh: Annotated[int, Field(ge=0, le=20)] | None = None
    consequences: Annotated[list[ConsequenceSlotData], Field(max_length=12)] | None = None
    stress: Annotated[list[StressTrackData], Field(max_length=12)] | None = None

    @field_validator("stress")
    @classmethod
    def _one_track_per_id(
        cls, tracks: list[StressTrackData] | None
    ) -> list[StressTrackData] | None:
        ids = [t.id for t in tracks or ()]
        if len(set(ids)) != len(ids):
            raise ValueError("each stress track needs its own id")
        return tracks


class PassiveOppositionIn(Inbound):
    kind: Literal["passive"]
    rating: Rating


class ActiveOppositionIn(Inbound):
    """R2.2: the opposer rolls first; its owner (or the GM) is asked for the skill."""

    kind: Literal["active"]
    opposer_id: Identifier


class HelperIn(Inbound):
    """R10.1: a helper and the similar skill it brings (default: the actor's skill)."""

    character_id: Identifier
    skill: Name | None = None


class DangerIn(Inbound):
    """R9.1: which sides the GM declared the action dangerous for."""

    actor: bool = False
    opposition: bool = False


class RecoveryIn(Inbound):
    """R7.4: an overcome that treats this consequence slot."""

    character_id: Identifier
    slot_id: Identifier


class StressMarkIn(Inbound):
    """Boxes (0-based indexes) to mark on one of the target's stress tracks."""

    track: Identifier
    boxes: Annotated[list[Annotated[int, Field(ge=0, le=19)]], Field(min_length=1, max_length=20)]


class SideIn(Inbound):
    name: Name
    members: Annotated[list[Identifier], Field(min_length=1, max_length=12)]


class TaskIn(Inbound):
    name: Name
    skill: Name
    rating: Rating


class ZoneIn(Inbound):
    name: Name
    adjacent: Annotated[list[Name], Field(max_length=20)] = []
