"""A database written by an earlier bridge opens, loads and goes on (SQLite migrations)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bridge import codec
from bridge.store.base import CommitBatch, EmitRow, EventRow
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


def schema_3_database(path: Path) -> tuple[list[EventRow], list[EmitRow]]:
    """A world as schema 3 kept it: a row per event and per emit, an answer per request."""
    db = sqlite3.connect(path, isolation_level=None)
    for number, script in enumerate(MIGRATIONS[:3], start=1):
        db.executescript(f"BEGIN; {script}; PRAGMA user_version={number}; COMMIT;")
    events, prev = [], GENESIS_HASH
    for seq in (1, 2, 3):
        # Payload text as the bridge wrote it: canonical, non-ASCII kept.
        payload = {"n": seq, "name": "Zoë"}
        digest = event_hash(prev, seq, "t", payload, f"t{seq}")
        events.append(EventRow(seq, "t", payload, f"t{seq}", prev, digest))
        prev = digest
    emits = [EmitRow(seq, "card", {"seq": seq, "card": {"n": seq}}) for seq in (1, 2)]
    db.execute(
        "INSERT INTO worlds (id, name, ruleset, key_hash, created_at, version, "
        "last_event_seq, last_event_hash, last_emit_seq) "
        "VALUES ('w', 'W', 'unwritten', 'k', '2026', 3, 3, ?, 2)",
        (prev,),
    )
    db.execute("INSERT INTO snapshots (world_id, state_seq, state) VALUES ('w', 1, '{}')")
    for e in events:
        db.execute(
            "INSERT INTO events VALUES ('w', ?, ?, ?, ?, ?, ?)",
            (e.seq, e.type, e.payload_json(), e.created_at, e.prev_hash, e.hash),
        )
    for m in emits:
        db.execute(
            "INSERT INTO emits VALUES ('w', ?, ?, ?)", (m.seq, m.event, codec.dumps(m.payload))
        )
    db.execute(
        "INSERT INTO requests VALUES ('w', 'u', 'r1', ?, 't')",
        (codec.dumps({"ok": True, "data": {"card": {"n": 2}}}),),
    )
    db.close()
    return events, emits


async def test_a_schema_3_log_reads_the_same_after_it_moves_to_commit_rows(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.sqlite3"
    events, emits = schema_3_database(path)
    store = SQLiteStore(path)
    await store.open()
    try:
        assert await store.events("w") == events
        assert await store.events_between("w", 2, 3) == events[1:]
        assert await store.emits_since("w", 0, 10) == emits
        assert await store.get_response("w", "u", "r1") == {
            "ok": True,
            "data": {"card": {"n": 2}},
        }
        snapshot = await store.load("w")
        assert snapshot is not None and snapshot.tail == tuple(events[1:])
        # The log goes on from where it was, and a retry still finds its answer.
        digest = event_hash(events[-1].hash, 4, "t", {"n": 4}, "t4")
        row = EventRow(4, "t", {"n": 4}, "t4", events[-1].hash, digest)
        await store.commit(
            CommitBatch(world_id="w", expected_version=3, events=[row], emits=[], created_at="t4")
        )
        assert await store.events("w", 3) == [row]
    finally:
        await store.close()
    # The views read the log as the old tables did, payload text included.
    db = sqlite3.connect(path)
    shown = db.execute(
        "SELECT seq, type, payload, created_at, prev_hash, hash FROM events ORDER BY seq"
    ).fetchall()
    assert shown == [
        (e.seq, e.type, codec.dumps(e.payload), e.created_at, e.prev_hash, e.hash)
        for e in [*events, row]
    ]
    assert db.execute("SELECT seq, event, payload FROM emits ORDER BY seq").fetchall() == [
        (m.seq, m.event, codec.dumps(m.payload)) for m in emits
    ]
