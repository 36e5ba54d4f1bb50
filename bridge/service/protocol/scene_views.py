"""The views of zoomed-in play (R11) and the scene panel: contests, challenges, conflicts,
the scene state and the cards of each."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from typing_extensions import TypedDict

from bridge.service.protocol.base import (
    HarmKindName,
    Outbound,
)
from bridge.service.protocol.card_views import ActionCard, CardAspect, CardCharacter, Rated, _view


@_view
class ContestSideView(TypedDict):
    id: str
    name: str
    members: list[CardCharacter]
    controllers: list[str]
    progress: int
    conceded: bool


@_view
class ExchangeRollView(TypedDict):
    side_id: str
    action_id: str | None
    total: Rated | None
    shifts: int | None
    forfeited: bool


@_view
class ExchangeView(TypedDict):
    number: int
    rolls: list[ExchangeRollView]
    winner: str | None
    margin: int
    progress: int
    twist: bool
    twist_aspect: str | None
    excelled: bool


@_view
class ContestView(TypedDict):
    id: str
    name: str
    mode: Literal["direct", "environment"]
    skill: str
    passive: Rated | None
    target: int
    sides: list[ContestSideView]
    exchange: int
    current: list[ExchangeRollView]
    history: list[ExchangeView]
    twist_pending: bool
    state: Literal["open", "won", "ended"]
    winner: str | None


@_view
class CostView(TypedDict):
    """R6: a cost, by severity and kind (from hello.costs), with the GM's words."""

    severity: Literal["minor", "serious"]
    kind: str
    text: str


@_view
class TaskView(TypedDict):
    id: str
    name: str
    skill: str
    opposition: Rated
    action_id: str | None
    actor: CardCharacter | None
    total: Rated | None
    shifts: int | None
    outcome: Literal["fumble", "tie", "succeed", "excel"] | None
    state: str | None
    succeeded: bool | None
    costs: list[CostView]


@_view
class ChallengeView(TypedDict):
    id: str
    name: str
    tasks: list[TaskView]
    advantages: list[str]
    state: Literal["open", "complete"]
    carry_boosts: bool


@_view
class ZoneView(TypedDict):
    name: str
    adjacent: list[str]
    occupants: list[CardCharacter]


@_view
class TurnView(TypedDict):
    character: CardCharacter
    side_id: str
    rating: int
    out: bool
    npc: bool


@_view
class ConflictView(TypedDict):
    id: str
    name: str
    kind: HarmKindName
    order_skill: str
    sides: list[ContestSideView]
    order: list[TurnView]
    ties: list[list[str]]
    turn: int
    exchange: int
    zones: list[ZoneView]
    state: Literal["open", "ended"]
    winner: str | None
    # R13.5: ranked by rating, or elective (whoever acted picks who is next).
    order_method: Annotated[Literal["ranked", "elective"], Field(default="ranked")]
    # Whose turn it is while the conflict is open.
    current: Annotated[str | None, Field(default=None)]
    # Elective order: who has acted this exchange.
    acted: Annotated[list[str], Field(default=[])]
    # R13.7: who is in full defense until its next turn.
    full_defense: Annotated[list[str], Field(default=[])]
    # R13.6: who conceded (paid when the conflict ends).
    conceded: Annotated[list[str], Field(default=[])]
    # R13.4: the conflict's end clears its members' stress (Fate Core).
    clears_stress: Annotated[bool, Field(default=False)]


@_view
class CompelView(TypedDict):
    id: str
    character: CardCharacter
    controllers: list[str]
    text: str
    aspect_id: str | None
    state: Literal["offered", "accepted", "refused"]


@_view
class SceneInfo(TypedDict):
    number: int
    session: int
    scenario: int


@_view
class WorldSettingsView(TypedDict):
    """The table's settings (``world.settings``)."""

    trust_player_ratings: bool
    # R13.7: Fate Condensed's optional full defense is on.
    full_defense: Annotated[bool, Field(default=False)]


@_view
class RulesetInfo(TypedDict):
    """What the module needs to know of the world's ruleset (R13)."""

    id: str
    title: str
    conflicts: bool
    ratings: Literal["skills", "approaches"]
    turn_order: Literal["ranked", "elective"] | None
    full_defense: bool
    stress_rule: Literal["ones", "one_box"] | None
    stunts_chosen: bool
    # R13.7: the GM may turn full defense on or off (Fate Condensed's option).
    full_defense_optional: Annotated[bool, Field(default=False)]
    # R13.1: the only ratings a roll may name (Accelerated's six approaches); [] for skills.
    approaches: Annotated[list[str], Field(default=[])]
    # R13.11: the GM may let a character interpose and defend for another.
    defend_for_another: Annotated[bool, Field(default=False)]


@_view
class SceneState(TypedDict):
    """Everything the GM's scene panel and the players' view show."""

    ruleset: str
    rules: RulesetInfo
    scene: SceneInfo
    settings: WorldSettingsView
    gm_fate_points: int
    aspects: list[CardAspect]
    contests: list[ContestView]
    challenges: list[ChallengeView]
    conflicts: list[ConflictView]
    compels: list[CompelView]
    # In an intent's answer: the id of the contest, challenge, conflict, compel or aspect
    # it created (macros need no search by name); None otherwise.
    created_id: Annotated[str | None, Field(default=None)]


@_view
class ContestCard(TypedDict):
    """A contest's exchange result (and the winner, when there is one)."""

    kind: Annotated[Literal["contest"], Field(default="contest")]
    contest: ContestView
    exchange: ExchangeView | None
    # The GM undid this exchange (history.undo): the card stays, marked.
    undone: Annotated[bool, Field(default=False)]


@_view
class ChallengeCard(TypedDict):
    """R11.1: the summary once every task is in."""

    kind: Annotated[Literal["challenge"], Field(default="challenge")]
    challenge: ChallengeView
    # The GM undid the challenge's completion (history.undo): the card stays, marked.
    undone: Annotated[bool, Field(default=False)]


class ConsequenceNote(Outbound):
    character: CardCharacter
    name: str
    severity: int


class EarningView(Outbound):
    """Why a fate point was earned: an aspect invoked against the character, a
    concession, a concession in a contest, or a hint not taken."""

    kind: Literal["invoked_against", "conceded", "conceded_contest", "hint_unused"]
    aspect: str | None


class FatePointGain(Outbound):
    character: CardCharacter
    gained: int
    reasons: list[EarningView]


class SceneEndData(Outbound):
    """What ending the scene changed (R12.1, R7.5)."""

    ended_scene: int
    removed_consequences: list[ConsequenceNote]
    recovering_consequences: list[ConsequenceNote]
    fate_points: list[FatePointGain]
    expired_boosts: list[str]
    cleared_aspects: list[str]
    no_longer_overwhelmed: list[CardCharacter]
    closed_unfinished: list[str]


class SceneEndCard(Outbound):
    kind: Literal["scene_end"] = "scene_end"
    scope: Literal["scene", "session", "scenario"]
    summary: SceneEndData


Card = Annotated[
    ActionCard | ContestCard | ChallengeCard | SceneEndCard, Field(discriminator="kind")
]
