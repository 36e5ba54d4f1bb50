"""Bridge -> client messages: acks, results, chat cards, patches and scene views.

Every view the bridge builds as a plain dict (``bridge.service.cards``: cards, actor patches, token
statuses, the scene panel, the world summary) is declared here once, as a
:class:`~typing_extensions.TypedDict`: mypy checks each dict literal that builds one (every
key, every value's type), pydantic validates and writes its JSON Schema
(``TypeAdapter(View)``), and the hot path builds plain dicts, never a model. A key with a
default (``Annotated[T, Field(default=...)]``) is always built; the default is for what
pydantic validates (a client, a stored emit from before the key existed) and the schema
marks it optional. Messages built rarely stay pydantic models (:class:`Outbound`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, TypeAdapter, WithJsonSchema, with_config
from typing_extensions import TypedDict

from bridge.rules.errors import RuleCode
from bridge.service.protocol.base import (
    ActionTypeName,
    DiceRoll,
    Face,
    HarmKindName,
    InvokeEffect,
    Outbound,
    Payment,
    SideName,
    StressKindName,
)

# A view refuses unknown keys, as an Outbound model does.
_view = with_config(ConfigDict(extra="forbid"))
# A view's four dice: a list, as JSON reads back, so a view built in process equals the
# one a client or the store reads; its schema is DiceRoll's (four faces, each in place).
DiceList = Annotated[
    list[Face],
    Field(min_length=4, max_length=4),
    WithJsonSchema(TypeAdapter(DiceRoll).json_schema()),
]

# --- acks ------------------------------------------------------------------

# An ack's error codes: the transport's and the service's own, and every code the rules
# refuse with (one home for those: bridge.rules.errors).
ErrorCode = Literal[
    "unknown_event",
    "too_large",
    "rate_limited",
    "unauthorized",
    "unbound",
    "no_gm",
    "dev_dice_disabled",
    "conflict",
    "internal",
    RuleCode,
]


class Health(Outbound):
    """``GET /healthz``."""

    ok: bool
    version: str
    protocol: int


# A refusal's named parameters: what the module's sentence for its code fills in.
ErrorParam = str | int


class ErrorInfo(Outbound):
    """A refusal: the module says it in its user's language from ``code``, ``field`` and
    ``params`` (``FATEBRIDGE.Error.<code>``); ``message`` is the bridge's English rendering,
    for the HTTP API, the command line and logs."""

    code: ErrorCode
    message: str
    field: str | None = None
    params: dict[str, ErrorParam] = {}


# --- bridge -> clients emits ------------------------------------------------


@_view
class Rated(TypedDict):
    """A ladder value; its word is the reader's (``FATEBRIDGE.Ladder.<value>``)."""

    value: int


@_view
class CardCharacter(TypedDict):
    id: str
    name: str


@_view
class CardSide(TypedDict):
    """One side of an action: who rolls, with what, and what was added (R1.2)."""

    leader: CardCharacter | None
    helpers: list[CardCharacter]
    controllers: list[str]
    skill: str | None
    skill_rating: Rated | None
    stunt_bonus: int
    teamwork_bonus: int
    invoke_bonus: int
    dice: DiceList | None
    dice_total: int | None
    passive: bool
    total: Rated | None
    dangerous: bool
    passed: bool
    fate_points: int | None
    # R13.8: the stunts this roll named (their bonus is ``stunt_bonus``).
    stunts: Annotated[list[str], Field(default=[])]
    # R13.7: +2 of full defense on this defend roll (in the total).
    full_defense: Annotated[bool, Field(default=False)]


@_view
class CardInvoke(TypedDict):
    side: SideName
    invoker: str
    invoker_name: str
    aspect_id: str
    aspect_name: str
    payment: Payment
    effect: InvokeEffect
    dice: DiceList | None


@_view
class CardEffect(TypedDict):
    kind: str
    text: str
    count: int
    character: CardCharacter | None
    aspect_id: str | None
    detail: str
    cause: CardCharacter | None


@_view
class CardAspect(TypedDict):
    """An aspect someone on this action could invoke, with who holds its free invokes.

    Boosts alike in name, place and holder are one entry: ``count`` of them, ``id`` the
    one an invoke of the entry spends, ``free_invokes`` that one's."""

    id: str
    name: str
    kind: Literal["character", "situation", "consequence", "boost"]
    attached_to: CardCharacter | None
    free_invokes: dict[str, int]
    count: Annotated[int, Field(default=1)]


PromptKind = Literal[
    "confirm", "roll", "oppose", "invoke", "choose", "cost", "absorb", "hint", "none"
]


@_view
class CardPrompt(TypedDict):
    """Who should act next, for showing buttons; the bridge checks every press itself."""

    kind: PromptKind
    users: list[str]
    gm: bool
    options: list[str]


