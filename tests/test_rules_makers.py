"""How the rules build their records fast: record makers and the wide records' merged
``__init__`` build the same records as the classes' own constructors, refuse the same
keywords, and keep the fields' order (the JSON of logs and snapshots follows it)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bridge.rules.events import ActionPut, CountersPut
from bridge.rules.state import (
    Action,
    Aspect,
    Character,
    Effect,
    Frozen,
    Roll,
    Side,
    WorldState,
    make_action,
    make_aspect,
    make_effect,
    record_maker,
)


def same_record(made: Frozen, built: Frozen) -> None:
    assert type(made) is type(built)
    assert made == built
    assert list(made.__dict__) == list(built.__dict__)
    assert json.dumps(made.model_dump(mode="json")) == json.dumps(built.model_dump(mode="json"))


ACTION_FIELDS: dict[str, Any] = {
    "id": "a1",
    "type": "overcome",
    "requested_by": "gm",
    "actor": Side(leader="b", roll=Roll(skill="Athletics", skill_rating=3, dice=(1, 0, -1, 1))),
    "opposition": Side(roll=Roll(passive_rating=2), passed=True),
    "opposition_kind": "passive",
    "state": "invoking",
    "situation": "room",
}


def test_makers_build_what_the_classes_build() -> None:
    # DESIGN event log: a record built by a maker dumps to the same JSON, in the same order.
    same_record(make_action(**ACTION_FIELDS), Action(**ACTION_FIELDS))
    same_record(make_effect(kind="boost", text="Edge"), Effect(kind="boost", text="Edge"))
    counters = record_maker(CountersPut)
    same_record(
        counters(reason="r", gm_fate_points=1, action_count=2, aspect_count=3),
        CountersPut(reason="r", gm_fate_points=1, action_count=2, aspect_count=3),
    )
    put = record_maker(ActionPut)(reason="r", action=make_action(**ACTION_FIELDS))
    assert put.type == "action.put"


def test_makers_and_wide_records_refuse_what_the_classes_refuse() -> None:
    # The records are built by keyword only, with every required field, nothing unknown.
    with pytest.raises(TypeError):
        make_effect(bogus=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        make_effect("boost")  # type: ignore[misc]
    with pytest.raises(TypeError, match="missing"):
        make_action(**{k: v for k, v in ACTION_FIELDS.items() if k != "state"})
    with pytest.raises(TypeError, match="unexpected"):
        make_action(**ACTION_FIELDS, bogus=1)
    # A missing required field and an unknown one together are still refused.
    swapped = {**{k: v for k, v in ACTION_FIELDS.items() if k != "state"}, "bogus": 1}
    with pytest.raises(TypeError):
        make_action(**swapped)
    with pytest.raises(TypeError):
        Action(**swapped)
    with pytest.raises(TypeError):
        Character(name="x")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Action("a1")  # type: ignore[misc]


def test_makers_and_wide_records_give_each_record_its_own_default_maps() -> None:
    # State is replaced, never mutated: a default map is never shared between records.
    assert make_aspect(id="x", name="X", kind="boost").free_invokes == {}
    first, second = (
        make_aspect(id="x", name="X", kind="boost"),
        Aspect(id="y", name="Y", kind="boost"),
    )
    assert first.free_invokes is not second.free_invokes
    assert Character(id="c", name="C").skills is not Character(id="d", name="D").skills
    assert WorldState().actions is not WorldState().actions
    assert list(WorldState().__dict__)[:3] == ["ruleset", "characters", "aspects"]
