"""The embedded default store: SQLite in WAL mode, on one worker thread.

Every store call is one function run on a dedicated thread that owns the only
connection (plain :mod:`sqlite3`): a commit is one hop off the event loop and one
transaction, however many statements it holds, and calls never interleave. The hop
is a queue and an asyncio future settled from the thread, nothing more.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import sqlite3
import sys
import threading
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any, TypeVar, cast

import orjson

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
)
from bridge.store.chain import GENESIS_HASH
from bridge.store.compact import pack, pack_row, unpack
from bridge.store.memory_presence import LocalPresence

T = TypeVar("T")
log = logging.getLogger(__name__)

# Each entry moves the schema one version up; never edit a shipped entry.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE worlds (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        ruleset TEXT NOT NULL,
        key_hash TEXT NOT NULL,
        created_at TEXT NOT NULL,
        version INTEGER NOT NULL DEFAULT 0,
        state TEXT NOT NULL,
        last_event_seq INTEGER NOT NULL DEFAULT 0,
        last_event_hash TEXT NOT NULL,
        last_emit_seq INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE events (
        world_id TEXT NOT NULL REFERENCES worlds(id),
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        payload TEXT NOT NULL,
        created_at TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL,
        PRIMARY KEY (world_id, seq)
    );
    CREATE TABLE emits (
        world_id TEXT NOT NULL REFERENCES worlds(id),
        seq INTEGER NOT NULL,
        event TEXT NOT NULL,
        payload TEXT NOT NULL,
        PRIMARY KEY (world_id, seq)
    );
    CREATE TABLE requests (
        world_id TEXT NOT NULL REFERENCES worlds(id),
        user_id TEXT NOT NULL,
        request_id TEXT NOT NULL,
        response TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (world_id, user_id, request_id)
    );
    """,
    # The saved state is a snapshot as of event state_seq; the events after it are its
    # tail. Until now every commit rewrote the state, so it is as of the last event.
    """
    ALTER TABLE worlds ADD COLUMN state_seq INTEGER NOT NULL DEFAULT 0;
    UPDATE worlds SET state_seq = last_event_seq;
    """,
    # The snapshot in a table of its own: every commit updates the world row, and SQLite
    # rewrites a whole row (a multi-megabyte state with it) on any update of it.
    """
    CREATE TABLE snapshots (
        world_id TEXT PRIMARY KEY REFERENCES worlds(id),
        state_seq INTEGER NOT NULL,
        state TEXT NOT NULL
    );
    INSERT INTO snapshots (world_id, state_seq, state) SELECT id, state_seq, state FROM worlds;
    ALTER TABLE worlds DROP COLUMN state;
    ALTER TABLE worlds DROP COLUMN state_seq;
    """,
    # One row per commit: its events and its emits side by side (JSON arrays, see
    # _events_text and _emits_text), found by their last seqs. A commit so writes one row
    # and two small index entries, where it wrote a row and an index entry per event and
    # per emit into four b-trees: fewer pages to the log per commit (measured: a third
    # fewer writes, two fifths fewer instructions in SQLite). A request's answer that
    # shows a card emitted by the same commit keeps the card once, as that emit
    # (``card_emit``), in a table without rowids: one b-tree, not two. The ``events`` and
    # ``emits`` views read as the old tables did. Earlier rows become one-row commits,
    # each payload's text kept as it was.
    """
    CREATE TABLE commits (
        world_id TEXT NOT NULL REFERENCES worlds(id),
        last_event_seq INTEGER,
        last_emit_seq INTEGER,
        events TEXT NOT NULL,
        emits TEXT NOT NULL
    );
    INSERT INTO commits (world_id, last_event_seq, last_emit_seq, events, emits)
        SELECT world_id, seq, NULL,
            '[[' || seq || ',' || json_quote(type) || ',' || json_quote(created_at) || ','
                || json_quote(prev_hash) || ',' || json_quote(hash) || ',' || payload || ']]',
            '[]'
        FROM events ORDER BY world_id, seq;
    INSERT INTO commits (world_id, last_event_seq, last_emit_seq, events, emits)
        SELECT world_id, NULL, seq, '[]',
            '[[' || seq || ',' || json_quote(event) || ',' || payload || ']]'
        FROM emits ORDER BY world_id, seq;
    DROP TABLE events;
    DROP TABLE emits;
    CREATE INDEX commits_by_event ON commits (world_id, last_event_seq)
        WHERE last_event_seq IS NOT NULL;
    CREATE INDEX commits_by_emit ON commits (world_id, last_emit_seq)
        WHERE last_emit_seq IS NOT NULL;
    CREATE TABLE answers (
        world_id TEXT NOT NULL REFERENCES worlds(id),
        user_id TEXT NOT NULL,
        request_id TEXT NOT NULL,
        response TEXT NOT NULL,
        card_emit INTEGER,
        created_at TEXT NOT NULL,
        PRIMARY KEY (world_id, user_id, request_id)
    ) WITHOUT ROWID;
    INSERT INTO answers (world_id, user_id, request_id, response, card_emit, created_at)
        SELECT world_id, user_id, request_id, response, NULL, created_at FROM requests;
    DROP TABLE requests;
    ALTER TABLE answers RENAME TO requests;
    CREATE VIEW events AS
        SELECT commits.world_id AS world_id, event.value ->> 0 AS seq,
            event.value ->> 1 AS type, event.value ->> 5 AS payload,
            event.value ->> 2 AS created_at, event.value ->> 3 AS prev_hash,
            event.value ->> 4 AS hash
        FROM commits, json_each(commits.events) AS event;
    CREATE VIEW emits AS
        SELECT commits.world_id AS world_id, emit.value ->> 0 AS seq,
            emit.value ->> 1 AS event, emit.value ->> 2 AS payload
        FROM commits, json_each(commits.emits) AS emit;
    """,
    # The history index (issue 26): a row per roll-history entry, written with the commit
    # that logs it, found by scene, kind or cancellation (an index each) and by character
    # (a row per character it is about), newest first; a page reads what it returns, not
    # the log. The entries of a log written before are indexed by the bridge the first time
    # the world's history is read (deciding what is an entry is the rules', not SQL's):
    # until then ``history_pending`` names the events 1..n not indexed yet.
    """
    CREATE TABLE history (
        world_id TEXT NOT NULL REFERENCES worlds(id),
        seq INTEGER NOT NULL,
        scene INTEGER NOT NULL,
        kind TEXT NOT NULL,
        cancelled INTEGER NOT NULL,
        characters TEXT NOT NULL,
        rolls TEXT NOT NULL,
        PRIMARY KEY (world_id, seq)
    ) WITHOUT ROWID;
    CREATE INDEX history_by_scene ON history (world_id, scene, seq);
    CREATE INDEX history_by_kind ON history (world_id, kind, seq);
    CREATE INDEX history_by_cancelled ON history (world_id, cancelled, seq);
    CREATE TABLE history_characters (
        world_id TEXT NOT NULL REFERENCES worlds(id),
        character TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (world_id, character, seq)
    ) WITHOUT ROWID;
    ALTER TABLE worlds ADD COLUMN history_pending INTEGER NOT NULL DEFAULT 0;
    UPDATE worlds SET history_pending = last_event_seq;
    """,
    # Compressed (issue 35: 13.5 KB on disk per resolved action): a commit's events and
    # emits, and the snapshot, are kept packed (bridge.store.compact: zlib, the log's rows
    # with a preset dictionary), the earlier rows packed here; the views read through
    # unpack(), a function every connection of the store's registers (connect_readable).
    # The file is vacuumed once this has run (_migrate), to give the space back.
    """
    DROP VIEW events;
    DROP VIEW emits;
    UPDATE commits SET events = pack_row(events), emits = pack_row(emits)
        WHERE typeof(events) = 'text';
    UPDATE snapshots SET state = pack(state) WHERE typeof(state) = 'text';
    CREATE VIEW events AS
        SELECT commits.world_id AS world_id, event.value ->> 0 AS seq,
            event.value ->> 1 AS type, event.value ->> 5 AS payload,
            event.value ->> 2 AS created_at, event.value ->> 3 AS prev_hash,
            event.value ->> 4 AS hash
        FROM commits, json_each(unpack(commits.events)) AS event;
    CREATE VIEW emits AS
        SELECT commits.world_id AS world_id, emit.value ->> 0 AS seq,
            emit.value ->> 1 AS event, emit.value ->> 2 AS payload
        FROM commits, json_each(unpack(commits.emits)) AS emit;
    """,
)
# The migration after which the file is vacuumed (it packed every row in place).
PACKED_SCHEMA = 6


