"""The data of intents' answers (each intent names its own: ``Intent.__result__``)."""

from __future__ import annotations

from typing import Any, Literal

from typing_extensions import TypedDict

from bridge.service.protocol.base import (
    ActionTypeName,
    DiceRoll,
    Outbound,
    SideName,
)
from bridge.service.protocol.card_views import (
    ActionCard,
    CardAspect,
    CardCharacter,
    CardEffect,
    CardInvoke,
    CardSide,
    OddsView,
    OutcomeName,
    _view,
)
from bridge.service.protocol.frames import SlotState, StressTrackView
from bridge.service.protocol.scene_views import RulesetInfo


class ActionOption(Outbound):
    """An action the ruleset offers; the module names it (``FATEBRIDGE.Action.<id>``)."""

    id: str


class HelloData(Outbound):
    bridge_version: str
    protocol: int
    world: str
    world_name: str
    ruleset: str
    user: str
    role: Literal["gm", "player"]
    dev_dice: bool
    last_seq: int
    bound: bool
    actions: list[ActionOption]
    costs: dict[Literal["minor", "serious"], list[str]]
    hostile_invokes: bool
    # Players: write this into your User's flag ``fate-bridge.bindNonce`` to be bound.
    bind_nonce: str | None = None
    rules: RulesetInfo | None = None


class StoredEmit(Outbound):
    """One emit the client may have missed, as it was sent."""

    event: Literal["card", "actor.patch", "token.status", "scene.state"]
    data: dict[str, Any]


class WorldSyncData(Outbound):
    emits: list[StoredEmit]
    last_seq: int


class ActorSyncData(Outbound):
    actor_id: str
    changed: bool


class HistoryRoll(Outbound):
    """One 4dF roll on an entry: who rolled, the faces, and whether it was a reroll."""

    character: CardCharacter | None
    side: SideName
    dice: DiceRoll
    reroll: bool


class HistoryCost(Outbound):
    """R6: a cost the GM picked for success at a cost."""

    severity: Literal["minor", "serious"]
    kind: str
    text: str


class HistoryEntry(Outbound):
    """One roll as the table saw it, anchored in the log by seq and hash: a resolution,
    or (``cancelled``) an action the GM called off after its dice were rolled, with its
    dice, invokes and the refunds and reason its card lists in ``effects``."""

    seq: int
    hash: str
    at: str
    scene: int
    action_id: str
    card_id: str
    kind: str
    action_type: ActionTypeName
    requested_by: str
    actor: CardSide
    opposition: CardSide
    opposition_kind: Literal["passive", "active"]
    target: CardCharacter | None
    rolls: list[HistoryRoll]
    invokes: list[CardInvoke]
    shifts: int | None
    outcome: Literal["fumble", "tie", "succeed", "excel"] | None
    succeeded: bool | None
    costs: list[HistoryCost]
    effects: list[CardEffect]
    undone: bool
    # The GM cancelled the action after its roll: no outcome stands, the dice were rolled.
    cancelled: bool = False


class HistoryPage(Outbound):
    """Newest first. ``next_before`` asks for the next older page (None: no older
    events); a page may hold fewer than ``limit`` entries when filters are narrow."""

    entries: list[HistoryEntry]
    next_before: int | None
    last_seq: int


class DiceDistribution(Outbound):
    """How often each 4dF sum came up (index 0 is -4), against the expected share."""

    rolls: int
    counts: list[int]
    expected: list[float]
    mean: float | None
    # Of ``rolls``, those made on actions the GM cancelled afterwards (counted in them).
    cancelled: int = 0


class HistoryStatsData(Outbound):
    world: DiceDistribution
    characters: dict[str, DiceDistribution]
    names: dict[str, str]


class UndoData(Outbound):
    """What an undo took back: every change after ``back_to``; ``resolutions`` lists the
    seqs of the history entries it took back (resolutions and cancelled rolls)."""

    back_to: int
    seq: int
    hash: str
    resolutions: list[int]
    action_ids: list[str]
    card_ids: list[str]


@_view
class ActionData(TypedDict):
    """The answer to every ``action.*`` intent: the card as it now stands. ``card`` is
    null in an ack that carries the commit's emits (``AckOk.emits``) when one of them is
    this card's: the card travels once, and the client takes it from that emit."""

    action_id: str
    card_id: str
    card: ActionCard | None


@_view
class CharacterSummary(TypedDict):
    id: str
    name: str
    owners: list[str]
    skills: dict[str, int]
    fate_points: int
    pending_fate_points: int
    overwhelmed: bool
    consequences: list[SlotState]
    stress: list[StressTrackView]


class WorldRulesetData(Outbound):
    ruleset: str
    # False when the world already played this ruleset.
    changed: bool
    rules: RulesetInfo


@_view
class WorldStateData(TypedDict):
    ruleset: str
    characters: list[CharacterSummary]
    aspects: list[CardAspect]
    gm_fate_points: int
    open_actions: list[str]


class CardWrittenData(Outbound):
    action_id: str
    author: str
    changed: bool


class UserBindData(Outbound):
    user_id: str
    bound: bool


class RelayLeaveData(Outbound):
    user: str
    # False when the bridge was relaying nothing for that user on this connection.
    left: bool


class AspectGiveData(Outbound):
    aspect_id: str
    free_invokes: dict[str, int]


class GmBudgetData(Outbound):
    gm_fate_points: int


class DevQueueDiceData(Outbound):
    queued: int


class ActionOddsData(Outbound):
    """``action.odds``: the exact odds of each outcome before the roll, for the dialog."""

    modifier: int
    opposition: int
    odds: OddsView
    ruleset: str
    outcomes: list[OutcomeName]


class AnchorMismatch(Outbound):
    """A chat-log anchor the log disagrees with; ``log_hash`` is None when the log has no
    event at that seq (truncated)."""

    seq: int
    hash: str
    log_hash: str | None


class WorldVerifyData(Outbound):
    """``world verify`` and the module's "Verify history": ``ok`` only when every check holds."""

    ok: bool
    events: int
    head: str
    chain_broken_at: int | None
    stored_head_matches: bool
    replay_matches: bool
    anchors_checked: int
    # The first few disagreeing anchors, oldest first (the log was rewritten at or before).
    anchors_mismatched: list[AnchorMismatch]
    anchors_mismatched_count: int
    problems: list[str]
