"""The game state of one world: the records the rules read and replace.

State is replaced, never mutated: the reducer in :mod:`bridge.rules.engine`
builds each new state from the old one and an event. What a record is (frozen,
keyword-only, JSON at the edges) is :mod:`bridge.rules.records`.
"""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, Literal

from pydantic import BeforeValidator

from bridge.rules.dice import Face

# Re-exported: the rules import a record's base from here, beside the records.
from bridge.rules.records import LEFT_OUT_WHEN_EMPTY as LEFT_OUT_WHEN_EMPTY
from bridge.rules.records import Frozen as Frozen
from bridge.rules.ruleset import Outcome
from bridge.rules.shared_map import Records, SharedMap

GM = "gm"
"""The holder id of the GM's own fate point budget and free invokes."""

ActionType = Literal["overcome", "create_advantage", "take_advantage", "discover", "attack"]
OppositionAction = Literal["oppose", "defend"]
OppositionKind = Literal["passive", "active"]
ConsequenceStatus = Literal["fresh", "addressed", "recovering"]
AspectKind = Literal["character", "situation", "consequence", "boost"]
HarmKind = Literal["physical", "mental"]
# R5.10 Decision: "any" is a single track for every kind of harm (Fate Accelerated's and
# Dresden Files Accelerated's "Stress"); "other" tracks (DFA's Indebted) are not stress at all.
StressKind = Literal["physical", "mental", "any", "other"]


class Stunt(Frozen):
    """A stunt's mechanical bonus: +bonus to ``skill`` on the listed action types."""

    name: str
    skill: str
    bonus: int = 2
    actions: tuple[str, ...] = ()


class ConsequenceSlot(Frozen):
    """One consequence slot (R7.1); filled when ``aspect_id`` is set."""

    __left_out_when_empty__ = ("harm",)

    id: str
    severity: int
    aspect_id: str | None = None
    status: ConsequenceStatus = "fresh"
    # Scene / session / scenario counters at the moment recovery started (R7.5).
    recovering_since: tuple[int, int, int] | None = None
    # R13.3: the Superb extra mild slot takes only this kind of harm (None: any).
    harm: Annotated[HarmKind | None, LEFT_OUT_WHEN_EMPTY] = None

    def takes(self, harm: HarmKind | None) -> bool:
        """Whether this slot may hold a consequence of ``harm`` (None: not a hit's harm,
        e.g. a cost, which only an unkinded slot takes)."""
        return self.harm is None or self.harm == harm

    @property
    def empty(self) -> bool:
        return self.aspect_id is None


class StressBox(Frozen):
    """One stress box: it absorbs ``value`` shifts when marked (R5.10)."""

    value: int = 1
    marked: bool = False


class StressTrack(Frozen):
    """A named stress track of one kind with its boxes (R5.10 Decision)."""

    id: str
    name: str
    kind: StressKind
    boxes: tuple[StressBox, ...] = ()

    def absorbs(self, harm: HarmKind) -> bool:
        """Whether this track may take a hit of ``harm`` (never a track of kind "other")."""
        return self.kind == harm or self.kind == "any"

    @property
    def marked(self) -> bool:
        """Whether any box is marked."""
        return any(box.marked for box in self.boxes)


class Earning(Frozen):
    """Why a fate point is waiting for the end of the scene (R4.5, R5.5, R9.3)."""

    kind: Literal["invoked_against", "conceded", "conceded_contest", "hint_unused"]
    aspect: str | None = None


def _stress_from_box_list(value: object) -> object:
    """Logs written before named tracks held one list of 1-shift boxes: Fate
    Condensed's physical track, the only one the bridge had then."""
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, bool) for v in value):
        boxes = tuple(StressBox(marked=v) for v in value)
        track = StressTrack(id="physical", name="Physical Stress", kind="physical", boxes=boxes)
        return (track,)
    return value


