"""The SQLite store's checkpointer: the write-ahead log copied into the file off the writer's
thread, at a lower priority, and started afresh once it grows long."""

from __future__ import annotations

import logging
import os
import sqlite3
import sys
import threading
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

# How often the checkpointer copies the write-ahead log into the database file, and the
# log's length (in frames) past which the writer's thread also checkpoints it between two
# commits, so that it starts afresh (see Checkpointer).
CHECKPOINT_SECONDS = 1.0
# How long a statement waits for another connection's lock (another process writing),
# on the store's threads; a commit run in place on the event loop never waits (_commit).
BUSY_TIMEOUT_MS = 5000
WAL_TRUNCATE_FRAMES = 8_000
# How much less than the process's other threads the checkpointer weighs for the CPU
# scheduler (Linux niceness; CFS gives nice +10 about a tenth of nice 0's share).
CHECKPOINT_NICENESS = 10


def _lower_this_threads_priority(by: int) -> None:
    """Make the calling thread ``by`` nicer than it is, so that on a busy core the event
    loop and the writer run before it; on Linux niceness is per thread, elsewhere (where
    it is per process) nothing changes, as when the system refuses."""
    if sys.platform != "linux":
        return
    thread = threading.get_native_id()
    try:
        os.setpriority(
            os.PRIO_PROCESS, thread, min(19, os.getpriority(os.PRIO_PROCESS, thread) + by)
        )
    except OSError as exc:
        log.info("thread %s keeps its priority: %s", threading.current_thread().name, exc)


class Checkpointer:
    """Checkpoints the write-ahead log on a thread and a connection of its own.

    SQLite's automatic checkpoint runs inside the commit that crosses its threshold (1,000 pages),
    with an fsync of the database file: on the store's one thread that stalled every commit of every
    world queued behind it. A passive checkpoint runs beside the writer in WAL mode, so commits
    never wait for one; the store's own connection has its automatic checkpoints turned off. What a
    checkpoint has not copied yet stays in the log, as durable as the database file; a failed
    checkpoint is logged and tried again at the next interval.

    Keeping the log short: SQLite starts the log afresh (and, with the store's
    ``journal_size_limit``, cuts the file back) only when a commit begins right after a checkpoint
    that copied all of it, and under steady writes a commit is always under way when this thread's
    pass ends. A TRUNCATE checkpoint here would force it, but blocks the writer for the whole copy
    and fsync. So once the log is past ``truncate_frames``, ``reset_log`` asks the writer's own
    thread for one passive checkpoint between two commits: it has only the last few commits left to
    copy, and the next commit starts the log afresh.

    The thread runs at a lower priority than the process's others: a pass under load takes
    tens of milliseconds of a core, and on the core the event loop runs on it would take
    half of the loop's time for that long, delaying every request in flight."""

    def __init__(
        self,
        path: Path,
        interval: float,
        truncate_frames: int,
        reset_log: Callable[[], None] = lambda: None,
    ) -> None:
        self.path = path
        self.interval = interval
        self.truncate_frames = truncate_frames
        self.reset_log = reset_log
        # Checkpoints attempted so far (only this thread writes it; read for tests).
        self.passes = 0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="sqlite-checkpoint", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End the thread once a checkpoint under way has finished."""
        self._stopping.set()
        self._thread.join()

    def _serve(self) -> None:
        _lower_this_threads_priority(CHECKPOINT_NICENESS)
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            while not self._stopping.wait(self.interval):
                self.checkpoint(db)
                self.passes += 1
        finally:
            db.close()

    def checkpoint(self, db: sqlite3.Connection) -> None:
        """Copy what the log holds into the file; once it is long, have it start afresh."""
        try:
            _busy, frames, _copied = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            if frames > self.truncate_frames:
                self.reset_log()
        except sqlite3.Error as exc:
            log.warning(
                "WAL checkpoint of %s failed (retried in %ss): %s", self.path, self.interval, exc
            )