def connect_readable(path: Path | str, **options: Any) -> sqlite3.Connection:
    """A connection to a store's file with the functions its schema calls: ``unpack``
    (the ``events`` and ``emits`` views, and ad-hoc reads) and those the migrations call.
    The store's own connections are made here; anything else reading the file should be."""
    db: sqlite3.Connection = sqlite3.connect(path, **options)
    db.create_function("unpack", 1, unpack, deterministic=True)
    db.create_function("pack", 1, pack, deterministic=True)
    db.create_function("pack_row", 1, pack_row, deterministic=True)
    return db


def _world(row: sqlite3.Row) -> WorldRecord:
    return WorldRecord(
        id=row["id"],
        name=row["name"],
        ruleset=row["ruleset"],
        key_hash=row["key_hash"],
        created_at=row["created_at"],
    )


def _events_text(events: list[EventRow]) -> str:
    """A commit's events as its row keeps them, packed (bridge.store.compact): a JSON array
    of ``[seq, type, created_at, prev_hash, hash, payload]``, each payload's text written
    as it came (the canonical form its hash was taken over)."""
    rows = [
        [e.seq, e.type, e.created_at, e.prev_hash, e.hash, orjson.Fragment(e.payload_json())]
        for e in events
    ]
    return orjson.dumps(rows).decode("utf-8")


