"""Consent to harm (DESIGN Reach and trust: "the GM owns ... whom a player's action may
harm"): R2.1, R9.1 and R10.1 extended. An action a player starts that would touch a
character the player does not own (its target, its active opposer, an aspect on it)
waits in "confirming" until that character's owner, or the GM, accepts; a decline calls
it off; trusted ratings do not skip it; the GM's own actions ask nobody."""

from __future__ import annotations

from functools import partial
from typing import Any

import orjson
from hypothesis import event, given, settings
from hypothesis import strategies as st

from bridge.rules import actions, contest
from bridge.rules.actions import Helper, Principal, StartAction
from bridge.rules.dice import Roll
from bridge.rules.engine import replay
from bridge.rules.errors import RuleViolation
from bridge.rules.events import ActionPut
from bridge.rules.ruleset import FATE_CONDENSED, UNWRITTEN, Ruleset
from bridge.rules.settings import change_settings
from bridge.rules.state import Action, Aspect, Character, WorldState
from bridge.service.session import worded
from tests.fuzzing import examples
from tests.rules_fixtures import (
    ANNA,
    BROUSSEAU,
    GHOUL,
    GM_USER,
    PAUL,
    ZERO,
    Table,
    dice,
    direct_contest,
    refused,
    sheet,
    with_aspect,
    world,
)

WORST: Roll = (-1, -1, -1, -1)
BEST: Roll = (1, 1, 1, 1)
# A third player at the table, who owns none of the characters an action touches.
CARL = Principal("carl", is_gm=False)
# Paul's second character: the opposer he names so that no opposer's owner is asked.
PIERRE = sheet("p2", "Pierre", owners=["paul"], skills={"Athletics": 1, "Notice": 0})
# Anna's character, with an aspect of her own to take advantage of.
MARGOT = sheet(
    "m",
    "Margot",
    owners=["anna"],
    skills={"Athletics": 2, "Notice": 1},
    aspects=[("hc", "Nosy Neighbour")],
)
FOG = Aspect(id="sit-fog", name="Fog", kind="situation")


def table_of(ruleset: Ruleset = UNWRITTEN, *, trusted: bool = False) -> Table:
    state = world(BROUSSEAU, PIERRE, MARGOT, GHOUL, ruleset=ruleset)
    table = Table(with_aspect(state, FOG))
    if trusted:
        table.run(lambda s: change_settings(s, GM_USER, trust_player_ratings=True))
    return table


def start(table: Table, who: Principal, *rolls: Roll, **fields: Any) -> str:
    command = StartAction(**{"type": "overcome", "actor_id": "b", "skill": "Athletics", **fields})
    table.run(lambda s: actions.start_action(s, command, who, dice(*rolls), table.ruleset))
    return table.action().id


def asked(action: Action) -> list[tuple[str, tuple[str, ...], str]]:
    return [(c.character_id, c.parts, c.status) for c in action.consents]


def untouched(before: Character, after: Character) -> bool:
    """Nothing the rules could harm on a character changed."""
    return (before.consequences, before.stress, before.overwhelmed) == (
        after.consequences,
        after.stress,
        after.overwhelmed,
    )


def pass_both(table: Table, action_id: str) -> None:
    action = table.action(action_id)
    if not action.opposition.passed:
        table.run(
            lambda s: actions.pass_invokes(s, action_id, "opposition", GM_USER, table.ruleset)
        )
    table.run(lambda s: actions.pass_invokes(s, action_id, "actor", GM_USER, table.ruleset))


# --- the hole, and its owner's yes ------------------------------------------------------


