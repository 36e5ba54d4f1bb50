"""The embedded default store: SQLite in WAL mode, via aiosqlite."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import aiosqlite

from bridge.store.base import (
    CommitBatch,
    EmitRow,
    EventRow,
    Snapshot,
    VersionConflict,
    WorldExists,
    WorldRecord,
)
from bridge.store.chain import GENESIS_HASH
from bridge.store.memory_presence import LocalPresence

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
)


def _world(row: aiosqlite.Row) -> WorldRecord:
    return WorldRecord(
        id=row["id"],
        name=row["name"],
        ruleset=row["ruleset"],
        key_hash=row["key_hash"],
        created_at=row["created_at"],
    )


class SQLiteStore(LocalPresence):
    """One SQLite file; every commit is one transaction guarded by a version check.

    Presence and binding nonces live in this process: the embedded store serves one
    bridge process.
    """

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._db: aiosqlite.Connection | None = None
        # One connection: transactions for different worlds must not interleave on it.
        self._write = asyncio.Lock()

    @property
    def db(self) -> aiosqlite.Connection:
        if self._db is None:
            raise RuntimeError("store is not open")
        return self._db

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = await aiosqlite.connect(self.path, isolation_level=None)
        self._db.row_factory = aiosqlite.Row
        await self._db.execute("PRAGMA journal_mode=WAL")
        await self._db.execute("PRAGMA synchronous=NORMAL")
        await self._db.execute("PRAGMA foreign_keys=ON")
        await self._db.execute("PRAGMA busy_timeout=5000")
        await self._migrate()

    async def _migrate(self) -> None:
        async with self.db.execute("PRAGMA user_version") as cursor:
            row = await cursor.fetchone()
        current = int(row[0]) if row else 0
        if current > len(MIGRATIONS):
            raise RuntimeError(
                f"database schema {current} is newer than this bridge ({len(MIGRATIONS)})"
            )
        for number, script in enumerate(MIGRATIONS[current:], start=current + 1):
            await self.db.executescript(f"BEGIN; {script}; PRAGMA user_version={number}; COMMIT;")

    async def close(self) -> None:
        if self._db is not None:
            await self._db.close()
            self._db = None

    async def add_world(self, world: WorldRecord, initial_state: dict[str, Any]) -> None:
        async with self._write:
            await self._add_world(world, initial_state)

    async def _add_world(self, world: WorldRecord, initial_state: dict[str, Any]) -> None:
        try:
            await self.db.execute(
                "INSERT INTO worlds (id, name, ruleset, key_hash, created_at, state, "
                "last_event_hash) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    world.id,
                    world.name,
                    world.ruleset,
                    world.key_hash,
                    world.created_at,
                    json.dumps(initial_state),
                    GENESIS_HASH,
                ),
            )
        except aiosqlite.IntegrityError as exc:
            raise WorldExists(world.id) from exc

    async def get_world(self, world_id: str) -> WorldRecord | None:
        async with self.db.execute("SELECT * FROM worlds WHERE id = ?", (world_id,)) as cursor:
            row = await cursor.fetchone()
        return _world(row) if row else None

    async def list_worlds(self) -> list[WorldRecord]:
        async with self.db.execute("SELECT * FROM worlds ORDER BY created_at, id") as cursor:
            return [_world(row) for row in await cursor.fetchall()]

    async def set_key_hash(self, world_id: str, key_hash: str) -> bool:
        async with self._write:
            cursor = await self.db.execute(
                "UPDATE worlds SET key_hash = ? WHERE id = ?", (key_hash, world_id)
            )
        return cursor.rowcount == 1

    async def load(self, world_id: str) -> Snapshot | None:
        async with self.db.execute("SELECT * FROM worlds WHERE id = ?", (world_id,)) as cursor:
            row = await cursor.fetchone()
        if row is None:
            return None
        return Snapshot(
            world=_world(row),
            version=row["version"],
            state=json.loads(row["state"]),
            last_event_seq=row["last_event_seq"],
            last_event_hash=row["last_event_hash"],
            last_emit_seq=row["last_emit_seq"],
        )

    async def version(self, world_id: str) -> int | None:
        async with self.db.execute(
            "SELECT version FROM worlds WHERE id = ?", (world_id,)
        ) as cursor:
            row = await cursor.fetchone()
        return int(row["version"]) if row else None

    async def commit(self, batch: CommitBatch) -> int:
        async with self._write:
            return await self._commit(batch)

    async def _commit(self, batch: CommitBatch) -> int:
        db = self.db
        new_version = batch.expected_version + 1
        await db.execute("BEGIN IMMEDIATE")
        try:
            last_event = batch.events[-1] if batch.events else None
            last_emit = batch.emits[-1] if batch.emits else None
            cursor = await db.execute(
                "UPDATE worlds SET version = ?, state = ?, "
                "last_event_seq = COALESCE(?, last_event_seq), "
                "last_event_hash = COALESCE(?, last_event_hash), "
                "last_emit_seq = COALESCE(?, last_emit_seq) "
                "WHERE id = ? AND version = ?",
                (
                    new_version,
                    json.dumps(batch.state),
                    last_event.seq if last_event else None,
                    last_event.hash if last_event else None,
                    last_emit.seq if last_emit else None,
                    batch.world_id,
                    batch.expected_version,
                ),
            )
            if cursor.rowcount != 1:
                raise VersionConflict(batch.world_id)
            await db.executemany(
                "INSERT INTO events (world_id, seq, type, payload, created_at, prev_hash, hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        batch.world_id,
                        e.seq,
                        e.type,
                        json.dumps(e.payload),
                        e.created_at,
                        e.prev_hash,
                        e.hash,
                    )
                    for e in batch.events
                ],
            )
            await db.executemany(
                "INSERT INTO emits (world_id, seq, event, payload) VALUES (?, ?, ?, ?)",
                [(batch.world_id, m.seq, m.event, json.dumps(m.payload)) for m in batch.emits],
            )
            if batch.request_id is not None and batch.user_id is not None:
                await db.execute(
                    "INSERT INTO requests (world_id, user_id, request_id, response, created_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (
                        batch.world_id,
                        batch.user_id,
                        batch.request_id,
                        json.dumps(batch.response),
                        batch.created_at,
                    ),
                )
            await db.execute("COMMIT")
        except BaseException:
            await db.execute("ROLLBACK")
            raise
        return new_version

    async def get_response(
        self, world_id: str, user_id: str, request_id: str
    ) -> dict[str, Any] | None:
        async with self.db.execute(
            "SELECT response FROM requests WHERE world_id = ? AND user_id = ? AND request_id = ?",
            (world_id, user_id, request_id),
        ) as cursor:
            row = await cursor.fetchone()
        if row is None:
            return None
        response: dict[str, Any] = json.loads(row["response"])
        return response

    async def emits_since(self, world_id: str, since: int, limit: int) -> list[EmitRow]:
        async with self.db.execute(
            "SELECT seq, event, payload FROM emits WHERE world_id = ? AND seq > ? "
            "ORDER BY seq LIMIT ?",
            (world_id, since, limit),
        ) as cursor:
            rows = await cursor.fetchall()
        return [EmitRow(row["seq"], row["event"], json.loads(row["payload"])) for row in rows]

    async def events(self, world_id: str) -> list[EventRow]:
        async with self.db.execute(
            "SELECT * FROM events WHERE world_id = ? ORDER BY seq", (world_id,)
        ) as cursor:
            return self._event_rows(await cursor.fetchall())

    async def events_between(self, world_id: str, first: int, last: int) -> list[EventRow]:
        async with self.db.execute(
            "SELECT * FROM events WHERE world_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
            (world_id, first, last),
        ) as cursor:
            return self._event_rows(await cursor.fetchall())

    @staticmethod
    def _event_rows(rows: Iterable[aiosqlite.Row]) -> list[EventRow]:
        return [
            EventRow(
                seq=row["seq"],
                type=row["type"],
                payload=json.loads(row["payload"]),
                created_at=row["created_at"],
                prev_hash=row["prev_hash"],
                hash=row["hash"],
            )
            for row in rows
        ]
