"""The GM owns the numbers (R2.1, R9.1, R10.1), the contest roll waits for its advantage
(R11.2), and hints are taken or paid one by one (R5.5)."""

from __future__ import annotations

from bridge.rules import actions, challenge, contest
from bridge.rules.actions import Helper, Principal, StartAction
from bridge.rules.dice import Roll
from bridge.rules.engine import replay
from bridge.rules.ruleset import UNWRITTEN
from bridge.rules.scene import end_scene
from bridge.rules.settings import change_settings
from bridge.service.session import worded
from tests.rules_fixtures import (
    ANNA,
    GM_USER,
    PAUL,
    ZERO,
    Table,
    dice,
    direct_contest,
    one_task_challenge,
    refused,
    world,
)


def declare(table: Table, who: Principal, *rolls: Roll, **fields: object) -> str:
    command = StartAction(**{"type": "overcome", "actor_id": "b", "skill": "Athletics", **fields})  # type: ignore[arg-type]
    table.run(lambda s: actions.start_action(s, command, who, dice(*rolls), UNWRITTEN))
    return table.action().id


def pass_both(table: Table, action_id: str) -> None:
    action = table.state.actions[action_id]
    if not action.opposition.passed:
        table.run(lambda s: actions.pass_invokes(s, action_id, "opposition", GM_USER, UNWRITTEN))
    table.run(lambda s: actions.pass_invokes(s, action_id, "actor", GM_USER, UNWRITTEN))


# --- R2.1 passive opposition ------------------------------------------------------


def test_r2_1_a_players_passive_rating_waits_for_the_gm_who_confirms_it() -> None:
    # R2.1 Decision: a player's rating is a proposal; no dice until the GM confirms.
    table = Table(world())
    action_id = declare(table, PAUL, passive_rating=-10)
    action = table.action(action_id)
    assert action.state == "confirming" and action.actor.roll.dice is None
    assert action.proposal is not None and action.proposal.passive_rating == -10
    # Only the GM confirms; the player cannot roll past it.
    refused("forbidden", lambda: actions.confirm(table.state, action_id, PAUL, dice(ZERO)))
    refused("awaiting_gm", lambda: actions.roll_now(table.state, action_id, PAUL, dice(ZERO)))
    table.run(lambda s: actions.confirm(s, action_id, GM_USER, dice(ZERO)))
    action = table.action(action_id)
    assert action.state == "invoking" and action.proposal is None
    assert action.opposition.roll.passive_rating == -10  # confirmed as proposed


def test_r2_1_the_gm_changes_the_rating_with_the_confirmation() -> None:
    # R2.1: "confirms or changes": Athletics 3 against the GM's Great (+4), not -10.
    table = Table(world())
    action_id = declare(table, PAUL, passive_rating=-10)
    table.run(lambda s: actions.confirm(s, action_id, GM_USER, dice(ZERO), passive_rating=4))
    pass_both(table, action_id)
    action = table.action(action_id)
    assert action.opposition.roll.total == 4 and action.outcome == "fumble"


def test_r2_1_the_gms_own_action_and_gm_set_ratings_go_straight_through() -> None:
    # R2.1: the GM's rating needs nobody; a challenge task's rating is the GM's too.
    table = Table(world())
    action_id = declare(table, GM_USER, ZERO, passive_rating=6, dangerous_opposition=True)
    assert table.action(action_id).state == "declared"  # straight to the concession window
    chid = one_task_challenge(table)
    table.run(lambda s: challenge.roll_task(s, chid, "t1", "b", PAUL, dice(ZERO), UNWRITTEN))
    assert table.action().state == "invoking"


