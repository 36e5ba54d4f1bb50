"""Client -> bridge intents: strict, closed, every string and list bounded."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from bridge.service.protocol.answers import (
    ActionData,
    ActionOddsData,
    ActorSyncData,
    AspectGiveData,
    CardWrittenData,
    DevQueueDiceData,
    GmBudgetData,
    HelloData,
    HistoryPage,
    HistoryStatsData,
    RelayLeaveData,
    UndoData,
    UserBindData,
    WorldRulesetData,
    WorldStateData,
    WorldSyncData,
    WorldVerifyData,
)
from bridge.service.protocol.base import (
    ANCHOR_PAGE,
    INTENT_REGISTRY,
    ActionTypeName,
    DiceRollIn,
    EventAnchor,
    HarmKindName,
    Identifier,
    Intent,
    InvokeEffect,
    Name,
    Payment,
    Rating,
    Readable,
    RequestId,
    Seq,
    SideName,
    Text,
)
from bridge.service.protocol.inbound import (
    ActiveOppositionIn,
    ActorData,
    DangerIn,
    HelperIn,
    PassiveOppositionIn,
    RecoveryIn,
    SideIn,
    StressMarkIn,
    StuntNames,
    TaskIn,
    ZoneIn,
)
from bridge.service.protocol.scene_views import SceneEndData, SceneState

# Shorter readable strings (H18): a cost kind, a compel, what a client says it runs.
ShortName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=40),
    Readable(multiline=False, required=True, max_length=40),
]
ShortText = Annotated[
    str,
    StringConstraints(max_length=80),
    Readable(multiline=False, required=False, max_length=80),
]
CompelText = Annotated[
    str,
    StringConstraints(min_length=1, max_length=500),
    Readable(multiline=True, required=True, max_length=500),
]


class Hello(Intent, event="hello", result=HelloData):
    request_id: RequestId
    module_version: ShortText | None = None
    foundry_version: ShortText | None = None
    system: ShortText | None = None


class WorldSync(Intent, event="world.sync", result=WorldSyncData):
    """Ask for every emit after ``since`` (a ``seq``), to catch up after (re)connecting."""

    request_id: RequestId
    since: Seq = 0


class ActorSync(Intent, event="actor.sync", result=ActorSyncData):
    request_id: RequestId
    actor: ActorData


class WorldRead(Intent, event="world.state", result=WorldStateData):
    """Read what the bridge holds: characters, aspects and free invokes (for pickers)."""

    request_id: RequestId


class CardWritten(Intent, event="card.written", result=CardWrittenData):
    """The client that created an action's chat message names the message's Foundry author,
    so later updates go to a user Foundry lets update it (the author, else the active GM).
    A player may only name itself, for an action it started."""

    request_id: RequestId
    action_id: Identifier
    author: Identifier


class UserBind(Intent, event="user.bind", result=UserBindData):
    """GM only: the player's client wrote ``nonce`` into its own User flag (DESIGN Trust)."""

    request_id: RequestId
    user_id: Identifier
    nonce: Annotated[str, StringConstraints(min_length=8, max_length=64)]


class ActionStart(Intent, event="action.start", result=ActionData):
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
    # R11.3: an attack's kind of harm; in a conflict it must be the conflict's (the default).
    attack_kind: HarmKindName | None = None
    # R13.8: the actor's stunts that apply to this roll, by name (each once).
    stunts: StuntNames | None = None


class ActionRef(Intent):
    request_id: RequestId
    action_id: Identifier


class ActionRoll(ActionRef, event="action.roll", result=ActionData):
    """Close the concession window of a dangerous action and roll."""


class ActionOppose(ActionRef, event="action.oppose", result=ActionData):
    """R2.2: the active opposer rolls ``skill`` before the actor rolls; R13.8 with the
    stunts of its that apply."""

    skill: Name
    stunts: StuntNames | None = None


class ActionInterpose(ActionRef, event="action.interpose", result=ActionData):
    """R13.11 (GM): ``defender_id``, in the same conflict, defends in the target's place
    before the defense is rolled, and takes the hit."""

    defender_id: Identifier


class ActionInvoke(ActionRef, event="action.invoke", result=ActionData):
    """R4: invoke ``aspect_id`` as ``invoker`` (a character, or "gm" for the GM's budget).
    R13.10: a character not taking part invokes for the ``side`` its player names."""

    invoker: Identifier
    aspect_id: Identifier
    payment: Payment
    effect: InvokeEffect = "bonus"
    side: SideName | None = None


class ActionPass(ActionRef, event="action.pass", result=ActionData):
    """R4.4: ``side`` invokes no more; once both sides have passed, the action resolves."""

    side: SideName


