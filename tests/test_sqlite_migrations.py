"""A database written by an earlier bridge opens, loads and goes on (SQLite migrations)."""

from __future__ import annotations

import hashlib
import sqlite3
import zlib
from pathlib import Path

import pytest

from bench.disk import resolve
from bench.seed import seed_worlds
from bridge.service import BridgeService
from bridge.store import codec
from bridge.store.base import CommitBatch, EmitRow, EventRow
from bridge.store.chain import GENESIS_HASH, event_hash
from bridge.store.compact import (
    ROW,
    commit_emits,
    commit_events,
    pack,
    pack_commit,
    pack_row,
    pack_text,
    unpack,
    unpack_commit,
    unpack_text,
)
from bridge.store.log_dictionary import LOG_DICTIONARY_V1
from bridge.store.sqlite import SQLiteStore
from bridge.store.sqlite_schema import MIGRATIONS, PACKED_SCHEMA, connect_readable
from tests.stores import opened


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
    async with opened(SQLiteStore(path)) as store:
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
    async with opened(SQLiteStore(path)) as store:
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
    # The views read the log as the old tables did, payload text included.
    db = connect_readable(path)
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


async def schema_5_database(path: Path, actions: int) -> None:
    """A played world as schema 5 (before packing) kept it: the same rows, as text.

    Played by today's store, then unpacked row by row into schema 5's shape, which is
    what that bridge wrote: the same JSON text (bridge.store.compact packs it whole)."""
    async with opened(SQLiteStore(path)) as store:
        await seed_worlds(store, ["w"])
        await resolve(store, "w", actions)
    db = connect_readable(path, isolation_level=None)
    db.executescript(
        """
        BEGIN;
        DROP VIEW events;
        DROP VIEW emits;
        UPDATE commits SET events = commit_events(events), emits = commit_emits(events, emits);
        UPDATE snapshots SET state = unpack(state);
        """
        + MIGRATIONS[3][MIGRATIONS[3].index("CREATE VIEW events") :]
        + f"; PRAGMA user_version={PACKED_SCHEMA - 1}; COMMIT; VACUUM;"
    )
    assert db.execute("SELECT typeof(events) FROM commits LIMIT 1").fetchone() == ("text",)
    db.close()


