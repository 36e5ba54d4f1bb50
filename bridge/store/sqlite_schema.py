"""The SQLite store's schema: each version's upgrade, run in order on opening a file.

A file of any earlier version is brought up to date in place (:func:`migrate`); the
upgrade that packs the log's rows also vacuums the file, to give their space back.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from bridge.store.compact import commit_emits, commit_events, pack, pack_row, unpack


def _log_views(events: str, emits: str) -> str:
    """The ``events`` and ``emits`` views over the commit rows, ``events`` and ``emits``
    being the SQL that reads a row's events and emits texts."""
    return f"""CREATE VIEW events AS
        SELECT commits.world_id AS world_id, event.value ->> 0 AS seq,
            event.value ->> 1 AS type, event.value ->> 5 AS payload,
            event.value ->> 2 AS created_at, event.value ->> 3 AS prev_hash,
            event.value ->> 4 AS hash
        FROM commits, json_each({events}) AS event;
    CREATE VIEW emits AS
        SELECT commits.world_id AS world_id, emit.value ->> 0 AS seq,
            emit.value ->> 1 AS event, emit.value ->> 2 AS payload
        FROM commits, json_each({emits}) AS emit;
    """


# Each entry moves the schema one version up; never edit a shipped entry (its text may be
# built, but must come out the same).
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
    # tail. In version 1 every commit rewrote the state, so it is as of the last event.
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
    # bridge.store.sqlite_log), found by their last seqs. A commit so writes one row and
    # two small index entries, not a row and an index entry per event and per emit into
    # four b-trees: fewer pages to the log per commit. A request's answer that
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
    """
    + _log_views("commits.events", "commits.emits"),
    # The history index: a row per roll-history entry, written with the commit
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
    # Compressed: a commit's events and
    # emits, and the snapshot, are kept packed (bridge.store.compact: zlib, the log's rows
    # with a preset dictionary), the earlier rows packed here; the views read through
    # unpack(), a function every connection of the store's registers (connect_readable).
    # The file is vacuumed once this has run (migrate), to give the space back.
    """
    DROP VIEW events;
    DROP VIEW emits;
    UPDATE commits SET events = pack_row(events), emits = pack_row(emits)
        WHERE typeof(events) = 'text';
    UPDATE snapshots SET state = pack(state) WHERE typeof(state) = 'text';
    """
    + _log_views("unpack(commits.events)", "unpack(commits.emits)"),
    # A commit's events and emits packed together, in the events column (format 3 of
    # bridge.store.compact; the emits column then holds an empty value): one compressor
    # per commit, not two. Rows written before keep their format; the views read both
    # through commit_events() and commit_emits() (connect_readable).
    """
    DROP VIEW events;
    DROP VIEW emits;
    """
    + _log_views("commit_events(commits.events)", "commit_emits(commits.events, commits.emits)"),
)
# The migration after which the file is vacuumed (it packed every row in place).
PACKED_SCHEMA = 6


def connect_readable(path: Path | str, **options: Any) -> sqlite3.Connection:
    """A connection to a store's file with the functions its schema calls:
    ``commit_events`` and ``commit_emits`` (the ``events`` and ``emits`` views, and ad-hoc
    reads), ``unpack`` (the snapshot) and those the migrations call.
    The store's own connections are made here; anything else reading the file should be."""
    db: sqlite3.Connection = sqlite3.connect(path, **options)
    db.create_function("unpack", 1, unpack, deterministic=True)
    db.create_function("commit_events", 1, commit_events, deterministic=True)
    db.create_function("commit_emits", 2, commit_emits, deterministic=True)
    db.create_function("pack", 1, pack, deterministic=True)
    db.create_function("pack_row", 1, pack_row, deterministic=True)
    return db


def migrate(db: sqlite3.Connection) -> None:
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