def _emits_text(emits: list[EmitRow]) -> str:
    """A commit's emits as its row keeps them, packed: a JSON array of ``[seq, event,
    payload]``."""
    return codec.dumps([[m.seq, m.event, m.payload] for m in emits])


def _events_of(value: str | bytes) -> list[EventRow]:
    """The events of a commit row, in seq order (see _events_text)."""
    return [
        EventRow(seq, event_type, payload, created_at, prev_hash, digest)
        for seq, event_type, created_at, prev_hash, digest, payload in codec.loads(unpack(value))
    ]


def _emits_of(value: str | bytes) -> list[EmitRow]:
    """The emits of a commit row, in seq order (see _emits_text)."""
    return [EmitRow(seq, event, payload) for seq, event, payload in codec.loads(unpack(value))]


def _events_from(db: sqlite3.Connection, world_id: str, first: int) -> Iterator[EventRow]:
    """The world's events from seq ``first`` on, in seq order, read a commit at a time
    as the caller goes (a commit's events are consecutive, so the commits that hold them
    are those whose last event is ``first`` or later)."""
    commits = db.execute(
        "SELECT events FROM commits WHERE world_id = ? AND last_event_seq >= ? "
        "ORDER BY last_event_seq",
        (world_id, first),
    )
    for (text,) in commits:
        for row in _events_of(text):
            if row.seq >= first:
                yield row


def _event_at(
    db: sqlite3.Connection, world_id: str, seq: int, commits: dict[int, list[EventRow]]
) -> EventRow | None:
    """Event ``seq`` of the world, from the commit row that holds it (``commits``: the
    rows decoded so far in this call, by their last event's seq)."""
    for last, rows in commits.items():
        if rows and rows[0].seq <= seq <= last:
            return next((r for r in rows if r.seq == seq), None)
    found = db.execute(
        "SELECT last_event_seq, events FROM commits WHERE world_id = ? AND last_event_seq >= ? "
        "ORDER BY last_event_seq LIMIT 1",
        (world_id, seq),
    ).fetchone()
    if found is None:
        return None
    rows = commits[found[0]] = _events_of(found[1])
    return next((r for r in rows if r.seq == seq), None)


