"""The SQLite store's thread: jobs run one at a time on the thread that owns the connection.

Every store call is one function run on this thread: a commit is one hop off the event
loop and one transaction, however many statements it holds, and calls never interleave.
The hop is a queue and an asyncio future settled from the thread.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)

# A job: the loop and future its outcome settles, or neither for work posted by a thread.
_Job = tuple[asyncio.AbstractEventLoop | None, "asyncio.Future[Any] | None", Callable[[], Any]]
# A finished job: its future, and the result or the exception it raised.
_Outcome = tuple["asyncio.Future[Any]", Any, BaseException | None]


def _settle(future: asyncio.Future[Any], result: Any, failure: BaseException | None) -> None:
    """On the event loop: hand the thread's outcome to the waiting caller, if it still waits."""
    if future.cancelled():
        return
    if failure is not None:
        future.set_exception(failure)
    else:
        future.set_result(result)


class Worker:
    """One thread running jobs in the order they were sent; each job's outcome settles
    its asyncio future on the loop that sent it, in the order the jobs ran.

    A loop is woken once for all the outcomes that finish before it gets to them: the
    thread queues each outcome for its loop and calls ``call_soon_threadsafe`` (a write
    to the loop's self-pipe, with the GIL released and taken again around it) only when
    that loop has none waiting. A busy loop (many worlds committing at once) so settles
    several commits per wake-up, and each outcome is still handed over as soon as it is
    ready.

    A small job may instead run on the caller's own thread (:meth:`run_here`), when the
    thread is idle with nothing queued: the connection is then used by one thread at a
    time still (``_busy``), and the caller pays no hop."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        # Held while the connection is in use: by the thread for each job it runs, or by
        # a caller running a job in place (run_here).
        self._busy = threading.Lock()
        # Per loop, the outcomes finished and not yet settled (guarded by _finished_lock:
        # the thread adds, the loop takes).
        self._finished: dict[asyncio.AbstractEventLoop, list[_Outcome]] = {}
        self._finished_lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, name="sqlite-store", daemon=True)
        self._thread.start()

    def run(self, work: Callable[[], T]) -> asyncio.Future[T]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._jobs.put((loop, future, work))
        return future

    def run_here(self, work: Callable[[], T]) -> tuple[bool, T | None]:
        """Run ``work`` on the calling thread if the worker is idle with no job queued:
        ``(True, result)``, its exception raised as it is; else ``(False, None)`` at once,
        nothing run (the caller then sends it with :meth:`run`).

        A job already queued runs first: nothing overtakes what was sent before it."""
        if not self._jobs.empty() or not self._busy.acquire(blocking=False):
            return False, None
        try:
            return True, work()
        finally:
            self._busy.release()

    def post(self, work: Callable[[], object]) -> None:
        """Queue ``work`` from any thread, to run between the jobs; nobody waits for it,
        and a failure is logged."""
        self._jobs.put((None, None, work))

    def stop(self) -> None:
        """Finish the jobs already sent, then end the thread."""
        self._jobs.put(None)
        self._thread.join()

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            loop, future, work = job
            if loop is None or future is None:
                try:
                    with self._busy:
                        work()
                except Exception:
                    log.exception("store job posted from another thread failed")
                continue
            outcome: _Outcome
            try:
                with self._busy:
                    outcome = (future, work(), None)
            except BaseException as exc:  # handed to the caller, as run_in_executor does
                outcome = (future, None, exc)
            self._hand_over(loop, outcome)

    def _hand_over(self, loop: asyncio.AbstractEventLoop, outcome: _Outcome) -> None:
        """On the thread: queue the outcome for its loop, waking the loop unless a wake-up
        is already on its way (that one settles this outcome too)."""
        with self._finished_lock:
            waiting = self._finished.get(loop)
            if waiting is not None:
                waiting.append(outcome)
                return
            self._finished[loop] = [outcome]
        try:
            loop.call_soon_threadsafe(self._settle_finished, loop)
        except RuntimeError:  # the loop closed meanwhile, so nobody waits any more
            with self._finished_lock:
                self._finished.pop(loop, None)

    def _settle_finished(self, loop: asyncio.AbstractEventLoop) -> None:
        """On the loop: settle every outcome queued for it, oldest first."""
        with self._finished_lock:
            outcomes = self._finished.pop(loop, [])
        for future, result, failure in outcomes:
            _settle(future, result, failure)
