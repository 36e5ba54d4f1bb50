"""Wire messages between the Foundry module and the bridge.

These pydantic models are the single source of the JSON Schemas in ``schemas/``
(``make schemas``). Every inbound model is strict and closed (``extra="forbid"``)
and bounds every string and list, so bad input is refused with a clear error
long before it could reach the transport's size limit.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

PROTOCOL_VERSION = 1
NAMESPACE = "/fate"
MAX_MESSAGE_BYTES = 64 * 1024

Face = Literal[-1, 0, 1]
DiceRoll = tuple[Face, Face, Face, Face]
# Inbound JSON arrays: strict mode refuses lists for tuples, so bound a list instead.
DiceRollIn = Annotated[list[Face], Field(min_length=4, max_length=4)]

Identifier = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:\-]+$")
]
RequestId = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:\-]+$")
]
Name = Annotated[str, StringConstraints(min_length=1, max_length=120)]
Text = Annotated[str, StringConstraints(max_length=2000)]
Rating = Annotated[int, Field(ge=-10, le=20)]
ActionTypeName = Literal["overcome", "create_advantage", "take_advantage", "discover", "attack"]


class Inbound(BaseModel):
    """A message from a client: strict types, no unknown fields."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Outbound(BaseModel):
    """A message from the bridge."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# --- handshake -------------------------------------------------------------


class Auth(Inbound):
    """The Socket.IO handshake ``auth`` object."""

    world: Identifier
    role: Literal["gm", "player"]
    user: Identifier
    protocol: int
    key: Annotated[str, StringConstraints(max_length=200)] | None = None


class ConnectRefusal(Outbound):
    """``err.data`` of a refused connection; ``reason`` is machine-readable."""

    reason: Literal["invalid_auth", "unknown_world", "bad_key", "protocol_mismatch", "role"]
    message: str
    bridge_protocol: int = PROTOCOL_VERSION


# --- client -> bridge intents ----------------------------------------------


class Hello(Inbound):
    request_id: RequestId
    module_version: Annotated[str, StringConstraints(max_length=40)] | None = None
    foundry_version: Annotated[str, StringConstraints(max_length=40)] | None = None
    system: Annotated[str, StringConstraints(max_length=80)] | None = None


class WorldSync(Inbound):
    """Ask for every emit after ``since`` (a ``seq``), to catch up after (re)connecting."""

    request_id: RequestId
    since: Annotated[int, Field(ge=0)] = 0


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
    stress: Annotated[list[bool], Field(max_length=20)] | None = None


class ActorSync(Inbound):
    request_id: RequestId
    actor: ActorData


class WorldRead(Inbound):
    """Read what the bridge holds: characters, aspects and free invokes (for pickers)."""

    request_id: RequestId


class UserBind(Inbound):
    """GM only: the player's client wrote ``nonce`` into its own User flag (DESIGN Trust)."""

    request_id: RequestId
    user_id: Identifier
    nonce: Annotated[str, StringConstraints(min_length=8, max_length=64)]


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


class ActionStart(Inbound):
    """Start an action for an actor (R2, R5, R9, R10)."""

    request_id: RequestId
    type: ActionTypeName
    actor_id: Identifier
    skill: Name
    opposition: (
        Annotated[PassiveOppositionIn | ActiveOppositionIn, Field(discriminator="kind")] | None
    ) = None
    target_id: Identifier | None = None
    target_aspect_id: Identifier | None = None
    aspect_name: Name | None = None
    situation: Name | None = None
    helpers: Annotated[list[HelperIn], Field(max_length=12)] = []
    dangerous: DangerIn = DangerIn()
    recovery: RecoveryIn | None = None
    allow_repeat: bool = False
    description: Text | None = None


class ActionRef(Inbound):
    request_id: RequestId
    action_id: Identifier


class ActionRoll(ActionRef):
    """Close the concession window of a dangerous action and roll."""


class ActionOppose(ActionRef):
    skill: Name


class ActionInvoke(ActionRef):
    """R4: invoke ``aspect_id`` as ``invoker`` (a character, or "gm" for the GM's budget)."""

    invoker: Identifier
    aspect_id: Identifier
    payment: Literal["fate_point", "free", "boost"]
    effect: Literal["bonus", "reroll", "hostile"] = "bonus"
    side: Literal["actor", "opposition"] | None = None


class ActionPass(ActionRef):
    side: Literal["actor", "opposition"]


class ActionChoose(ActionRef):
    choice: Literal[
        "fail", "succeed_at_cost", "unintended_aspect", "aspect", "mark", "full_hit", "boost"
    ]
    aspect_name: Name | None = None
    consequence_name: Name | None = None