def test_consent_to_harm_an_advantage_on_anothers_character_waits_for_its_owners_yes() -> None:
    # R2.1, R10.1, consent to harm (DESIGN Reach and trust). The hole: Paul, owning Pierre
    # too, creates an advantage on Margot (Anna's) with Pierre as the opposer (active
    # opposition makes no proposal), opposes low and leaves a mark on Margot with a free
    # invoke for himself. Now the action waits for Anna (or the GM) before any dice.
    table = table_of()
    action_id = start(
        table, PAUL, type="create_advantage", aspect_name="Pinned", target_id="m", opposer_id="p2"
    )
    action = table.action(action_id)
    assert action.state == "confirming" and action.proposal is None
    assert action.actor.roll.dice is None
    assert asked(action) == [("m", ("target",), "asked")]
    # Paul gets past it no way: not by opposing with Pierre, rolling, or answering himself.
    refused(
        "wrong_state",
        lambda: actions.oppose(table.state, action_id, "Notice", PAUL, dice(WORST, BEST)),
    )
    error = refused(
        "awaiting_consent", lambda: actions.roll_now(table.state, action_id, PAUL, dice())
    )
    assert "Margot" in worded(error.code, error.message, error.params)
    refused(
        "forbidden", lambda: actions.answer_help(table.state, action_id, "m", True, PAUL, dice())
    )
    # Nor a third player; and only characters asked about can be answered for.
    refused(
        "forbidden", lambda: actions.answer_help(table.state, action_id, "m", True, CARL, dice())
    )
    refused(
        "not_found", lambda: actions.answer_help(table.state, action_id, "p2", True, PAUL, dice())
    )
    # Anna says yes: the action goes on as declared, to Pierre's roll first (R2.2).
    table.run(lambda s: actions.answer_help(s, action_id, "m", True, ANNA, dice()))
    action = table.action(action_id)
    assert action.state == "awaiting_opposition"
    assert asked(action) == [("m", ("target",), "accepted")]
    table.run(lambda s: actions.oppose(s, action_id, "Notice", PAUL, dice(WORST, BEST)))
    pass_both(table, action_id)
    assert table.action(action_id).pending_choice == "leave_mark"  # R5.4
    table.run(lambda s: actions.choose(s, action_id, "mark", PAUL, consequence_name="Pinned"))
    margot = table.character("m")
    assert next(s for s in margot.consequences if s.id == "mild").aspect_id is not None
    assert replay(table.log, table_of().state) == table.state


def test_consent_to_harm_a_decline_calls_the_action_off_and_touches_nothing() -> None:
    # Consent to harm: Anna says no; the action is cancelled before any dice, the card
    # says why, Margot is as she was, and nobody can answer or roll on it any more.
    table = table_of()
    before = table.character("m")
    action_id = start(
        table, PAUL, type="create_advantage", aspect_name="Pinned", target_id="m", opposer_id="p2"
    )
    aspects = dict(table.state.aspects)
    table.run(lambda s: actions.answer_help(s, action_id, "m", False, ANNA, dice()))
    action = table.action(action_id)
    assert action.state == "cancelled" and action.closed
    assert asked(action) == [("m", ("target",), "declined")]
    declined = [e for e in action.effects if e.kind == "declined"]
    assert [(e.character_id, e.detail) for e in declined] == [("m", "target")]
    assert "Margot" in declined[0].text and "called off" in declined[0].text
    assert action.actor.roll.dice is None and action.outcome is None
    assert untouched(before, table.character("m")) and table.state.aspects == aspects
    for answer in (True, False):
        refused(
            "wrong_state",
            partial(actions.answer_help, table.state, action_id, "m", answer, ANNA, dice()),
        )
    refused("wrong_state", lambda: actions.roll_now(table.state, action_id, PAUL, dice(ZERO)))
    assert replay(table.log, table_of().state) == table.state


