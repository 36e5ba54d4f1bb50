"""The SQLite store commits on the event loop when it can start at once, and on its
thread when it would wait: the loop never waits for SQLite's write lock, and the
WAL is checkpointed off the loop."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from bridge.store import sqlite as sqlite_store
from bridge.store.base import CommitBatch, EventRow, WorldRecord
from bridge.store.chain import GENESIS_HASH, event_hash
from bridge.store.sqlite import SQLiteStore

WORLD = WorldRecord(id="w", name="World", ruleset="unwritten", key_hash="h", created_at="t0")


def batch(version: int, prev: str, *, snapshot: str | None = None) -> CommitBatch:
    seq = version + 1
    payload = {"n": seq, "text": "x" * 2000}
    row = EventRow(seq, "test", payload, "t", prev, event_hash(prev, seq, "test", payload, "t"))
    return CommitBatch(
        world_id="w",
        expected_version=version,
        snapshot=snapshot,
        events=[row],
        user_id="u",
        request_id=f"r{seq}",
        response={"ok": True, "n": seq},
        created_at="t",
    )


async def commit_many(store: SQLiteStore, count: int) -> str:
    prev = GENESIS_HASH
    for version in range(count):
        one = batch(version, prev)
        assert await store.commit(one) == version + 1
        prev = one.events[-1].hash
    return prev


async def test_a_commit_meeting_a_held_lock_waits_off_the_loop(tmp_path: Path) -> None:
    # Another connection (the webhook store's, a GM's sqlite3 shell) holds the write
    # lock until the loop has run something else: a commit that waited on the loop
    # would never let it, and would fail after the busy timeout instead.
    store = SQLiteStore(tmp_path / "bridge.sqlite3")
    await store.open()
    try:
        await store.add_world(WORLD, {"s": 0})
        holder = sqlite3.connect(store.path, isolation_level=None, check_same_thread=False)
        holder.execute("BEGIN IMMEDIATE")
        loop_ran = threading.Event()

        def release() -> None:
            loop_ran.wait(30)
            holder.execute("COMMIT")

        releaser = threading.Thread(target=release)
        releaser.start()
        committing = asyncio.ensure_future(store.commit(batch(0, GENESIS_HASH)))
        await asyncio.sleep(0)  # the commit has met the lock and gone to the thread
        assert not committing.done()
        loop_ran.set()
        assert await committing == 1
        releaser.join()
        holder.close()
        snapshot = await store.load("w")
        assert snapshot is not None and snapshot.version == 1
        assert [e.seq for e in snapshot.tail] == [1]
    finally:
        await store.close()


async def test_a_commit_with_a_snapshot_is_written_on_the_thread(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "bridge.sqlite3")
    await store.open()
    try:
        await store.add_world(WORLD, {"s": 0})
        committing = asyncio.ensure_future(
            store.commit(batch(0, GENESIS_HASH, snapshot='{"s": 1}'))
        )
        await asyncio.sleep(0)
        assert not committing.done()  # a megabyte state is not written on the loop
        assert await committing == 1
        snapshot = await store.load("w")
        assert snapshot is not None and snapshot.state == {"s": 1} and snapshot.tail == ()
    finally:
        await store.close()


async def test_an_error_on_the_loops_connection_is_the_callers(tmp_path: Path) -> None:
    # Only "the lock is held" sends a commit to the thread; any other failure is raised
    # as it was, and the transaction is rolled back.
    store = SQLiteStore(tmp_path / "bridge.sqlite3")
    await store.open()
    try:
        await store.add_world(WORLD, {"s": 0})
        await store.commit(batch(0, GENESIS_HASH))
        clash = batch(1, GENESIS_HASH)
        clash.events[0] = EventRow(1, "test", {}, "t", GENESIS_HASH, "h")  # seq 1 again
        with pytest.raises(sqlite3.IntegrityError):
            await store.commit(clash)
        snapshot = await store.load("w")
        assert snapshot is not None and snapshot.version == 1
    finally:
        await store.close()


async def wal_size_after(tmp_path: Path, name: str, commits: int) -> int:
    store = SQLiteStore(tmp_path / name)
    await store.open()
    try:
        await store.add_world(WORLD, {"s": 0})
        await commit_many(store, commits)
        await store.version("w")  # the thread's queue is in order: a checkpoint sent is done
        return (tmp_path / f"{name}-wal").stat().st_size
    finally:
        await store.close()


async def test_the_wal_is_checkpointed_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The loop's connection never checkpoints; without the thread's checkpoints the WAL
    # would hold every commit. With them, SQLite starts it over once it is copied back.
    monkeypatch.setattr(sqlite_store, "CHECKPOINT_EVERY", 10**9)
    unchecked = await wal_size_after(tmp_path, "unchecked.sqlite3", 120)
    monkeypatch.setattr(sqlite_store, "CHECKPOINT_EVERY", 8)
    checked = await wal_size_after(tmp_path, "checked.sqlite3", 120)
    assert checked * 4 < unchecked