def _history_row(row: sqlite3.Row | tuple[Any, ...]) -> HistoryRow:
    seq, scene, kind, cancelled, characters, rolls = row
    return HistoryRow(
        seq,
        scene,
        kind,
        bool(cancelled),
        tuple(codec.loads(characters)),
        tuple((who, total) for who, total in codec.loads(rolls)),
    )


_HISTORY_COLUMNS = "h.seq, h.scene, h.kind, h.cancelled, h.characters, h.rolls"


def _write_history(db: sqlite3.Connection, world_id: str, rows: list[HistoryRow]) -> None:
    if not rows:
        return
    db.executemany(
        "INSERT OR REPLACE INTO history (world_id, seq, scene, kind, cancelled, characters, "
        "rolls) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (
                world_id,
                r.seq,
                r.scene,
                r.kind,
                int(r.cancelled),
                codec.dumps(list(r.characters)),
                codec.dumps([list(roll) for roll in r.rolls]),
            )
            for r in rows
        ],
    )
    db.executemany(
        "INSERT OR IGNORE INTO history_characters (world_id, character, seq) VALUES (?, ?, ?)",
        [(world_id, who, r.seq) for r in rows for who in r.characters],
    )


def _history_page(db: sqlite3.Connection, world_id: str, query: HistoryQuery) -> HistoryFound:
    """The index read newest first in batches, each one statement over the index that
    serves the query's narrowest filter (a character's rows, else a scene's, a kind's, the
    cancelled ones, else all), the others checked on the same rows."""
    if query.character is not None:
        source = "history_characters c JOIN history h ON h.world_id = c.world_id AND h.seq = c.seq"
        where = ["c.world_id = ?", "c.character = ?"]
        args: list[Any] = [world_id, query.character]
        order = "c.seq"
    else:
        source, where, args, order = "history h", ["h.world_id = ?"], [world_id], "h.seq"
    for column, value in (
        ("h.scene", query.scene),
        ("h.kind", query.kind),
        ("h.cancelled", None if query.cancelled is None else int(query.cancelled)),
    ):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    sql = (
        f"SELECT {_HISTORY_COLUMNS} FROM {source} WHERE {' AND '.join(where)} AND {order} < ? "
        f"ORDER BY {order} DESC LIMIT ?"
    )
    found: list[EventRow] = []
    commits: dict[int, list[EventRow]] = {}
    below = query.before if query.before is not None else sys.maxsize
    examined, lowest = 0, None
    while len(found) < query.limit and examined < query.scan:
        batch = min(query.limit - len(found) + len(query.skip), query.scan - examined)
        rows = db.execute(sql, (*args, below, max(1, batch))).fetchall()
        for row in rows:
            examined += 1
            lowest = below = row[0]
            if row[0] in query.skip:
                continue
            event = _event_at(db, world_id, row[0], commits)
            if event is not None:
                found.append(event)
            if len(found) == query.limit:
                return HistoryFound(found, False, lowest, examined)
        if len(rows) < max(1, batch):
            return HistoryFound(found, True, lowest, examined)
    return HistoryFound(found, False, lowest, examined)


def _emit_card(db: sqlite3.Connection, world_id: str, seq: int) -> Any:
    """The card of the world's emit ``seq`` (an answer keeps its card as that emit)."""
    found = db.execute(
        "SELECT emits FROM commits WHERE world_id = ? AND last_emit_seq >= ? "
        "ORDER BY last_emit_seq LIMIT 1",
        (world_id, seq),
    ).fetchone()
    emit = next(m for m in _emits_of(found[0]) if m.seq == seq)
    return emit.payload["card"]