class Character(Frozen):
    """What the bridge knows of an actor; sheet fields come from the GM's client."""

    id: str
    name: str
    owners: tuple[str, ...] = ()
    skills: dict[str, int] = field(default_factory=dict)
    stunts: tuple[Stunt, ...] = ()
    fate_points: int = 0
    refresh: int = 3
    # Points earned now but usable once the scene is over (R4.5, R5.5, R9.3).
    pending_fate_points: int = 0
    pending_reasons: tuple[Earning, ...] = ()
    consequences: tuple[ConsequenceSlot, ...] = ()
    stress: Annotated[tuple[StressTrack, ...], BeforeValidator(_stress_from_box_list)] = ()
    overwhelmed: bool = False
    overwhelmed_by: str | None = None

    @property
    def is_npc(self) -> bool:
        """A character no player owns belongs to the GM (R4.5: NPCs receive nothing)."""
        return not self.owners


class Aspect(Frozen):
    """Any aspect the rules touch: on a character, on the scene, a consequence or a boost."""

    id: str
    name: str
    kind: AspectKind
    attached_to: str | None = None
    # Free invokes by holder (a character id, or GM).
    free_invokes: dict[str, int] = field(default_factory=dict)
    created_by_action: str | None = None


SideName = Literal["actor", "opposition"]
# R4: what an invoke is paid with, and what it does.
Payment = Literal["fate_point", "free", "boost"]
InvokeEffect = Literal["bonus", "reroll", "hostile"]


class Invoke(Frozen):
    """One invoke on an action (R4)."""

    side: SideName
    invoker: str
    aspect_id: str
    aspect_name: str
    payment: Payment
    effect: InvokeEffect
    dice: tuple[Face, Face, Face, Face] | None = None
    # A reroll's replaced dice: with them the history counts every 4dF roll made.
    replaced: tuple[Face, Face, Face, Face] | None = None


class Roll(Frozen):
    """One side's roll and everything added to it (R1.2)."""

    __left_out_when_empty__ = ("stunts", "defense_bonus")

    skill: str | None = None
    skill_rating: int = 0
    stunt_bonus: int = 0
    teamwork_bonus: int = 0
    invoke_bonus: int = 0
    dice: tuple[Face, Face, Face, Face] | None = None
    passive_rating: int | None = None
    # R13.8: the stunts the roll named (their bonuses are ``stunt_bonus``).
    stunts: Annotated[tuple[str, ...], LEFT_OUT_WHEN_EMPTY] = ()
    # R13.7: full defense's +2 on a defend roll.
    defense_bonus: Annotated[int, LEFT_OUT_WHEN_EMPTY] = 0

    @property
    def total(self) -> int:
        if self.passive_rating is not None:
            return self.passive_rating + self.invoke_bonus
        dice = sum(self.dice) if self.dice else 0
        return (
            dice
            + self.skill_rating
            + self.stunt_bonus
            + self.teamwork_bonus
            + self.invoke_bonus
            + self.defense_bonus
        )


class Side(Frozen):
    """The acting side or the opposing side of one action."""

    leader: str | None = None
    helpers: tuple[str, ...] = ()
    roll: Roll = Roll()
    dangerous: bool = False
    passed: bool = False
    fate_point_aspects: tuple[str, ...] = ()

    @property
    def members(self) -> tuple[str, ...]:
        return ((self.leader,) if self.leader else ()) + self.helpers


class Effect(Frozen):
    """Something the resolution changed, said on the card."""

    kind: Literal[
        "boost",
        "aspect",
        "free_invokes",
        "consequence",
        "overwhelmed",
        "questions",
        "hint",
        "hit",
        "stress",
        "cost",
        "fate_point",
        "success",
        "failure",
        "conceded",
        "cancelled",  # the GM called the action off (text: why)
        "refund",  # a cancelled action's invoke payment returned (detail: the payment)
        "vanished",  # what the action was about is gone (detail: "aspect" / "consequence")
        # A character's owner (or the GM) said no to the action touching it, which called
        # it off (DESIGN Reach and trust): character_id is that character; detail the
        # first of its parts ("target" / "opposer" / "aspect").
        "declined",
    ]
    character_id: str | None = None
    aspect_id: str | None = None
    count: int = 0
    text: str = ""
    # Machine-readable detail for localizing: a severity name, "addressed", "minor.wrinkle".
    detail: str = ""
    cause: str | None = None


