"""Both stores keep the same contract: SQLite (embedded) and Redis (scale-out)."""

from __future__ import annotations

import asyncio
import copy
import pickle
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from bridge.store import codec
from bridge.store.base import (
    AlreadyAnswered,
    CommitBatch,
    EmitRow,
    EventRow,
    Store,
    VersionConflict,
    WorldExists,
    WorldRecord,
)
from bridge.store.chain import GENESIS_HASH, event_hash
from bridge.store.redis import RedisStore
from bridge.store.sqlite import SQLiteStore
from tests.stores import opened


def same_store(store: Store) -> Store:
    """Another handle on the same data: a restarted process, or (Redis) another node."""
    if isinstance(store, RedisStore):
        return RedisStore(store.url, store.prefix)
    assert isinstance(store, SQLiteStore)
    return SQLiteStore(store.path)


WORLD = WorldRecord(id="w", name="World", ruleset="unwritten", key_hash="h", created_at="t0")


def event(seq: int, prev: str) -> EventRow:
    payload = {"n": seq}
    return EventRow(seq, "test", payload, "t", prev, event_hash(prev, seq, "test", payload, "t"))


def chained_events(count: int) -> list[EventRow]:
    """Events 1 to ``count`` of a fresh log, each chained to the one before."""
    rows = [event(1, GENESIS_HASH)]
    while len(rows) < count:
        rows.append(event(len(rows) + 1, rows[-1].hash))
    return rows


def test_an_event_row_from_its_text_is_the_row_from_its_payload() -> None:
    # A commit's own rows hold only the payload's text (bridge.service.core): read, they
    # give the payload, and compare equal to rows built from it; rows are immutable.
    text = codec.dumps({"b": [1, {"c": None}], "a": "x"})
    lazy = EventRow.of_encoded(1, "t", text, "at", GENESIS_HASH, "h")
    eager = EventRow(1, "t", {"b": [1, {"c": None}], "a": "x"}, "at", GENESIS_HASH, "h")
    assert lazy.payload_json() == text
    assert lazy == eager and lazy.payload == eager.payload
    assert lazy != EventRow(1, "t", {"a": "y"}, "at", GENESIS_HASH, "h")
    assert repr(lazy) == repr(eager)
    assert copy.deepcopy(lazy) == lazy and pickle.loads(pickle.dumps(eager)) == eager
    with pytest.raises(AttributeError):
        lazy.seq = 2
    with pytest.raises(ValueError, match="payload"):
        EventRow(1, "t", None, "at", GENESIS_HASH, "h")


async def test_worlds_are_registered_once(store: Store) -> None:
    await store.add_world(WORLD, {"s": 0})
    with pytest.raises(WorldExists):
        await store.add_world(WORLD, {"s": 0})
    assert await store.get_world("w") == WORLD
    assert await store.get_world("nope") is None
    assert await store.list_worlds() == [WORLD]
    assert await store.set_key_hash("w", "h2")
    rekeyed = await store.get_world("w")
    assert rekeyed is not None and rekeyed.key_hash == "h2"
    assert not await store.set_key_hash("nope", "x")
    snapshot = await store.load("w")
    assert snapshot is not None
    assert (snapshot.version, snapshot.state, snapshot.last_event_hash) == (
        0,
        {"s": 0},
        GENESIS_HASH,
    )


async def test_commit_is_atomic_and_checks_the_version(store: Store) -> None:
    await store.add_world(WORLD, {"s": 0})
    first = event(1, GENESIS_HASH)
    version = await store.commit(
        CommitBatch(
            world_id="w",
            expected_version=0,
            snapshot={"s": 1},
            events=[first],
            emits=[EmitRow(1, "card", {"a": 1}), EmitRow(2, "card", {"a": 2})],
            user_id="u",
            request_id="r1",
            response={"ok": True, "data": {}},
            created_at="t",
        )
    )
    assert version == 1
    stale = CommitBatch(
        world_id="w", expected_version=0, snapshot={"s": 99}, events=[event(2, "x")]
    )
    with pytest.raises(VersionConflict):
        await store.commit(stale)
    snapshot = await store.load("w")
    assert snapshot is not None
    assert (snapshot.version, snapshot.state) == (1, {"s": 1})
    assert (snapshot.last_event_seq, snapshot.last_event_hash, snapshot.last_emit_seq) == (
        1,
        first.hash,
        2,
    )
    assert await store.events("w") == [first]
    assert await store.get_response("w", "u", "r1") == {"ok": True, "data": {}}
    assert await store.get_response("w", "other", "r1") is None


