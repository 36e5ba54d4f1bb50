"""The bridge's garbage-collection policy (DESIGN "State and scale": many tables on one
process; issue 35: no pause over 50 ms while serving): the start-up heap is frozen for
good, no automatic collection walks the oldest generation, and the collector collects that
generation, without the start-up heap, only when it is due (enough time passed, the
generation grew) and the moment is quiet, or once it has waited ``force_seconds``."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from bridge.transport.gc_pauses import (
    GC_THRESHOLDS,
    OldestCollector,
    PauseTimer,
    oldest_generation_size,
)


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """Start and end with nothing frozen and the runner's thresholds, whatever the collector
    under test did."""
    thresholds = gc.get_threshold()
    gc.unfreeze()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def aged(objects: object) -> None:
    """Move ``objects`` (alive) into the oldest generation, as surviving young and middle
    collections while serving does."""
    del objects
    gc.collect(1)


def long_lived(count: int) -> list[dict[str, list[int]]]:
    """Container objects the collector tracks (what a cached world state is made of)."""
    return [{"n": [n]} for n in range(count)]


def is_walked(obj: object) -> bool:
    """Whether a collection would still traverse ``obj`` (frozen objects are not)."""
    return any(candidate is obj for candidate in gc.get_objects())


class Clock:
    """Wall time and the loop thread's CPU time, moved by the test."""

    def __init__(self) -> None:
        self.now = 0.0
        self.cpu = 0.0

    def __call__(self) -> float:
        return self.now

    def thread_time(self) -> float:
        return self.cpu

    def pass_time(self, collector: OldestCollector, seconds: float, busy: float) -> bool:
        """Tick the collector once a second for ``seconds``, the loop's thread using
        ``busy`` of a core; whether any tick ran the full collection."""
        ran = False
        for _ in range(int(seconds)):
            self.now += 1.0
            self.cpu += busy
            ran = collector.tick() or ran
        return ran


def collector_on(clock: Clock, **policy: float) -> OldestCollector:
    return OldestCollector(clock=clock, cpu_clock=clock.thread_time, **policy)


def test_no_automatic_collection_walks_the_oldest_generation(unfrozen: None) -> None:
    gc.set_threshold(*GC_THRESHOLDS)
    generations: list[int] = []
    timer = PauseTimer(lambda generation, _seconds: generations.append(generation))
    timer.install()
    try:
        kept = [long_lived(1_000) for _ in range(200)]  # 400,000 tracked objects
    finally:
        timer.remove()
    assert generations and set(generations) <= {0, 1}
    assert oldest_generation_size() >= 300_000 and len(kept) == 200


def test_the_start_up_heap_stays_frozen_through_the_oldest_generations_collection(
    unfrozen: None,
) -> None:
    start_up = long_lived(100)
    gc.freeze()
    clock = Clock()
    collector = collector_on(clock, interval_seconds=1.0, growth=0.0)
    later = long_lived(1_000)
    aged(later)
    collector.baseline = 0
    assert clock.pass_time(collector, 5, busy=0.0)
    assert collector.collections == 1
    assert not is_walked(start_up[0]) and is_walked(later[0])


def test_a_full_collection_waits_for_its_interval_the_heap_to_grow_and_a_quiet_moment(
    unfrozen: None,
) -> None:
    clock = Clock()
    collector = collector_on(
        clock,
        interval_seconds=100.0,
        growth=0.25,
        quiet_seconds=3.0,
        quiet_share=0.03,
        force_seconds=1000.0,
    )
    base = long_lived(1000)
    aged(base)
    collector.baseline = oldest_generation_size()
    # Quiet and past the interval, but the generation did not grow: nothing is collected.
    assert not clock.pass_time(collector, 500, busy=0.0) and collector.collections == 0
    # Grown by more than a quarter while serving (a tenth of a core): found due at the
    # next look, not yet collected.
    grown = long_lived(collector.baseline)
    aged(grown)
    assert not clock.pass_time(collector, 120, busy=0.1)
    assert collector.due_since is not None and collector.collections == 0
    # Busy for a while more: still waiting; two quiet seconds are not a quiet moment.
    assert not clock.pass_time(collector, 300, busy=0.1)
    assert not clock.pass_time(collector, 2, busy=0.0)
    # The first quiet moment (three seconds under 3% of a core): it collects, and its
    # survivors are the new baseline.
    assert clock.pass_time(collector, 1, busy=0.0)
    assert collector.collections == 1 and collector.due_since is None
    assert collector.baseline >= len(base) + len(grown)
    # And not again before its interval, however quiet and grown.
    aged(long_lived(collector.baseline))
    assert not clock.pass_time(collector, 90, busy=0.0)


def test_a_full_collection_due_too_long_runs_even_while_busy(unfrozen: None) -> None:
    clock = Clock()
    collector = collector_on(clock, interval_seconds=10.0, force_seconds=100.0)
    collector.baseline = 1000
    aged(long_lived(1000))
    assert not clock.pass_time(collector, 10, busy=0.5)
    due = collector.due_since
    assert due is not None
    assert not clock.pass_time(collector, 99, busy=0.5)
    assert clock.pass_time(collector, 1, busy=0.5)
    assert collector.collections == 1 and clock.now - due == 100.0


class Node:
    """An object that can sit in a reference cycle."""

    def __init__(self) -> None:
        self.other: Node | None = None


def test_the_oldest_generations_collection_frees_its_cycles(unfrozen: None) -> None:
    gc.set_threshold(*GC_THRESHOLDS)
    clock = Clock()
    collector = collector_on(clock, interval_seconds=1.0)
    collector.baseline = 1
    first, second = Node(), Node()
    first.other, second.other = second, first
    gone = weakref.ref(first)
    gc.collect(1)  # the cycle survives the young collections: in the oldest generation
    del first, second
    gc.collect(1)
    assert gone() is not None  # no young collection walks it: the garbage waits
    assert clock.pass_time(collector, 5, busy=0.0)
    assert gone() is None


def test_the_pause_timer_sees_every_collection_with_its_generation() -> None:
    seen: list[tuple[int, float]] = []
    timer = PauseTimer(lambda generation, seconds: seen.append((generation, seconds)))
    timer.install()
    try:
        gc.collect(1)
        gc.collect()
    finally:
        timer.remove()
    assert timer not in gc.callbacks
    assert [generation for generation, _ in seen][-2:] == [1, 2]
    assert all(seconds >= 0 for _, seconds in seen)
