"""Declaring an action (bridge.rules.actions.declare): a passive opposition is the side a
fresh build gives, the acting side is rolled as the general path composes it, and a
refused declaration rolls no dice."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.rules import actions
from bridge.rules.actions import Helper, Principal, StartAction
from bridge.rules.actions.declare import _PASSIVE_SIDES, compose_actor_side, name_participants
from bridge.rules.dice import QueuedDice
from bridge.rules.draft import Draft
from bridge.rules.engine import apply_all
from bridge.rules.errors import RuleViolation
from bridge.rules.ruleset import UNWRITTEN
from bridge.rules.state import Action, Frozen, Roll, Side, Stunt, WorldState
from tests.rules_fixtures import sheet, world


def same_record(made: Frozen, built: Frozen) -> None:
    assert type(made) is type(built)
    assert made == built
    assert list(made.__dict__) == list(built.__dict__)
    assert json.dumps(made.model_dump(mode="json")) == json.dumps(built.model_dump(mode="json"))


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
