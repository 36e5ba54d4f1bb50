"""The bench's rules-engine rows (bench/seed.py): the world with history they start from
is what resolving that many passive overcomes in one scene builds, and the timed runs
resolve on it. No timings are checked here: ``python -m bench --only engine`` measures
them."""

from __future__ import annotations

import random

from bench.seed import resolve_passive, time_engine, world_with
from bridge.rules.dice import SecureDice
from bridge.rules.engine import replay


def dice() -> SecureDice:
    return SecureDice(random.Random(3).randbytes)


def test_a_world_with_history_holds_that_many_resolved_actions_in_one_scene() -> None:
    # R2-R5: each passive overcome is declared, rolled and resolved; none is left open,
    # and they all stay in the scene's world (the history a growing world carries).
    world = world_with(12, dice())
    assert world.action_count == 12 and len(world.actions) == 12
    assert {action.state for action in world.actions.values()} == {"resolved"}
    assert world.scene.number == 1


def test_the_timed_rows_resolve_on_the_world_they_start_from() -> None:
    # The same dice give the same world, and the runs on it replay to the state they reach.
    base = world_with(5, dice())
    rolled = dice()
    world_with(5, rolled)
    state, events = resolve_passive(base, rolled)
    assert state.action_count == 6 and state.actions["a6"].state == "resolved"
    assert replay(events, base) == state
    result = time_engine(4, scene_size=2, dice=dice(), resolved=5)
    assert result.resolutions == 4