@_view
class CardProposal(TypedDict):
    """R2.1, R9.1: what a player proposed that waits for the GM (the confirm controls
    start from it)."""

    passive_rating: Rated | None
    dangerous_actor: bool
    dangerous_opposition: bool


@_view
class CardParticipant(TypedDict):
    """R10.1: someone named on the acting side; ``invited`` ones wait for ``controllers``
    (their owners) or the GM to accept."""

    character: CardCharacter
    skill: str
    status: Literal["joined", "invited", "declined", "dropped"]
    controllers: list[str]


@_view
class CardConsent(TypedDict):
    """Consent to harm (DESIGN Reach and trust): a character a player's action would touch
    that the player does not own, and the parts it plays (``target``, ``opposer``,
    ``aspect``: an aspect on it the action is about). ``asked`` waits for ``controllers``
    (its owners) or the GM to accept (action.help); ``declined`` called the action off."""

    character: CardCharacter
    parts: list[Literal["target", "opposer", "aspect"]]
    status: Literal["asked", "accepted", "declined"]
    controllers: list[str]


@_view
class CardHint(TypedDict):
    """R5.5: an excelled discover's hint: on offer, asked for, or given (with its text)."""

    status: Literal["offered", "asked", "given"]
    text: str | None


@_view
class OddsView(TypedDict):
    """Exact odds of the actor's outcomes: how many of ``out_of`` equally likely rolls give
    each (R1.1: 81 for one 4dF roll)."""

    out_of: int
    fumble: int
    tie: int
    succeed: int
    excel: int


@_view
class SideInvokeOdds(TypedDict):
    """R4.1 for one side: the actor's outcome now, after a +2 invoke for this side, and the
    odds after this side rerolls (None: this side has no dice to reroll)."""

    now: Literal["fumble", "tie", "succeed", "excel"]
    plus_two: Literal["fumble", "tie", "succeed", "excel"]
    reroll: OddsView | None


OutcomeName = Literal["fumble", "tie", "succeed", "excel"]


@_view
class InvokeOddsView(TypedDict):
    actor: SideInvokeOdds
    opposition: SideInvokeOdds
    # The ruleset's outcomes, in order (fumble, tie, succeed, excel): ids the reader names.
    outcomes: list[OutcomeName]


@_view
class ActionCard(TypedDict):
    """Everything a chat card shows about one action; rendered by the module."""

    kind: Annotated[Literal["action"], Field(default="action")]
    action_id: str
    ruleset: str
    action_type: ActionTypeName
    state: Literal[
        "confirming",
        "declared",
        "awaiting_opposition",
        "invoking",
        "choosing",
        "costing",
        "absorbing",
        "resolved",
        "cancelled",
    ]
    actor: CardSide
    opposition: CardSide
    opposition_kind: Literal["passive", "active"]
    opposition_action: Literal["oppose", "defend"] | None
    target: CardCharacter | None
    target_aspect: CardAspect | None
    aspect_name: str | None
    situation: str | None
    invokes: list[CardInvoke]
    shifts: int | None
    outcome: Literal["fumble", "tie", "succeed", "excel"] | None
    provisional: bool
    succeeded: bool | None
    pending_choice: str | None
    cost_severity: Literal["minor", "serious"] | None
    pending_hit: int
    # R11.3: an attack's kind of harm; only stress tracks of that kind absorb it (R5.10).
    attack_kind: Annotated[HarmKindName | None, Field(default=None)]
    effects: list[CardEffect]
    aspects: list[CardAspect]
    gm_fate_points: int
    # Fate points of every player character taking part (leaders and helpers).
    fate_points: dict[str, int]
    prompt: CardPrompt
    proposal: Annotated[CardProposal | None, Field(default=None)]
    participants: Annotated[list[CardParticipant], Field(default=[])]
    # Consent to harm: the characters of others this player's action would touch.
    consents: Annotated[list[CardConsent], Field(default=[])]
    hint: Annotated[CardHint | None, Field(default=None)]
    description: Annotated[str | None, Field(default=None)]
    # The GM took this action back (history.undo): the card shows it, without controls.
    undone: Annotated[bool, Field(default=False)]
    event_seq: int
    event_hash: str
    # In the invoke phase: what a +2 or a reroll would change, for each side (invoke picker).
    invoke_odds: Annotated[InvokeOddsView | None, Field(default=None)]
    # R13.2: how many boxes an attack's hit may mark ("ones": any number of one-shift
    # boxes, a bigger box alone; "one_box": one, the smallest free box that fits); None
    # for other actions and attacks from before R13 (each box absorbs its value).
    stress_rule: Annotated[Literal["ones", "one_box"] | None, Field(default=None)]
    # R13.11: the character the defender interposed for (the hit lands on the defender).
    interposed_for: Annotated[CardCharacter | None, Field(default=None)]


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


class SceneEndCard(Outbound):
    kind: Literal["scene_end"] = "scene_end"
    scope: Literal["scene", "session", "scenario"]
    summary: SceneEndData


