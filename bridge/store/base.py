"""The store interface every backend implements, and its plain records."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, fields
from typing import Any, Protocol, TypeVar, cast

from bridge.store import codec

R = TypeVar("R")


def record_from_row(record: type[R], row: Any) -> R:
    """The dataclass ``record`` built from a database row read by column name (a
    ``sqlite3.Row``, an ``aiosqlite.Row``): each field from the column of its name."""
    return record(**{f.name: row[f.name] for f in fields(cast(Any, record))})


class VersionConflict(Exception):
    """Another writer committed first; reload and retry."""


class AlreadyAnswered(Exception):
    """The batch's request id was answered by an earlier commit (a retry, perhaps on
    another node or before a restart): nothing was written; ``response`` is that answer."""

    def __init__(self, response: dict[str, Any]) -> None:
        super().__init__("request already answered")
        self.response = response


class WorldExists(Exception):
    """A world with that id is already registered."""


@dataclass(frozen=True)
class WorldRecord:
    id: str
    name: str
    ruleset: str
    key_hash: str
    created_at: str


class EventRow:
    """One event of the log, immutable. ``encoded`` is the payload's JSON text when the
    writer has it already (the store then writes it as is instead of encoding the payload
    again); it is a cache of ``payload``, so it takes no part in comparisons. A row made
    by :meth:`of_encoded` holds only the text, and decodes ``payload`` when first asked
    (a commit's own rows are written and hashed, seldom read back)."""

    __slots__ = ("_payload", "created_at", "encoded", "hash", "prev_hash", "seq", "type")
    seq: int
    type: str
    created_at: str
    prev_hash: str
    hash: str
    encoded: str | None
    _payload: dict[str, Any] | None

    def __init__(
        self,
        seq: int,
        type: str,
        payload: dict[str, Any] | None,
        created_at: str,
        prev_hash: str,
        hash: str,
        encoded: str | None = None,
    ) -> None:
        """``payload`` None: it is ``encoded``, decoded when first read (see of_encoded)."""
        if payload is None and encoded is None:
            raise ValueError("an event row needs its payload or the payload's JSON text")
        _set = object.__setattr__
        _set(self, "seq", seq)
        _set(self, "type", type)
        _set(self, "_payload", payload)
        _set(self, "created_at", created_at)
        _set(self, "prev_hash", prev_hash)
        _set(self, "hash", hash)
        _set(self, "encoded", encoded)

    @classmethod
    def of_encoded(
        cls, seq: int, type: str, encoded: str, created_at: str, prev_hash: str, hash: str
    ) -> EventRow:
        """A row whose payload is the JSON text ``encoded``, decoded only when read."""
        return cls(seq, type, None, created_at, prev_hash, hash, encoded)

    @property
    def payload(self) -> dict[str, Any]:
        payload = self._payload
        if payload is None:
            payload = codec.loads(cast(str, self.encoded))  # one of the two is given
            object.__setattr__(self, "_payload", payload)
        return cast(dict[str, Any], payload)

    def payload_json(self) -> str:
        """The payload as the store writes it (the stores' one JSON codec)."""
        return self.encoded if self.encoded is not None else codec.dumps(self.payload)

    def _key(self) -> tuple[int, str, dict[str, Any], str, str, str]:
        return (self.seq, self.type, self.payload, self.created_at, self.prev_hash, self.hash)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EventRow):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # its payload is a dict

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # copy and pickle rebuild it through __init__ (setting its slots is refused).
        fields = (self.seq, self.type, self._payload, self.created_at, self.prev_hash)
        return (EventRow, (*fields, self.hash, self.encoded))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"EventRow is immutable: cannot set {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"EventRow is immutable: cannot delete {name}")

    def __repr__(self) -> str:
        return (
            f"EventRow(seq={self.seq!r}, type={self.type!r}, payload={self.payload!r}, "
            f"created_at={self.created_at!r}, prev_hash={self.prev_hash!r}, hash={self.hash!r})"
        )


@dataclass(frozen=True)
class EmitRow:
    seq: int
    event: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class Snapshot:
    """A world as the store holds it: a saved state, the events after it, the log's head.

    ``state`` is the world's state as of event ``state_seq`` (0: before any event);
    ``tail`` holds every event after it, in seq order, up to ``last_event_seq``. The
    latest state is ``state`` with ``tail`` replayed by the reducer
    (:func:`bridge.rules.engine.replay`); the store never interprets events, it keeps
    them. ``version`` counts commits and is what check-and-set compares.
    """

    world: WorldRecord
    version: int
    state: dict[str, Any]
    state_seq: int
    tail: tuple[EventRow, ...]
    last_event_seq: int
    last_event_hash: str
    last_emit_seq: int
    # The sizes of the saved state's JSON and of the tail's payloads' JSON, in
    # characters: what the snapshot cadence compares (bridge.service.commit.snapshot_due).
    state_size: int = 0
    tail_size: int = 0


