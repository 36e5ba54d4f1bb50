"""What the bridge sends: acks (an intent's answer or refusal) and the emits frame with
its stored emits (cards, actor patches, token statuses, the scene state), and notices."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field
from typing_extensions import TypedDict

from bridge.rules.errors import RuleCode
from bridge.service.protocol.base import (
    HarmKindName,
    Outbound,
    StressKindName,
)
from bridge.service.protocol.card_views import _view
from bridge.service.protocol.scene_views import Card, SceneState

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
    replays what a lost answer carried. An answer's card that one of ``emits`` carries is
    left to that emit (``ActionData.card``: null): the client puts it back from there."""

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