class ActionChoose(ActionRef, event="action.choose", result=ActionData):
    """R5, R6: the choice the outcome offers (fail or succeed at a cost, a hit's
    consequence, an advantage's aspect or boost)."""

    choice: Literal[
        "fail", "succeed_at_cost", "unintended_aspect", "aspect", "mark", "full_hit", "boost"
    ]
    aspect_name: Name | None = None
    consequence_name: Name | None = None


class ActionCost(ActionRef, event="action.cost", result=ActionData):
    """R6: the GM's cost; ``kind`` from the ruleset's minor or serious list."""

    kind: ShortName
    text: Text = ""
    target_id: Identifier | None = None
    aspect_name: Name | None = None


class ActionConcede(ActionRef, event="action.concede", result=ActionData):
    """R9.3: ``character_id`` concedes the dangerous action before the roll."""

    character_id: Identifier


class ActionAbsorb(ActionRef, event="action.absorb", result=ActionData):
    """R5.10: boxes on stress tracks of the hit's kind, and consequence slot id -> name."""

    stress: Annotated[list[StressMarkIn], Field(max_length=12)] = []
    consequences: Annotated[dict[Identifier, Name], Field(max_length=12)] = {}


class ActionGift(ActionRef, event="action.gift", result=ActionData):
    """R5.2, R5.3: the GM gives someone else a free invoke after a fumbled advantage."""

    aspect_id: Identifier
    holder: Identifier


class ActionCancel(ActionRef, event="action.cancel", result=ActionData):
    """The GM calls an open action off; invoke payments go back (see rules.actions.cancel)."""

    reason: Text = ""


class ActionConfirm(ActionRef, event="action.confirm", result=ActionData):
    """R2.1, R9.1 Decision: the GM confirms a player's proposal, or changes it: a new
    passive rating, and (when given) exactly which sides are dangerous."""

    passive_rating: Rating | None = None
    dangerous: DangerIn | None = None


class ActionHelp(ActionRef, event="action.help", result=ActionData):
    """A character's owner (or the GM) answers for it on a player's action: R10.1 Decision,
    a named helper joins or stays out; consent to harm (DESIGN Reach and trust), a
    character the action would target or have oppose it, or whose aspect it is about,
    lets it go on or, declined, calls it off."""

    character_id: Identifier
    accept: bool


class ActionHint(ActionRef, event="action.hint", result=ActionData):
    """R5.5: the actor of an excelled discover takes the hint (the GM is asked)."""


class ActionHintGive(ActionRef, event="action.hint_give", result=ActionData):
    """R5.5: the GM answers a hint the actor asked for."""

    text: Annotated[str, StringConstraints(min_length=1, max_length=2000)]


class AspectGive(Intent, event="aspect.give", result=AspectGiveData):
    """R10.2: hand free invokes to another character."""

    request_id: RequestId
    aspect_id: Identifier
    from_id: Identifier
    to_id: Identifier
    count: Annotated[int, Field(ge=1, le=10)] = 1


class SceneEnd(Intent, event="scene.end", result=SceneEndData):
    """R12.1: end the scene (or with it the session or scenario, R12.2);
    situation aspects in ``keep_aspects`` stay."""

    request_id: RequestId
    keep_aspects: Annotated[list[Identifier], Field(max_length=100)] = []
    scope: Literal["scene", "session", "scenario"] = "scene"
    gm_budget: Annotated[int, Field(ge=0, le=99)] | None = None


class SceneAspect(Intent, event="scene.aspect", result=SceneState):
    """GM: add, rename or remove a situation aspect; set who holds its free invokes."""

    request_id: RequestId
    op: Literal["add", "edit", "remove"]
    aspect_id: Identifier | None = None
    name: Name | None = None
    attached_to: Identifier | None = None
    free_invokes: (
        Annotated[dict[Identifier, Annotated[int, Field(ge=0, le=10)]], Field(max_length=20)] | None
    ) = None


class WorldSettingsIn(Intent, event="world.settings", result=SceneState):
    """GM: the table's settings; a field left out keeps its value. R2.1 Decision:
    ``trust_player_ratings`` lets players' passive ratings through unconfirmed."""

    request_id: RequestId
    trust_player_ratings: bool | None = None
    # R13.7: Fate Condensed's optional full defense.
    full_defense: bool | None = None


class WorldRuleset(Intent, event="world.ruleset", result=WorldRulesetData):
    """GM: R13.9, the rules the world plays from now on (between procedures only)."""

    request_id: RequestId
    ruleset: Annotated[str, StringConstraints(min_length=1, max_length=40)]


