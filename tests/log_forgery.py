"""Rewriting a world's SQLite log the way someone with the file could, re-hashing it all.

``python -m tests.log_forgery DATA_DIR WORLD`` (used by the module's Node test) or
``rewrite_and_rehash(db_path, world)``: the first roll's dice become four pluses, every event's
hash is recomputed from there, the world row gets the new head and, as its snapshot, the state
the forged log replays to, so a plain ``world verify`` passes and only chat-log anchors can tell.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from bridge.rules.engine import replay
from bridge.rules.events import EVENT_ADAPTER
from bridge.rules.state import WorldState
from bridge.store.chain import GENESIS_HASH, event_hash
from bridge.store.compact import commit_emits, commit_events
from bridge.store.sqlite_schema import connect_readable


def rewrite_event(
    db: sqlite3.Connection,
    world: str,
    seq: int,
    payload: Any,
    hashes: tuple[str, str] | None = None,
) -> None:
    """Replace event ``seq``'s payload (and its ``(prev_hash, hash)``, when given) in the
    commit row that holds it, as someone editing the file could."""
    rowid, text, emits = db.execute(
        "SELECT rowid, events, emits FROM commits WHERE world_id = ? AND last_event_seq >= ? "
        "ORDER BY last_event_seq LIMIT 1",
        (world, seq),
    ).fetchone()
    events = json.loads(commit_events(text))
    for event in events:
        if event[0] == seq:
            event[5] = payload
            if hashes is not None:
                event[3], event[4] = hashes
    db.execute(
        "UPDATE commits SET events = ?, emits = ? WHERE rowid = ?",
        (json.dumps(events), commit_emits(text, emits), rowid),
    )


def rewrite_and_rehash(db_path: Path, world: str) -> None:
    """What someone with the database file can do: change the first roll's dice, re-hash
    every event after it, store the new head and the state the new log replays to."""
    with connect_readable(db_path) as db:
        rows = db.execute(
            "SELECT seq, type, payload, created_at FROM events WHERE world_id = ? ORDER BY seq",
            (world,),
        ).fetchall()
        prev = GENESIS_HASH
        payloads = []
        forged = False
        for seq, event_type, raw, created_at in rows:
            payload = json.loads(raw)
            roll = payload.get("action", {}).get("actor", {}).get("roll")
            if not forged and roll is not None:
                roll["dice"] = [1, 1, 1, 1]
                forged = True
            digest = event_hash(prev, seq, event_type, payload, created_at)
            rewrite_event(db, world, seq, payload, (prev, digest))
            payloads.append(payload)
            prev = digest
        assert forged
        ruleset = db.execute("SELECT ruleset FROM worlds WHERE id = ?", (world,)).fetchone()[0]
        state = replay(
            [EVENT_ADAPTER.validate_python(p) for p in payloads], WorldState(ruleset=ruleset)
        )
        # The forger saves the forged state as the snapshot at the log's last event.
        db.execute(
            "UPDATE snapshots SET state = ?, state_seq = ? WHERE world_id = ?",
            (json.dumps(state.model_dump(mode="json")), rows[-1][0], world),
        )
        db.execute("UPDATE worlds SET last_event_hash = ? WHERE id = ?", (prev, world))


if __name__ == "__main__":
    rewrite_and_rehash(Path(sys.argv[1]) / "bridge.sqlite3", sys.argv[2])
