"""Shared wire types: the base models, bounded field types, protocol constants."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

PROTOCOL_VERSION = 1
NAMESPACE = "/fate"
MAX_MESSAGE_BYTES = 64 * 1024

Face = Literal[-1, 0, 1]
DiceRoll = tuple[Face, Face, Face, Face]
# Inbound JSON arrays: strict mode refuses lists for tuples, so bound a list instead.
DiceRollIn = Annotated[list[Face], Field(min_length=4, max_length=4)]

# 128: an unlinked token's character id is its UUID ("Scene.<id>.Token.<id>", 45 characters),
# and a character's aspect ids extend the character id with the sheet's key.
Identifier = Annotated[
    str, StringConstraints(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:\-]+$")
]
RequestId = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:\-]+$")
]
Name = Annotated[str, StringConstraints(min_length=1, max_length=120)]
Text = Annotated[str, StringConstraints(max_length=2000)]
Rating = Annotated[int, Field(ge=-10, le=20)]
ActionTypeName = Literal["overcome", "create_advantage", "take_advantage", "discover", "attack"]
# R11.3, R5.10: what kind of harm an attack or conflict deals, and what a stress track takes.
HarmKindName = Literal["physical", "mental"]
StressKindName = Literal["physical", "mental", "any", "other"]


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