class SceneRead(Intent, event="scene.read", result=SceneState):
    request_id: RequestId


class ContestStart(Intent, event="contest.start", result=SceneState):
    """R11.2: GM sets up a contest."""

    request_id: RequestId
    name: Name
    mode: Literal["direct", "environment"]
    skill: Name
    sides: Annotated[list[SideIn], Field(min_length=1, max_length=8)]
    passive_rating: Rating | None = None


class ContestRef(Intent):
    request_id: RequestId
    contest_id: Identifier


class ContestRoll(ContestRef, event="contest.roll", result=ActionData):
    side_id: Identifier
    skill: Name | None = None


class ContestAdvantage(ContestRef, event="contest.advantage", result=ActionData):
    side_id: Identifier
    actor_id: Identifier
    skill: Name
    aspect_name: Name
    opposition: Annotated[PassiveOppositionIn | ActiveOppositionIn, Field(discriminator="kind")]
    target_id: Identifier | None = None


class ContestTwist(ContestRef, event="contest.twist", result=SceneState):
    name: Name


class ContestConcede(ContestRef, event="contest.concede", result=SceneState):
    side_id: Identifier


class ChallengeStart(Intent, event="challenge.start", result=SceneState):
    """R11.1: GM lists the tasks, each with its own skill and opposition."""

    request_id: RequestId
    name: Name
    tasks: Annotated[list[TaskIn], Field(min_length=1, max_length=20)]


class ChallengeRef(Intent):
    request_id: RequestId
    challenge_id: Identifier


class ChallengeRoll(ChallengeRef, event="challenge.roll", result=ActionData):
    task_id: Identifier
    actor_id: Identifier
    skill: Name | None = None
    helpers: Annotated[list[HelperIn], Field(max_length=12)] = []


class ChallengeAdvantage(ChallengeRef, event="challenge.advantage", result=ActionData):
    actor_id: Identifier
    skill: Name
    aspect_name: Name
    rating: Rating


class ChallengeCarry(ChallengeRef, event="challenge.carry", result=SceneState):
    carry: bool


class ConflictStart(Intent, event="conflict.start", result=SceneState):
    """R11.3 (Fate Condensed): sides, zones, turn order."""

    request_id: RequestId
    name: Name
    kind: HarmKindName
    sides: Annotated[list[SideIn], Field(min_length=2, max_length=8)]
    zones: Annotated[list[ZoneIn], Field(max_length=30)] = []
    positions: Annotated[dict[Identifier, Name], Field(max_length=60)] = {}
    order_skill: Name | None = None
    group_npcs: bool = False
    tie_break: Annotated[list[Identifier], Field(max_length=60)] = []
    # R13.5, elective order (Fate Condensed): who opens.
    first_id: Identifier | None = None


class ConflictRef(Intent):
    request_id: RequestId
    conflict_id: Identifier


class ConflictOrder(ConflictRef, event="conflict.order", result=SceneState):
    order: Annotated[list[Identifier], Field(min_length=1, max_length=60)]


class ConflictNext(ConflictRef, event="conflict.next", result=SceneState):
    """Hand the turn on; R13.5 elective order: to ``next_id``."""

    next_id: Identifier | None = None


class ConflictCharacter(ConflictRef):
    character_id: Identifier


class ConflictFullDefense(ConflictCharacter, event="conflict.full_defense", result=SceneState):
    """R13.7: on its turn, instead of acting, +2 on defend rolls until its next turn."""


class ConflictConcede(ConflictCharacter, event="conflict.concede", result=SceneState):
    """R13.6: out of the conflict now; paid 1 + its consequences when the conflict ends."""


class ConflictMove(ConflictRef, event="conflict.move", result=SceneState):
    character_id: Identifier
    zone: Name
    force: bool = False


class ConflictZones(ConflictRef, event="conflict.zones", result=SceneState):
    """R11.3: the GM redraws an open conflict's zones; whoever stood in a dropped zone is
    placed anew in ``positions``. No zones: a conflict without a map."""

    zones: Annotated[list[ZoneIn], Field(max_length=30)]
    positions: Annotated[dict[Identifier, Name], Field(max_length=60)] = {}


class ConflictEnd(ConflictRef, event="conflict.end", result=SceneState):
    """End the conflict now (the GM's call)."""


class FateCompel(Intent, event="fate.compel", result=SceneState):
    request_id: RequestId
    character_id: Identifier
    text: CompelText
    aspect_id: Identifier | None = None


class FateCompelAnswer(Intent, event="fate.compel_answer", result=SceneState):
    request_id: RequestId
    compel_id: Identifier
    accept: bool