def _stored_answer(
    db: sqlite3.Connection, world_id: str, response: str, card_emit: int | None
) -> dict[str, Any]:
    """An answer as it was committed: its card put back from the emit that holds it."""
    answer: dict[str, Any] = codec.loads(response)
    if card_emit is not None:
        answer["data"]["card"] = _emit_card(db, world_id, card_emit)
    return answer


def _kept_answer(batch: CommitBatch) -> tuple[str, int | None]:
    """The batch's answer as the store keeps it, and the emit its card is kept as: the
    answer's ``data.card`` is left out when it is the card of the batch's emit
    ``response_card_emit`` (the same object, so surely the same card)."""
    response = cast(dict[str, Any], batch.response)
    seq = batch.response_card_emit
    data = response.get("data")
    if seq is not None and isinstance(data, dict):
        emit = next((m for m in batch.emits if m.seq == seq), None)
        if emit is not None and data.get("card") is emit.payload.get("card"):
            return _text({**response, "data": {**data, "card": None}}), seq
    return _text(response), None


# A job: the loop and future its outcome settles, or neither for work posted by a thread.
_Job = tuple[asyncio.AbstractEventLoop | None, "asyncio.Future[Any] | None", Callable[[], Any]]
# A finished job: its future, and the result or the exception it raised.
_Outcome = tuple["asyncio.Future[Any]", Any, BaseException | None]


def _settle(future: asyncio.Future[Any], result: Any, failure: BaseException | None) -> None:
    """On the event loop: hand the thread's outcome to the waiting caller, if it still waits."""
    if future.cancelled():
        return
    if failure is not None:
        future.set_exception(failure)
    else:
        future.set_result(result)