async def test_emits_page_in_seq_order(store: Store) -> None:
    await store.add_world(WORLD, {})
    emits = [EmitRow(n, "card", {"n": n}) for n in range(1, 8)]
    await store.commit(CommitBatch(world_id="w", expected_version=0, snapshot={}, emits=emits))
    assert [e.seq for e in await store.emits_since("w", 0, 3)] == [1, 2, 3]
    assert [e.seq for e in await store.emits_since("w", 3, 100)] == [4, 5, 6, 7]
    assert await store.emits_since("w", 7, 10) == []


async def test_events_page_by_seq_range(store: Store) -> None:
    # The roll history reads the log backwards in bounded pages, on both stores.
    await store.add_world(WORLD, {})
    rows = chained_events(7)
    await store.commit(CommitBatch(world_id="w", expected_version=0, snapshot={}, events=rows))
    assert await store.events_between("w", 3, 5) == rows[2:5]
    assert await store.events_between("w", -4, 2) == rows[:2]
    assert await store.events_between("w", 6, 99) == rows[5:]
    assert await store.events_between("w", 5, 4) == []
    assert await store.events_between("other", 1, 7) == []


async def test_events_and_emits_page_across_commits(store: Store) -> None:
    # Commits of several events and emits each: pages start and end inside a commit.
    await store.add_world(WORLD, {})
    rows = chained_events(10)
    emits = [EmitRow(n, "card", {"n": n}) for n in range(1, 11)]
    # (events, emits) of each commit; the second emits nothing.
    bounds = [((0, 3), (0, 3)), ((3, 4), (3, 3)), ((4, 8), (3, 7)), ((8, 10), (7, 9))]
    for version, ((start, end), (first, last)) in enumerate(bounds):
        batch = CommitBatch(
            world_id="w",
            expected_version=version,
            events=rows[start:end],
            emits=emits[first:last],
        )
        await store.commit(batch)
    # A commit with emits and no events, and one with neither, join the log too.
    await store.commit(CommitBatch(world_id="w", expected_version=4, emits=emits[9:]))
    await store.commit(CommitBatch(world_id="w", expected_version=5))
    assert await store.events_between("w", 2, 5) == rows[1:5]
    assert await store.events_between("w", 4, 4) == [rows[3]]
    assert await store.events("w", 6) == rows[6:]
    assert await store.events("w") == rows
    snapshot = await store.load("w")
    assert snapshot is not None
    assert (snapshot.tail, snapshot.last_event_seq, snapshot.last_emit_seq) == (
        tuple(rows),
        10,
        10,
    )
    assert await store.emits_since("w", 0, 100) == emits
    assert [e.seq for e in await store.emits_since("w", 1, 2)] == [2, 3]
    assert [e.seq for e in await store.emits_since("w", 3, 2)] == [4, 5]
    assert [e.seq for e in await store.emits_since("w", 8, 5)] == [9, 10]
    assert await store.emits_since("w", 10, 5) == []