def test_r2_1_a_table_that_trusts_its_players_skips_the_rating_but_not_the_danger() -> None:
    # R2.1 Decision: the world setting (off by default) trusts passive ratings; R9.1
    # danger is always the GM's.
    table = Table(world())
    assert not table.state.settings.trust_player_ratings
    refused(
        "forbidden",
        lambda: change_settings(table.state, PAUL, trust_player_ratings=True),
    )
    table.run(lambda s: change_settings(s, GM_USER, trust_player_ratings=True))
    assert table.state.settings.trust_player_ratings
    assert change_settings(table.state, GM_USER, trust_player_ratings=True) == []
    trusted = declare(table, PAUL, ZERO, passive_rating=1)
    assert table.action(trusted).state == "invoking"
    pass_both(table, trusted)
    dangerous = declare(table, PAUL, passive_rating=1, dangerous_actor=True)
    action = table.action(dangerous)
    assert action.state == "confirming"
    assert action.proposal is not None and action.proposal.passive_rating is None
    assert replay(table.log, world()) == table.state


def test_r2_1_challenge_and_contest_advantages_wait_for_the_gm_too() -> None:
    # R2.1 "the same for challenge.advantage and any other intent where a player sets
    # opposition": R11.1 challenge advantage, R11.2 contest advantage.
    table = Table(world())
    chid = one_task_challenge(table)
    table.run(
        lambda s: challenge.try_advantage(
            s, chid, "b", "Notice", "Calm", -8, PAUL, dice(ZERO), UNWRITTEN
        )
    )
    assert table.action().state == "confirming"
    assert table.action().proposal is not None
    cid = direct_contest(table)
    table.run(
        lambda s: contest.contest_advantage(
            s, cid, "s1", "b", "Notice", "Shortcut", PAUL, dice(ZERO), UNWRITTEN, passive_rating=-8
        )
    )
    assert table.action().state == "confirming"


# --- R9.1 danger ----------------------------------------------------------------------


def test_r9_1_a_players_danger_flag_does_not_overwhelm_without_the_gm() -> None:
    # R9.1 Decision: Paul marks the action dangerous for Margot (Anna's) and would
    # overwhelm her on success (R9.2); it waits for the GM, who strikes the danger.
    table = Table(world())
    action_id = declare(table, PAUL, opposer_id="m", dangerous_opposition=True, target_id="m")
    action = table.action(action_id)
    assert action.state == "confirming" and action.proposal is not None
    assert action.proposal.dangerous_opposition
    refused(
        "wrong_state",
        lambda: actions.oppose(table.state, action_id, "Athletics", ANNA, dice(ZERO, ZERO)),
    )
    table.run(lambda s: actions.confirm(s, action_id, GM_USER, dice(), dangerous_opposition=False))
    # Consent to harm (DESIGN Reach and trust): Margot is Anna's, so Anna says yes too.
    assert table.action(action_id).state == "confirming"
    table.run(lambda s: actions.answer_help(s, action_id, "m", True, ANNA, dice()))
    assert table.action(action_id).state == "awaiting_opposition"
    table.run(
        lambda s: actions.oppose(
            s, action_id, "Athletics", ANNA, dice((-1, -1, 0, 0), (1, 1, 0, 0))
        )
    )
    pass_both(table, action_id)
    assert table.action(action_id).outcome == "excel"
    assert not table.character("m").overwhelmed


def test_r9_1_confirmed_danger_opens_the_concession_window() -> None:
    # R9.1, R9.3: once the GM confirms the danger, the dice wait for a concession or roll.
    table = Table(world())
    action_id = declare(table, PAUL, passive_rating=2, dangerous_actor=True)
    table.run(lambda s: actions.confirm(s, action_id, GM_USER, dice()))
    assert table.action(action_id).state == "declared"
    assert table.action(action_id).actor.dangerous
    table.run(lambda s: actions.roll_now(s, action_id, PAUL, dice(ZERO)))
    assert table.action(action_id).state == "invoking"


# --- R10.1 helpers ----------------------------------------------------------------------