class _Worker:
    """One thread running jobs in the order they were sent; each job's outcome settles
    its asyncio future on the loop that sent it, in the order the jobs ran.

    A loop is woken once for all the outcomes that finish before it gets to them: the
    thread queues each outcome for its loop and calls ``call_soon_threadsafe`` (a write
    to the loop's self-pipe, with the GIL released and taken again around it) only when
    that loop has none waiting. A busy loop (many worlds committing at once) so settles
    several commits per wake-up, and each outcome is still handed over as soon as it is
    ready.

    A small job may instead run on the caller's own thread (:meth:`run_here`), when the
    thread is idle with nothing queued: the connection is then used by one thread at a
    time still (``_busy``), and the caller pays no hop."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        # Held while the connection is in use: by the thread for each job it runs, or by
        # a caller running a job in place (run_here).
        self._busy = threading.Lock()
        # Per loop, the outcomes finished and not yet settled (guarded by _finished_lock:
        # the thread adds, the loop takes).
        self._finished: dict[asyncio.AbstractEventLoop, list[_Outcome]] = {}
        self._finished_lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, name="sqlite-store", daemon=True)
        self._thread.start()

    def run(self, work: Callable[[], T]) -> asyncio.Future[T]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._jobs.put((loop, future, work))
        return future

    def run_here(self, work: Callable[[], T]) -> tuple[bool, T | None]:
        """Run ``work`` on the calling thread if the worker is idle with no job queued:
        ``(True, result)``, its exception raised as it is; else ``(False, None)`` at once,
        nothing run (the caller then sends it with :meth:`run`).

        A job already queued runs first: nothing overtakes what was sent before it."""
        if not self._jobs.empty() or not self._busy.acquire(blocking=False):
            return False, None
        try:
            return True, work()
        finally:
            self._busy.release()

    def post(self, work: Callable[[], object]) -> None:
        """Queue ``work`` from any thread, to run between the jobs; nobody waits for it,
        and a failure is logged."""
        self._jobs.put((None, None, work))

    def stop(self) -> None:
        """Finish the jobs already sent, then end the thread."""
        self._jobs.put(None)
        self._thread.join()

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            loop, future, work = job
            if loop is None or future is None:
                try:
                    with self._busy:
                        work()
                except Exception:
                    log.exception("store job posted from another thread failed")
                continue
            outcome: _Outcome
            try:
                with self._busy:
                    outcome = (future, work(), None)
            except BaseException as exc:  # handed to the caller, as run_in_executor does
                outcome = (future, None, exc)
            self._hand_over(loop, outcome)

    def _hand_over(self, loop: asyncio.AbstractEventLoop, outcome: _Outcome) -> None:
        """On the thread: queue the outcome for its loop, waking the loop unless a wake-up
        is already on its way (that one settles this outcome too)."""
        with self._finished_lock:
            waiting = self._finished.get(loop)
            if waiting is not None:
                waiting.append(outcome)
                return
            self._finished[loop] = [outcome]
        try:
            loop.call_soon_threadsafe(self._settle_finished, loop)
        except RuntimeError:  # the loop closed meanwhile, so nobody waits any more
            with self._finished_lock:
                self._finished.pop(loop, None)

    def _settle_finished(self, loop: asyncio.AbstractEventLoop) -> None:
        """On the loop: settle every outcome queued for it, oldest first."""
        with self._finished_lock:
            outcomes = self._finished.pop(loop, [])
        for future, result, failure in outcomes:
            _settle(future, result, failure)


# How often the checkpointer copies the write-ahead log into the database file, and the
# log's length (in frames) past which the writer's thread also checkpoints it between two
# commits, so that it starts afresh (see _Checkpointer).
CHECKPOINT_SECONDS = 1.0
# How long a statement waits for another connection's lock (another process writing),
# on the store's threads; a commit run in place on the event loop never waits (_commit).
BUSY_TIMEOUT_MS = 5000
WAL_TRUNCATE_FRAMES = 8_000
# How much less than the process's other threads the checkpointer weighs for the CPU
# scheduler (Linux niceness; CFS gives nice +10 about a tenth of nice 0's share).
CHECKPOINT_NICENESS = 10


def _lower_this_threads_priority(by: int) -> None:
    """Make the calling thread ``by`` nicer than it is, so that on a busy core the event
    loop and the writer run before it; on Linux niceness is per thread, elsewhere (where
    it is per process) nothing changes, as when the system refuses."""
    if sys.platform != "linux":
        return
    thread = threading.get_native_id()
    try:
        os.setpriority(
            os.PRIO_PROCESS, thread, min(19, os.getpriority(os.PRIO_PROCESS, thread) + by)
        )
    except OSError as exc:
        log.info("thread %s keeps its priority: %s", threading.current_thread().name, exc)


class _Checkpointer:
    """Checkpoints the write-ahead log on a thread and a connection of its own.

    SQLite's automatic checkpoint runs inside the commit that crosses its threshold (1,000
    pages), with an fsync of the database file: on the store's one thread that stalled
    every commit of every world queued behind it (tens of milliseconds in the 100-world
    run). A passive checkpoint runs beside the writer in WAL mode, so commits never wait
    for one; the store's own connection has its automatic checkpoints turned off. What a
    checkpoint has not copied yet stays in the log, as durable as the database file; a
    failed checkpoint is logged and tried again at the next interval.

    Keeping the log short: SQLite starts the log afresh (and, with the store's
    ``journal_size_limit``, cuts the file back) only when a commit begins right after a
    checkpoint that copied all of it, and under steady writes a commit is always under
    way when this thread's pass ends. A TRUNCATE checkpoint here would force it, but
    blocks the writer for the whole copy and fsync (stalls of 100-300 ms in the 100-world
    run). So once the log is past ``truncate_frames``, ``reset_log`` asks the writer's own
    thread for one passive checkpoint between two commits: it has only the last few
    commits left to copy, and the next commit starts the log afresh.

    The thread runs at a lower priority than the process's others: a pass takes 25-60 ms
    of a core at 200 actions/s, and on the core the event loop runs on it would take
    half of the loop's time for that long, delaying every request in flight."""

    def __init__(
        self,
        path: Path,
        interval: float,
        truncate_frames: int,
        reset_log: Callable[[], None] = lambda: None,
    ) -> None:
        self.path = path
        self.interval = interval
        self.truncate_frames = truncate_frames
        self.reset_log = reset_log
        # Checkpoints attempted so far (only this thread writes it; read for tests).
        self.passes = 0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="sqlite-checkpoint", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End the thread once a checkpoint under way has finished."""
        self._stopping.set()
        self._thread.join()

    def _serve(self) -> None:
        _lower_this_threads_priority(CHECKPOINT_NICENESS)
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            while not self._stopping.wait(self.interval):
                self.checkpoint(db)
                self.passes += 1
        finally:
            db.close()

    def checkpoint(self, db: sqlite3.Connection) -> None:
        """Copy what the log holds into the file; once it is long, have it start afresh."""
        try:
            _busy, frames, _copied = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            if frames > self.truncate_frames:
                self.reset_log()
        except sqlite3.Error as exc:
            log.warning(
                "WAL checkpoint of %s failed (retried in %ss): %s", self.path, self.interval, exc
            )


def _text(value: Any) -> str:
    return codec.dumps(value)


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
        self._thread: _Worker | None = None
        self._checkpointer: _Checkpointer | None = None

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
        self._thread = _Worker()

        def connect() -> sqlite3.Connection:
            db = connect_readable(self.path, isolation_level=None, check_same_thread=False)
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode survives a killed process (the OS has the pages); only
            # a power cut may lose the last commits.
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            # The checkpointer's thread copies the log into the file (_Checkpointer).
            db.execute("PRAGMA wal_autocheckpoint=0")
            # Each time the log starts afresh, its file is cut back to this.
            page_size = int(db.execute("PRAGMA page_size").fetchone()[0])
            db.execute(f"PRAGMA journal_size_limit={self.wal_truncate_frames * (page_size + 24)}")
            _migrate(db)
            # At rest the connection never waits for a lock: a commit run in place on the
            # event loop must not (see _waiting, _begin_without_waiting).
            db.execute("PRAGMA busy_timeout=0")
            return db

        self._db = await self._thread.run(connect)
        self._checkpointer = _Checkpointer(
            self.path, self.checkpoint_seconds, self.wal_truncate_frames, self._reset_log
        )

    def _reset_log(self) -> None:
        """From any thread: one passive checkpoint on the writer's thread, between two
        commits, so the next commit starts the log afresh (see _Checkpointer)."""
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
            return _world(row) if row else None

        return await self._run(get)

    async def list_worlds(self) -> list[WorldRecord]:
        def listing(db: sqlite3.Connection) -> list[WorldRecord]:
            rows = db.execute(
                "SELECT id, name, ruleset, key_hash, created_at FROM worlds ORDER BY created_at, id"
            ).fetchall()
            return [_world(row) for row in rows]

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
                    unpack(value)
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
                for event in _events_of(text)
                if event.seq > row["state_seq"]
            )
            state = unpack(row["state"])
            return Snapshot(
                world=_world(row),
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
        """One transaction. A commit without a snapshot is small (a few kilobytes of rows,
        written to the log without an fsync): it runs on the event loop when the store's
        thread is idle, since handing it over and back costs more than the commit itself
        (measured in one process on one core, paced as the bench's rungs are, three runs
        each: 2,931-3,178 us of CPU per passive overcome through the thread, 1,884-2,860 in
        place). A commit with a snapshot, or one arriving while the thread is busy, goes
        to the thread, so a large write or a checkpoint never holds the loop up."""
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
            return _find_answer(db, world_id, user_id, request_id)

        return await self._run(get)

    async def emits_since(self, world_id: str, since: int, limit: int) -> list[EmitRow]:
        def page(db: sqlite3.Connection) -> list[EmitRow]:
            found: list[EmitRow] = []
            if limit <= 0:
                return found
            commits = db.execute(
                "SELECT emits FROM commits WHERE world_id = ? AND last_emit_seq > ? "
                "ORDER BY last_emit_seq",
                (world_id, since),
            )
            for (text,) in commits:
                found += (emit for emit in _emits_of(text) if emit.seq > since)
                if len(found) >= limit:
                    break
            return found[:limit]

        return await self._run(page)

    async def events(self, world_id: str, after: int = 0) -> list[EventRow]:
        def log(db: sqlite3.Connection) -> list[EventRow]:
            return list(_events_from(db, world_id, after + 1))

        return await self._run(log)

    async def events_between(self, world_id: str, first: int, last: int) -> list[EventRow]:
        def page(db: sqlite3.Connection) -> list[EventRow]:
            rows: list[EventRow] = []
            for row in _events_from(db, world_id, first):
                if row.seq > last:
                    break
                rows.append(row)
            return rows

        return await self._run(page)

    async def history_page(self, world_id: str, query: HistoryQuery) -> HistoryFound:
        def page(db: sqlite3.Connection) -> HistoryFound:
            db.execute("BEGIN")  # the index and the commits it points at, read together
            try:
                return _history_page(db, world_id, query)
            finally:
                db.execute("COMMIT")

        return await self._run(page)

    async def history_rows(
        self, world_id: str, *, after: int = 0, seqs: Collection[int] | None = None
    ) -> list[HistoryRow]:
        def rows(db: sqlite3.Connection) -> list[HistoryRow]:
            select = f"SELECT {_HISTORY_COLUMNS} FROM history h WHERE h.world_id = ?"
            if seqs is None:
                found = db.execute(f"{select} AND h.seq > ? ORDER BY h.seq", (world_id, after))
                return [_history_row(row) for row in found]
            wanted = sorted(set(seqs))
            out: list[HistoryRow] = []
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                found = db.execute(
                    f"{select} AND h.seq IN ({marks}) ORDER BY h.seq", (world_id, *part)
                )
                out += (_history_row(row) for row in found)
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
                _write_history(db, world_id, rows)
                db.execute(
                    "UPDATE worlds SET history_pending = 0 WHERE id = ? AND history_pending = ?",
                    (world_id, pending),
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

        await self._run(index)


def _migrate(db: sqlite3.Connection) -> None:
    current = int(db.execute("PRAGMA user_version").fetchone()[0])
    if current > len(MIGRATIONS):
        raise RuntimeError(
            f"database schema {current} is newer than this bridge ({len(MIGRATIONS)})"
        )
    for number, script in enumerate(MIGRATIONS[current:], start=current + 1):
        db.executescript(f"BEGIN; {script}; PRAGMA user_version={number}; COMMIT;")
    if current < PACKED_SCHEMA <= len(MIGRATIONS) and current > 0:
        # The rows packed in place left their old pages free: the file shrinks only now.
        db.execute("VACUUM")


def _find_answer(
    db: sqlite3.Connection, world_id: str, user_id: str | None, request_id: str | None
) -> dict[str, Any] | None:
    """The answer the store holds for a request, if any, as it was committed."""
    done = db.execute(
        "SELECT response, card_emit FROM requests "
        "WHERE world_id = ? AND user_id = ? AND request_id = ?",
        (world_id, user_id, request_id),
    ).fetchone()
    return None if done is None else _stored_answer(db, world_id, done[0], done[1])


def _answer(db: sqlite3.Connection, batch: CommitBatch) -> dict[str, Any] | None:
    """The answer the store holds for the batch's request, if any."""
    return _find_answer(db, batch.world_id, batch.user_id, batch.request_id)


class _WouldWait(Exception):
    """Another connection holds the write lock (another process writing to the file): a
    commit run in place leaves it to the store's thread, which may wait for it."""


def _waiting(db: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    """``work(db)`` with statements that wait up to BUSY_TIMEOUT_MS for another
    connection's lock, as only the store's thread may: the connection rests at
    ``busy_timeout=0``, so the commits run in place on the event loop (the most frequent
    work by far) set nothing (two PRAGMA statements cost a fifth of a small commit)."""
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
            response, card_emit = _kept_answer(batch)
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
                    pack_row(_events_text(batch.events)),
                    pack_row(_emits_text(batch.emits)),
                ),
            )
        _write_history(db, batch.world_id, batch.history)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return new_version