async def test_an_answer_showing_a_card_of_its_commit_is_returned_whole(store: Store) -> None:
    # The answer to an action intent shows the card its commit emits (the same object):
    # a store may keep it once; the answer read back is whole, now and after a restart.
    await store.add_world(WORLD, {})
    card = {"kind": "action", "action_id": "a1", "name": "Zoë's roll", "dice": [1, 0, -1, 0]}
    card_emit = EmitRow(2, "card", {"seq": 2, "card_id": "w.a1", "card": card})
    response = {"ok": True, "data": {"action_id": "a1", "card_id": "w.a1", "card": card}}
    batch = CommitBatch(
        world_id="w",
        expected_version=0,
        events=[event(1, GENESIS_HASH)],
        emits=[EmitRow(1, "scene.state", {"seq": 1}), card_emit],
        user_id="u",
        request_id="r1",
        response=response,
        response_card_emit=2,
        created_at="t",
    )
    await store.commit(batch)
    whole = copy.deepcopy(response)
    assert await store.get_response("w", "u", "r1") == whole
    with pytest.raises(AlreadyAnswered) as done:
        await store.commit(replace(batch, expected_version=1))
    assert done.value.response == whole
    async with opened(same_store(store)) as other:
        assert await other.get_response("w", "u", "r1") == whole
    # A hint that names no emit of the batch, or one whose card is another object, keeps
    # the answer as it is.
    for seq, shown in ((9, card), (2, dict(card))):
        wrong = {"ok": True, "data": {"card": shown}}
        request = f"r-{seq}-{shown is card}"
        await store.commit(
            CommitBatch(
                world_id="w",
                expected_version=1 if seq == 9 else 2,
                emits=[EmitRow(3 if seq == 9 else 4, "card", {"card": card})],
                user_id="u",
                request_id=request,
                response=wrong,
                response_card_emit=seq,
            )
        )
        assert await store.get_response("w", "u", request) == wrong


async def test_racing_commits_exactly_one_wins(store: Store) -> None:
    await store.add_world(WORLD, {"s": 0})
    batches = [
        CommitBatch(
            world_id="w", expected_version=0, snapshot={"s": n}, events=[event(1, GENESIS_HASH)]
        )
        for n in (1, 2)
    ]
    results = await asyncio.gather(*(store.commit(b) for b in batches), return_exceptions=True)
    assert sorted(type(r).__name__ for r in results) == ["VersionConflict", "int"]
    assert len(await store.events("w")) == 1


async def test_presence_and_binding_nonces(store: Store) -> None:
    await store.add_world(WORLD, {})
    assert not await store.is_present("w", "u")
    await store.add_presence("w", "u", 1)
    await store.add_presence("w", "u", 1)
    await store.add_presence("w", "u", -1)
    assert await store.is_present("w", "u")
    await store.add_presence("w", "u", -1)
    assert not await store.is_present("w", "u")
    await store.put_nonce("w", "paul", "n1")
    assert not await store.nonce_bound("w", "paul", "n1")
    assert not await store.bind_nonce("w", "anna", "n1")
    assert not await store.bind_nonce("w", "paul", "n2")
    assert await store.bind_nonce("w", "paul", "n1")
    assert await store.nonce_bound("w", "paul", "n1")
    await store.drop_nonce("w", "n1")
    assert not await store.nonce_bound("w", "paul", "n1")


async def test_commits_append_and_the_snapshot_moves_only_when_given(store: Store) -> None:
    # DESIGN "State and scale": the latest state is the snapshot plus the events after it.
    await store.add_world(WORLD, {"s": 0})
    rows = [event(1, GENESIS_HASH)]
    for seq in range(2, 6):
        rows.append(event(seq, rows[-1].hash))
    await store.commit(CommitBatch(world_id="w", expected_version=0, events=rows[:1]))
    await store.commit(CommitBatch(world_id="w", expected_version=1, events=rows[1:3]))
    loaded = await store.load("w")
    assert loaded is not None
    assert (loaded.state, loaded.state_seq, loaded.tail) == ({"s": 0}, 0, tuple(rows[:3]))
    assert (loaded.version, loaded.last_event_seq, loaded.last_event_hash) == (2, 3, rows[2].hash)
    await store.commit(
        CommitBatch(world_id="w", expected_version=2, snapshot={"s": 4}, events=rows[3:4])
    )
    loaded = await store.load("w")
    assert loaded is not None
    assert (loaded.state, loaded.state_seq, loaded.tail) == ({"s": 4}, 4, ())
    await store.commit(CommitBatch(world_id="w", expected_version=3, events=rows[4:]))
    loaded = await store.load("w")
    assert loaded is not None
    assert (loaded.state, loaded.state_seq, loaded.tail) == ({"s": 4}, 4, (rows[4],))
    # The log itself is whole, and pages from any event on.
    assert await store.events("w") == rows
    assert await store.events("w", after=3) == rows[3:]
    # A stale writer changes nothing: not the snapshot, not the tail.
    with pytest.raises(VersionConflict):
        await store.commit(
            CommitBatch(world_id="w", expected_version=3, snapshot={"s": 99}, events=[])
        )
    again = await store.load("w")
    assert again is not None
    assert (again.version, again.state, again.tail) == (4, {"s": 4}, (rows[4],))


