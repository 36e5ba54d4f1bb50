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

Identifier = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:\-]+$")
]
RequestId = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:\-]+$")
]
Name = Annotated[str, StringConstraints(min_length=1, max_length=120)]
Text = Annotated[str, StringConstraints(max_length=2000)]
Rating = Annotated[int, Field(ge=-10, le=20)]
# The largest integer JavaScript holds exactly (and far below SQLite's 64-bit limit).
MAX_SAFE_INTEGER = 2**53 - 1
# A position in a world's emit or event log.
Seq = Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER)]
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
    protocol: Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER)]
    key: Annotated[str, StringConstraints(max_length=200)] | None = None


class ConnectRefusal(Outbound):
    """``err.data`` of a refused connection; ``reason`` is machine-readable."""

    reason: Literal["invalid_auth", "unknown_world", "bad_key", "protocol_mismatch", "role"]
    message: str
    bridge_protocol: int = PROTOCOL_VERSION
