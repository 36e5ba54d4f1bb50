"""The bridge's garbage-collection policy (DESIGN "State and scale": many tables on one
process): survivors of every collection are frozen, so no collection walks
the long-lived heap again, and everything is thawed for one full collection only when that
is due (enough time passed and the frozen heap grew), never otherwise."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator

import pytest

from bridge.server import GcFreezer


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


@pytest.mark.parametrize("generation", [0, 1])
def test_survivors_of_a_collection_young_or_middle_are_frozen_once_it_ends(
    unfrozen: None, generation: int
) -> None:
    freezer = GcFreezer(lambda work: None, clock=lambda: 0.0)
    kept = long_lived(10)
    freezer("start", {"generation": generation})
    assert is_walked(kept[0])
    freezer("stop", {"generation": generation})
    assert not is_walked(kept[0])
    assert gc.get_freeze_count() > 0


def test_a_thaw_waits_for_its_interval_and_for_the_heap_to_grow(unfrozen: None) -> None:
    now = [0.0]
    scheduled: list[Callable[[], None]] = []
    freezer = GcFreezer(
        scheduled.append, thaw_seconds=100.0, thaw_growth=0.25, clock=lambda: now[0]
    )
    base = long_lived(1000)
    freezer("stop", {"generation": 1})
    freezer.baseline = gc.get_freeze_count()
    # Due for a look, but the heap did not grow: nothing is thawed.
    now[0] = 500.0
    freezer("stop", {"generation": 1})
    assert not freezer.thawing and not is_walked(base[0])
    # Grown by more than a quarter, but the last look was just now: still frozen.
    grown = long_lived(freezer.baseline)
    freezer("stop", {"generation": 1})
    assert not freezer.thawing and not is_walked(grown[0])
    assert not scheduled
    # Grown and due: a collection of everything is scheduled (none can start inside a
    # collector callback); until it has run, nothing more is frozen.
    now[0] = 600.0
    freezer("stop", {"generation": 1})
    assert freezer.thawing and freezer.checked_at == 600.0 and len(scheduled) == 1
    newer = long_lived(10)
    freezer("stop", {"generation": 1})
    assert freezer.thawing and is_walked(newer[0])
    # It thaws and walks everything; its survivors are frozen again, the new baseline.
    gc.callbacks.append(freezer)
    try:
        scheduled[0]()
    finally:
        gc.callbacks.remove(freezer)
    assert not freezer.thawing and not is_walked(grown[0]) and not is_walked(base[0])
    assert freezer.baseline >= len(base) + len(grown)