def answered(version: int, request_id: str, rows: list[EventRow], user: str = "u") -> CommitBatch:
    return CommitBatch(
        world_id="w",
        expected_version=version,
        events=rows,
        emits=[EmitRow(rows[0].seq, "card", {"r": request_id})] if rows else [],
        user_id=user,
        request_id=request_id,
        response={"ok": True, "data": {"r": request_id, "seq": rows[0].seq if rows else 0}},
        created_at="t",
    )


async def test_a_request_is_committed_once_and_its_answer_returned_after(store: Store) -> None:
    # One round trip per intent: the commit itself answers a request id answered before
    # (checked ahead of the version, so a retry is never a conflict) and writes nothing.
    await store.add_world(WORLD, {"s": 0})
    first = event(1, GENESIS_HASH)
    assert await store.commit(answered(0, "r1", [first])) == 1
    retry = answered(1, "r1", [event(2, first.hash)])
    stale_retry = answered(0, "r1", [event(1, GENESIS_HASH)])
    for batch in (retry, stale_retry):
        with pytest.raises(AlreadyAnswered) as done:
            await store.commit(batch)
        assert done.value.response == {"ok": True, "data": {"r": "r1", "seq": 1}}
    snapshot = await store.load("w")
    assert snapshot is not None
    assert (snapshot.version, snapshot.last_event_seq, snapshot.last_emit_seq) == (1, 1, 1)
    assert await store.events("w") == [first]
    assert [e.payload for e in await store.emits_since("w", 0, 10)] == [{"r": "r1"}]
    # The request id is the user's: another user's r1 is another request.
    second = event(2, first.hash)
    assert await store.commit(answered(1, "r1", [second], user="other")) == 2
    # A stale version without an earlier answer is still a conflict, writing nothing.
    with pytest.raises(VersionConflict):
        await store.commit(answered(1, "r2", [event(3, second.hash)]))
    assert await store.get_response("w", "u", "r2") is None
    assert await store.events("w") == [first, second]


async def test_a_retry_at_the_current_version_changes_nothing_not_even_the_snapshot(
    store: Store,
) -> None:
    # The answer is found however the store looks for it (SQLite: when the answer's own
    # insert meets the request's key, after the version moved and before anything else is
    # kept): the retry's snapshot, events, emits and answer are all rolled back.
    await store.add_world(WORLD, {"s": 0})
    first = event(1, GENESIS_HASH)
    assert await store.commit(answered(0, "r1", [first])) == 1
    retry = replace(answered(1, "r1", [event(2, first.hash)]), snapshot={"s": 2})
    retry = replace(retry, response={"ok": True, "data": {"r": "changed"}})
    with pytest.raises(AlreadyAnswered) as done:
        await store.commit(retry)
    assert done.value.response == {"ok": True, "data": {"r": "r1", "seq": 1}}
    snapshot = await store.load("w")
    assert snapshot is not None
    assert (snapshot.version, snapshot.state, snapshot.tail) == (1, {"s": 0}, (first,))
    assert (snapshot.last_event_seq, snapshot.last_emit_seq) == (1, 1)
    assert [e.payload for e in await store.emits_since("w", 0, 10)] == [{"r": "r1"}]
    assert await store.get_response("w", "u", "r1") == {"ok": True, "data": {"r": "r1", "seq": 1}}
    # The world moves on from where it was.
    assert await store.commit(answered(1, "r2", [event(2, first.hash)])) == 2


