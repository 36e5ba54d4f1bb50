"""What callers ask the action rules to do, and who asks."""

from __future__ import annotations

from dataclasses import dataclass, field

from bridge.rules.state import (
    ActionType,
    HarmKind,
    InvokeEffect,
    Payment,
    Purpose,
    SideName,
)

MILD = 2


@dataclass(frozen=True)
class Principal:
    """Who asks: a Foundry user, and whether the bridge knows it as a GM."""

    user_id: str
    is_gm: bool


@dataclass(frozen=True)
class Helper:
    character_id: str
    skill: str | None = None


@dataclass(frozen=True)
class StartAction:
    type: ActionType
    actor_id: str
    skill: str
    passive_rating: int | None = None
    # The passive rating comes from a record the GM set (a challenge's task), so it is
    # no player's proposal (R2.1).
    rating_from_gm: bool = False
    opposer_id: str | None = None
    target_id: str | None = None
    target_aspect_id: str | None = None
    aspect_name: str | None = None
    situation: str | None = None
    helpers: tuple[Helper, ...] = ()
    dangerous_actor: bool = False
    dangerous_opposition: bool = False
    recovery_of: tuple[str, str] | None = None
    allow_repeat: bool = False
    description: str | None = None
    # R11.3: an attack's kind; inside a conflict it is the conflict's.
    attack_kind: HarmKind | None = None
    # R13.8: the stunts the roll names (None: none named).
    stunts: tuple[str, ...] | None = None
    purpose: Purpose = "action"
    contest_id: str | None = None
    side_id: str | None = None
    challenge_id: str | None = None
    task_id: str | None = None


@dataclass(frozen=True)
class InvokeCommand:
    action_id: str
    invoker: str
    aspect_id: str
    payment: Payment
    effect: InvokeEffect = "bonus"
    side: SideName | None = None


@dataclass(frozen=True)
class CostCommand:
    action_id: str
    kind: str
    text: str = ""
    target_id: str | None = None
    aspect_name: str | None = None


@dataclass(frozen=True)
class StressMark:
    """Boxes (0-based) to mark on one stress track."""

    track_id: str
    boxes: tuple[int, ...]


@dataclass(frozen=True)
class AbsorbCommand:
    action_id: str
    stress: tuple[StressMark, ...] = ()
    consequences: dict[str, str] = field(default_factory=dict)