def test_consent_to_harm_an_attack_on_anothers_character_waits_and_a_decline_stops_it() -> None:
    # R5.9, R5.10 and consent to harm: the hole: Paul attacks Margot, Pierre defending
    # her, and leaves her owing an 11-shift hit. Now Anna declines and nothing lands;
    # the same attack again, and the GM (who may answer for any character) accepts.
    table = table_of(FATE_CONDENSED)
    before = table.character("m")
    declined = start(table, PAUL, type="attack", target_id="m", opposer_id="p2")
    assert table.action(declined).state == "confirming"
    assert asked(table.action(declined)) == [("m", ("target",), "asked")]
    table.run(lambda s: actions.answer_help(s, declined, "m", False, ANNA, dice()))
    assert table.action(declined).state == "cancelled"
    assert table.action(declined).pending_hit == 0
    assert untouched(before, table.character("m"))
    accepted = start(table, PAUL, type="attack", target_id="m", opposer_id="p2")
    table.run(lambda s: actions.answer_help(s, accepted, "m", True, GM_USER, dice()))
    table.run(lambda s: actions.oppose(s, accepted, "Notice", PAUL, dice(WORST, BEST)))
    pass_both(table, accepted)
    assert table.action(accepted).outcome == "excel"  # Athletics 3+4 against 0-4: 11 shifts


def test_consent_to_harm_the_gms_npc_waits_for_the_gm_even_with_trusted_ratings() -> None:
    # R2.1 Decision, consent to harm: a table that trusts its players' ratings lets a
    # passive -10 through without the GM, but not an attack on the GM's ghoul: only the
    # GM answers for an NPC, never another player.
    table = table_of(FATE_CONDENSED, trusted=True)
    action_id = start(table, PAUL, type="attack", target_id="g", passive_rating=-10)
    action = table.action(action_id)
    assert action.state == "confirming" and action.proposal is None
    assert asked(action) == [("g", ("target",), "asked")]
    refused("awaiting_consent", lambda: actions.roll_now(table.state, action_id, PAUL, dice(ZERO)))
    for player in (PAUL, ANNA, CARL):
        refused(
            "forbidden",
            partial(actions.answer_help, table.state, action_id, "g", True, player, dice()),
        )
    table.run(lambda s: actions.answer_help(s, action_id, "g", True, GM_USER, dice(ZERO)))
    action = table.action(action_id)
    assert action.state == "invoking" and action.actor.roll.dice == ZERO
    assert action.opposition.roll.total == -10


def test_consent_to_harm_names_each_part_a_character_plays() -> None:
    # Consent to harm: the opposer (who is the target when none is named), an aspect on
    # another's character the action is about (NPCs' too), each asked once per character.
    table = table_of(trusted=True)
    opposed = start(table, PAUL, opposer_id="m")
    assert asked(table.action(opposed)) == [("m", ("target", "opposer"), "asked")]
    both = start(
        table, PAUL, type="create_advantage", aspect_name="Hm", target_id="g", opposer_id="m"
    )
    assert asked(table.action(both)) == [
        ("g", ("target",), "asked"),
        ("m", ("opposer",), "asked"),
    ]
    hers = start(table, PAUL, type="take_advantage", target_aspect_id="m.hc", passive_rating=2)
    assert asked(table.action(hers)) == [("m", ("aspect",), "asked")]
    npcs = start(
        table, ANNA, actor_id="m", type="take_advantage", target_aspect_id="g.hc", passive_rating=2
    )
    assert asked(table.action(npcs)) == [("g", ("aspect",), "asked")]
    # An aspect on the scene, or on the player's own character, touches no one else.
    for aspect_id in ("sit-fog", "b.hc"):
        own = start(
            table, PAUL, ZERO, type="take_advantage", target_aspect_id=aspect_id, passive_rating=2
        )
        assert table.action(own).consents == () and table.action(own).state == "invoking"


def test_consent_to_harm_the_gms_actions_and_a_players_own_characters_go_straight_through() -> None:
    # DESIGN Reach and trust: the GM owns whom an action may harm, so the GM asks nobody;
    # a player targeting and opposed by characters of its own asks nobody either.
    table = table_of(FATE_CONDENSED)
    gms = start(table, GM_USER, ZERO, type="attack", target_id="m", passive_rating=0)
    assert table.action(gms).consents == () and table.action(gms).state == "invoking"
    own = start(table, PAUL, type="attack", target_id="p2", opposer_id="p2")
    assert table.action(own).consents == ()
    assert table.action(own).state == "awaiting_opposition"


