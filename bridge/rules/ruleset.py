"""Rulesets as data (RULES.md preamble): names, ladder labels and thresholds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Outcome = Literal["fumble", "tie", "succeed", "excel"]
ActionType = Literal["overcome"]
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


@dataclass(frozen=True)
class Ruleset:
    """Everything that differs between the Fate-family games the bridge runs."""

    id: RulesetId
    title: str
    ladder: dict[int, str]
    outcome_names: dict[Outcome, str]
    action_names: dict[str, str]
    excel_threshold: int = 3
    contest_target: int = 3
    consequence_slots: tuple[int, ...] = (2, 4, 6)
    stress_boxes: int = 0
    extra: dict[str, str] = field(default_factory=dict)

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
    },
    stress_boxes=3,
)

RULESETS: dict[str, Ruleset] = {r.id: r for r in (UNWRITTEN, FATE_CONDENSED)}


def get_ruleset(ruleset_id: str) -> Ruleset:
    """Look a ruleset up by id; raises ``KeyError`` for an unknown one."""
    return RULESETS[ruleset_id]
