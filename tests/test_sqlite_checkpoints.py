"""The SQLite store's write-ahead log is checkpointed beside the writer, never in a commit."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import sys
import threading
from pathlib import Path

import pytest

from bridge.service import BridgeService, Session
from bridge.store.sqlite import SQLiteStore
from bridge.store.sqlite_checkpoint import CHECKPOINT_NICENESS, Checkpointer
from bridge.store.sqlite_schema import connect_readable
from tests.seats import action_start
from tests.stores import opened

ACTOR = {"id": "hero", "name": "Hero", "owners": ["p"], "skills": {"Athletics": 2}}


def overcome(request_id: str) -> dict[str, object]:
    """The hero's overcome against Average (+1), with a description long enough that
    every commit writes a few pages."""
    return action_start(actor="hero", rating=1, request_id=request_id, description="x" * 2_000)


async def checkpointed(store: SQLiteStore) -> None:
    """Return once the store's checkpointer has made a pass since this call began."""
    checkpointer = store._checkpointer
    assert checkpointer is not None
    began = checkpointer.passes
    for _ in range(1_000):
        if checkpointer.passes > began:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the checkpointer made no pass in 10 s")


async def play(
    service: BridgeService, gm: Session, actions: int, wal: Path, store: SQLiteStore | None
) -> list[int]:
    """Resolve ``actions`` passive overcomes; the log file's size after each. With a
    ``store``, every tenth action waits for its checkpointer's next pass: however busy the
    machine, the checkpointer gets its turns while the writer keeps writing."""
    sizes = []
    for i in range(actions):
        if store is not None and i % 10 == 0:
            await checkpointed(store)
        started = await service.handle(gm, "action.start", overcome(f"s{i}"))
        assert started.ack["ok"], started.ack
        action_id = started.ack["data"]["action_id"]
        passed = await service.handle(
            gm, "action.pass", {"request_id": f"p{i}", "action_id": action_id, "side": "actor"}
        )
        assert passed.ack["ok"], passed.ack
        sizes.append(wal.stat().st_size)
    return sizes


async def played(path: Path, checkpoint_seconds: float) -> tuple[SQLiteStore, list[int]]:
    """A store on ``path`` after 200 resolved actions, and its log's size after each
    (waiting for the checkpointer's passes unless they are an hour apart)."""
    store = SQLiteStore(path, checkpoint_seconds=checkpoint_seconds, wal_truncate_frames=100)
    await store.open()
    service = BridgeService(store, dev_dice=True)
    await service.add_world("w", "World")
    gm = Session("s", "w", "gm", "gm", bound=True, present=True)
    assert (await service.handle(gm, "actor.sync", {"request_id": "a", "actor": ACTOR})).ack["ok"]
    wal = path.with_name(path.name + "-wal")
    return store, await play(service, gm, 200, wal, store if checkpoint_seconds < 60 else None)


async def test_commits_never_checkpoint_and_the_checkpointer_bounds_the_log(
    tmp_path: Path,
) -> None:
    # Its passes an hour apart, the checkpointer never runs here: the log only grows, so
    # no commit checkpointed (SQLite's own checkpoint would start it afresh at 1,000 pages).
    idle, unchecked = await played(tmp_path / "idle.sqlite3", 3600.0)
    try:
        assert (
            await idle._run(lambda db: db.execute("PRAGMA wal_autocheckpoint").fetchone()[0]) == 0
        )
        assert unchecked == sorted(unchecked) and unchecked[-1] > 4_000 * 1_000
    finally:
        await idle.close()
    path = tmp_path / "bridge.sqlite3"
    store, sizes = await played(path, 0.02)
    try:
        # Checkpointed beside the writer, the log was truncated as it went.
        assert max(sizes) < unchecked[-1] / 3, (max(sizes), unchecked[-1])
        # Once the writes stop, the checkpointer copies all of the log into the file.
        for _ in range(200):
            with sqlite3.connect(path) as probe:
                _busy, frames, copied = probe.execute("PRAGMA wal_checkpoint(NOOP)").fetchone()
            if frames == copied:
                break
            await asyncio.sleep(0.02)
        assert frames == copied
        committed = len(await store.events("w"))
    finally:
        await store.close()
    with connect_readable(path) as db:
        assert db.execute("SELECT COUNT(*) FROM events").fetchone()[0] == committed