CostSeverity = Literal["minor", "serious"]


class Cost(Frozen):
    severity: CostSeverity
    kind: str
    text: str = ""
    target_id: str | None = None


ActionState = Literal[
    "confirming",  # R2.1, R9.1, R10.1: the GM confirms a player's numbers; helpers and
    # the owners of characters the action would touch accept (DESIGN Reach and trust)
    "declared",  # dangerous: the concession window before any dice
    "awaiting_opposition",  # active opposition: the opposer picks a skill and rolls first
    "invoking",  # dice are down; both sides invoke or pass (R4.4)
    "choosing",  # the actor's owner chooses (fail / succeed at a cost, leave a mark, ...)
    "costing",  # the GM picks the cost (R6)
    "absorbing",  # Fate Condensed: the target absorbs a hit (R5.10)
    "resolved",
    "cancelled",  # the GM called it off; closed like a resolved action, with no outcome
]

CLOSED_STATES: frozenset[str] = frozenset({"resolved", "cancelled"})
"""States in which an action takes no more intents."""

Choice = Literal[
    "fail_or_cost",  # R5.1, R5.3, R5.5
    "advantage_fumble",  # R5.2: fail / unintended aspect / serious cost
    "leave_mark",  # R5.4
    "attack_style",  # R5.9: the hit, or one less for a boost
]


class Proposal(Frozen):
    """R2.1, R9.1 Decision: what a player asked for that the GM owns, until the GM
    confirms or changes it on the card. The action's sides already carry these values."""

    passive_rating: int | None = None
    dangerous_actor: bool = False
    dangerous_opposition: bool = False


ParticipantStatus = Literal["joined", "invited", "declined", "dropped"]


class Participant(Frozen):
    """R10.1: a character on the acting side and the skill it brings. The declared actor
    comes first; a helper a player names for someone else's character is ``invited``
    until its owner (or the GM) accepts (``joined``) or declines; an invitation still
    unanswered when the dice are rolled is ``dropped``."""

    character_id: str
    skill: str
    status: ParticipantStatus = "joined"


ConsentPart = Literal["target", "opposer", "aspect"]
ConsentStatus = Literal["asked", "accepted", "declined"]


class Consent(Frozen):
    """Consent to harm (DESIGN Reach and trust; R2.1, R9.1, R10.1 extended): a character a
    player's action would touch that the player does not own: as its ``target``, as its
    active ``opposer``, or through an ``aspect`` on it the action is about. The action
    waits in ``confirming`` until its owner (or the GM) accepts; a decline calls the
    action off. The GM's own actions ask nobody."""

    character_id: str
    parts: tuple[ConsentPart, ...]
    status: ConsentStatus = "asked"


HintStatus = Literal["offered", "asked", "given"]


Purpose = Literal[
    "action", "contest_roll", "contest_advantage", "challenge_task", "challenge_advantage"
]


# R13.2: an attack's per-hit box rule, from its ruleset when declared ("": the summing
# rule of records from before R13).
StressRuleName = Literal["", "ones", "one_box"]


