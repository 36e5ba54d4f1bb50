"""The embedded default store: SQLite in WAL mode, on one worker thread.

Every store call runs on the thread that owns the only connection
(:mod:`bridge.store.sqlite_worker`), or in place when that thread is idle; the log's rows
are :mod:`bridge.store.sqlite_log`'s, the schema :mod:`bridge.store.sqlite_schema`'s, the
write-ahead log's checkpoints :mod:`bridge.store.sqlite_checkpoint`'s.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, TypeVar, cast

from bridge.store import codec
from bridge.store.base import (
    AlreadyAnswered,
    CommitBatch,
    EmitRow,
    EventRow,
    HistoryFound,
    HistoryQuery,
    HistoryRow,
    Snapshot,
    VersionConflict,
    WorldExists,
    WorldRecord,
    record_from_row,
)
from bridge.store.chain import GENESIS_HASH
from bridge.store.compact import commit_events, pack, pack_commit, unpack
from bridge.store.memory_presence import LocalPresence
from bridge.store.sqlite_checkpoint import (
    BUSY_TIMEOUT_MS,
    CHECKPOINT_SECONDS,
    WAL_TRUNCATE_FRAMES,
    Checkpointer,
)
from bridge.store.sqlite_log import (
    HISTORY_COLUMNS,
    emits_of,
    emits_text,
    events_from,
    events_of,
    events_text,
    find_answer,
    history_page,
    history_row,
    kept_answer,
    write_history,
)
from bridge.store.sqlite_schema import connect_readable, migrate
from bridge.store.sqlite_worker import Worker

T = TypeVar("T")


def _snapshot_value(snapshot: dict[str, Any] | str) -> bytes:
    """A batch's snapshot as stored: its JSON text (encoded here unless it came encoded),
    packed."""
    return pack(snapshot if isinstance(snapshot, str) else codec.dumps(snapshot))


class SQLiteStore(LocalPresence):
    """One SQLite file; every commit is one transaction guarded by a version check.

    Presence and binding nonces live in this process: the embedded store serves one
    bridge process.
    """

    def __init__(
        self,
        path: Path,
        *,
        checkpoint_seconds: float = CHECKPOINT_SECONDS,
        wal_truncate_frames: int = WAL_TRUNCATE_FRAMES,
    ) -> None:
        super().__init__()
        self.path = path
        self.checkpoint_seconds = checkpoint_seconds
        self.wal_truncate_frames = wal_truncate_frames
        self._db: sqlite3.Connection | None = None
        self._thread: Worker | None = None
        self._checkpointer: Checkpointer | None = None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("store is not open")
        return self._db

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` on the store's thread with its connection: one hop per call.
        There a statement may wait for another connection's lock (``_waiting``)."""
        if self._thread is None:
            raise RuntimeError("store is not open")
        db = self.db
        return await self._thread.run(lambda: _waiting(db, work))

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._thread = Worker()

        def connect() -> sqlite3.Connection:
            db = connect_readable(self.path, isolation_level=None, check_same_thread=False)
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode survives a killed process (the OS has the pages); only
            # a power cut may lose the last commits.
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            # The checkpointer's thread copies the log into the file (Checkpointer).
            db.execute("PRAGMA wal_autocheckpoint=0")
            # Each time the log starts afresh, its file is cut back to this.
            page_size = int(db.execute("PRAGMA page_size").fetchone()[0])
            db.execute(f"PRAGMA journal_size_limit={self.wal_truncate_frames * (page_size + 24)}")
            migrate(db)
            # At rest the connection never waits for a lock: a commit run in place on the
            # event loop must not (see _waiting, _begin_without_waiting).
            db.execute("PRAGMA busy_timeout=0")
            return db

        self._db = await self._thread.run(connect)
        self._checkpointer = Checkpointer(
            self.path, self.checkpoint_seconds, self.wal_truncate_frames, self._reset_log
        )

    def _reset_log(self) -> None:
        """From any thread: one passive checkpoint on the writer's thread, between two
        commits, so the next commit starts the log afresh (see Checkpointer)."""
        worker, db = self._thread, self._db
        if worker is not None and db is not None:
            worker.post(lambda: db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone())

    async def close(self) -> None:
        if self._checkpointer is not None:
            checkpointer, self._checkpointer = self._checkpointer, None
            await asyncio.get_running_loop().run_in_executor(None, checkpointer.stop)
        if self._db is not None and self._thread is not None:
            db, self._db = self._db, None
            await self._thread.run(db.close)
        if self._thread is not None:
            thread, self._thread = self._thread, None
            thread.stop()

    async def add_world(self, world: WorldRecord, initial_state: dict[str, Any]) -> None:
        def add(db: sqlite3.Connection) -> None:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(
                    "INSERT INTO worlds (id, name, ruleset, key_hash, created_at, "
                    "last_event_hash) VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        world.id,
                        world.name,
                        world.ruleset,
                        world.key_hash,
                        world.created_at,
                        GENESIS_HASH,
                    ),
                )
                db.execute(
                    "INSERT INTO snapshots (world_id, state_seq, state) VALUES (?, 0, ?)",
                    (world.id, _snapshot_value(initial_state)),
                )
                db.execute("COMMIT")
            except sqlite3.IntegrityError as exc:
                db.execute("ROLLBACK")
                raise WorldExists(world.id) from exc
            except BaseException:
                db.execute("ROLLBACK")
                raise

        await self._run(add)

    async def get_world(self, world_id: str) -> WorldRecord | None:
        def get(db: sqlite3.Connection) -> WorldRecord | None:
            row = db.execute(
                "SELECT id, name, ruleset, key_hash, created_at FROM worlds WHERE id = ?",
                (world_id,),
            ).fetchone()
            return record_from_row(WorldRecord, row) if row else None

        return await self._run(get)

    async def list_worlds(self) -> list[WorldRecord]:
        def listing(db: sqlite3.Connection) -> list[WorldRecord]:
            rows = db.execute(
                "SELECT id, name, ruleset, key_hash, created_at FROM worlds ORDER BY created_at, id"
            ).fetchall()
            return [record_from_row(WorldRecord, row) for row in rows]

        return await self._run(listing)

    async def set_key_hash(self, world_id: str, key_hash: str) -> bool:
        def update(db: sqlite3.Connection) -> bool:
            cursor = db.execute("UPDATE worlds SET key_hash = ? WHERE id = ?", (key_hash, world_id))
            return cursor.rowcount == 1

        return await self._run(update)

    async def load(self, world_id: str) -> Snapshot | None:
        def load(db: sqlite3.Connection) -> Snapshot | None:
            # One read transaction: the head and the tail belong together.
            db.execute("BEGIN")
            try:
                row = db.execute(
                    "SELECT * FROM worlds JOIN snapshots ON snapshots.world_id = worlds.id "
                    "WHERE worlds.id = ?",
                    (world_id,),
                ).fetchone()
                if row is None:
                    return None
                # A snapshot is taken at a commit's end: the tail's commits hold no
                # event before it (they are filtered all the same).
                tail_commits = [
                    commit_events(value)
                    for (value,) in db.execute(
                        "SELECT events FROM commits WHERE world_id = ? AND last_event_seq > ? "
                        "ORDER BY last_event_seq",
                        (world_id, row["state_seq"]),
                    )
                ]
            finally:
                db.execute("COMMIT")
            tail = tuple(
                event
                for text in tail_commits
                for event in events_of(text)
                if event.seq > row["state_seq"]
            )
            state = unpack(row["state"])
            return Snapshot(
                world=record_from_row(WorldRecord, row),
                version=row["version"],
                state=codec.loads(state),
                state_seq=row["state_seq"],
                tail=tail,
                last_event_seq=row["last_event_seq"],
                last_event_hash=row["last_event_hash"],
                last_emit_seq=row["last_emit_seq"],
                # The text, unpacked: what rebuilding the state reads.
                state_size=len(state),
                # The rows' text: each payload's and a few fields around it.
                tail_size=sum(len(text) for text in tail_commits),
            )

        return await self._run(load)

    async def version(self, world_id: str) -> int | None:
        def version(db: sqlite3.Connection) -> int | None:
            row = db.execute("SELECT version FROM worlds WHERE id = ?", (world_id,)).fetchone()
            return int(row[0]) if row else None

        return await self._run(version)

    async def commit(self, batch: CommitBatch) -> int:
        """One transaction. A commit without a snapshot is small (a few kilobytes of rows, written
        to the log without an fsync): it runs on the event loop when the store's thread is idle,
        since handing it over and back costs more than the commit itself. A commit with a snapshot,
        or one arriving while the thread is busy, goes to the thread, so a large write or a
        checkpoint never holds the loop up."""
        if batch.snapshot is None and self._thread is not None and self._db is not None:
            db = self._db
            try:
                done, version = self._thread.run_here(lambda: _commit(db, batch, wait=False))
            except _WouldWait:
                done, version = False, None
            if done:
                return cast(int, version)
        return await self._run(lambda db: _commit(db, batch))

    async def get_response(
        self, world_id: str, user_id: str, request_id: str
    ) -> dict[str, Any] | None:
        def get(db: sqlite3.Connection) -> dict[str, Any] | None:
            return find_answer(db, world_id, user_id, request_id)

        return await self._run(get)

    async def emits_since(self, world_id: str, since: int, limit: int) -> list[EmitRow]:
        def page(db: sqlite3.Connection) -> list[EmitRow]:
            found: list[EmitRow] = []
            if limit <= 0:
                return found
            commits = db.execute(
                "SELECT events, emits FROM commits WHERE world_id = ? AND last_emit_seq > ? "
                "ORDER BY last_emit_seq",
                (world_id, since),
            )
            for events, emits in commits:
                found += (emit for emit in emits_of(events, emits) if emit.seq > since)
                if len(found) >= limit:
                    break
            return found[:limit]

        return await self._run(page)

    async def events(self, world_id: str, after: int = 0) -> list[EventRow]:
        def log(db: sqlite3.Connection) -> list[EventRow]:
            return list(events_from(db, world_id, after + 1))

        return await self._run(log)

    async def events_between(self, world_id: str, first: int, last: int) -> list[EventRow]:
        def page(db: sqlite3.Connection) -> list[EventRow]:
            rows: list[EventRow] = []
            for row in events_from(db, world_id, first):
                if row.seq > last:
                    break
                rows.append(row)
            return rows

        return await self._run(page)

    async def history_page(self, world_id: str, query: HistoryQuery) -> HistoryFound:
        def page(db: sqlite3.Connection) -> HistoryFound:
            db.execute("BEGIN")  # the index and the commits it points at, read together
            try:
                return history_page(db, world_id, query)
            finally:
                db.execute("COMMIT")

        return await self._run(page)

    async def history_rows(
        self, world_id: str, *, after: int = 0, seqs: Collection[int] | None = None
    ) -> list[HistoryRow]:
        def rows(db: sqlite3.Connection) -> list[HistoryRow]:
            select = f"SELECT {HISTORY_COLUMNS} FROM history h WHERE h.world_id = ?"
            if seqs is None:
                found = db.execute(f"{select} AND h.seq > ? ORDER BY h.seq", (world_id, after))
                return [history_row(row) for row in found]
            wanted = sorted(set(seqs))
            out: list[HistoryRow] = []
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                found = db.execute(
                    f"{select} AND h.seq IN ({marks}) ORDER BY h.seq", (world_id, *part)
                )
                out += (history_row(row) for row in found)
            return out

        return await self._run(rows)

    async def history_pending(self, world_id: str) -> int:
        def pending(db: sqlite3.Connection) -> int:
            row = db.execute(
                "SELECT history_pending FROM worlds WHERE id = ?", (world_id,)
            ).fetchone()
            return int(row[0]) if row else 0

        return await self._run(pending)

    async def index_history(self, world_id: str, rows: list[HistoryRow], pending: int) -> None:
        def index(db: sqlite3.Connection) -> None:
            db.execute("BEGIN IMMEDIATE")
            try:
                write_history(db, world_id, rows)
                db.execute(
                    "UPDATE worlds SET history_pending = 0 WHERE id = ? AND history_pending = ?",
                    (world_id, pending),
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

        await self._run(index)


def _answer(db: sqlite3.Connection, batch: CommitBatch) -> dict[str, Any] | None:
    """The answer the store holds for the batch's request, if any."""
    return find_answer(db, batch.world_id, batch.user_id, batch.request_id)


class _WouldWait(Exception):
    """Another connection holds the write lock (another process writing to the file): a
    commit run in place leaves it to the store's thread, which may wait for it."""


def _waiting(db: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    """``work(db)`` with statements that wait up to BUSY_TIMEOUT_MS for another
    connection's lock, as only the store's thread may: the connection rests at
    ``busy_timeout=0``, so the commits run in place on the event loop (the most frequent
    work by far) set nothing: two PRAGMA statements are a large share of a small commit."""
    db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    try:
        return work(db)
    finally:
        db.execute("PRAGMA busy_timeout=0")


def _begin_without_waiting(db: sqlite3.Connection) -> None:
    """``BEGIN IMMEDIATE`` if the write lock is free now, else :class:`_WouldWait` with
    nothing begun: on the event loop, waiting would hold every world up. The connection
    rests at ``busy_timeout=0`` (see _waiting), so the statement returns at once."""
    try:
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if exc.sqlite_errorcode == sqlite3.SQLITE_BUSY:
            raise _WouldWait from None
        raise


def _commit(db: sqlite3.Connection, batch: CommitBatch, *, wait: bool = True) -> int:
    """The whole batch in one transaction: the request's earlier answer if it has one,
    else the version check-and-set, then the appends. ``wait=False``: raise
    :class:`_WouldWait`, having done nothing, rather than wait for another connection's
    write lock (once begun, the transaction holds it: nothing after waits).

    The earlier answer is looked for only when something refuses the batch: a stale
    version (then it decides between AlreadyAnswered and VersionConflict), or the answer's
    own insert meeting the request's primary key (an answer is there). Both happen inside
    the write transaction, so no other commit answers the request in between, and the
    outcome is the one looking first gave, with one statement fewer per commit."""
    new_version = batch.expected_version + 1
    last_event = batch.events[-1] if batch.events else None
    last_emit = batch.emits[-1] if batch.emits else None
    answers = batch.request_id is not None and batch.user_id is not None
    if wait:
        db.execute("BEGIN IMMEDIATE")
    else:
        _begin_without_waiting(db)
    try:
        cursor = db.execute(
            "UPDATE worlds SET version = ?, "
            "last_event_seq = COALESCE(?, last_event_seq), "
            "last_event_hash = COALESCE(?, last_event_hash), "
            "last_emit_seq = COALESCE(?, last_emit_seq) "
            "WHERE id = ? AND version = ?",
            (
                new_version,
                last_event.seq if last_event else None,
                last_event.hash if last_event else None,
                last_emit.seq if last_emit else None,
                batch.world_id,
                batch.expected_version,
            ),
        )
        if cursor.rowcount != 1:
            answered = _answer(db, batch) if answers else None
            if answered is not None:
                raise AlreadyAnswered(answered)
            raise VersionConflict(batch.world_id)
        if answers:
            # First of the appends: a request answered before stops the batch here.
            response, card_emit = kept_answer(batch)
            try:
                db.execute(
                    "INSERT INTO requests (world_id, user_id, request_id, response, card_emit, "
                    "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        batch.world_id,
                        batch.user_id,
                        batch.request_id,
                        response,
                        card_emit,
                        batch.created_at,
                    ),
                )
            except sqlite3.IntegrityError:
                answered = _answer(db, batch)
                if answered is None:  # not the request's key: some other constraint
                    raise
                raise AlreadyAnswered(answered) from None
        if batch.snapshot is not None:
            db.execute(
                "UPDATE snapshots SET state = ?, "
                "state_seq = (SELECT last_event_seq FROM worlds WHERE id = ?) WHERE world_id = ?",
                (_snapshot_value(batch.snapshot), batch.world_id, batch.world_id),
            )
        if batch.events or batch.emits:
            db.execute(
                "INSERT INTO commits (world_id, last_event_seq, last_emit_seq, events, emits) "
                "VALUES (?, ?, ?, ?, ?)",
                (
                    batch.world_id,
                    last_event.seq if last_event else None,
                    last_emit.seq if last_emit else None,
                    pack_commit(events_text(batch.events), emits_text(batch.emits)),
                    b"",
                ),
            )
        write_history(db, batch.world_id, batch.history)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return new_version