def test_a_failed_checkpoint_is_logged_and_tried_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    checkpointer = Checkpointer(tmp_path / "bridge.sqlite3", interval=60.0, truncate_frames=100)
    try:
        closed = sqlite3.connect(tmp_path / "other.sqlite3")
        closed.close()
        with caplog.at_level(logging.WARNING, logger="bridge.store.sqlite_checkpoint"):
            checkpointer.checkpoint(closed)  # raises inside: a closed connection
        assert "WAL checkpoint" in caplog.text and "retried" in caplog.text
    finally:
        checkpointer.stop()


async def test_a_long_log_starts_afresh_after_a_checkpoint_on_the_writers_thread(
    tmp_path: Path,
) -> None:
    # Under steady writes a commit is always under way when the checkpointer's pass ends,
    # so the log never starts afresh on its own; the writer's thread then checkpoints it
    # between two commits (_reset_log), and the next commit starts the log afresh and cuts
    # its file back to journal_size_limit (truncate_frames' worth), blocking no commit.
    path = tmp_path / "idle.sqlite3"
    idle, unchecked = await played(path, 3600.0)
    try:
        wal = path.with_name(path.name + "-wal")
        assert wal.stat().st_size == unchecked[-1] > 4_000 * 1_000
        idle._reset_log()
        service = BridgeService(idle, dev_dice=True)
        gm = Session("s2", "w", "gm", "gm", bound=True, present=True)
        later = {"request_id": "later", "actor": {**ACTOR, "name": "Hero Later"}}
        assert (await service.handle(gm, "actor.sync", later)).ack["ok"]
        page = await idle._run(lambda db: db.execute("PRAGMA page_size").fetchone()[0])
        assert wal.stat().st_size <= 100 * (page + 24)
        committed = len(await idle.events("w"))
    finally:
        await idle.close()
    with connect_readable(path) as db:
        assert db.execute("SELECT COUNT(*) FROM events").fetchone()[0] == committed > 0
        # The commit after the reset is in the file too: the renamed hero.
        names = db.execute("SELECT payload FROM events WHERE type = 'character.put'").fetchall()
        assert "Hero Later" in names[-1][0]


async def test_a_pass_over_a_long_log_asks_for_the_reset_and_a_short_one_does_not(
    tmp_path: Path,
) -> None:
    path = tmp_path / "idle.sqlite3"
    idle, _sizes = await played(path, 3600.0)
    asked: list[str] = []
    try:
        with sqlite3.connect(path, isolation_level=None) as db:
            for truncate_frames, expected in ((10**9, []), (100, ["reset"])):
                asked.clear()
                checkpointer = Checkpointer(
                    path, 3600.0, truncate_frames, lambda: asked.append("reset")
                )
                try:
                    checkpointer.checkpoint(db)
                finally:
                    checkpointer.stop()
                assert asked == expected
    finally:
        await idle.close()


@pytest.mark.skipif(sys.platform != "linux", reason="niceness is per thread only on Linux")
async def test_the_checkpointer_thread_is_nicer_than_the_event_loop_and_the_writer(
    tmp_path: Path,
) -> None:
    async with opened(SQLiteStore(tmp_path / "bridge.sqlite3")) as store:
        checkpointer, writer = store._checkpointer, store._thread
        assert checkpointer is not None and writer is not None
        assert checkpointer._thread.native_id is not None
        assert writer._thread.native_id is not None
        here = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        wanted = min(19, here + CHECKPOINT_NICENESS)
        # The thread lowers its own priority as it starts: give it a moment to.
        for _ in range(500):
            if os.getpriority(os.PRIO_PROCESS, checkpointer._thread.native_id) == wanted:
                break
            await asyncio.sleep(0.01)
        assert os.getpriority(os.PRIO_PROCESS, checkpointer._thread.native_id) == wanted
        assert os.getpriority(os.PRIO_PROCESS, writer._thread.native_id) == here
        assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == here