class Action(Frozen):
    """One action's resolution so far (R2-R10)."""

    __left_out_when_empty__ = ("consents", "stress_rule", "interposed_for")

    id: str
    type: ActionType
    requested_by: str
    actor: Side
    opposition: Side
    opposition_kind: OppositionKind
    opposition_action: OppositionAction | None = None
    state: ActionState
    target_id: str | None = None
    target_aspect_id: str | None = None
    aspect_name: str | None = None
    situation: str | None = None
    recovery_slot_id: str | None = None
    description: str | None = None
    invokes: tuple[Invoke, ...] = ()
    shifts: int | None = None
    outcome: Outcome | None = None
    pending_choice: Choice | None = None
    cost_severity: CostSeverity | None = None
    costs: tuple[Cost, ...] = ()
    pending_hit: int = 0
    # R2.1, R9.1: the player's numbers the GM has not confirmed yet (state "confirming").
    proposal: Proposal | None = None
    # R10.1: everyone named on the acting side, with whether they joined (empty on
    # records declared before helpers had to accept).
    participants: tuple[Participant, ...] = ()
    # Consent to harm (DESIGN Reach and trust): the characters of other users this
    # player's action would touch, each with its owner's answer (empty on records
    # declared before an action had to ask, and on every action the GM started; left
    # out of the JSON while empty, so those records dump as they were written).
    consents: Annotated[tuple[Consent, ...], LEFT_OUT_WHEN_EMPTY] = ()
    # R5.5: an excelled discover's hint: offered, asked for by the actor, given by the GM.
    hint: HintStatus | None = None
    hint_text: str | None = None
    # R11.3 Decision: an attack's kind picks the stress tracks that may absorb it (R5.10).
    attack_kind: HarmKind | None = None
    # R13.2: how many boxes its hit may mark (see StressRuleName).
    stress_rule: Annotated[StressRuleName, LEFT_OUT_WHEN_EMPTY] = ""
    effects: tuple[Effect, ...] = ()
    succeeded: bool | None = None
    # Zoomed-in procedures (R11) this action belongs to.
    purpose: Purpose = "action"
    contest_id: str | None = None
    side_id: str | None = None
    challenge_id: str | None = None
    task_id: str | None = None
    # The Foundry user whose client created this action's chat message, as that client
    # reported it: only the author or a GM may update the message (DESIGN Foundry side).
    card_author: str | None = None
    # R13.11: the target another character defends for (its defender is the opposition's
    # leader, and takes the hit); left out of the JSON while empty.
    interposed_for: Annotated[str | None, LEFT_OUT_WHEN_EMPTY] = None

    @property
    def closed(self) -> bool:
        """Resolved or cancelled: no intent moves it any more."""
        return self.state in CLOSED_STATES


class ContestSide(Frozen):
    id: str
    name: str
    members: tuple[str, ...]
    progress: int = 0
    conceded: bool = False


class ExchangeRoll(Frozen):
    """One side's part in a contest exchange."""

    side_id: str
    action_id: str | None = None
    total: int | None = None
    shifts: int | None = None
    forfeited: bool = False


class ExchangeResult(Frozen):
    number: int
    rolls: tuple[ExchangeRoll, ...]
    winner: str | None = None
    margin: int = 0
    progress: int = 0
    twist: bool = False
    twist_aspect: str | None = None
    excelled: bool = False


class Contest(Frozen):
    """R11.2: sides race to the ruleset's target of progress."""

    id: str
    name: str
    mode: Literal["direct", "environment"]
    skill: str
    passive_rating: int | None = None
    target: int = 3
    sides: tuple[ContestSide, ...]
    exchange: int = 1
    current: tuple[ExchangeRoll, ...] = ()
    history: tuple[ExchangeResult, ...] = ()
    twist_pending: bool = False
    state: Literal["open", "won", "ended"] = "open"
    winner: str | None = None


class ChallengeTask(Frozen):
    id: str
    name: str
    skill: str
    rating: int
    action_id: str | None = None


class Challenge(Frozen):
    """R11.1: tasks rolled in any order; decided only when all are in."""

    id: str
    name: str
    tasks: tuple[ChallengeTask, ...]
    advantage_action_ids: tuple[str, ...] = ()
    state: Literal["open", "complete"] = "open"
    carry_boosts: bool = False


class Zone(Frozen):
    name: str
    adjacent: tuple[str, ...] = ()


class ConflictSide(Frozen):
    id: str
    name: str
    members: tuple[str, ...]