def test_consent_to_harm_waits_beside_the_gms_numbers_and_helpers_and_is_never_rolled_past() -> (
    None
):
    # R2.1, R9.1, R10.1 and consent to harm together: the GM's confirmation and the
    # helper's answer leave the action waiting for Margot's; rolling without the
    # unanswered (R10.1 Decision) never rolls past a consent.
    table = table_of()
    action_id = start(
        table,
        PAUL,
        type="create_advantage",
        aspect_name="Cornered",
        target_id="m",
        passive_rating=1,
        helpers=(Helper("g"),),
    )
    action = table.action(action_id)
    assert action.proposal is not None and [p.status for p in action.participants] == [
        "joined",
        "invited",
    ]
    table.run(lambda s: actions.confirm(s, action_id, GM_USER, dice()))
    assert table.action(action_id).state == "confirming"
    refused("awaiting_consent", lambda: actions.roll_now(table.state, action_id, PAUL, dice()))
    table.run(lambda s: actions.answer_help(s, action_id, "m", True, ANNA, dice()))
    action = table.action(action_id)
    assert action.state == "confirming"  # only the ghoul's help is unanswered now
    table.run(lambda s: actions.roll_now(s, action_id, PAUL, dice(ZERO)))
    action = table.action(action_id)
    assert action.state == "invoking"
    assert [p.status for p in action.participants] == ["joined", "dropped"]


def test_consent_to_harm_one_answer_for_a_character_asked_as_helper_and_target() -> None:
    # R10.1 and consent to harm: Margot named both as helper and as target; Anna's one
    # answer is for her on this action: a no keeps her out and calls the action off.
    table = table_of(trusted=True)
    action_id = start(
        table,
        PAUL,
        type="create_advantage",
        aspect_name="Hm",
        target_id="m",
        passive_rating=1,
        helpers=(Helper("m"),),
    )
    table.run(lambda s: actions.answer_help(s, action_id, "m", False, ANNA, dice()))
    action = table.action(action_id)
    assert action.state == "cancelled"
    assert [p.status for p in action.participants] == ["joined", "declined"]


def test_consent_to_harm_a_declined_contest_advantage_frees_the_side_to_try_again() -> None:
    # R11.2 and consent to harm: a side's advantage on the other side's character waits
    # for its owner; declined, it is called off and the side may act again.
    table = table_of()
    cid = direct_contest(table, contest.SideSpec("Neighbour", ("m",)))
    table.run(
        lambda s: contest.contest_advantage(
            s,
            cid,
            "s1",
            "b",
            "Notice",
            "Boxed In",
            PAUL,
            dice(),
            UNWRITTEN,
            opposer_id="p2",
            target_id="m",
        )
    )
    advantage = table.action().id
    assert asked(table.action(advantage)) == [("m", ("target",), "asked")]
    refused(
        "advantage_pending",
        lambda: contest.contest_roll(table.state, cid, "s1", PAUL, dice(ZERO), UNWRITTEN),
    )
    table.run(lambda s: actions.answer_help(s, advantage, "m", False, ANNA, dice()))
    assert table.action(advantage).state == "cancelled"
    table.run(lambda s: contest.contest_roll(s, cid, "s1", PAUL, dice(ZERO), UNWRITTEN))


def test_consent_to_harm_records_written_before_it_dump_as_they_were() -> None:
    # DESIGN event log: an action with no consents (every one written before this rule,
    # every GM's) dumps without the field, byte for byte as before; one with consents
    # dumps them, and its sorted JSON is its dump's (the hash chain's canonical form).
    table = table_of()
    gms = table.action(start(table, GM_USER, ZERO, passive_rating=1))
    assert "consents" not in gms.model_dump(mode="json")
    assert b'"consents"' not in gms.sorted_json()
    asking = table.action(start(table, PAUL, opposer_id="m"))
    dumped = asking.model_dump(mode="json")
    assert dumped["consents"] == [
        {"character_id": "m", "parts": ["target", "opposer"], "status": "asked"}
    ]
    assert asking.sorted_json() == orjson.dumps(dumped, option=orjson.OPT_SORT_KEYS)
    assert Action.model_validate(dumped) == asking
    # A snapshot (the state's dump, nested records included) leaves it out the same way.
    state = table.state.model_dump(mode="json")
    assert "consents" not in state["actions"][gms.id] and state["actions"][asking.id]["consents"]
    assert table.state.sorted_json() == orjson.dumps(state, option=orjson.OPT_SORT_KEYS)
    assert WorldState.model_validate(state) == table.state