def test_r10_1_a_foreign_helper_joins_only_when_its_owner_accepts() -> None:
    # R10.1 Decision: Paul names Margot (Anna's); she is invited, not drafted.
    table = Table(world())
    action_id = declare(table, PAUL, passive_rating=2, helpers=(Helper("m"),))
    action = table.action(action_id)
    assert action.actor.helpers == () and action.actor.roll.teamwork_bonus == 0
    assert [(p.character_id, p.status) for p in action.participants] == [
        ("b", "joined"),
        ("m", "invited"),
    ]
    refused(
        "forbidden",
        lambda: actions.answer_help(table.state, action_id, "m", True, PAUL, dice()),
    )
    table.run(lambda s: actions.answer_help(s, action_id, "m", True, ANNA, dice()))
    action = table.action(action_id)
    assert action.actor.helpers == ("m",) and action.actor.roll.teamwork_bonus == 1
    assert action.state == "confirming"  # the GM has still to confirm the rating
    table.run(lambda s: actions.confirm(s, action_id, GM_USER, dice(ZERO)))
    assert table.action(action_id).state == "invoking"
    assert table.action(action_id).actor.roll.total == 4  # Athletics 3 + teamwork 1


def test_r10_1_a_helper_with_more_skill_leads_once_it_joins() -> None:
    # R10.1: the participant with the highest skill leads, also when it joins later.
    table = Table(world())
    action_id = declare(table, PAUL, skill="Lore", passive_rating=2, helpers=(Helper("m"),))
    assert table.action(action_id).actor.leader == "b"
    table.run(lambda s: actions.answer_help(s, action_id, "m", True, GM_USER, dice()))
    action = table.action(action_id)
    assert action.actor.leader == "m" and action.actor.helpers == ("b",)
    assert action.actor.roll.skill_rating == 4 and action.actor.roll.teamwork_bonus == 1


def test_r10_1_declined_and_unanswered_helpers_stay_out_of_a_conceded_danger() -> None:
    # R10.1 Decision: the actor may roll without waiting; unanswered helpers are dropped,
    # so a conceded dangerous action (R9.3) never overwhelms a helper who did not join.
    table = Table(world())
    table.run(lambda s: change_settings(s, GM_USER, trust_player_ratings=True))
    declined = declare(table, PAUL, ZERO, passive_rating=2, helpers=(Helper("m"),))
    table.run(lambda s: actions.answer_help(s, declined, "m", False, ANNA, dice(ZERO)))
    assert table.action(declined).state == "invoking"
    assert table.action(declined).actor.helpers == ()
    pass_both(table, declined)
    dangerous = declare(table, PAUL, passive_rating=2, dangerous_actor=True, helpers=(Helper("m"),))
    table.run(lambda s: actions.confirm(s, dangerous, GM_USER, dice()))
    assert table.action(dangerous).state == "confirming"  # Anna has not answered
    table.run(lambda s: actions.roll_now(s, dangerous, PAUL, dice()))
    action = table.action(dangerous)
    assert action.state == "declared"
    assert [(p.character_id, p.status) for p in action.participants][1] == ("m", "dropped")
    refused(
        "wrong_state",
        lambda: actions.answer_help(table.state, dangerous, "m", True, ANNA, dice()),
    )
    table.run(lambda s: actions.concede(s, dangerous, "b", PAUL))
    assert table.character("b").overwhelmed and not table.character("m").overwhelmed


def test_r10_1_a_helper_the_player_owns_or_the_gm_names_joins_at_once() -> None:
    # R10.1: Paul's own second character joins at once; so does anyone the GM names.
    own = world()
    from bridge.rules.engine import apply_all, sync_character
    from tests.rules_fixtures import sheet

    extra = sheet("p2", "Pierre", owners=["paul"], skills={"Athletics": 1})
    own = apply_all(own, sync_character(own, extra, UNWRITTEN))
    table = Table(own)
    table.run(lambda s: change_settings(s, GM_USER, trust_player_ratings=True))
    mine = declare(table, PAUL, ZERO, passive_rating=2, helpers=(Helper("p2"),))
    assert table.action(mine).state == "invoking"
    assert table.action(mine).actor.helpers == ("p2",)
    pass_both(table, mine)
    gms = declare(table, GM_USER, ZERO, passive_rating=2, helpers=(Helper("m"),))
    assert table.action(gms).actor.helpers == ("m",)


# --- R11.2 the contest roll waits for its advantage ---------------------------------


