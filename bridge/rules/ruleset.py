"""Rulesets as data (RULES.md preamble): names, ladder labels and thresholds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Outcome = Literal["fumble", "tie", "succeed", "excel"]
RulesetId = Literal["unwritten", "fate-condensed"]

_LADDER: dict[int, str] = {
    8: "Legendary",
    7: "Epic",
    6: "Fantastic",
    5: "Superb",
    4: "Great",
    3: "Good",
    2: "Fair",
    1: "Average",
    0: "Mediocre",
    -1: "Poor",
    -2: "Terrible",
}


# R6.1 and R6.2: mechanical costs the bridge applies, then narrative ones recorded as text.
COSTS: dict[str, tuple[str, ...]] = {
    "minor": ("npc_boost", "aspect_on_actor", "wrinkle", "tough_choice"),
    "serious": (
        "mild_consequence",
        "opponent_advantage",
        "reinforce_opposition",
        "delay",
        "big_wrinkle",
    ),
}


@dataclass(frozen=True)
class StressTrackDefault:
    """A stress track every new character of a ruleset gets (R5.10 Decision)."""

    id: str
    name: str
    kind: Literal["physical", "mental"]
    values: tuple[int, ...]


@dataclass(frozen=True)
class Ruleset:
    """Everything that differs between the Fate-family games the bridge runs."""

    id: RulesetId
    title: str
    ladder: dict[int, str]
    outcome_names: dict[Outcome, str]
    action_names: dict[str, str]
    actions: tuple[str, ...]
    excel_threshold: int = 3
    contest_target: int = 3
    consequence_slots: tuple[int, ...] = (2, 4, 6)
    stress_tracks: tuple[StressTrackDefault, ...] = ()
    hostile_invokes: bool = False
    conflicts: bool = False
    # R11.3: what sets turn order, by kind of conflict.
    turn_order_skills: dict[str, str] = field(
        default_factory=lambda: {"physical": "Quick", "mental": "Careful"}
    )
    costs: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(COSTS))
    # R12.5: fate points gained by a sacrifice, by consequence severity.
    sacrifice_points: dict[int, int] = field(default_factory=lambda: {2: 1, 4: 2, 6: 3})

    def ladder_label(self, value: int) -> str:
        """The ladder word for a value; beyond either end the signed number (R1.3)."""
        return self.ladder.get(value, f"{value:+d}")

    def describe(self, value: int) -> str:
        """Word and number together, e.g. ``Superb (+5)`` (R1.3)."""
        label = self.ladder_label(value)
        number = f"{value:+d}"
        return number if label == number else f"{label} ({number})"


UNWRITTEN = Ruleset(
    id="unwritten",
    title="Unwritten",
    ladder=_LADDER,
    outcome_names={"fumble": "Fumble", "tie": "Tie", "succeed": "Succeed", "excel": "Excel"},
    action_names={
        "overcome": "Overcome",
        "create_advantage": "Create an Advantage",
        "take_advantage": "Take Advantage",
        "leave_mark": "Leave a Mark",
        "discover": "Discover",
        "oppose": "Oppose",
    },
    actions=("overcome", "create_advantage", "take_advantage", "discover"),
)

FATE_CONDENSED = Ruleset(
    id="fate-condensed",
    title="Fate Condensed",
    ladder=_LADDER,
    outcome_names={
        "fumble": "Fail",
        "tie": "Tie",
        "succeed": "Succeed",
        "excel": "Succeed with Style",
    },
    action_names={
        "overcome": "Overcome",
        "create_advantage": "Create an Advantage",
        "attack": "Attack",
        "defend": "Defend",
        "oppose": "Oppose",
        "discover": "Discover",
    },
    actions=("overcome", "create_advantage", "discover", "attack"),
    # Fate Condensed: 3 physical and 3 mental boxes of one shift each.
    stress_tracks=(
        StressTrackDefault("physical", "Physical Stress", "physical", (1, 1, 1)),
        StressTrackDefault("mental", "Mental Stress", "mental", (1, 1, 1)),
    ),
    hostile_invokes=True,
    conflicts=True,
)

RULESETS: dict[str, Ruleset] = {r.id: r for r in (UNWRITTEN, FATE_CONDENSED)}


def get_ruleset(ruleset_id: str) -> Ruleset:
    """Look a ruleset up by id; raises ``KeyError`` for an unknown one."""
    return RULESETS[ruleset_id]