# --- a property: no yes, no touch -----------------------------------------------------

OWNED = {"paul": ("b", "p2"), "anna": ("m",)}
characters = st.sampled_from([None, "b", "p2", "m", "g"])


@settings(max_examples=examples(150), deadline=None)
@given(
    who=st.sampled_from([PAUL, ANNA]),
    pick=st.integers(0, 1),
    action_type=st.sampled_from(["overcome", "create_advantage", "take_advantage", "attack"]),
    target=characters,
    opposer=characters,
    aspect=st.sampled_from([None, "b.hc", "m.hc", "g.hc", "sit-fog"]),
    rating=st.integers(-10, 8),
    trusted=st.booleans(),
    rolls=st.lists(st.sampled_from([WORST, ZERO, BEST]), min_size=4, max_size=4),
)
def test_consent_to_harm_no_player_touches_anothers_character_without_a_yes(
    who: Principal,
    pick: int,
    action_type: str,
    target: str | None,
    opposer: str | None,
    aspect: str | None,
    rating: int,
    trusted: bool,
    rolls: list[Roll],
) -> None:
    # Consent to harm (DESIGN Reach and trust), whatever a player declares: exactly the
    # characters of others it would touch are asked; until they answer, every press the
    # player may make (roll, oppose, pass, choose a mark) is refused and nothing of
    # theirs changes; the GM declaring the same asks nobody.
    own = OWNED[who.user_id]
    table = table_of(FATE_CONDENSED if action_type == "attack" else UNWRITTEN, trusted=trusted)
    before = table.state
    fields: dict[str, Any] = {
        "type": action_type,
        "actor_id": own[pick % len(own)],
        "target_id": target,
        "opposer_id": opposer,
        "target_aspect_id": aspect,
        "passive_rating": None if opposer else rating,
        "aspect_name": "Hm",
    }
    command = StartAction(skill="Athletics", **fields)
    try:
        events = actions.start_action(before, command, who, dice(*rolls), table.ruleset)
    except RuleViolation:
        event("refused as declared")
        return
    table.run(lambda _s: events)
    action = table.action()
    touched = [target or opposer, opposer]
    if aspect is not None:
        touched.append(before.aspects[aspect].attached_to)
    expected = {
        c for c in touched if c is not None and who.user_id not in before.characters[c].owners
    }
    assert {c.character_id for c in action.consents} == expected
    assert all(c.status == "asked" for c in action.consents)
    gms = actions.start_action(before, command, GM_USER, dice(*rolls), table.ruleset)
    assert all(not e.action.consents for e in gms if isinstance(e, ActionPut))
    if not expected:
        event("touches only the player's own and the scene")
        return
    event(f"asks {len(expected)}")
    assert action.state == "confirming" and action.actor.roll.dice is None
    presses = [
        lambda s: actions.roll_now(s, action.id, who, dice(*rolls)),
        lambda s: actions.pass_invokes(s, action.id, "actor", who, table.ruleset),
        lambda s: actions.choose(s, action.id, "mark", who),
        lambda s: actions.oppose(s, action.id, "Athletics", who, dice(*rolls)),
        *(
            lambda s, c=c: actions.answer_help(s, action.id, c, True, who, dice(*rolls))
            for c in sorted(expected)
        ),
    ]
    for press in presses:
        try:
            table.run(press)
        except RuleViolation:
            continue
        raise AssertionError("a press went past an unanswered consent")
    for character_id in expected:
        assert untouched(before.characters[character_id], table.character(character_id))
    assert table.action(action.id).state == "confirming"