def test_r11_2_the_contest_roll_waits_while_the_sides_advantage_is_unresolved() -> None:
    # R11.2 Decision: the roll waits, so the advantage's fumble still forfeits it.
    table = Table(world())
    cid = direct_contest(table)
    table.run(
        lambda s: contest.contest_advantage(
            s,
            cid,
            "s1",
            "b",
            "Notice",
            "Shortcut",
            GM_USER,
            dice((-1, -1, -1, 0)),
            UNWRITTEN,
            passive_rating=2,
        )
    )
    advantage = table.action().id
    assert table.action().state == "invoking"
    error = refused(
        "advantage_pending",
        lambda: contest.contest_roll(table.state, cid, "s1", PAUL, dice(ZERO), UNWRITTEN),
    )
    assert error.field == "side_id"
    refused(
        "advantage_pending",
        lambda: contest.contest_advantage(
            table.state,
            cid,
            "s1",
            "b",
            "Notice",
            "Again",
            GM_USER,
            dice(ZERO),
            UNWRITTEN,
            passive_rating=2,
        ),
    )
    pass_both(table, advantage)  # Notice 2 - 3 = -1 against +2: a fumble
    assert table.action(advantage).outcome == "fumble"
    refused(
        "forfeited",
        lambda: contest.contest_roll(table.state, cid, "s1", PAUL, dice(ZERO), UNWRITTEN),
    )


# --- R5.5 hints -----------------------------------------------------------------------


def excelled_discover(table: Table) -> str:
    action_id = declare(
        table, GM_USER, (1, 1, 0, 0), type="discover", skill="Notice", passive_rating=0
    )
    pass_both(table, action_id)
    assert table.action(action_id).hint == "offered"
    return action_id


def test_r5_5_two_untaken_hints_pay_two_points() -> None:
    # R5.5 Decision: each excelled discover whose hint stays untaken pays its own point.
    table = Table(world())
    excelled_discover(table)
    excelled_discover(table)
    before = table.character("b").fate_points
    events, summary = end_scene(table.state, GM_USER)
    table.run(lambda _s: events)
    assert table.character("b").fate_points == before + 2
    assert [r.kind for r in summary.fate_points["b"][1]] == ["hint_unused", "hint_unused"]


def test_r5_5_the_actor_takes_the_hint_the_gm_gives_it_and_it_pays_nothing() -> None:
    # R5.5 Decision: the actor asks (the GM is prompted), the GM answers with text.
    table = Table(world())
    taken = excelled_discover(table)
    excelled_discover(table)
    refused("forbidden", lambda: actions.take_hint(table.state, taken, ANNA))
    refused("wrong_state", lambda: actions.give_hint(table.state, taken, "Look up", GM_USER))
    table.run(lambda s: actions.take_hint(s, taken, PAUL))
    assert table.action(taken).hint == "asked"
    refused("wrong_state", lambda: actions.take_hint(table.state, taken, PAUL))
    refused("forbidden", lambda: actions.give_hint(table.state, taken, "Look up", PAUL))
    refused("invalid", lambda: actions.give_hint(table.state, taken, "  ", GM_USER))
    table.run(lambda s: actions.give_hint(s, taken, "The cellar door is new", GM_USER))
    action = table.action(taken)
    assert action.hint == "given" and action.hint_text == "The cellar door is new"
    assert [e.detail for e in action.effects if e.kind == "hint"] == ["given"]
    before = table.character("b").fate_points
    table.run(lambda s: end_scene(s, GM_USER)[0])
    assert table.character("b").fate_points == before + 1  # only the untaken one pays
    assert replay(table.log, world()) == table.state


def test_r5_5_only_an_excelled_discover_has_a_hint() -> None:
    # R5.5: success gives questions only; no hint to take.
    table = Table(world())
    action_id = declare(
        table, GM_USER, (1, 0, 0, 0), type="discover", skill="Notice", passive_rating=2
    )
    pass_both(table, action_id)
    assert table.action(action_id).outcome == "succeed"
    error = refused("wrong_state", lambda: actions.take_hint(table.state, action_id, PAUL))
    assert "no hint" in worded(error.code, error.message, error.params)