async def test_an_answer_holds_across_a_restart_and_another_node(store: Store) -> None:
    await store.add_world(WORLD, {"s": 0})
    first = event(1, GENESIS_HASH)
    await store.commit(answered(0, "r1", [first]))
    async with opened(same_store(store)) as other:
        with pytest.raises(AlreadyAnswered) as done:
            await other.commit(answered(1, "r1", [event(2, first.hash)]))
        assert done.value.response["data"] == {"r": "r1", "seq": 1}
        assert await other.events("w") == [first]


async def test_racing_retries_of_one_request_commit_once(store: Store) -> None:
    # Two handles (two nodes on Redis) send the same request at the same version: one
    # commit is written, the other gets its answer, never a second copy of the events.
    await store.add_world(WORLD, {"s": 0})
    async with opened(same_store(store)) as other:
        racing = [s.commit(answered(0, "r1", [event(1, GENESIS_HASH)])) for s in (store, other)]
        results = await asyncio.gather(*racing, return_exceptions=True)
    assert sorted(type(r).__name__ for r in results) == ["AlreadyAnswered", "int"]
    assert len(await store.events("w")) == 1


async def test_encoded_snapshot_and_payloads_are_stored_as_given(store: Store) -> None:
    # The service encodes each payload and the snapshot once; the stores write that
    # text as is, and report the sizes the snapshot cadence compares.
    await store.add_world(WORLD, {"s": 0})
    plain = event(1, GENESIS_HASH)
    encoded = EventRow(
        plain.seq,
        plain.type,
        plain.payload,
        plain.created_at,
        plain.prev_hash,
        plain.hash,
        codec.dumps(plain.payload),
    )
    assert encoded == plain
    await store.commit(CommitBatch(world_id="w", expected_version=0, events=[encoded]))
    loaded = await store.load("w")
    assert loaded is not None
    assert loaded.tail == (plain,) and loaded.tail_size >= len(codec.dumps(plain.payload))
    state_text = codec.dumps({"s": 1, "name": "Zoë"})
    await store.commit(
        CommitBatch(world_id="w", expected_version=1, snapshot=state_text, events=[])
    )
    loaded = await store.load("w")
    assert loaded is not None
    assert (loaded.state, loaded.state_size, loaded.tail, loaded.tail_size) == (
        {"s": 1, "name": "Zoë"},
        len(state_text),
        (),
        0,
    )


async def test_sqlite_writes_a_commit_as_one_row_and_an_answers_card_once(
    tmp_path: Path,
) -> None:
    # What makes a SQLite commit cheap: one row for all its events and emits, and the
    # answer without a second copy of the card its commit emits.
    async with opened(SQLiteStore(tmp_path / "bridge.sqlite3")) as store:
        await store.add_world(WORLD, {})
        card = {"kind": "action", "action_id": "a1", "text": "x" * 2000}
        emits = [EmitRow(1, "card", {"seq": 1, "card": card}), EmitRow(2, "scene.state", {})]
        first = event(1, GENESIS_HASH)
        await store.commit(
            CommitBatch(
                world_id="w",
                expected_version=0,
                events=[first, event(2, first.hash)],
                emits=emits,
                user_id="u",
                request_id="r1",
                response={"ok": True, "data": {"card": card}},
                response_card_emit=1,
            )
        )
    db = sqlite3.connect(tmp_path / "bridge.sqlite3")
    assert db.execute("SELECT last_event_seq, last_emit_seq FROM commits").fetchall() == [(2, 2)]
    response, card_emit = db.execute("SELECT response, card_emit FROM requests").fetchone()
    assert (codec.loads(response), card_emit) == ({"ok": True, "data": {"card": None}}, 1)
