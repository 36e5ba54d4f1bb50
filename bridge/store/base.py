"""The store interface every backend implements, and its plain records."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class VersionConflict(Exception):
    """Another writer committed first; reload and retry."""


class WorldExists(Exception):
    """A world with that id is already registered."""


@dataclass(frozen=True)
class WorldRecord:
    id: str
    name: str
    ruleset: str
    key_hash: str
    created_at: str


@dataclass(frozen=True)
class Snapshot:
    """A world's state as of ``version``, with the log positions it ends at."""

    world: WorldRecord
    version: int
    state: dict[str, Any]
    last_event_seq: int
    last_event_hash: str
    last_emit_seq: int


@dataclass(frozen=True)
class EventRow:
    seq: int
    type: str
    payload: dict[str, Any]
    created_at: str
    prev_hash: str
    hash: str


@dataclass(frozen=True)
class EmitRow:
    seq: int
    event: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class CommitBatch:
    """Everything one intent changes, written in one transaction (or not at all)."""

    world_id: str
    expected_version: int
    state: dict[str, Any]
    events: list[EventRow] = field(default_factory=list)
    emits: list[EmitRow] = field(default_factory=list)
    user_id: str | None = None
    request_id: str | None = None
    response: dict[str, Any] | None = None
    created_at: str = ""


class Store(Protocol):
    """Durable per-world state, append-only event log, emit outbox, request answers."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def add_world(self, world: WorldRecord, initial_state: dict[str, Any]) -> None:
        """Register a world; raises :class:`WorldExists` for a taken id."""
        ...

    async def get_world(self, world_id: str) -> WorldRecord | None: ...

    async def list_worlds(self) -> list[WorldRecord]: ...

    async def set_key_hash(self, world_id: str, key_hash: str) -> bool: ...

    async def load(self, world_id: str) -> Snapshot | None: ...

    async def version(self, world_id: str) -> int | None:
        """The world's current version alone (cheap: lets callers reuse a cached state)."""
        ...

    async def commit(self, batch: CommitBatch) -> int:
        """Write the batch atomically if the version still matches; return the new version.

        Raises :class:`VersionConflict` when another writer got there first.
        """
        ...

    async def get_response(
        self, world_id: str, user_id: str, request_id: str
    ) -> dict[str, Any] | None: ...

    async def emits_since(self, world_id: str, since: int, limit: int) -> list[EmitRow]: ...

    async def events(self, world_id: str) -> list[EventRow]: ...

    async def events_between(self, world_id: str, first: int, last: int) -> list[EventRow]:
        """The events with ``first <= seq <= last``, in seq order (a bounded page of the
        log: the roll history reads it backwards without loading it whole)."""
        ...

    # Connections and player binding, shared by every bridge process on this store.

    async def add_presence(self, world_id: str, user_id: str, delta: int) -> None:
        """Count a user's connections up or down."""
        ...

    async def is_present(self, world_id: str, user_id: str) -> bool: ...

    async def put_nonce(self, world_id: str, user_id: str, nonce: str) -> None:
        """Remember a player's binding nonce until the GM's client vouches for it."""
        ...

    async def bind_nonce(self, world_id: str, user_id: str, nonce: str) -> bool:
        """Mark the nonce bound; False when no such nonce waits for that user."""
        ...

    async def nonce_bound(self, world_id: str, user_id: str, nonce: str) -> bool: ...

    async def drop_nonce(self, world_id: str, nonce: str) -> None: ...