async def test_a_schema_5_database_is_packed_in_place_and_verifies_and_replays(
    tmp_path: Path,
) -> None:
    # Issue 35: an old database migrated in place keeps its whole history, hash for hash,
    # and gives the space back.
    path = tmp_path / "bridge.sqlite3"
    await schema_5_database(path, 60)
    old_size = path.stat().st_size
    old = sqlite3.connect(path)
    old_events = old.execute(
        "SELECT seq, type, payload, created_at, prev_hash, hash FROM events ORDER BY seq"
    ).fetchall()
    old.close()
    async with opened(SQLiteStore(path)) as store:
        service = BridgeService(store)
        report = await service.verify_history("w")
        assert report.ok and report.events == len(old_events), report.problems
        replayed = await service.replayed_state("w")
        assert replayed == await service.latest_state("w")
        assert replayed.action_count == 60
        # It goes on: one more resolved action after the migration.
        await resolve(store, "w", 1, first=60)
        assert (await service.verify_history("w")).ok
    db = connect_readable(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert {kind for (kind,) in db.execute("SELECT DISTINCT typeof(events) FROM commits")} == {
        "blob"
    }
    shown = db.execute(
        "SELECT seq, type, payload, created_at, prev_hash, hash FROM events ORDER BY seq"
    ).fetchall()
    db.close()
    assert shown[: len(old_events)] == old_events
    # Packed and vacuumed: a fraction of the file it was, one more action included.
    assert path.stat().st_size < old_size / 3


def test_the_log_dictionary_never_changes() -> None:
    # Rows packed with it read back only with it, byte for byte (bridge.store.compact).
    digest = hashlib.sha256(LOG_DICTIONARY_V1).hexdigest()
    assert digest == "bd5e802316238ec2f307eb18a76b2477279ea684eb400511afba502088fdff4f"


def test_packed_text_reads_back_as_it_was_and_plain_text_as_it_is() -> None:
    text = codec.dumps([[1, "card", {"name": "Zoë", "card": {"kind": "action"}}]])
    assert unpack(pack_row(text)) == unpack(pack(text)) == unpack(text) == text
    assert unpack_text(pack_text(text)) == unpack_text(text) == text
    assert len(pack_row(text)) < len(text)


def test_a_row_packed_with_zlibs_default_window_reads_back() -> None:
    # Format 1 rows are written with a 16 KiB window (bridge.store.compact); a row written
    # with zlib's default one, as the first packing bridge wrote them, reads the same.
    text = codec.dumps([[1, "card", {"name": "Zoë", "card": {"kind": "action"}}]])
    compressor = zlib.compressobj(6, zdict=LOG_DICTIONARY_V1)
    row = bytes((ROW,)) + compressor.compress(text.encode()) + compressor.flush()
    assert row != pack_row(text)
    assert unpack(row) == unpack(pack_row(text)) == text


async def test_a_schema_6_log_packed_row_by_row_reads_the_same_and_goes_on(
    tmp_path: Path,
) -> None:
    # Issue 35: a commit is now packed whole (format 3); a file whose commits were packed
    # as two rows each (format 1) opens, reads every event, emit and answer as it was, and
    # its log verifies with the commits written after it.
    path = tmp_path / "bridge.sqlite3"
    store = SQLiteStore(path)
    await store.open()
    try:
        await seed_worlds(store, ["w"])
        await resolve(store, "w", 12)
        events = await store.events("w")
        emits = await store.emits_since("w", 0, 10_000)
        answer = await store.get_response("w", "gm", "action.pass:p3")
    finally:
        await store.close()
    assert answer is not None and answer["data"]["card"] is not None
    db = connect_readable(path, isolation_level=None)
    db.executescript(
        """
        BEGIN;
        DROP VIEW events;
        DROP VIEW emits;
        UPDATE commits SET events = pack_row(commit_events(events)),
            emits = pack_row(commit_emits(events, emits));
        """
        + MIGRATIONS[5][MIGRATIONS[5].index("CREATE VIEW events") :]
        + "; PRAGMA user_version=6; COMMIT;"
    )
    assert {
        kind for (kind,) in db.execute("SELECT DISTINCT substr(events, 1, 1) FROM commits")
    } == {bytes((ROW,))}
    db.close()
    store = SQLiteStore(path)
    await store.open()
    try:
        assert await store.events("w") == events
        assert await store.emits_since("w", 0, 10_000) == emits
        assert await store.get_response("w", "gm", "action.pass:p3") == answer
        await resolve(store, "w", 1, first=12)
        assert (await store.events("w"))[: len(events)] == events
        assert (await store.emits_since("w", 0, 10_000))[: len(emits)] == emits
        report = await BridgeService(store).verify_history("w")
        assert report.ok and report.events > len(events), report.problems
    finally:
        await store.close()
    db = connect_readable(path)
    formats = {kind for (kind,) in db.execute("SELECT DISTINCT substr(events, 1, 1) FROM commits")}
    shown_events = db.execute("SELECT COUNT(*), MAX(seq) FROM events").fetchone()
    shown_emits = db.execute("SELECT COUNT(*), MAX(seq) FROM emits").fetchone()
    last = db.execute("SELECT last_event_seq, last_emit_seq FROM worlds").fetchone()
    db.close()
    assert formats == {bytes((ROW,)), bytes((3,))}
    # The views read both formats: every event and emit, the last ones included.
    assert shown_events == (last[0], last[0]) and shown_emits == (last[1], last[1])


def test_a_commit_packed_whole_reads_back_as_its_two_texts() -> None:
    # The newline that parts them never occurs in compact JSON: a string's is escaped.
    events = codec.dumps([[1, "t", "", "", "", {"text": "line one\nline two", "name": "Zoë"}]])
    emits = codec.dumps([[1, "card", {"card": {"kind": "action", "note": "a\nb"}}]])
    packed = pack_commit(events, emits)
    assert unpack_commit(packed, b"") == (events, emits)
    assert (commit_events(packed), commit_emits(packed, b"")) == (events, emits)
    assert len(packed) < len(events) + len(emits)
    # Rows of the older formats read through the same functions.
    assert commit_events(pack_row(events)) == events
    assert commit_emits(pack_row(events), pack_row(emits)) == emits
    assert commit_emits(events, emits) == emits
    # A packed commit cut short or garbled is refused with a ValueError, never half read.
    for broken in (packed[: len(packed) // 2], packed[:1] + b"\xff" * 20):
        with pytest.raises(ValueError):
            unpack_commit(broken, b"")
    with pytest.raises(ValueError, match="unpack_commit"):
        unpack(packed)
