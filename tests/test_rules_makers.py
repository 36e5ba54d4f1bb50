"""How the rules build their records fast: record makers (one function filling a record
from its class's template, no generated code) build the same records as the classes' own
stdlib ``__init__``, refuse the same keywords in the same words, keep the fields' order
(the JSON of logs and snapshots follows it), and keep narrow records' instance dicts
sharing their keys."""

from __future__ import annotations

import inspect
import json
from dataclasses import MISSING, dataclass, fields
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.rules import actions, records, state
from bridge.rules.actions import Helper, Principal, StartAction
from bridge.rules.actions.declare import (
    _PASSIVE_SIDES,
    _declared_action,
    compose_actor_side,
    name_participants,
)
from bridge.rules.dice import QueuedDice
from bridge.rules.draft import Draft
from bridge.rules.engine import apply_all
from bridge.rules.errors import RuleViolation
from bridge.rules.events import ActionPut, CountersPut
from bridge.rules.ruleset import UNWRITTEN
from bridge.rules.state import (
    Action,
    ActionState,
    ActionType,
    Aspect,
    Character,
    Effect,
    Frozen,
    Participant,
    Proposal,
    Purpose,
    Roll,
    Side,
    Stunt,
    WorldState,
    blank_record,
    make_action,
    make_aspect,
    make_effect,
    record_maker,
)
from tests.rules_fixtures import sheet, world


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
        make_action(**ACTION_FIELDS, bogus=1)  # type: ignore[call-arg]
    # A missing required field and an unknown one together are still refused.
    swapped = {**{k: v for k, v in ACTION_FIELDS.items() if k != "state"}, "bogus": 1}
    with pytest.raises(TypeError):
        make_action(**swapped)
    with pytest.raises(TypeError):
        Action(**swapped)
    with pytest.raises(TypeError):
        Character(name="x")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Action("a1")  # type: ignore[misc, call-arg]
    # Narrow records alike: a maker refuses in the words of the class call (the
    # dataclass's own __init__), missing fields counted and named as Python names them.
    counters = record_maker(CountersPut)
    for keywords in (
        {"gm_fate_points": 1, "action_count": 2, "aspect_count": 3},
        {"gm_fate_points": 1},
        {"reason": "r"},
        {"reason": "r", "gm_fate_points": 1, "action_count": 2, "aspect_count": 3, "bogus": 1},
    ):
        with pytest.raises(TypeError) as by_class:
            CountersPut(**keywords)
        with pytest.raises(TypeError) as by_maker:
            counters(**keywords)
        assert str(by_maker.value) == str(by_class.value)
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'skill'"):
        Stunt(name="Quick")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        Roll(bogus=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Roll("Athletics")  # type: ignore[misc]


def test_a_record_built_by_its_class_is_the_stdlib_dataclass() -> None:
    # A class call runs the standard library's own frozen dataclass __init__: the same
    # fields, order and defaults as a plain stdlib twin of the same fields builds.
    @dataclass(frozen=True, kw_only=True)
    class Twin:
        skill: str | None = None
        skill_rating: int = 0

    roll = Roll(skill="Athletics", skill_rating=2)
    twin = Twin(skill="Athletics", skill_rating=2)
    assert list(roll.__dict__)[:2] == list(twin.__dict__)
    assert [roll.skill, roll.skill_rating] == [twin.skill, twin.skill_rating]
    assert roll.stunts == () and roll.dice is None
    params = Roll.__dataclass_params__  # type: ignore[attr-defined]
    assert params.init and params.frozen and Roll.__init__.__qualname__ == "Roll.__init__"


def test_no_code_is_generated_for_records() -> None:
    # The makers are one function, closed over each class's template: no exec, compile
    # or eval in the records' modules.
    assert make_action.__qualname__ == "Action.make"
    assert make_action.__code__ is make_effect.__code__
    for module in (records, state):
        source = inspect.getsource(module)
        assert "exec(" not in source and "compile(" not in source and "eval(" not in source


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


# --- the declaration's fast paths (bridge.rules.actions.declare) ---------------------

GM_PRINCIPAL = Principal("gm", is_gm=True)


def _declared(state: WorldState, command: StartAction, rolls: QueuedDice) -> Action:
    events = actions.start_action(state, command, GM_PRINCIPAL, rolls, UNWRITTEN)
    return apply_all(state, events).actions[f"a{state.action_count + 1}"]


@given(
    st.one_of(st.integers(-60, 60), st.integers(-(10**6), 10**6)),
    st.booleans(),
)
def test_a_passive_opposition_is_the_side_a_fresh_build_gives(rating: int, danger: bool) -> None:
    # R4.4: passive opposition starts passed, with its rating; shared records are equal to
    # (and dump as) the side built afresh, and the sharing stays bounded.
    command = StartAction(
        "overcome", "b", "Athletics", passive_rating=rating, dangerous_opposition=danger
    )
    action = _declared(world(), command, QueuedDice(rolls=[(0, 0, 0, 0)]))
    fresh = Side(roll=Roll(passive_rating=rating), dangerous=danger, passed=True)
    same_record(action.opposition, fresh)
    assert len(_PASSIVE_SIDES) <= 2 * (len(range(-20, 41)) + 1)


@pytest.mark.parametrize(
    ("helpers", "stunts"),
    [
        ((), ()),
        ((Helper("m"),), ()),
        ((Helper("m", "Notice"),), (Stunt(name="Quick", skill="Athletics", bonus=2),)),
    ],
)
def test_a_declaration_rolls_the_side_the_general_path_composes(
    helpers: tuple[Helper, ...], stunts: tuple[Stunt, ...]
) -> None:
    # R10.1, R1.2: built with its dice in one step, the acting side is the composed side
    # (leader, helpers, skill, stunts, teamwork) with the dice set afterwards.
    state = world(
        sheet("b", "Brousseau", skills={"Athletics": 2, "Notice": 1}, stunts=list(stunts)),
        sheet("m", "Margot", skills={"Athletics": 4, "Notice": 1}),
    )
    command = StartAction("overcome", "b", "Athletics", passive_rating=1, helpers=helpers)
    action = _declared(state, command, QueuedDice(rolls=[(1, -1, 0, 1)]))
    draft = Draft(state, "look")
    participants = name_participants(
        draft, state.characters["b"], "Athletics", helpers, GM_PRINCIPAL
    )
    composed = compose_actor_side(draft, participants, "overcome")
    rolled = composed.model_copy(
        update={"roll": composed.roll.model_copy(update={"dice": (1, -1, 0, 1)})}
    )
    assert action.state == "invoking"
    same_record(action.actor, rolled)


def test_a_refused_declaration_rolls_no_dice() -> None:
    # DESIGN trust, R1.1: a refused command changes nothing, the dice included: the roll
    # queued for it goes to the next declaration that stands.
    state = world()
    rolls = QueuedDice(rolls=[(1, 1, 1, 1)])
    refused = [
        StartAction("overcome", "nobody", "Athletics", passive_rating=1),
        StartAction("overcome", "b", "Athletics"),
        StartAction("create_advantage", "b", "Athletics", passive_rating=1),
        StartAction("take_advantage", "b", "Athletics", passive_rating=1),
        StartAction("overcome", "b", "Athletics", passive_rating=1, target_id="nobody"),
        StartAction("overcome", "b", "Athletics", passive_rating=1, helpers=(Helper("b"),)),
        StartAction("attack", "b", "Athletics", passive_rating=1),
    ]
    for command in refused:
        with pytest.raises(RuleViolation):
            actions.start_action(state, command, GM_PRINCIPAL, rolls, UNWRITTEN)
        assert rolls.pending == 1
    standing = StartAction("overcome", "b", "Athletics", passive_rating=1)
    assert _declared(state, standing, rolls).actor.roll.dice == (1, 1, 1, 1)
    assert rolls.pending == 0


_optional_text = st.one_of(st.none(), st.text(max_size=5))


@given(
    st.sampled_from(["overcome", "create_advantage", "take_advantage", "discover", "attack"]),
    st.sampled_from(["confirming", "declared", "awaiting_opposition", "invoking"]),
    st.sampled_from(["action", "contest_roll", "challenge_task"]),
    st.lists(_optional_text, min_size=8, max_size=8),
    st.one_of(st.none(), st.builds(Proposal, passive_rating=st.integers(-3, 5))),
)
def test_a_declared_action_filled_in_place_is_the_record_the_class_builds(
    action_type: ActionType,
    state: ActionState,
    purpose: Purpose,
    texts: list[str | None],
    proposal: Proposal | None,
) -> None:
    # DESIGN event log: the declared action (R2, R9, R10) filled in place dumps to the
    # same JSON, in the same field order, as the class's own constructor builds it.
    aspect_name, situation, description, target_aspect_id, contest_id, side_id, *rest = texts
    command = StartAction(
        action_type,
        "b",
        "Athletics",
        passive_rating=1,
        target_aspect_id=target_aspect_id,
        aspect_name=aspect_name,
        situation=situation,
        description=description,
        purpose=purpose,
        contest_id=contest_id,
        side_id=side_id,
        challenge_id=rest[0],
        task_id=rest[1],
    )
    participants = (Participant(character_id="b", skill="Athletics"),)
    computed: dict[str, Any] = {
        "id": "a7",
        "requested_by": "gm",
        "actor": ACTION_FIELDS["actor"],
        "opposition": ACTION_FIELDS["opposition"],
        "opposition_kind": "passive",
        "opposition_action": None,
        "state": state,
        "target_id": rest[0],
        "recovery_slot_id": rest[1],
        "attack_kind": "physical" if action_type == "attack" else None,
        "proposal": proposal,
        "participants": participants,
        "consents": (),
        "stress_rule": "one_box" if action_type == "attack" else "",
    }
    built = Action(
        **computed,
        type=action_type,
        target_aspect_id=target_aspect_id,
        aspect_name=aspect_name,
        situation=situation,
        description=description,
        purpose=purpose,
        contest_id=contest_id,
        side_id=side_id,
        challenge_id=rest[0],
        task_id=rest[1],
    )
    same_record(_declared_action(command, **computed), built)


def test_a_blank_record_holds_every_field_at_its_default_in_order() -> None:
    # The fields' order is the JSON's order (DESIGN event log); required fields are marked.
    record, values = blank_record(Action)
    assert type(record) is Action
    assert values is record.__dict__
    assert list(values) == [spec.name for spec in fields(Action)]
    assert values["id"] is MISSING
    assert values["purpose"] == "action"