class Conflict(Frozen):
    """R11.3, R13.5-R13.7: zones, turn order, exchanges, until one side remains."""

    __left_out_when_empty__ = (
        "order_method",
        "acted",
        "full_defense",
        "conceded",
        "consequences_taken",
        "clears_stress",
    )

    id: str
    name: str
    kind: HarmKind
    order_skill: str
    zones: tuple[Zone, ...] = ()
    positions: dict[str, str] = field(default_factory=dict)
    sides: tuple[ConflictSide, ...]
    order: tuple[str, ...]
    ratings: dict[str, int] = field(default_factory=dict)
    ties: tuple[tuple[str, ...], ...] = ()
    turn: int = 0
    exchange: int = 1
    state: Literal["open", "ended"] = "open"
    winner: str | None = None
    # R13.5: "" is ranked (every record before elective order was); "elective" lets
    # whoever acted pick who goes next, ``acted`` holding this exchange's.
    order_method: Annotated[Literal["", "elective"], LEFT_OUT_WHEN_EMPTY] = ""
    acted: Annotated[tuple[str, ...], LEFT_OUT_WHEN_EMPTY] = ()
    # R13.7: who took full defense, until its next turn.
    full_defense: Annotated[tuple[str, ...], LEFT_OUT_WHEN_EMPTY] = ()
    # R13.6: who conceded, and the consequences each member took in this conflict.
    conceded: Annotated[tuple[str, ...], LEFT_OUT_WHEN_EMPTY] = ()
    consequences_taken: Annotated[dict[str, int], LEFT_OUT_WHEN_EMPTY] = field(default_factory=dict)
    # R13.4: Fate Core clears its members' stress when the conflict ends.
    clears_stress: Annotated[bool, LEFT_OUT_WHEN_EMPTY] = False

    @property
    def current(self) -> str | None:
        """Whose turn it is, while the conflict is open."""
        if self.state != "open" or not self.order:
            return None
        return self.order[self.turn]


class Compel(Frozen):
    """R12.3, R12.4: offered by the GM; accepted (+1) or refused (-1) by the player."""

    id: str
    character_id: str
    text: str
    aspect_id: str | None = None
    state: Literal["offered", "accepted", "refused"] = "offered"


class Scene(Frozen):
    """Per-scene bookkeeping the rules need (R5.6, R5.8, R12)."""

    number: int = 1
    session: int = 1
    scenario: int = 1
    # "actor|situation" keys: discover exhausted (R5.6), obstacles overcome (R5.8).
    exhausted: tuple[str, ...] = ()
    overcome: tuple[str, ...] = ()
    # R5.5: one character id per excelled discover whose hint is not taken yet (an id
    # appears once per hint, so two untaken hints pay two points).
    hints_open: tuple[str, ...] = ()


class WorldSettings(Frozen):
    """How a table chooses to play, set by the GM."""

    __left_out_when_empty__ = ("full_defense",)

    # R2.1 Decision: a table may trust its players' passive opposition ratings (off by
    # default); danger (R9.1) and helpers (R10.1) are confirmed either way.
    trust_player_ratings: bool = False
    # R13.7: Fate Condensed's optional full defense, turned on.
    full_defense: Annotated[bool, LEFT_OUT_WHEN_EMPTY] = False


class WorldState(Frozen):
    """Everything the rules need about one world."""

    ruleset: str = "unwritten"
    characters: Records[Character] = field(default_factory=SharedMap)
    aspects: Records[Aspect] = field(default_factory=SharedMap)
    actions: Records[Action] = field(default_factory=SharedMap)
    scene: Scene = Scene()
    gm_fate_points: int = 0
    action_count: int = 0
    aspect_count: int = 0
    contests: Records[Contest] = field(default_factory=SharedMap)
    challenges: Records[Challenge] = field(default_factory=SharedMap)
    conflicts: Records[Conflict] = field(default_factory=SharedMap)
    compels: Records[Compel] = field(default_factory=SharedMap)
    # Boosts carried out of a challenge into the next scene (R11.1, R12.1).
    carried_boosts: tuple[str, ...] = ()
    settings: WorldSettings = WorldSettings()
    # Event seqs of resolutions the GM undid (the history marks them); only grows.
    undone: tuple[int, ...] = ()