Card = Annotated[
    ActionCard | ContestCard | ChallengeCard | SceneEndCard, Field(discriminator="kind")
]


@_view
class AnchorView(TypedDict):
    """The last event behind a card: the module keeps it in the message's flags, so the GM
    can check the bridge's log against Foundry's own chat log (``world.verify``)."""

    seq: int
    hash: str


@_view
class CardEmit(TypedDict):
    """Create or update one chat card; only ``writer`` writes it into Foundry
    (a user id, or "gm" for the active GM's client)."""

    seq: int
    world: str
    writer: str
    op: Literal["create", "update"]
    card_id: str
    card: Card
    anchor: Annotated[AnchorView | None, Field(default=None)]


@_view
class SceneStateEmit(TypedDict):
    seq: int
    world: str
    writer: Annotated[Literal["gm"], Field(default="gm")]
    state: SceneState


@_view
class SlotState(TypedDict):
    id: str
    severity: int
    name: str | None
    status: Literal["fresh", "addressed", "recovering"]
    # R13.3: an extra mild slot takes only this kind of harm (None: any).
    harm: Annotated[HarmKindName | None, Field(default=None)]


@_view
class StressBoxView(TypedDict):
    value: int
    marked: bool


@_view
class StressTrackView(TypedDict):
    """A stress track as the bridge holds it (R5.10); kind "other" is never marked."""

    id: str
    name: str
    kind: StressKindName
    boxes: list[StressBoxView]


@_view
class ActorPatch(TypedDict):
    """What the rules changed on an actor, for the active GM's client to write back."""

    seq: int
    world: str
    writer: Annotated[Literal["gm"], Field(default="gm")]
    actor_id: str
    fate_points: int
    pending_fate_points: int
    consequences: list[SlotState]
    stress: list[StressTrackView]
    overwhelmed: bool
    # Boosts the character holds (a boost is an aspect with one free invoke, R12.6); a sheet's
    # boost counter (fate-core-official's fatePoints.boosts) shows this number.
    boosts: Annotated[int, Field(default=0)]


TokenStatusName = Literal["overwhelmed", "mild", "moderate", "severe", "boost"]


@_view
class TokenStatus(TypedDict):
    """Status effects the active GM's client sets on the actor's tokens."""

    seq: int
    world: str
    writer: Annotated[Literal["gm"], Field(default="gm")]
    actor_id: str
    statuses: dict[TokenStatusName, bool]


class Notice(Outbound):
    level: Literal["info", "warning", "error"]
    code: str
    message: str


class CardItem(Outbound):
    event: Literal["card"]
    data: CardEmit


class ActorPatchItem(Outbound):
    event: Literal["actor.patch"]
    data: ActorPatch


class TokenStatusItem(Outbound):
    event: Literal["token.status"]
    data: TokenStatus


class SceneStateItem(Outbound):
    event: Literal["scene.state"]
    data: SceneStateEmit


EmitItem = Annotated[
    CardItem | ActorPatchItem | TokenStatusItem | SceneStateItem, Field(discriminator="event")
]


class EmitsFrame(Outbound):
    """Everything one commit sends a world's room, in one frame: its cards, actor patches,
    token statuses and scene state, in ``seq`` order, to be written in that order.

    One frame per commit rather than one per emit: every receiver then pays one frame's
    cost per intent, and a client never sees half of a commit (``world.sync`` replays
    the same items, one list for many commits)."""

    emits: list[EmitItem] = Field(min_length=1)


# The frame a commit's stored emits travel in.
EMITS_FRAME = "emits"


class AckOk(Outbound):
    """An intent's answer. ``emits``: what the intent's commit sent the world's room, when
    the sender is in it. The sender hears its own commit in its answer, not in an
    ``emits`` frame of its own (the others in the room get the frame): one frame less for
    every intent. A client handles them as it handles a frame, before the answer. The
    answer to a request sent again is the stored one, without them: ``world.sync``
    replays what a lost answer carried."""

    ok: Literal[True] = True
    data: dict[str, Any]
    emits: list[EmitItem] | None = Field(default=None, min_length=1)


class AckError(Outbound):
    ok: Literal[False] = False
    error: ErrorInfo


Ack = Annotated[AckOk | AckError, Field(discriminator="ok")]

# Every server event: the ``emits`` frame and ``notice`` on the wire, and the stored emit
# kinds inside a frame (and in ``world.sync``), each with its own schema (a model or a
# view: ``TypeAdapter`` reads either).
EMITS: dict[str, Any] = {
    EMITS_FRAME: EmitsFrame,
    "card": CardEmit,
    "actor.patch": ActorPatch,
    "token.status": TokenStatus,
    "scene.state": SceneStateEmit,
    "notice": Notice,
}


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
    """The answer to every ``action.*`` intent: the card as it now stands."""

    action_id: str
    card_id: str
    card: ActionCard


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