class FateSpend(Intent, event="fate.spend", result=WorldStateData):
    request_id: RequestId
    character_id: Identifier
    purpose: Literal["detail", "stunt"]
    text: Text = ""


class FateSacrifice(Intent, event="fate.sacrifice", result=WorldStateData):
    request_id: RequestId
    character_id: Identifier
    severity: Literal[2, 4, 6]
    name: Name


class GmBudget(Intent, event="fate.gm_budget", result=GmBudgetData):
    """R12.2: set the GM's fate point budget for the scene."""

    request_id: RequestId
    fate_points: Annotated[int, Field(ge=0, le=99)]


class DevQueueDice(Intent, event="dev.queue_dice", result=DevQueueDiceData):
    """Queue the next rolls' faces; only with ``--dev-dice``, only for a GM."""

    request_id: RequestId
    rolls: Annotated[list[DiceRollIn], Field(min_length=1, max_length=100)]


class ActionOdds(Intent, event="action.odds", result=ActionOddsData):
    """A read before any action exists: the exact odds of each outcome for this actor, skill,
    action type and helpers against a known opposition total (a passive rating, or an
    opposing total already rolled)."""

    request_id: RequestId
    type: ActionTypeName = "overcome"
    actor_id: Identifier
    skill: Name
    helpers: Annotated[list[HelperIn], Field(max_length=12)] = []
    opposition: Annotated[int, Field(ge=-20, le=40)]
    stunts: StuntNames | None = None


class WorldVerify(Intent, event="world.verify", result=WorldVerifyData):
    """GM only: check the log (chain, stored head, replay) and these chat-log anchors."""

    request_id: RequestId
    anchors: Annotated[list[EventAnchor], Field(max_length=ANCHOR_PAGE)] = []


HistoryKindName = Literal[ActionTypeName, "contest", "challenge"]


class HistoryRead(Intent, event="history.read", result=HistoryPage):
    """One page of the roll history, newest first: rolls logged before event ``before``
    (all when absent), filtered by scene, character, kind and whether the GM cancelled
    them. ``kind`` is the action's own kind, cancelled or not; ``cancelled``: True only
    the rolls the GM called off, False only resolutions, absent both."""

    request_id: RequestId
    before: Annotated[int, Field(ge=1)] | None = None
    limit: Annotated[int, Field(ge=1, le=50)] = 20
    scene: Annotated[int, Field(ge=1)] | None = None
    character: Identifier | None = None
    kind: HistoryKindName | None = None
    cancelled: bool | None = None


class HistoryStats(Intent, event="history.stats", result=HistoryStatsData):
    """R1.1: the 4dF sums rolled, per character and for the world, against the
    expected distribution; optionally for one scene."""

    request_id: RequestId
    scene: Annotated[int, Field(ge=1)] | None = None


class HistoryUndo(Intent, event="history.undo", result=UndoData):
    """GM: take back every change after event ``back_to`` inside the current scene;
    or the resolution logged as event ``resolution`` and everything after it (from
    its action's start); with neither, the last resolution."""

    request_id: RequestId
    back_to: Annotated[int, Field(ge=0)] | None = None
    resolution: Annotated[int, Field(ge=1)] | None = None


class Relay(Intent, event="relay", result=None):
    """GM only, relay mode (DESIGN "Reach and trust"): an intent a Foundry user sent the
    active GM's client over Foundry's own socket, forwarded on the GM's connection.

    ``user`` is the sender's id as Foundry's server stamped it on that socket message,
    never an id the message itself claimed. The bridge handles ``payload`` as intent
    ``event`` from that user, always with a player's authority (a GM acts on its own
    connection, so GM-only answers never cross Foundry's socket, which every client
    hears), under that user's own rate limit. The ack is the relayed intent's own ack.
    ``relay``, ``relay.leave`` and ``user.bind`` are not relayed."""

    user: Identifier
    event: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    payload: dict[str, Any]


class RelayLeave(Intent, event="relay.leave", result=RelayLeaveData):
    """GM only, relay mode: Foundry says ``user`` has left the table, so the bridge stops
    counting it present (its cards go to the GM's client to write)."""

    request_id: RequestId
    user: Identifier


INTENTS: dict[str, type[Intent]] = INTENT_REGISTRY
"""Each intent's request model by event (declared on the models, :class:`Intent`)."""

# Each intent's event by its model: every event has a model of its own.
EVENT_OF: dict[type[object], str] = {model: event for event, model in INTENTS.items()}

# Each intent's answer data by event ("relay" answers with the relayed intent's own).
RESULTS: dict[str, Any] = {
    event: result for event, model in INTENTS.items() if (result := model.__result__) is not None
}