class ActionCost(ActionRef):
    """R6: the GM's cost; ``kind`` from the ruleset's minor or serious list."""

    kind: Annotated[str, StringConstraints(min_length=1, max_length=40)]
    text: Text = ""
    target_id: Identifier | None = None
    aspect_name: Name | None = None


class ActionConcede(ActionRef):
    character_id: Identifier


class ActionAbsorb(ActionRef):
    """R5.10: stress box indexes (0-based) and consequence slot id -> consequence name."""

    stress_boxes: Annotated[list[Annotated[int, Field(ge=0, le=19)]], Field(max_length=20)] = []
    consequences: Annotated[dict[Identifier, Name], Field(max_length=12)] = {}


class ActionGift(ActionRef):
    """R5.2, R5.3: the GM gives someone else a free invoke after a fumbled advantage."""

    aspect_id: Identifier
    holder: Identifier


class AspectGive(Inbound):
    """R10.2: hand free invokes to another character."""

    request_id: RequestId
    aspect_id: Identifier
    from_id: Identifier
    to_id: Identifier
    count: Annotated[int, Field(ge=1, le=10)] = 1


class SceneEnd(Inbound):
    """R12.1: end the scene (or with it the session or scenario, R12.2);
    situation aspects in ``keep_aspects`` stay."""

    request_id: RequestId
    keep_aspects: Annotated[list[Identifier], Field(max_length=100)] = []
    scope: Literal["scene", "session", "scenario"] = "scene"
    gm_budget: Annotated[int, Field(ge=0, le=99)] | None = None


class SceneAspect(Inbound):
    """GM: add, rename or remove a situation aspect; set who holds its free invokes."""

    request_id: RequestId
    op: Literal["add", "edit", "remove"]
    aspect_id: Identifier | None = None
    name: Name | None = None
    attached_to: Identifier | None = None
    free_invokes: (
        Annotated[dict[Identifier, Annotated[int, Field(ge=0, le=10)]], Field(max_length=20)] | None
    ) = None


class SceneRead(Inbound):
    request_id: RequestId


class SideIn(Inbound):
    name: Name
    members: Annotated[list[Identifier], Field(min_length=1, max_length=12)]


class ContestStart(Inbound):
    """R11.2: GM sets up a contest."""

    request_id: RequestId
    name: Name
    mode: Literal["direct", "environment"]
    skill: Name
    sides: Annotated[list[SideIn], Field(min_length=1, max_length=8)]
    passive_rating: Rating | None = None


class ContestRef(Inbound):
    request_id: RequestId
    contest_id: Identifier


class ContestRoll(ContestRef):
    side_id: Identifier
    skill: Name | None = None


class ContestAdvantage(ContestRef):
    side_id: Identifier
    actor_id: Identifier
    skill: Name
    aspect_name: Name
    opposition: Annotated[PassiveOppositionIn | ActiveOppositionIn, Field(discriminator="kind")]
    target_id: Identifier | None = None


class ContestTwist(ContestRef):
    name: Name


class ContestConcede(ContestRef):
    side_id: Identifier


class TaskIn(Inbound):
    name: Name
    skill: Name
    rating: Rating


class ChallengeStart(Inbound):
    """R11.1: GM lists the tasks, each with its own skill and opposition."""

    request_id: RequestId
    name: Name
    tasks: Annotated[list[TaskIn], Field(min_length=1, max_length=20)]


class ChallengeRef(Inbound):
    request_id: RequestId
    challenge_id: Identifier


class ChallengeRoll(ChallengeRef):
    task_id: Identifier
    actor_id: Identifier
    skill: Name | None = None
    helpers: Annotated[list[HelperIn], Field(max_length=12)] = []


class ChallengeAdvantage(ChallengeRef):
    actor_id: Identifier
    skill: Name
    aspect_name: Name
    rating: Rating


class ChallengeCarry(ChallengeRef):
    carry: bool


class ZoneIn(Inbound):
    name: Name
    adjacent: Annotated[list[Name], Field(max_length=20)] = []


class ConflictStart(Inbound):
    """R11.3 (Fate Condensed): sides, zones, turn order."""

    request_id: RequestId
    name: Name
    kind: Literal["physical", "mental"]
    sides: Annotated[list[SideIn], Field(min_length=2, max_length=8)]
    zones: Annotated[list[ZoneIn], Field(max_length=30)] = []
    positions: Annotated[dict[Identifier, Name], Field(max_length=60)] = {}
    order_skill: Name | None = None
    group_npcs: bool = False
    tie_break: Annotated[list[Identifier], Field(max_length=60)] = []


