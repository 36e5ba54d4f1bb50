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


class ActorData(Inbound):
    """An actor as the adapters map it to the bridge's character model."""

    id: Identifier
    name: Name
    owners: Annotated[list[Identifier], Field(max_length=64)] = []
    skills: Annotated[dict[Name, Rating], Field(max_length=200)] = {}


class ActorSync(Inbound):
    request_id: RequestId
    actor: ActorData


class PassiveOppositionIn(Inbound):
    kind: Literal["passive"]
    rating: Rating


class ActionStart(Inbound):
    """Start an action for an actor (R2, R5)."""

    request_id: RequestId
    type: Literal["overcome"]
    actor_id: Identifier
    skill: Name
    opposition: PassiveOppositionIn
    description: Text | None = None


class DevQueueDice(Inbound):
    """Queue the next rolls' faces; only with ``--dev-dice``, only for a GM."""

    request_id: RequestId
    rolls: Annotated[list[DiceRollIn], Field(min_length=1, max_length=100)]


INTENTS: dict[str, type[Inbound]] = {
    "hello": Hello,
    "world.sync": WorldSync,
    "actor.sync": ActorSync,
    "action.start": ActionStart,
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


class CardActor(Outbound):
    id: str
    name: str


class CardBoost(Outbound):
    id: str
    name: str
    holder_id: str


class ActionCard(Outbound):
    """Everything a chat card shows about one action; rendered by the module."""

    kind: Literal["action"] = "action"
    action_id: str
    ruleset: str
    action_type: Literal["overcome"]
    action_label: str
    state: Literal["rolled", "invoking", "choosing", "resolved"]
    actor: CardActor
    skill: str
    skill_rating: Rated
    dice: DiceRoll
    dice_total: int
    total: Rated
    opposition: Rated
    opposition_kind: Literal["passive"]
    shifts: int
    outcome: Literal["fumble", "tie", "succeed", "excel"]
    outcome_label: str
    description: str | None = None
    boost: CardBoost | None = None
    event_seq: int
    event_hash: str


class CardEmit(Outbound):
    """Create or update one chat card; only ``writer`` writes it into Foundry."""

    seq: int
    world: str
    writer: str
    op: Literal["create", "update"]
    card_id: str
    card: ActionCard


class Notice(Outbound):
    level: Literal["info", "warning", "error"]
    code: str
    message: str


EMITS: dict[str, type[Outbound]] = {
    "card": CardEmit,
    "notice": Notice,
}


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


class WorldSyncData(Outbound):
    emits: list[CardEmit]
    last_seq: int


class ActorSyncData(Outbound):
    actor_id: str
    changed: bool


class ActionStartData(Outbound):
    action_id: str
    card_id: str
    card: ActionCard


class DevQueueDiceData(Outbound):
    queued: int


RESULTS: dict[str, type[Outbound]] = {
    "hello": HelloData,
    "world.sync": WorldSyncData,
    "actor.sync": ActorSyncData,
    "action.start": ActionStartData,
    "dev.queue_dice": DevQueueDiceData,
}
