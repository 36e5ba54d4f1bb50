"""The bridge's garbage-collection policy (DESIGN "State and scale": many tables on one
process; issue 35: no pause over 50 ms while serving): survivors of every collection are
frozen, so no collection walks the long-lived heap again while the bridge is busy; the
full collection that thaws everything runs only when it is due (enough time passed, the
frozen heap grew) and the moment is quiet, or once it has waited ``force_seconds``."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from bridge.transport.gc_pauses import GcFreezer, PauseTimer


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """Start and end with nothing frozen, whatever the freezer under test did."""
    gc.unfreeze()
    yield
    gc.unfreeze()


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

    def pass_time(self, freezer: GcFreezer, seconds: float, busy: float) -> bool:
        """Tick the freezer once a second for ``seconds``, the loop's thread using
        ``busy`` of a core; whether any tick ran the full collection."""
        ran = False
        for _ in range(int(seconds)):
            self.now += 1.0
            self.cpu += busy
            ran = freezer.tick() or ran
        return ran


def freezer_on(clock: Clock, **policy: float) -> GcFreezer:
    return GcFreezer(clock=clock, cpu_clock=clock.thread_time, **policy)


@pytest.mark.parametrize("generation", [0, 1])
def test_survivors_of_a_collection_young_or_middle_are_frozen_once_it_ends(
    unfrozen: None, generation: int
) -> None:
    freezer = freezer_on(Clock())
    kept = long_lived(10)
    freezer("start", {"generation": generation})
    assert is_walked(kept[0])
    freezer("stop", {"generation": generation})
    assert not is_walked(kept[0])
    assert gc.get_freeze_count() > 0


def test_a_full_collection_waits_for_its_interval_the_heap_to_grow_and_a_quiet_moment(
    unfrozen: None,
) -> None:
    clock = Clock()
    freezer = freezer_on(
        clock,
        thaw_seconds=100.0,
        thaw_growth=0.25,
        quiet_seconds=3.0,
        quiet_share=0.03,
        force_seconds=1000.0,
    )
    base = long_lived(1000)
    freezer("stop", {"generation": 1})
    freezer.baseline = gc.get_freeze_count()
    # Quiet and past the interval, but the heap did not grow: nothing is thawed.
    assert not clock.pass_time(freezer, 500, busy=0.0) and not is_walked(base[0])
    # Grown by more than a quarter while serving (a tenth of a core): found due at the
    # next look, still frozen.
    grown = long_lived(freezer.baseline)
    freezer("stop", {"generation": 0})
    assert not clock.pass_time(freezer, 120, busy=0.1)
    assert freezer.due_since is not None and freezer.thaws == 0 and not is_walked(grown[0])
    # Busy for a while more: still waiting; two quiet seconds are not a quiet moment.
    assert not clock.pass_time(freezer, 300, busy=0.1)
    assert not clock.pass_time(freezer, 2, busy=0.0)
    # The first quiet moment (three seconds under 3% of a core): it thaws and walks
    # everything; its survivors are frozen again, the new baseline.
    assert clock.pass_time(freezer, 1, busy=0.0)
    assert freezer.thaws == 1 and freezer.due_since is None
    assert not is_walked(grown[0]) and not is_walked(base[0])
    assert freezer.baseline >= len(base) + len(grown)
    # And not again before its interval, however quiet and grown.
    long_lived(freezer.baseline)
    freezer("stop", {"generation": 0})
    assert not clock.pass_time(freezer, 90, busy=0.0)


def test_a_full_collection_due_too_long_runs_even_while_busy(unfrozen: None) -> None:
    clock = Clock()
    freezer = freezer_on(clock, thaw_seconds=10.0, force_seconds=100.0)
    freezer.baseline = gc.get_freeze_count()
    grown = long_lived(max(1000, freezer.baseline))
    freezer("stop", {"generation": 0})
    assert not clock.pass_time(freezer, 10, busy=0.5)
    due = freezer.due_since
    assert due is not None
    assert not clock.pass_time(freezer, 99, busy=0.5)
    assert clock.pass_time(freezer, 1, busy=0.5)
    assert freezer.thaws == 1 and clock.now - due == 100.0 and not is_walked(grown[0])


class Node:
    """An object that can sit in a reference cycle."""

    def __init__(self) -> None:
        self.other: Node | None = None


def test_the_full_collection_frees_cycles_that_were_frozen(unfrozen: None) -> None:
    clock = Clock()
    freezer = freezer_on(clock, thaw_seconds=1.0)
    freezer.baseline = 1
    first, second = Node(), Node()
    first.other, second.other = second, first
    gone = weakref.ref(first)
    freezer("stop", {"generation": 0})  # the cycle survives a collection: frozen
    del first, second
    gc.collect()
    assert gone() is not None  # frozen garbage waits
    assert clock.pass_time(freezer, 5, busy=0.0)
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
