"""The SQLite store's log as rows: how a commit's events, emits, answer and history entries
are written and read back.

A commit is one row of ``commits``: its events and its emits as JSON arrays, each packed
(:mod:`bridge.store.compact`). An answer that shows a card emitted by the same commit
keeps the card once, as that emit.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from typing import Any, cast

import orjson

from bridge.store import codec
from bridge.store.base import CommitBatch, EmitRow, EventRow, HistoryFound, HistoryQuery, HistoryRow
from bridge.store.compact import commit_emits, commit_events


def events_text(events: list[EventRow]) -> str:
    """A commit's events as its row keeps them, packed (bridge.store.compact): a JSON array
    of ``[seq, type, created_at, prev_hash, hash, payload]``, each payload's text written
    as it came (the canonical form its hash was taken over)."""
    rows = [
        [e.seq, e.type, e.created_at, e.prev_hash, e.hash, orjson.Fragment(e.payload_json())]
        for e in events
    ]
    return orjson.dumps(rows).decode("utf-8")


def emits_text(emits: list[EmitRow]) -> str:
    """A commit's emits as its row keeps them, packed: a JSON array of ``[seq, event,
    payload]``."""
    return codec.dumps([[m.seq, m.event, m.payload] for m in emits])


def events_of(value: str | bytes) -> list[EventRow]:
    """The events of a commit row (its ``events`` column), in seq order (see events_text)."""
    return [
        EventRow(seq, event_type, payload, created_at, prev_hash, digest)
        for seq, event_type, created_at, prev_hash, digest, payload in codec.loads(
            commit_events(value)
        )
    ]


def emits_of(events: str | bytes, emits: str | bytes) -> list[EmitRow]:
    """The emits of a commit row (its ``events`` and ``emits`` columns: a commit packed
    whole keeps both in the first), in seq order (see emits_text)."""
    return [
        EmitRow(seq, event, payload)
        for seq, event, payload in codec.loads(commit_emits(events, emits))
    ]


def events_from(db: sqlite3.Connection, world_id: str, first: int) -> Iterator[EventRow]:
    """The world's events from seq ``first`` on, in seq order, read a commit at a time
    as the caller goes (a commit's events are consecutive, so the commits that hold them
    are those whose last event is ``first`` or later)."""
    commits = db.execute(
        "SELECT events FROM commits WHERE world_id = ? AND last_event_seq >= ? "
        "ORDER BY last_event_seq",
        (world_id, first),
    )
    for (text,) in commits:
        for row in events_of(text):
            if row.seq >= first:
                yield row


def event_at(
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
    rows = commits[found[0]] = events_of(found[1])
    return next((r for r in rows if r.seq == seq), None)


def history_row(row: sqlite3.Row | tuple[Any, ...]) -> HistoryRow:
    seq, scene, kind, cancelled, characters, rolls = row
    return HistoryRow(
        seq,
        scene,
        kind,
        bool(cancelled),
        tuple(codec.loads(characters)),
        tuple((who, total) for who, total in codec.loads(rolls)),
    )


HISTORY_COLUMNS = "h.seq, h.scene, h.kind, h.cancelled, h.characters, h.rolls"


def write_history(db: sqlite3.Connection, world_id: str, rows: list[HistoryRow]) -> None:
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


def history_page(db: sqlite3.Connection, world_id: str, query: HistoryQuery) -> HistoryFound:
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
        f"SELECT {HISTORY_COLUMNS} FROM {source} WHERE {' AND '.join(where)} AND {order} < ? "
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
            event = event_at(db, world_id, row[0], commits)
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
        "SELECT events, emits FROM commits WHERE world_id = ? AND last_emit_seq >= ? "
        "ORDER BY last_emit_seq LIMIT 1",
        (world_id, seq),
    ).fetchone()
    emit = next(m for m in emits_of(found[0], found[1]) if m.seq == seq)
    return emit.payload["card"]


def _stored_answer(
    db: sqlite3.Connection, world_id: str, response: str, card_emit: int | None
) -> dict[str, Any]:
    """An answer as it was committed: its card put back from the emit that holds it."""
    answer: dict[str, Any] = codec.loads(response)
    if card_emit is not None:
        answer["data"]["card"] = _emit_card(db, world_id, card_emit)
    return answer


def kept_answer(batch: CommitBatch) -> tuple[str, int | None]:
    """The batch's answer as the store keeps it, and the emit its card is kept as: the
    answer's ``data.card`` is left out when it is the card of the batch's emit
    ``response_card_emit`` (the same object, so surely the same card)."""
    response = cast(dict[str, Any], batch.response)
    seq = batch.response_card_emit
    data = response.get("data")
    if seq is not None and isinstance(data, dict):
        emit = next((m for m in batch.emits if m.seq == seq), None)
        if emit is not None and data.get("card") is emit.payload.get("card"):
            return codec.dumps({**response, "data": {**data, "card": None}}), seq
    return codec.dumps(response), None


def find_answer(
    db: sqlite3.Connection, world_id: str, user_id: str | None, request_id: str | None
) -> dict[str, Any] | None:
    """The answer the store holds for a request, if any, as it was committed."""
    done = db.execute(
        "SELECT response, card_emit FROM requests "
        "WHERE world_id = ? AND user_id = ? AND request_id = ?",
        (world_id, user_id, request_id),
    ).fetchone()
    return None if done is None else _stored_answer(db, world_id, done[0], done[1])