class ConflictRef(Inbound):
    request_id: RequestId
    conflict_id: Identifier


class ConflictOrder(ConflictRef):
    order: Annotated[list[Identifier], Field(min_length=1, max_length=60)]


class ConflictNext(ConflictRef):
    """Hand the turn on."""


class ConflictMove(ConflictRef):
    character_id: Identifier
    zone: Name
    force: bool = False


class ConflictEnd(ConflictRef):
    """End the conflict now (the GM's call)."""


class FateCompel(Inbound):
    request_id: RequestId
    character_id: Identifier
    text: Annotated[str, StringConstraints(min_length=1, max_length=500)]
    aspect_id: Identifier | None = None


class FateCompelAnswer(Inbound):
    request_id: RequestId
    compel_id: Identifier
    accept: bool


class FateSpend(Inbound):
    request_id: RequestId
    character_id: Identifier
    purpose: Literal["detail", "stunt"]
    text: Text = ""


class FateSacrifice(Inbound):
    request_id: RequestId
    character_id: Identifier
    severity: Literal[2, 4, 6]
    name: Name


class GmBudget(Inbound):
    """R12.2: set the GM's fate point budget for the scene."""

    request_id: RequestId
    fate_points: Annotated[int, Field(ge=0, le=99)]


class DevQueueDice(Inbound):
    """Queue the next rolls' faces; only with ``--dev-dice``, only for a GM."""

    request_id: RequestId
    rolls: Annotated[list[DiceRollIn], Field(min_length=1, max_length=100)]


INTENTS: dict[str, type[Inbound]] = {
    "hello": Hello,
    "world.sync": WorldSync,
    "actor.sync": ActorSync,
    "world.state": WorldRead,
    "user.bind": UserBind,
    "action.start": ActionStart,
    "action.roll": ActionRoll,
    "action.oppose": ActionOppose,
    "action.invoke": ActionInvoke,
    "action.pass": ActionPass,
    "action.choose": ActionChoose,
    "action.cost": ActionCost,
    "action.concede": ActionConcede,
    "action.absorb": ActionAbsorb,
    "action.gift": ActionGift,
    "aspect.give": AspectGive,
    "scene.end": SceneEnd,
    "scene.aspect": SceneAspect,
    "scene.read": SceneRead,
    "contest.start": ContestStart,
    "contest.roll": ContestRoll,
    "contest.advantage": ContestAdvantage,
    "contest.twist": ContestTwist,
    "contest.concede": ContestConcede,
    "challenge.start": ChallengeStart,
    "challenge.roll": ChallengeRoll,
    "challenge.advantage": ChallengeAdvantage,
    "challenge.carry": ChallengeCarry,
    "conflict.start": ConflictStart,
    "conflict.order": ConflictOrder,
    "conflict.next": ConflictNext,
    "conflict.move": ConflictMove,
    "conflict.end": ConflictEnd,
    "fate.compel": FateCompel,
    "fate.compel_answer": FateCompelAnswer,
    "fate.spend": FateSpend,
    "fate.sacrifice": FateSacrifice,
    "fate.gm_budget": GmBudget,
    "dev.queue_dice": DevQueueDice,
}


# --- acks ------------------------------------------------------------------

ErrorCode = Literal[
    "invalid",
    "unknown_event",
    "too_large",
    "rate_limited",
    "forbidden",
    "not_found",
    "unknown_actor",
    "unbound",
    "overwhelmed",
    "wrong_state",
    "no_fate_points",
    "no_free_invokes",
    "already_invoked",
    "not_dangerous",
    "not_in_ruleset",
    "exhausted",
    "already_overcome",
    "no_gm",
    "dev_dice_disabled",
    "conflict",
    "internal",
]


class ErrorInfo(Outbound):
    code: ErrorCode | str
    message: str
    field: str | None = None


class AckOk(Outbound):
    ok: Literal[True] = True
    data: dict[str, Any]


class AckError(Outbound):
    ok: Literal[False] = False
    error: ErrorInfo


Ack = Annotated[AckOk | AckError, Field(discriminator="ok")]


# --- bridge -> clients emits ------------------------------------------------


class Rated(Outbound):
    value: int
    label: str


class CardCharacter(Outbound):
    id: str
    name: str


