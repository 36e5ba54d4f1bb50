"""The garbage collector of a long-running bridge: short pauses while it serves.

What it guarantees, once :func:`tune_gc` has run on the serving loop:

- While the bridge is busy, no collection walks the long-lived heap: everything alive
  at start-up, and every survivor of every collection since, is frozen
  (:class:`GcFreezer`), so a collection walks only what was allocated since the last one
  and the young threshold alone sets the pause (9-17 ms of CPU in the 100-world run at
  200 actions/s, none over 50 ms of CPU at any rate up to and past saturation).
- The one collection that walks everything (thawing the frozen heap, so that garbage in
  reference cycles among frozen objects is freed) runs on the event loop only at a quiet
  moment: the frozen heap has grown by ``thaw_growth`` since the last such collection,
  at least ``thaw_seconds`` ago, and the event loop's thread has used less than
  ``quiet_share`` of a core over the last ``quiet_seconds`` (the 100-world run keeps the
  process 17-48% busy at 100-300 actions/s; a bridge only answering its connections'
  pings uses far less). That collection pauses as long as walking the heap takes
  (~150-400 ms at 100 worlds and 1,000 connections on a shared 2-core machine), while
  nobody is waiting.
- Memory stays bounded under a load that never pauses: once a full collection has been
  due for ``force_seconds`` without a quiet moment, it runs anyway (the one case where a
  busy bridge pauses that long, at most that often).

Objects frozen are still freed by reference counting the moment they are dropped; only
garbage in cycles waits for the full collection. Steady play makes none (a full
collection found none after 20 s of the 100-world run); closed connections do (about 45
objects, 16 KiB, each), reclaimed at the next quiet moment.

:class:`PauseTimer` times every collection, for ``/metrics``.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections import deque
from collections.abc import Callable
from typing import Any

# Young thresholds: the pause of a collection is what it walks, the objects allocated
# since the last one (the rest is frozen). Measured in the 100-world run, when survivors
# were frozen only after middle collections: (5,000, 4) paused up to 24-32 ms of CPU,
# (2,000, 4) 15-20 ms, (1,000, 4) 12-14 ms for 40-70% more collector CPU in all; freezing
# after young ones too, (2,000, 4) pauses 9-17 ms, with about 30% less collector time.
GC_THRESHOLDS = (2_000, 4, 10)
# A full collection is considered this often, once the frozen heap has grown this much.
GC_THAW_SECONDS = 60.0
GC_THAW_GROWTH = 0.25
# Quiet: the loop's thread used less than this share of a core over this long. Not the
# collector's own rate: at 100 actions/s it collects about once a second, as when idle.
GC_QUIET_SECONDS = 3.0
GC_QUIET_SHARE = 0.03
# A full collection due this long without a quiet moment runs anyway.
GC_FORCE_SECONDS = 1800.0
# How often the serving loop looks for a quiet moment.
GC_CHECK_SECONDS = 1.0


class GcFreezer:
    """A ``gc.callbacks`` entry that freezes each collection's survivors, and the loop's
    timer (:meth:`tick`) that runs the full collection when one is due (see the module's
    docstring for the policy)."""

    def __init__(
        self,
        thaw_seconds: float = GC_THAW_SECONDS,
        thaw_growth: float = GC_THAW_GROWTH,
        quiet_seconds: float = GC_QUIET_SECONDS,
        quiet_share: float = GC_QUIET_SHARE,
        force_seconds: float = GC_FORCE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        cpu_clock: Callable[[], float] = time.thread_time,
    ) -> None:
        self.thaw_seconds = thaw_seconds
        self.thaw_growth = thaw_growth
        self.quiet_seconds = quiet_seconds
        self.quiet_share = quiet_share
        self.force_seconds = force_seconds
        self.clock = clock
        self.cpu_clock = cpu_clock
        self.thawed_at = clock()
        self.checked_at = self.thawed_at
        self.baseline = gc.get_freeze_count()
        # When a full collection was first found due (the frozen heap grown), if it is.
        self.due_since: float | None = None
        self.thawing = False
        # (time, the loop thread's CPU time) at each tick of the last ``quiet_seconds``
        # and the one just before them.
        self.samples: deque[tuple[float, float]] = deque()
        # Full collections run so far (read for tests and the bench).
        self.thaws = 0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase != "stop":
            return
        if self.thawing:
            return  # the full collection freezes its own survivors once it has run
        gc.freeze()

    def quiet(self, now: float) -> bool:
        """On the loop: whether its thread used under ``quiet_share`` of a core over the
        last ``quiet_seconds`` (known once ticks have spanned that long)."""
        cpu = self.cpu_clock()
        self.samples.append((now, cpu))
        while len(self.samples) > 1 and self.samples[1][0] <= now - self.quiet_seconds:
            self.samples.popleft()
        since, cpu_then = self.samples[0]
        spanned = now - since
        return spanned >= self.quiet_seconds and cpu - cpu_then < self.quiet_share * spanned

    def tick(self) -> bool:
        """On the event loop: run the full collection if it is due and the moment is quiet
        (or it has been due for ``force_seconds``); True when it ran. Counting the frozen
        heap walks it (~1 ms per 300,000 objects): done at most every ``thaw_seconds``
        while busy, every tick only while quiet and not yet known due."""
        now = self.clock()
        quiet = self.quiet(now)
        if self.thawing or now - self.thawed_at < self.thaw_seconds:
            return False
        if self.due_since is None and (quiet or now - self.checked_at >= self.thaw_seconds):
            self.checked_at = now
            if gc.get_freeze_count() > self.baseline * (1 + self.thaw_growth):
                self.due_since = now
        if self.due_since is None:
            return False
        if not quiet and now - self.due_since < self.force_seconds:
            return False
        self.collect_everything()
        return True

    def collect_everything(self) -> None:
        """Thaw and collect the whole heap, then freeze its survivors: the one long pause."""
        self.thawing = True
        try:
            gc.unfreeze()
            gc.collect()
        finally:
            gc.freeze()
            self.thawing = False
        self.thaws += 1
        self.baseline = gc.get_freeze_count()
        self.thawed_at = self.checked_at = self.clock()
        self.due_since = None

    def watch(self, loop: asyncio.AbstractEventLoop, every: float = GC_CHECK_SECONDS) -> None:
        """Call :meth:`tick` every ``every`` seconds on ``loop`` for as long as it runs."""

        def tick_and_again() -> None:
            self.tick()
            if not loop.is_closed():
                loop.call_later(every, tick_and_again)

        loop.call_later(every, tick_and_again)


def tune_gc() -> GcFreezer:
    """Set the collector up for a long-running server, once start-up is done (called on
    the running event loop); returns the freezer, installed once per process.

    ``gc.freeze`` moves everything alive now (imported modules, pydantic schemas, the
    app) into a permanent generation that no collection traverses again; from then on
    :class:`GcFreezer` freezes each collection's survivors likewise."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    freezer = next((cb for cb in gc.callbacks if isinstance(cb, GcFreezer)), None)
    if freezer is None:
        freezer = GcFreezer()
        gc.callbacks.append(freezer)
    freezer.watch(asyncio.get_running_loop())
    return freezer


class PauseTimer:
    """A ``gc.callbacks`` entry that hands every collection's pause (seconds of wall
    time, and its generation) to ``observe``, from whichever thread collected.
    :meth:`install` and :meth:`remove` add it to the collector and take it off."""

    def __init__(self, observe: Callable[[int, float], None]) -> None:
        self.observe = observe
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.observe(int(info["generation"]), time.perf_counter() - self._started)

    def install(self) -> None:
        if self not in gc.callbacks:
            gc.callbacks.append(self)

    def remove(self) -> None:
        if self in gc.callbacks:
            gc.callbacks.remove(self)
