"""The state's maps (bridge.rules.shared_map): a SharedMap reads, iterates, compares and
serialises as the dict that went through the same changes, and a new version never
changes the one it came from (state is replaced, never mutated)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bridge.rules.shared_map import SharedMap
from bridge.rules.state import Aspect, WorldState

KEYS = st.sampled_from([f"k{i}" for i in range(40)])
# A change: set a key to a value, or remove it (None).
CHANGES = st.lists(st.tuples(KEYS, st.none() | st.integers(0, 9)), max_size=300)


def same(shared: SharedMap[int], plain: dict[str, int]) -> None:
    assert list(shared.items()) == list(plain.items())
    assert list(shared) == list(plain) and list(shared.values()) == list(plain.values())
    assert len(shared) == len(plain)
    assert shared == plain and plain == shared
    for key in [f"k{i}" for i in range(40)]:
        assert (key in shared) == (key in plain)
        assert shared.get(key) == plain.get(key)
        assert shared.get(key, -1) == plain.get(key, -1)


@given(st.dictionaries(KEYS, st.integers(0, 9)), CHANGES)
def test_a_shared_map_is_the_dict_of_the_same_changes(
    start: dict[str, int], changes: list[tuple[str, int | None]]
) -> None:
    shared = SharedMap(start)
    plain = dict(start)
    versions: list[tuple[SharedMap[int], dict[str, int]]] = []
    for key, value in changes:
        if value is None:
            shared = shared.remove(key)
            plain.pop(key, None)
        else:
            shared = shared.set(key, value)
            plain[key] = value
        versions.append((shared, dict(plain)))
        same(shared, plain)
    # Every earlier version still holds what it held: no change reached back into it.
    for version, held in versions:
        same(version, held)


def test_a_world_state_map_round_trips_as_a_json_object() -> None:
    aspects = SharedMap[Aspect]().set("x", Aspect(id="x", name="On Fire", kind="situation"))
    state = WorldState(aspects=aspects)
    dumped = state.model_dump(mode="json")
    assert dumped["aspects"] == {"x": {**dumped["aspects"]["x"], "name": "On Fire"}}
    loaded = WorldState.model_validate(dumped)
    assert isinstance(loaded.aspects, SharedMap)
    assert loaded == state and loaded.model_dump(mode="json") == dumped
    # A map built by hand as a dict reads and dumps the same.
    by_hand = WorldState(aspects={"x": aspects["x"]})
    assert by_hand == state and by_hand.model_dump(mode="json") == dumped