class CardSide(Outbound):
    """One side of an action: who rolls, with what, and what was added (R1.2)."""

    leader: CardCharacter | None
    helpers: list[CardCharacter]
    controllers: list[str]
    skill: str | None
    skill_rating: Rated | None
    stunt_bonus: int
    teamwork_bonus: int
    invoke_bonus: int
    dice: DiceRoll | None
    dice_total: int | None
    passive: bool
    total: Rated | None
    dangerous: bool
    passed: bool
    fate_points: int | None


class CardInvoke(Outbound):
    side: Literal["actor", "opposition"]
    invoker: str
    invoker_name: str
    aspect_id: str
    aspect_name: str
    payment: Literal["fate_point", "free", "boost"]
    effect: Literal["bonus", "reroll", "hostile"]
    dice: DiceRoll | None


class CardEffect(Outbound):
    kind: str
    text: str
    count: int
    character: CardCharacter | None
    aspect_id: str | None
    detail: str
    cause: CardCharacter | None


class CardAspect(Outbound):
    """An aspect someone on this action could invoke, with who holds its free invokes."""

    id: str
    name: str
    kind: Literal["character", "situation", "consequence", "boost"]
    attached_to: CardCharacter | None
    free_invokes: dict[str, int]


class CardPrompt(Outbound):
    """Who should act next, for showing buttons; the bridge checks every press itself."""

    kind: Literal["roll", "oppose", "invoke", "choose", "cost", "absorb", "none"]
    users: list[str]
    gm: bool
    options: list[str]