@dataclass(frozen=True)
class HistoryRow:
    """One roll-history entry of the log as the history index keeps it, written with the
    commit that logs its event (the service decides which events are entries: the store
    keeps what it is given). ``characters``: everyone the entry is about (the history's
    character filter); ``rolls``: each 4dF roll made on it, who rolled it (None: nobody
    named) and the dice's sum, -4 to +4 (the dice statistics)."""

    seq: int
    scene: int
    kind: str
    cancelled: bool
    characters: tuple[str, ...] = ()
    rolls: tuple[tuple[str | None, int], ...] = ()


# Index rows one history page looks at, at most: a page costs the same however long the
# log, and however many rows a player may not see (undone ones) lie in the way.
HISTORY_SCAN = 2000


@dataclass(frozen=True)
class HistoryQuery:
    """One page of the history index, newest first: entries logged before event
    ``before`` (None: all) that pass every filter given (None: any), leaving out the seqs
    in ``skip``, at most ``limit`` of them; at most ``scan`` index rows are looked at."""

    limit: int
    before: int | None = None
    scene: int | None = None
    character: str | None = None
    kind: str | None = None
    cancelled: bool | None = None
    skip: frozenset[int] = frozenset()
    scan: int = HISTORY_SCAN


@dataclass(frozen=True)
class HistoryFound:
    """A page of the history index: the events of its entries, newest first; whether no
    older entry passes the filters (``exhausted``), else the lowest seq looked at (where
    the next page starts when the scan stopped first); and how many index rows were
    looked at (what the page cost)."""

    events: list[EventRow]
    exhausted: bool
    lowest: int | None
    examined: int


@dataclass(frozen=True)
class CommitBatch:
    """Everything one intent changes, written in one transaction (or not at all).

    What changed, not the world: the events are appended to the log (each chained to
    the one before), the emits to the outbox, the answer under its request id. A
    ``snapshot`` (the state as of the batch's last event, or its JSON text when the
    caller has encoded it already) is given only now and then (see
    :func:`bridge.service.commit.snapshot_due`); it replaces the saved state, so later
    loads replay fewer events. Without one the saved state stays and the events join
    its tail, so a commit costs the same however large the world has grown.

    A batch with a ``request_id`` is written at most once per ``(user_id,
    request_id)``: the commit looks the request up first, in the same atomic step.
    ``response_card_emit`` names the batch's emit whose card the answer's ``data.card``
    is (the same object): a store may then keep that card once, with the emit, and put
    it back in the answer it returns.

    ``history`` holds the index rows of the batch's events that are roll-history
    entries (:class:`HistoryRow`), written in the same step.
    """

    world_id: str
    expected_version: int
    snapshot: dict[str, Any] | str | None = None
    events: list[EventRow] = field(default_factory=list)
    emits: list[EmitRow] = field(default_factory=list)
    user_id: str | None = None
    request_id: str | None = None
    response: dict[str, Any] | None = None
    response_card_emit: int | None = None
    created_at: str = ""
    history: list[HistoryRow] = field(default_factory=list)


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

    async def load(self, world_id: str) -> Snapshot | None:
        """The saved state, the events after it and the log's head, read consistently."""
        ...

    async def version(self, world_id: str) -> int | None:
        """The world's current version alone (cheap: lets callers reuse a cached state)."""
        ...

    async def commit(self, batch: CommitBatch) -> int:
        """Write the batch atomically if the version still matches; return the new version.

        One round trip, checked in this order inside one atomic step: when the batch's
        request id already has an answer, raises :class:`AlreadyAnswered` with it and
        writes nothing (whatever the version); else when the world's version is not
        ``expected_version``, raises :class:`VersionConflict` and writes nothing; else
        the events, the emits, the answer, the new head and (when given) the snapshot
        are all durable when this returns.
        """
        ...

    async def get_response(
        self, world_id: str, user_id: str, request_id: str
    ) -> dict[str, Any] | None:
        """The answer committed under the request id, if any (the commit checks it too;
        this is for callers that refuse a request without committing)."""
        ...

    async def emits_since(self, world_id: str, since: int, limit: int) -> list[EmitRow]: ...

    async def events(self, world_id: str, after: int = 0) -> list[EventRow]:
        """The log from event ``after + 1`` on, in seq order (the whole log by default)."""
        ...

    async def events_between(self, world_id: str, first: int, last: int) -> list[EventRow]:
        """The events with ``first <= seq <= last``, in seq order (a bounded page of the
        log: the roll history reads it backwards without loading it whole)."""
        ...

    # The history index: the log's roll-history entries by scene, character and kind.

    async def history_page(self, world_id: str, query: HistoryQuery) -> HistoryFound:
        """One page of entries (see :class:`HistoryQuery`), read by the index: what it
        costs grows with the page and the rows skipped, never with the log."""
        ...

    async def history_rows(
        self, world_id: str, *, after: int = 0, seqs: Collection[int] | None = None
    ) -> list[HistoryRow]:
        """The index rows with seq over ``after``, or (``seqs`` given) those seqs', in seq
        order."""
        ...

    async def history_pending(self, world_id: str) -> int:
        """The log's events ``1..n`` written before the index existed and not indexed yet
        (0: the index holds every entry). A world registered with this store has 0."""
        ...

    async def index_history(self, world_id: str, rows: list[HistoryRow], pending: int) -> None:
        """Index the entries among events ``1..pending`` (``history_pending``'s answer,
        read first): afterwards the world has none pending. Idempotent."""
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
