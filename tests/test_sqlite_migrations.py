"""A database written by an earlier bridge opens, loads and goes on (SQLite migrations)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bridge import codec
from bridge.store.base import CommitBatch, EventRow
from bridge.store.chain import GENESIS_HASH, event_hash
from bridge.store.sqlite import MIGRATIONS, SQLiteStore


def schema_2_database(path: Path) -> None:
    """A world as schema 2 kept it: the state (as of event 1) on the world row, two events."""
    db = sqlite3.connect(path, isolation_level=None)
    for number, script in enumerate(MIGRATIONS[:2], start=1):
        db.executescript(f"BEGIN; {script}; PRAGMA user_version={number}; COMMIT;")
    first = event_hash(GENESIS_HASH, 1, "t", {"n": 1}, "2026-01-01T00:00:00+00:00")
    second = event_hash(first, 2, "t", {"n": 2}, "2026-01-01T00:00:00+00:00")
    db.execute(
        "INSERT INTO worlds (id, name, ruleset, key_hash, created_at, version, state, "
        "last_event_seq, last_event_hash, last_emit_seq, state_seq) "
        "VALUES ('w', 'W', 'unwritten', 'k', '2026', 2, ?, 2, ?, 0, 1)",
        (codec.dumps({"saved": "as of event 1"}), second),
    )
    for seq, prev, digest in ((1, GENESIS_HASH, first), (2, first, second)):
        db.execute(
            "INSERT INTO events VALUES ('w', ?, 't', ?, '2026-01-01T00:00:00+00:00', ?, ?)",
            (seq, codec.dumps({"n": seq}), prev, digest),
        )
    db.close()


async def test_a_schema_2_world_loads_and_commits_after_the_migration(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    schema_2_database(path)
    store = SQLiteStore(path)
    await store.open()
    try:
        snapshot = await store.load("w")
        assert snapshot is not None
        assert snapshot.state == {"saved": "as of event 1"}
        assert (snapshot.state_seq, snapshot.version, snapshot.last_event_seq) == (1, 2, 2)
        assert [row.payload for row in snapshot.tail] == [{"n": 2}]
        # A commit with a snapshot saves it as of its last event; the tail empties.
        digest = event_hash(snapshot.last_event_hash, 3, "t", {"n": 3}, "t3")
        row = EventRow(3, "t", {"n": 3}, "t3", snapshot.last_event_hash, digest)
        version = await store.commit(
            CommitBatch(world_id="w", expected_version=2, snapshot={"saved": 3}, events=[row])
        )
        after = await store.load("w")
        assert after is not None and version == 3
        assert (after.state, after.state_seq, after.tail) == ({"saved": 3}, 3, ())
    finally:
        await store.close()
    columns = {r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(worlds)").fetchall()}
    assert "state" not in columns, "the state left the row every commit rewrites"
