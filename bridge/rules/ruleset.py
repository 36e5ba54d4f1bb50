"""Rulesets as data (RULES.md preamble): names, ladder labels and thresholds."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

Outcome = Literal["fumble", "tie", "succeed", "excel"]
RulesetId = Literal["unwritten", "fate-core", "fate-condensed", "fate-accelerated"]
# R13.2: how many boxes one hit may mark. "ones": any number of one-shift boxes (a box
# worth more only alone); "one_box": one box, worth at least the shifts it absorbs.
StressRule = Literal["ones", "one_box"]
TurnOrder = Literal["ranked", "elective"]

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
    """A stress track every new character of a ruleset gets (R5.10 Decision, R13.2):
    ``values``, or the longest of ``by_rating`` whose rating ``skill`` reaches."""

    id: str
    name: str
    kind: Literal["physical", "mental", "any"]
    values: tuple[int, ...]
    skill: str | None = None
    by_rating: tuple[tuple[int, tuple[int, ...]], ...] = ()

    def box_values(self, skills: dict[str, int]) -> tuple[int, ...]:
        """The box values for a character with these ratings."""
        rating = skills.get(self.skill, 0) if self.skill else 0
        values = self.values
        for needed, grown in self.by_rating:
            if rating >= needed:
                values = grown
        return values


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
    # R13.1: what a character rolls.
    ratings: Literal["skills", "approaches"] = "skills"
    # R13.2: boxes per hit (None: no attacks).
    stress_rule: StressRule | None = None
    # R13.3: at this rating of ``harm_skills[kind]`` a second mild slot, for that kind only.
    extra_mild_at: int | None = None
    # R13.2, R13.3: the skill that grows each kind's stress and consequences.
    harm_skills: dict[str, str] = field(default_factory=dict)
    # R13.4: stress clears when the conflict ends, or at the end of each scene.
    stress_clears: Literal["conflict", "scene"] | None = None
    # R11.3, R13.5: ranked by a skill per kind (ties by ``turn_tie_skills``), or elective.
    turn_order: TurnOrder = "ranked"
    turn_order_skills: dict[str, str] = field(
        default_factory=lambda: {"physical": "Quick", "mental": "Careful"}
    )
    turn_tie_skills: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # R13.1: when not empty, the only ratings a roll may name (Accelerated's approaches).
    approaches: tuple[str, ...] = ()
    # R13.11: the GM may let a character interpose and defend for another.
    defend_for_another: bool = False
    # R13.7: full defense always, as an option the world turns on, or never.
    full_defense: Literal["always", "option", "never"] = "never"
    # R13.8: the roll names the stunts that apply (none unless named); False: every
    # stunt matching the skill and action applies unless the roll names some.
    stunts_chosen: bool = False
    costs: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(COSTS))
    # R12.5: fate points gained by a sacrifice, by consequence severity.
    sacrifice_points: dict[int, int] = field(default_factory=lambda: {2: 1, 4: 2, 6: 3})

    def ladder_label(self, value: int) -> str:
        """The ladder word for a value; beyond either end the signed number (R1.3)."""
        return self.ladder.get(value, f"{value:+d}")


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

_FATE_OUTCOMES: dict[Outcome, str] = {
    "fumble": "Fail",
    "tie": "Tie",
    "succeed": "Succeed",
    "excel": "Succeed with Style",
}
_FATE_ACTION_NAMES = {
    "overcome": "Overcome",
    "create_advantage": "Create an Advantage",
    "attack": "Attack",
    "defend": "Defend",
    "oppose": "Oppose",
    "discover": "Discover",
}
_FATE_ACTIONS = ("overcome", "create_advantage", "discover", "attack")
_PHYSIQUE_WILL = {"physical": "Physique", "mental": "Will"}


def _physique_and_will_tracks(
    values: tuple[int, ...], by_rating: tuple[tuple[int, tuple[int, ...]], ...]
) -> tuple[StressTrackDefault, ...]:
    """A physical track grown by Physique and a mental one grown by Will (R13.2)."""
    return (
        StressTrackDefault(
            "physical", "Physical Stress", "physical", values, "Physique", by_rating
        ),
        StressTrackDefault("mental", "Mental Stress", "mental", values, "Will", by_rating),
    )


FATE_CORE = Ruleset(
    id="fate-core",
    title="Fate Core",
    ladder=_LADDER,
    outcome_names=_FATE_OUTCOMES,
    action_names=_FATE_ACTION_NAMES,
    actions=_FATE_ACTIONS,
    # R13.2: boxes 1 and 2; Physique/Will Average-Fair add a 3, Good and up a 3 and a 4.
    stress_tracks=_physique_and_will_tracks((1, 2), ((1, (1, 2, 3)), (3, (1, 2, 3, 4)))),
    hostile_invokes=True,
    conflicts=True,
    stress_rule="one_box",
    extra_mild_at=5,
    harm_skills=_PHYSIQUE_WILL,
    stress_clears="conflict",
    turn_order_skills={"physical": "Notice", "mental": "Empathy"},
    turn_tie_skills={"physical": ("Athletics", "Physique"), "mental": ("Rapport", "Will")},
    full_defense="always",
    stunts_chosen=True,
    defend_for_another=True,
)

# R13: Condensed and Accelerated are Fate Core but where the SRDs differ.
FATE_CONDENSED = replace(
    FATE_CORE,
    id="fate-condensed",
    title="Fate Condensed",
    # R13.2: 3 one-shift boxes a track; 4 at Physique/Will Average-Fair, 6 at Good and up.
    stress_tracks=_physique_and_will_tracks((1, 1, 1), ((1, (1,) * 4), (3, (1,) * 6))),
    stress_rule="ones",
    stress_clears="scene",
    turn_order="elective",
    turn_order_skills={},
    turn_tie_skills={},
    full_defense="option",
    defend_for_another=False,
)

FATE_ACCELERATED = replace(
    FATE_CORE,
    id="fate-accelerated",
    title="Fate Accelerated",
    ratings="approaches",
    approaches=("Careful", "Clever", "Flashy", "Forceful", "Quick", "Sneaky"),
    defend_for_another=False,
    # R13.2: one track of boxes 1, 2, 3 for every kind of harm; R13.3: no extra mild slot.
    stress_tracks=(StressTrackDefault("stress", "Stress", "any", (1, 2, 3)),),
    extra_mild_at=None,
    harm_skills={},
    stress_clears="scene",
    # R13.5, seed 003: Quick in a physical conflict, Careful in a mental one.
    turn_order_skills={"physical": "Quick", "mental": "Careful"},
    turn_tie_skills={},
    full_defense="never",
)

RULESETS: dict[str, Ruleset] = {
    r.id: r for r in (UNWRITTEN, FATE_CORE, FATE_CONDENSED, FATE_ACCELERATED)
}


def get_ruleset(ruleset_id: str) -> Ruleset:
    """Look a ruleset up by id; raises ``KeyError`` for an unknown one."""
    return RULESETS[ruleset_id]
