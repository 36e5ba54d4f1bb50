"""Sessions, ack envelopes and the errors an intent can end in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ValidationError

from bridge.rules import actions
from bridge.service import lang, protocol
from bridge.store.base import EmitRow

Role = Literal["gm", "player"]


def utc_now() -> datetime:
    return datetime.now(UTC)


def worded(code: str, message: str, params: Mapping[str, object] | None) -> str:
    """A refusal's English: a refusal naming its ``reason`` is worded from the module's
    en.json (``Refusal.<reason>``, its one home); a reason en.json lacks reads as the code's
    sentence (``Error.<code>``), never as the bare reason; any other keeps ``message``."""
    reason = (params or {}).get("reason")
    if not isinstance(reason, str):
        return message
    if lang.known(f"Refusal.{reason}"):
        return lang.say(f"Refusal.{reason}", lang.worded_params(params or {}))
    return lang.say(f"Error.{code}", params) if lang.known(f"Error.{code}") else message


class IntentError(Exception):
    """An intent refused with a machine-readable code and a message for people."""

    def __init__(
        self,
        code: protocol.ErrorCode,
        message: str,
        field: str | None = None,
        params: Mapping[str, protocol.ErrorParam] | None = None,
    ) -> None:
        self.params = dict(params or {})
        message = worded(code, message, self.params)
        super().__init__(message)
        self.code: protocol.ErrorCode = code
        self.message = message
        self.field = field


@dataclass
class Session:
    """Who is on one connection; lives for the connection only."""

    sid: str
    world_id: str
    user_id: str
    role: Role
    bound: bool
    bind_nonce: str | None = None
    # Counted in the store's presence: only bound players and GMs are (so cards are
    # never given to a writer who merely claimed a name).
    present: bool = False

    @property
    def room(self) -> str:
        return world_room(self.world_id)

    @property
    def principal(self) -> actions.Principal:
        return actions.Principal(self.user_id, is_gm=self.role == "gm")


@dataclass(frozen=True)
class Emission:
    event: str
    payload: dict[str, Any]
    room: str


@dataclass
class Reply:
    ack: dict[str, Any]
    emissions: list[Emission] = field(default_factory=list)
    # (world, user, nonce) the GM's client just vouched for: the server binds any
    # connection of its own with that nonce at once (others notice on their next intent).
    vouched: tuple[str, str, str] | None = None
    # What answering cost, in rate tokens (one: a cheap intent's work); a read says what
    # it read, and the server charges the sender's connection that.
    cost: float = 1.0


def emits_frame(emits: Sequence[EmitRow], room: str) -> Emission:
    """A commit's stored emits as the one ``emits`` frame its room hears
    (``protocol.EmitsFrame``), in the order and with the payloads they were stored with."""
    return Emission(
        protocol.EMITS_FRAME,
        {"emits": [{"event": e.event, "data": e.payload} for e in emits]},
        room,
    )


def folded_ack(ack: dict[str, Any], emits: list[dict[str, Any]]) -> dict[str, Any]:
    """The ack as its sender hears it with its commit's ``emits`` (``protocol.AckOk``):
    the answer's card, when one of the emits carries that very card, travels once, in the
    emit (the answer's ``card`` null; the client puts it back from the emit)."""
    data = ack.get("data")
    if isinstance(data, dict) and data.get("card") is not None:
        card = data["card"]
        if any(e["event"] == "card" and e["data"].get("card") is card for e in emits):
            return {**ack, "data": {**data, "card": None}, "emits": emits}
    return {**ack, "emits": emits}


class Requested(Protocol):
    """An intent that changes the world: it names its request."""

    @property
    def request_id(self) -> str: ...


def request_key(intent: Requested) -> str:
    """The key an intent's answer is kept under: its event and its request id. A retry
    (the same event, the same id) gets the first answer and changes nothing; the same id
    on another event is another request, answered as its own, so an answer never has
    another event's shape."""
    return f"{protocol.EVENT_OF[type(intent)]}:{intent.request_id}"


def world_room(world_id: str) -> str:
    return f"world:{world_id}"


def user_room(world_id: str, user_id: str) -> str:
    return f"user:{world_id}:{user_id}"


def ok(data: BaseModel | Mapping[str, Any]) -> dict[str, Any]:
    """The success ack (``protocol.AckOk``'s shape). ``data`` is a validated model, or
    the JSON form of one already dumped (so it is not validated and dumped again)."""
    return {
        "ok": True,
        "data": data.model_dump(mode="json") if isinstance(data, BaseModel) else data,
    }


def error(
    code: protocol.ErrorCode,
    message: str,
    field_name: str | None = None,
    params: Mapping[str, protocol.ErrorParam] | None = None,
) -> dict[str, Any]:
    """The error ack (``protocol.AckError``'s shape), with a code the wire lists and the
    named parameters the module words it with (``message`` is the English rendering: a
    refusal naming its ``reason`` is worded from the module's en.json, its one home)."""
    message = worded(code, message, params)
    info = protocol.ErrorInfo(code=code, message=message, field=field_name, params=params or {})
    return protocol.AckError(error=info).model_dump(mode="json")


def validation_error(exc: ValidationError) -> dict[str, Any]:
    """The first problem, said plainly, with the field's dotted path."""
    first = exc.errors(include_url=False)[0]
    # A refused dict key is part of the path: echo it harmlessly (H18).
    location = ".".join(protocol.shown(str(part)) for part in first["loc"]) or None
    where = f" at {location}" if location else ""
    # The problem's kind and its scalar limits (max_length...), for the module's wording.
    params: dict[str, protocol.ErrorParam] = {"problem": first["type"]}
    for name, value in (first.get("ctx") or {}).items():
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            params[name] = value
    return error("invalid", f"Invalid message{where}: {first['msg']}.", location, params)


class ConnectRefused(Exception):
    def __init__(self, refusal: protocol.ConnectRefusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal
