"""The rules' records at the edges: what an older bridge wrote loads, and dumps back to
the same JSON, key for key and in the same order (the hash chain hashes event payloads;
a snapshot must equal the replay of its log), and the records stay immutable."""

from __future__ import annotations

import dataclasses
import inspect
import json
from pathlib import Path
from typing import Any, get_args

import orjson
import pytest
from pydantic import ValidationError

from bridge.rules import records, shared_map, state
from bridge.rules.events import EVENT_ADAPTER, ActionPut, CountersPut, Event
from bridge.rules.state import Action, Character, Roll, Side, Stunt, WorldState

# One event of each of the seventeen types (their records: characters with stress tracks and
# consequences, aspects, actions, contests, challenges, conflicts, compels) and a world with
# characters, aspects, actions, a challenge and carried boosts, as the rules wrote them when
# their records were pydantic models (collected from the rules and durability tests' worlds);
# "action.cancelled" came later: its action is the first event's (an older bridge's cancel,
# an "action.put"), as the rules now write it; "ruleset.put" (R13.9) as the rules write it.
WRITTEN = json.loads((Path(__file__).parent / "fixtures" / "rules_records.json").read_text())


def ordered(value: Any) -> str:
    """The JSON text in the dict's own key order (not sorted: order is checked too)."""
    return json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize("payload", WRITTEN["events"], ids=lambda p: str(p["type"]))
def test_event_json_written_before_loads_and_dumps_identically(payload: dict[str, Any]) -> None:
    # DESIGN event log: payloads are hashed, so a reloaded event must dump to the same bytes.
    event = EVENT_ADAPTER.validate_python(payload)
    assert event.type == payload["type"]
    assert ordered(event.model_dump(mode="json")) == ordered(payload)


@pytest.mark.parametrize("payload", WRITTEN["events"], ids=lambda p: str(p["type"]))
def test_a_records_sorted_json_is_its_dump_sorted(payload: dict[str, Any]) -> None:
    # The hash chain takes an event's canonical form from sorted_json, not from a dump.
    event = EVENT_ADAPTER.validate_python(payload)
    dumped = orjson.dumps(event.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS)
    assert event.sorted_json() == dumped
    state = WorldState.model_validate(WRITTEN["state"])
    assert state.sorted_json() == orjson.dumps(WRITTEN["state"], option=orjson.OPT_SORT_KEYS)


def test_every_event_type_is_in_the_fixture() -> None:
    # DESIGN event log: the fixture covers the whole union, so no type escapes the check.
    union = get_args(get_args(Event)[0])
    assert {p["type"] for p in WRITTEN["events"]} == {t.type for t in union}
    assert len(union) == 17


def test_state_json_written_before_loads_and_dumps_identically() -> None:
    # DESIGN snapshots: a saved world loads and saves back unchanged.
    state = WorldState.model_validate(WRITTEN["state"])
    assert state.characters and state.aspects and state.actions and state.challenges
    assert ordered(state.model_dump(mode="json")) == ordered(WRITTEN["state"])
    assert WorldState.model_validate(state.model_dump(mode="json")) == state


def test_records_refuse_unknown_and_ill_typed_fields() -> None:
    # DESIGN trust: a tampered log or snapshot fails validation instead of loading.
    with pytest.raises(ValidationError):
        WorldState.model_validate({**WRITTEN["state"], "extra": 1})
    bad_character = {**next(iter(WRITTEN["state"]["characters"].values())), "fate_points": "x"}
    with pytest.raises(ValidationError):
        WorldState.model_validate({"characters": {"x": bad_character}})
    with pytest.raises(ValidationError):
        EVENT_ADAPTER.validate_python({"type": "world.counters", "reason": "r"})


def test_records_are_immutable_and_copies_leave_the_original() -> None:
    # State is replaced, never mutated (bridge.rules.state).
    roll = Roll(skill="Athletics", skill_rating=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        roll.skill_rating = 4  # type: ignore[misc]
    rolled = roll.model_copy(update={"dice": (1, 0, -1, 1)})
    assert roll.dice is None and rolled.dice == (1, 0, -1, 1)
    assert rolled.skill == "Athletics" and rolled != roll
    counters = CountersPut(reason="r", gm_fate_points=1, action_count=2, aspect_count=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        counters.reason = "s"  # type: ignore[misc]


def test_records_take_keywords_only_and_keep_their_defaults() -> None:
    # The records are built as the pydantic models were: by keyword, defaults filled in.
    action = Action(
        id="a1",
        type="overcome",
        requested_by="gm",
        actor=Side(),
        opposition=Side(),
        opposition_kind="passive",
        state="declared",
    )
    assert action.invokes == () and action.purpose == "action" and action.actor.roll == Roll()
    put = ActionPut(reason="r", action=action)
    assert put.type == "action.put"
    with pytest.raises(TypeError):
        Roll("Athletics")  # type: ignore[misc]
    with pytest.raises(TypeError):
        Roll(bogus=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ActionPut(action=action)  # type: ignore[call-arg]
    # Each record gets its own default maps (a factory), never one shared dict.
    assert WorldState().characters is not WorldState().characters


def test_a_record_is_built_as_the_stdlib_dataclass_builds_it() -> None:
    # A record's __init__ gives what the stdlib's own frozen dataclass __init__ gives for
    # the same fields: the same values in the same order (the JSON's order), and the same
    # refusals in the same words.
    class Twin:
        name: str
        skill: str
        bonus: int = 2
        actions: tuple[str, ...] = ()

    Twin.__qualname__ = "Stunt"
    twin: Any = dataclasses.dataclass(frozen=True, kw_only=True)(Twin)
    built = Stunt(name="Quick", skill="Athletics", actions=("overcome",))
    assert built.__dict__ == twin(name="Quick", skill="Athletics", actions=("overcome",)).__dict__
    assert list(built.__dict__) == ["name", "skill", "bonus", "actions"]
    for keywords in ({"name": "Quick"}, {}, {"name": "Q", "skill": "S", "bogus": 1}, {"bogus": 1}):
        with pytest.raises(TypeError) as by_stdlib:
            twin(**keywords)
        with pytest.raises(TypeError) as by_record:
            Stunt(**keywords)
        assert str(by_record.value) == str(by_stdlib.value)
    with pytest.raises(TypeError):
        Stunt("Quick", "Athletics")  # type: ignore[misc]
    # Each record gets its own default maps (a factory), never one shared dict.
    assert Character(id="c", name="C").skills is not Character(id="d", name="D").skills


def test_no_code_is_generated_for_records() -> None:
    for module in (records, shared_map, state):
        source = inspect.getsource(module)
        assert "exec(" not in source and "compile(" not in source and "eval(" not in source
