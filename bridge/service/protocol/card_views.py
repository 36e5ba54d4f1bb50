"""The views of an action's chat card, and how every view is declared.

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

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, TypeAdapter, WithJsonSchema, with_config
from typing_extensions import TypedDict

from bridge.service.protocol.base import (
    ActionTypeName,
    DiceRoll,
    Face,
    HarmKindName,
    InvokeEffect,
    Payment,
    SideName,
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