class ActionCard(Outbound):
    """Everything a chat card shows about one action; rendered by the module."""

    kind: Literal["action"] = "action"
    action_id: str
    ruleset: str
    action_type: ActionTypeName
    action_label: str
    state: Literal[
        "declared",
        "awaiting_opposition",
        "invoking",
        "choosing",
        "costing",
        "absorbing",
        "resolved",
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
    outcome_label: str | None
    provisional: bool
    succeeded: bool | None
    pending_choice: str | None
    cost_severity: Literal["minor", "serious"] | None
    pending_hit: int
    effects: list[CardEffect]
    aspects: list[CardAspect]
    gm_fate_points: int
    # Fate points of every player character taking part (leaders and helpers).
    fate_points: dict[str, int]
    prompt: CardPrompt
    description: str | None = None
    event_seq: int
    event_hash: str


class ContestSideView(Outbound):
    id: str
    name: str
    members: list[CardCharacter]
    controllers: list[str]
    progress: int
    conceded: bool


class ExchangeRollView(Outbound):
    side_id: str
    action_id: str | None
    total: Rated | None
    shifts: int | None
    forfeited: bool


class ExchangeView(Outbound):
    number: int
    rolls: list[ExchangeRollView]
    winner: str | None
    margin: int
    progress: int
    twist: bool
    excelled: bool


class ContestView(Outbound):
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


class TaskView(Outbound):
    id: str
    name: str
    skill: str
    opposition: Rated
    action_id: str | None
    actor: CardCharacter | None
    total: Rated | None
    shifts: int | None
    outcome: Literal["fumble", "tie", "succeed", "excel"] | None
    outcome_label: str | None
    state: str | None
    succeeded: bool | None
    costs: list[str]


class ChallengeView(Outbound):
    id: str
    name: str
    tasks: list[TaskView]
    advantages: list[str]
    state: Literal["open", "complete"]
    carry_boosts: bool


class ZoneView(Outbound):
    name: str
    adjacent: list[str]
    occupants: list[CardCharacter]


class TurnView(Outbound):
    character: CardCharacter
    side_id: str
    rating: int
    out: bool
    npc: bool


class ConflictView(Outbound):
    id: str
    name: str
    kind: Literal["physical", "mental"]
    order_skill: str
    sides: list[ContestSideView]
    order: list[TurnView]
    ties: list[list[str]]
    turn: int
    exchange: int
    zones: list[ZoneView]
    state: Literal["open", "ended"]
    winner: str | None


class CompelView(Outbound):
    id: str
    character: CardCharacter
    controllers: list[str]
    text: str
    aspect_id: str | None
    state: Literal["offered", "accepted", "refused"]


class SceneInfo(Outbound):
    number: int
    session: int
    scenario: int


class SceneState(Outbound):
    """Everything the GM's scene panel and the players' view show."""

    ruleset: str
    scene: SceneInfo
    gm_fate_points: int
    aspects: list[CardAspect]
    contests: list[ContestView]
    challenges: list[ChallengeView]
    conflicts: list[ConflictView]
    compels: list[CompelView]


class ContestCard(Outbound):
    """A contest's exchange result (and the winner, when there is one)."""

    kind: Literal["contest"] = "contest"
    contest: ContestView
    exchange: ExchangeView | None


class ChallengeCard(Outbound):
    """R11.1: the summary once every task is in."""

    kind: Literal["challenge"] = "challenge"
    challenge: ChallengeView


class SceneEndCard(Outbound):
    kind: Literal["scene_end"] = "scene_end"
    scope: Literal["scene", "session", "scenario"]
    summary: SceneEndData


Card = Annotated[
    ActionCard | ContestCard | ChallengeCard | SceneEndCard, Field(discriminator="kind")
]


class CardEmit(Outbound):
    """Create or update one chat card; only ``writer`` writes it into Foundry
    (a user id, or "gm" for the active GM's client)."""

    seq: int
    world: str
    writer: str
    op: Literal["create", "update"]
    card_id: str
    card: Card


class SceneStateEmit(Outbound):
    seq: int
    world: str
    writer: Literal["gm"] = "gm"
    state: SceneState


class SlotState(Outbound):
    id: str
    severity: int
    name: str | None
    status: Literal["fresh", "addressed", "recovering"]


class ActorPatch(Outbound):
    """What the rules changed on an actor, for the active GM's client to write back."""

    seq: int
    world: str
    writer: Literal["gm"] = "gm"
    actor_id: str
    fate_points: int
    pending_fate_points: int
    consequences: list[SlotState]
    stress: list[bool]
    overwhelmed: bool


class TokenStatus(Outbound):
    """Status effects the active GM's client sets on the actor's tokens."""

    seq: int
    world: str
    writer: Literal["gm"] = "gm"
    actor_id: str
    statuses: dict[Literal["overwhelmed", "mild", "moderate", "severe", "boost"], bool]


class Notice(Outbound):
    level: Literal["info", "warning", "error"]
    code: str
    message: str


EMITS: dict[str, type[Outbound]] = {
    "card": CardEmit,
    "actor.patch": ActorPatch,
    "token.status": TokenStatus,
    "scene.state": SceneStateEmit,
    "notice": Notice,
}


class ActionOption(Outbound):
    id: str
    label: str


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


class ActionData(Outbound):
    """The answer to every ``action.*`` intent: the card as it now stands."""

    action_id: str
    card_id: str
    card: ActionCard


class CharacterSummary(Outbound):
    id: str
    name: str
    owners: list[str]
    skills: dict[str, int]
    fate_points: int
    pending_fate_points: int
    overwhelmed: bool
    consequences: list[SlotState]
    stress: list[bool]


class WorldStateData(Outbound):
    ruleset: str
    characters: list[CharacterSummary]
    aspects: list[CardAspect]
    gm_fate_points: int
    open_actions: list[str]


class UserBindData(Outbound):
    user_id: str
    bound: bool


class AspectGiveData(Outbound):
    aspect_id: str
    free_invokes: dict[str, int]


class CharacterNote(Outbound):
    character: CardCharacter
    text: str


class FatePointGain(Outbound):
    character: CardCharacter
    gained: int
    reasons: list[str]


class SceneEndData(Outbound):
    """What ending the scene changed (R12.1, R7.5)."""

    ended_scene: int
    removed_consequences: list[CharacterNote]
    recovering_consequences: list[CharacterNote]
    fate_points: list[FatePointGain]
    expired_boosts: list[str]
    cleared_aspects: list[str]
    no_longer_overwhelmed: list[CardCharacter]


class GmBudgetData(Outbound):
    gm_fate_points: int


class DevQueueDiceData(Outbound):
    queued: int


RESULTS: dict[str, type[Outbound]] = {
    "hello": HelloData,
    "world.sync": WorldSyncData,
    "actor.sync": ActorSyncData,
    "world.state": WorldStateData,
    "user.bind": UserBindData,
    **{event: ActionData for event in INTENTS if event.startswith("action.")},
    "aspect.give": AspectGiveData,
    "scene.end": SceneEndData,
    **{
        event: SceneState
        for event in INTENTS
        if event.split(".")[0] in ("contest", "challenge", "conflict", "scene")
        and event
        not in (
            "scene.end",
            "contest.roll",
            "contest.advantage",
            "challenge.roll",
            "challenge.advantage",
        )
    },
    "contest.roll": ActionData,
    "contest.advantage": ActionData,
    "challenge.roll": ActionData,
    "challenge.advantage": ActionData,
    "fate.compel": SceneState,
    "fate.compel_answer": SceneState,
    "fate.spend": WorldStateData,
    "fate.sacrifice": WorldStateData,
    "fate.gm_budget": GmBudgetData,
    "dev.queue_dice": DevQueueDiceData,
}
