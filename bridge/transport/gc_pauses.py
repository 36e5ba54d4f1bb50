"""The garbage collector of a long-running bridge: short pauses while it serves.

What it guarantees, once :func:`tune_gc` has run on the serving loop:

- The heap alive at start-up (imported modules, pydantic's schemas, the app) is frozen for
  good: no collection walks it again. Garbage in reference cycles made only of those
  objects is never reclaimed (they live as long as the process).
- No automatic collection walks the oldest generation: a young or middle collection
  walks only what was allocated since the last middle one (:data:`GC_THRESHOLDS`),
  whatever the size of the heap, and its survivors join the oldest generation.
- The oldest generation (what survived since start-up: the worlds' cached states, the
  connections) is collected by :class:`OldestCollector` alone: when it has grown by
  ``growth`` since its last collection, at least ``interval_seconds`` ago, at a quiet
  moment (the event loop's thread used less than ``quiet_share`` of a core over the last
  ``quiet_seconds``), or once it has been due for ``force_seconds`` without one, so that
  memory stays bounded under a load that never pauses. That collection walks the objects
  made since start-up, not the start-up heap.

Objects are freed by reference counting the moment they are dropped; only garbage in
cycles (a closed connection's objects, for one) waits for the oldest generation's
collection.

:class:`PauseTimer` times every collection, for ``/metrics``.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections import deque
from collections.abc import Callable
from typing import Any

# Young and middle thresholds: a collection's pause is what it walks, the objects allocated
# since the last ones. The oldest generation's own threshold is never reached: only
# OldestCollector collects it.
GC_THRESHOLDS = (2_000, 4, 1 << 30)
# A collection of the oldest generation is considered this often, once it has grown this
# much since the last one.
GC_OLDEST_SECONDS = 60.0
GC_OLDEST_GROWTH = 0.25
# Quiet: the loop's thread used less than this share of a core over this long.
GC_QUIET_SECONDS = 3.0
GC_QUIET_SHARE = 0.03
# A collection of the oldest generation due this long without a quiet moment runs anyway.
GC_FORCE_SECONDS = 1800.0
# How often the serving loop looks for a quiet moment.
GC_CHECK_SECONDS = 1.0
OLDEST = 2


def oldest_generation_size() -> int:
    """How many objects the oldest generation holds (a walk of its list, not of them)."""
    return len(gc.get_objects(generation=OLDEST))


class OldestCollector:
    """The loop's timer (:meth:`tick`) that collects the oldest generation when it is due
    (see the module's docstring for the policy)."""

    def __init__(
        self,
        interval_seconds: float = GC_OLDEST_SECONDS,
        growth: float = GC_OLDEST_GROWTH,
        quiet_seconds: float = GC_QUIET_SECONDS,
        quiet_share: float = GC_QUIET_SHARE,
        force_seconds: float = GC_FORCE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        cpu_clock: Callable[[], float] = time.thread_time,
    ) -> None:
        self.interval_seconds = interval_seconds
        self.growth = growth
        self.quiet_seconds = quiet_seconds
        self.quiet_share = quiet_share
        self.force_seconds = force_seconds
        self.clock = clock
        self.cpu_clock = cpu_clock
        self.collected_at = clock()
        self.checked_at = self.collected_at
        # The oldest generation's size after its last collection.
        self.baseline = oldest_generation_size()
        # When a collection was first found due (the generation grown), if it is.
        self.due_since: float | None = None
        # (time, the loop thread's CPU time) at each tick of the last ``quiet_seconds``
        # and the one just before them.
        self.samples: deque[tuple[float, float]] = deque()
        # Collections of the oldest generation run so far (read for tests and the bench).
        self.collections = 0

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
        """On the event loop: collect the oldest generation if it is due and the moment is
        quiet (or it has been due for ``force_seconds``); True when it ran. Sizing the
        generation walks its list: done at most every ``interval_seconds`` while busy, every
        tick only while quiet and not yet known due."""
        now = self.clock()
        quiet = self.quiet(now)
        if now - self.collected_at < self.interval_seconds:
            return False
        if self.due_since is None and (quiet or now - self.checked_at >= self.interval_seconds):
            self.checked_at = now
            if oldest_generation_size() > self.baseline * (1 + self.growth):
                self.due_since = now
        if self.due_since is None:
            return False
        if not quiet and now - self.due_since < self.force_seconds:
            return False
        self.collect_oldest()
        return True

    def collect_oldest(self) -> None:
        """Collect every generation but the frozen start-up heap: the one long pause."""
        gc.collect(OLDEST)
        self.collections += 1
        self.baseline = oldest_generation_size()
        self.collected_at = self.checked_at = self.clock()
        self.due_since = None

    def watch(self, loop: asyncio.AbstractEventLoop, every: float = GC_CHECK_SECONDS) -> None:
        """Call :meth:`tick` every ``every`` seconds on ``loop`` for as long as it runs."""

        def tick_and_again() -> None:
            self.tick()
            if not loop.is_closed():
                loop.call_later(every, tick_and_again)

        loop.call_later(every, tick_and_again)


def tune_gc() -> OldestCollector:
    """Set the collector up for a long-running server, once start-up is done (called on
    the running event loop, which then ticks the process's one collector); returns it.

    ``gc.freeze`` moves everything alive now into a permanent generation that no
    collection traverses again; the thresholds keep automatic collections young."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    global _collector
    if _collector is None:
        _collector = OldestCollector()
    _collector.watch(asyncio.get_running_loop())
    return _collector


# The process's collector, once tune_gc has made it.
_collector: OldestCollector | None = None


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
