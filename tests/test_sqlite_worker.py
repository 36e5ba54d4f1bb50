"""The SQLite store's one thread: outcomes reach their callers in order, however many
finish before the event loop gets to them (it is woken once for all of those)."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from bridge.store import sqlite, sqlite_worker
from bridge.store.base import CommitBatch
from bridge.store.chain import GENESIS_HASH
from tests.test_store_contract import WORLD, event


class Refused(Exception):
    pass


async def test_outcomes_that_pile_up_reach_each_caller_in_order() -> None:
    # The loop is held up until the thread has run the last job, so the outcomes of all
    # the others wait for it together: each caller still gets its own result or exception,
    # a cancelled caller is skipped, and the jobs ran in the order they were sent.
    worker = sqlite_worker.Worker()
    loop = asyncio.get_running_loop()
    wakeups = 0
    real_call_soon_threadsafe = loop.call_soon_threadsafe

    def counting(callback: Any, *args: Any) -> Any:
        nonlocal wakeups
        wakeups += 1
        return real_call_soon_threadsafe(callback, *args)

    ran: list[int] = []
    last_ran = threading.Event()

    def job(number: int) -> int:
        ran.append(number)
        if number == 199:
            last_ran.set()
        if number % 7 == 0:
            raise Refused(number)
        return number * 2

    try:
        setattr(loop, "call_soon_threadsafe", counting)  # noqa: B010 (a method of this loop)
        futures = [worker.run(partial(job, n)) for n in range(200)]
        futures[3].cancel()
        # Blocking the loop's own thread on purpose: nothing can be settled meanwhile.
        assert last_ran.wait(30)
        outcomes = await asyncio.gather(*futures, return_exceptions=True)
    finally:
        setattr(loop, "call_soon_threadsafe", real_call_soon_threadsafe)  # noqa: B010
        worker.stop()
    assert ran == list(range(200))
    for number, outcome in enumerate(outcomes):
        if number == 3:
            assert isinstance(outcome, asyncio.CancelledError)
        elif number % 7 == 0:
            assert isinstance(outcome, Refused) and outcome.args == (number,)
        else:
            assert outcome == number * 2
    # The last outcome may come after the loop has settled the others: two wake-ups at most.
    assert 1 <= wakeups <= 2


async def test_a_caller_after_a_wakeup_is_settled_by_its_own() -> None:
    # Once the queued outcomes are settled, the next outcome wakes the loop again: a store
    # used one call at a time answers every call.
    worker = sqlite_worker.Worker()
    try:
        for number in range(50):
            assert await worker.run(partial(int.__add__, number, 1)) == number + 1
        with pytest.raises(Refused):
            await worker.run(lambda: (_ for _ in ()).throw(Refused()))
        assert await worker.run(lambda: "after") == "after"
    finally:
        worker.stop()


def test_outcomes_for_a_closed_loop_are_dropped_and_the_thread_goes_on() -> None:
    # A loop that closed while its job ran: nobody waits for the outcome, and the thread
    # still serves the next loop.
    worker = sqlite_worker.Worker()
    started, release = threading.Event(), threading.Event()

    def slow() -> str:
        started.set()
        release.wait(30)
        return "late"

    async def send() -> None:
        worker.run(slow)
        assert started.wait(30)

    first = asyncio.new_event_loop()
    first.run_until_complete(send())
    first.close()
    release.set()

    async def next_call() -> str:
        return await worker.run(lambda: "served")

    try:
        assert asyncio.run(next_call()) == "served"
        assert worker._finished == {}
    finally:
        worker.stop()


async def test_work_posted_from_another_thread_runs_between_jobs_and_a_failure_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    worker = sqlite_worker.Worker()
    ran: list[str] = []

    def fails() -> None:
        ran.append("fails")
        raise Refused("posted work failed")

    try:
        first = worker.run(lambda: ran.append("first"))

        def post_both() -> None:
            worker.post(fails)
            worker.post(partial(ran.append, "posted"))

        poster = threading.Thread(target=post_both)
        await first
        poster.start()
        poster.join()
        last = worker.run(lambda: ran.append("last"))
        await asyncio.wait_for(last, 5)
    finally:
        worker.stop()
    # In the order sent; the failure is logged and the thread goes on with the next job.
    assert ran == ["first", "fails", "posted", "last"]
    assert "store job posted from another thread failed" in caplog.text


async def test_a_job_runs_in_place_only_while_the_thread_is_idle_with_nothing_queued() -> None:
    # run_here never overtakes: while the thread runs a job, or a job waits in its queue,
    # it refuses at once and runs nothing; once both are done it runs on the caller's own
    # thread, and an exception reaches the caller as raised.
    worker = sqlite_worker.Worker()
    started, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def slow() -> None:
        started.set()
        release.wait(30)
        ran.append("slow")

    def here() -> int:
        ran.append(threading.current_thread().name)
        return 7

    try:
        running = worker.run(slow)
        assert started.wait(30)
        assert worker.run_here(here) == (False, None)  # the thread is running a job
        queued = worker.run(lambda: ran.append("queued"))
        release.set()
        # Tried again and again as the thread finishes: the first time it runs in place,
        # both jobs sent before it have run.
        while not (seen := worker.run_here(lambda: list(ran)))[0]:
            await asyncio.sleep(0)
        assert seen == (True, ["slow", "queued"])
        await running
        await queued
        assert worker.run_here(here) == (True, 7)
        with pytest.raises(Refused):
            worker.run_here(lambda: (_ for _ in ()).throw(Refused()))
        assert await worker.run(lambda: "after") == "after"
    finally:
        release.set()
        worker.stop()
    assert ran == ["slow", "queued", threading.current_thread().name]


async def test_a_commit_meeting_another_writer_waits_on_the_thread_not_the_loop(
    tmp_path: Path,
) -> None:
    # Another process (a CLI command, say) holds the file's write lock. A small commit,
    # which would run in place on the event loop, must not wait there for it: busy_timeout
    # would stall every world. It goes to the store's thread, which waits; meanwhile the
    # loop runs on, and here it is the loop that lets the other writer go. Were the loop
    # held in the wait, the lock would never be released in time and the commit would fail.
    store = sqlite.SQLiteStore(tmp_path / "bridge.sqlite3")
    await store.open()
    other = sqlite3.connect(store.path, isolation_level=None, check_same_thread=False)
    try:
        await store.add_world(WORLD, {"s": 0})
        other.execute("BEGIN IMMEDIATE")
        first = event(1, GENESIS_HASH)
        committing = asyncio.create_task(
            store.commit(CommitBatch(world_id="w", expected_version=0, events=[first]))
        )
        await asyncio.sleep(0.05)
        assert not committing.done()
        other.execute("COMMIT")
        assert await asyncio.wait_for(committing, 30) == 1
        assert await store.events("w") == [first]
        # With the lock free again, the next one runs in place and is as good.
        second = event(2, first.hash)
        batch = CommitBatch(world_id="w", expected_version=1, events=[second])
        assert await store.commit(batch) == 2
        assert await store.events("w") == [first, second]
    finally:
        other.close()
        await store.close()
