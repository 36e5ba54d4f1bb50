"""Zoomed-in play (R11) and the ends of scenes, sessions and scenarios (R7.5, R12)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from bridge.rules import actions, challenge, conflict, contest, fate
from bridge.rules.actions import Helper, Principal, StartAction
from bridge.rules.dice import Roll
from bridge.rules.engine import SheetSlot
from bridge.rules.ruleset import FATE_ACCELERATED, UNWRITTEN
from bridge.rules.scene import end_scene
from bridge.rules.state import Contest, ContestSide, ExchangeRoll, Zone
from bridge.service.session import worded
from tests.rules_fixtures import (
    ANNA,
    BROUSSEAU,
    GHOUL,
    GM_USER,
    MARGOT,
    PAUL,
    STANDARD_SLOTS,
    ZERO,
    Table,
    dice,
    direct_contest,
    gm_confirms,
    one_task_challenge,
    refused,
    sheet,
    world,
)


def pass_actor(table: Table, action_id: str, who: Principal = GM_USER) -> None:
    table.run(lambda s: actions.pass_invokes(s, action_id, "actor", who, table.ruleset))


# --- R11.2 contests ------------------------------------------------------------------


def exchange(table: Table, contest_id: str, hunters: Roll, ghoul: Roll) -> None:
    table.run(lambda s: contest.contest_roll(s, contest_id, "s1", PAUL, dice(hunters), UNWRITTEN))
    pass_actor(table, table.action().id, PAUL)
    table.run(lambda s: contest.contest_roll(s, contest_id, "s2", GM_USER, dice(ghoul), UNWRITTEN))
    pass_actor(table, table.action().id)


def test_r11_2_direct_contest_to_three_with_a_twist_and_double_progress() -> None:
    # R11.2: Brousseau Athletics 3 vs Ghoul Athletics 2.
    table = Table(world())
    cid = direct_contest(table)
    exchange(table, cid, ZERO, (1, 0, 0, 0))  # 3 vs 3: tie for the highest -> twist
    c = table.state.contests[cid]
    assert c.history[-1].twist and c.history[-1].winner is None
    assert [s.progress for s in c.sides] == [0, 0]
    assert c.twist_pending
    refused("forbidden", lambda: contest.name_twist(table.state, cid, "Slick Tiles", PAUL))
    table.run(lambda s: contest.name_twist(s, cid, "Slick Tiles", GM_USER))
    assert any(
        a.name == "Slick Tiles" and a.kind == "situation" for a in table.state.aspects.values()
    )
    exchange(table, cid, (1, 1, 0, 0), (-1, 0, 0, 0))  # 5 vs 1: margin 4, excels -> 2
    c = table.state.contests[cid]
    assert c.history[-1].winner == "s1" and c.history[-1].progress == 2
    exchange(table, cid, (1, 0, 0, 0), ZERO)  # 4 vs 2: margin 2 -> 1, reaching 3
    c = table.state.contests[cid]
    assert [s.progress for s in c.sides] == [3, 0]
    assert c.state == "won" and c.winner == "s1"
    refused(
        "wrong_state",
        lambda: contest.contest_roll(table.state, cid, "s1", PAUL, dice(ZERO), UNWRITTEN),
    )


def test_r11_2_environment_contest_where_nobody_succeeds() -> None:
    # R11.2: nobody above 0 shifts -> the exchange ends with no winner (and no twist).
    table = Table(world())
    table.run(
        lambda s: contest.start_contest(
            s,
            "Flood",
            "environment",
            "Athletics",
            [contest.SideSpec("Brousseau", ("b",)), contest.SideSpec("Margot", ("m",))],
            GM_USER,
            UNWRITTEN,
            passive_rating=5,
        )
    )
    cid = next(iter(table.state.contests))
    table.run(lambda s: contest.contest_roll(s, cid, "s1", PAUL, dice((1, 0, 0, 0)), UNWRITTEN))
    pass_actor(table, table.action().id, PAUL)
    table.run(lambda s: contest.contest_roll(s, cid, "s2", ANNA, dice((1, 1, 0, 0)), UNWRITTEN))
    pass_actor(table, table.action().id, ANNA)
    result = table.state.contests[cid].history[-1]
    assert result.winner is None and not result.twist
    assert [r.shifts for r in result.rolls] == [-1, -1]


def test_r11_2_environment_excel_alone_marks_two() -> None:
    c = Contest(
        id="c",
        name="x",
        mode="environment",
        skill="s",
        passive_rating=1,
        sides=(
            ContestSide(id="s1", name="a", members=("b",)),
            ContestSide(id="s2", name="b", members=("m",)),
        ),
    )
    both = contest.score_exchange(
        c,
        [
            ExchangeRoll(side_id="s1", total=5, shifts=4),
            ExchangeRoll(side_id="s2", total=4, shifts=3),
        ],
    )
    assert both.winner == "s1" and both.progress == 1  # the other side excels too
    alone = contest.score_exchange(
        c,
        [
            ExchangeRoll(side_id="s1", total=5, shifts=4),
            ExchangeRoll(side_id="s2", total=3, shifts=2),
        ],
    )
    assert alone.progress == 2 and alone.excelled


def test_r11_2_fumbled_advantage_forfeits_the_sides_roll() -> None:
    # R11.2: an advantage attempt before the roll; its fumble forfeits this exchange.
    table = Table(world())
    cid = direct_contest(table)
    fumble = dice((-1, -1, -1, 0))
    table.run(
        lambda s: contest.contest_advantage(
            s,
            cid,
            "s1",
            "b",
            "Notice",
            "Shortcut",
            PAUL,
            fumble,
            UNWRITTEN,
            passive_rating=2,
        )
    )
    gm_confirms(table, fumble)  # R2.1: Paul's rating is the GM's to confirm
    pass_actor(table, table.action().id, PAUL)
    slot = next(r for r in table.state.contests[cid].current if r.side_id == "s1")
    assert slot.forfeited
    refused(
        "forfeited",
        lambda: contest.contest_roll(table.state, cid, "s1", PAUL, dice(ZERO), UNWRITTEN),
    )
    table.run(
        lambda s: contest.contest_roll(s, cid, "s2", GM_USER, dice((-1, -1, 0, 0)), UNWRITTEN)
    )
    pass_actor(table, table.action().id)
    result = table.state.contests[cid].history[-1]
    assert result.winner == "s2" and result.progress == 1
    # The next exchange starts fresh: the side may roll again.
    assert not any(r.forfeited for r in table.state.contests[cid].current)


def test_r11_2_a_side_rolls_together_by_teamwork_and_concedes_for_a_point() -> None:
    # R11.2 + R10.1 inside a side; R9.3 conceding a contest gives the same point.
    table = Table(world())
    table.run(
        lambda s: contest.start_contest(
            s,
            "Debate",
            "direct",
            "Lore",
            [contest.SideSpec("Team", ("b", "m")), contest.SideSpec("Ghoul", ("g",))],
            GM_USER,
            UNWRITTEN,
        )
    )
    cid = next(iter(table.state.contests))
    table.run(lambda s: contest.contest_roll(s, cid, "s1", PAUL, dice(ZERO), UNWRITTEN))
    action = table.action()
    assert action.actor.leader == "m" and action.actor.roll.teamwork_bonus == 1
    table.run(lambda s: contest.concede_contest(s, cid, "s2", GM_USER))
    c = table.state.contests[cid]
    assert c.state == "won" and c.winner == "s1"
    assert table.character("g").pending_fate_points == 0  # an NPC gains nothing
    table2 = Table(world())
    cid2 = direct_contest(table2)
    table2.run(lambda s: contest.concede_contest(s, cid2, "s1", PAUL))
    assert table2.character("b").pending_fate_points == 1


# --- R11.1 challenges -----------------------------------------------------------------


def test_r11_1_three_task_challenge_with_a_boost_used_across_tasks() -> None:
    # R11.1: any order, nothing decided until all are in, one boost used on another task.
    table = Table(world())
    table.run(
        lambda s: challenge.start_challenge(
            s,
            "Escape the manor",
            [
                challenge.TaskSpec("Calm the guests", "Notice", 1),
                challenge.TaskSpec("Bar the door", "Athletics", 2),
                challenge.TaskSpec("Read the ward", "Lore", 3),
            ],
            GM_USER,
        )
    )
    chid = next(iter(table.state.challenges))
    table.run(
        lambda s: challenge.roll_task(s, chid, "t2", "b", PAUL, dice((1, 1, 0, 0)), UNWRITTEN)
    )
    pass_actor(table, table.action().id, PAUL)  # 5 vs 2: excel -> a boost
    boost_id = next(e.aspect_id for e in table.action().effects if e.kind == "boost") or ""
    assert table.state.challenges[chid].state == "open"
    table.run(
        lambda s: challenge.roll_task(s, chid, "t3", "m", ANNA, dice((-1, 0, 0, 0)), UNWRITTEN)
    )
    refused(
        "wrong_state",
        lambda: challenge.roll_task(table.state, chid, "t3", "b", PAUL, dice(ZERO), UNWRITTEN),
    )
    table.run(
        lambda s: challenge.roll_task(s, chid, "t1", "b", PAUL, dice((-1, -1, 0, 0)), UNWRITTEN)
    )
    table.run(
        lambda s: actions.invoke(
            s,
            actions.InvokeCommand(table.action().id, "b", boost_id, "boost"),
            PAUL,
            dice(),
            UNWRITTEN,
        )
    )
    assert boost_id not in table.state.aspects
    pass_actor(table, table.action().id, PAUL)  # 0 + 2 + 2 = 4? Notice 2 -2 +2 = 2 vs 1
    pass_actor(table, "a2", ANNA)  # Lore 4 - 1 = 3 vs 3: tie -> choosing
    assert table.state.challenges[chid].state == "open"
    table.run(lambda s: actions.choose(s, "a2", "succeed_at_cost", ANNA))
    table.run(
        lambda s: actions.apply_cost(
            s, actions.CostCommand("a2", "wrinkle", text="The ward flares"), GM_USER, UNWRITTEN
        )
    )
    assert table.state.challenges[chid].state == "complete"


def test_r11_1_advantage_completes_no_task_and_carried_boosts_survive_one_scene_end() -> None:
    # R11.1, R12.1
    table = Table(world())
    chid = one_task_challenge(table, "Row", 1)
    tie = dice(ZERO)
    table.run(
        lambda s: challenge.try_advantage(
            s, chid, "b", "Notice", "Calm Water", 2, PAUL, tie, UNWRITTEN
        )
    )
    gm_confirms(table, tie)  # R2.1: Paul's rating is the GM's to confirm
    pass_actor(table, table.action().id, PAUL)  # tie: a boost
    assert table.state.challenges[chid].state == "open"
    boost_id = next(e.aspect_id for e in table.action().effects if e.kind == "boost") or ""
    table.run(lambda s: challenge.carry_boosts(s, chid, True, GM_USER))
    table.run(lambda s: end_scene(s, GM_USER)[0])
    assert boost_id in table.state.aspects
    table.run(lambda s: end_scene(s, GM_USER)[0])
    assert boost_id not in table.state.aspects


# --- R11.3 conflicts ------------------------------------------------------------------


def fc_cast() -> Table:
    hero = sheet("b", "Brousseau", owners=["paul"], skills={"Quick": 3, "Careful": 1})
    ally = sheet("m", "Margot", owners=["anna"], skills={"Quick": 2, "Careful": 3})
    boss = sheet("g", "Ghoul", skills={"Quick": 3})
    minion = sheet("z", "Zombie", skills={"Quick": 0})
    return Table(world(hero, ally, boss, minion, ruleset=FATE_ACCELERATED))


SIDES = [
    conflict.ConflictSideSpec("Hunters", ("b", "m")),
    conflict.ConflictSideSpec("Dead", ("g", "z")),
]


def test_r11_3_turn_order_with_ties_and_grouped_npcs() -> None:
    # R11.3, R13.5 (Fate Accelerated, seed 003): physical by Quick, highest first; ties
    # broken by the GM; NPCs grouped at their best NPC's place.
    table = fc_cast()
    table.run(
        lambda s: conflict.start_conflict(
            s, "Graveyard", "physical", SIDES, GM_USER, FATE_ACCELERATED, group_npcs=True
        )
    )
    c = next(iter(table.state.conflicts.values()))
    assert c.order_skill == "Quick"
    assert c.ratings["z"] == 3  # the zombie acts at the ghoul's place
    assert c.ties == (("b", "g"),)
    assert set(c.order[:3]) == {"b", "g", "z"} and c.order[3] == "m"
    assert c.order.index("g") + 1 == c.order.index("z")
    refused("invalid", lambda: conflict.reorder(table.state, c.id, ["m", "b", "g", "z"], GM_USER))
    table.run(lambda s: conflict.reorder(s, c.id, ["g", "z", "b", "m"], GM_USER))
    assert table.state.conflicts[c.id].order == ("g", "z", "b", "m")
    mental = fc_cast()
    mental.run(
        lambda s: conflict.start_conflict(
            s, "Seance", "mental", SIDES, GM_USER, FATE_ACCELERATED, tie_break=["g"]
        )
    )
    m = next(iter(mental.state.conflicts.values()))
    assert m.order_skill == "Careful" and m.order[0] == "m"


GRAVEYARD = (
    Zone(name="Gate", adjacent=("Crypt",)),
    Zone(name="Crypt", adjacent=("Gate", "Tomb")),
    Zone(name="Tomb", adjacent=("Crypt",)),
)


def graveyard(table: Table, tie_break: Sequence[str] = ()) -> str:
    """A Fate Accelerated conflict on the graveyard's map: Brousseau at the gate, the
    Ghoul in the tomb (ties in turn order broken by ``tie_break``); the conflict's id."""
    table.run(
        lambda s: conflict.start_conflict(
            s,
            "Graveyard",
            "physical",
            SIDES,
            GM_USER,
            FATE_ACCELERATED,
            tie_break=tie_break,
            zones=GRAVEYARD,
            positions={"b": "Gate", "g": "Tomb"},
        )
    )
    return next(iter(table.state.conflicts))


def test_r11_3_exchanges_skip_the_fallen_and_end_with_one_side() -> None:
    # R11.3, R8.2
    table = fc_cast()
    cid = graveyard(table, tie_break=["b", "g"])
    assert table.state.conflicts[cid].order == ("b", "g", "m", "z")
    refused("forbidden", lambda: conflict.next_turn(table.state, cid, ANNA))
    table.run(lambda s: conflict.next_turn(s, cid, PAUL))
    assert table.state.conflicts[cid].turn == 1
    refused("needs_overcome", lambda: conflict.move(table.state, cid, "b", "Tomb", PAUL))
    table.run(lambda s: conflict.move(s, cid, "b", "Crypt", PAUL))
    for npc in ("g", "z"):
        character = table.state.characters[npc].model_copy(update={"overwhelmed": True})
        table.state = table.state.model_copy(
            update={"characters": {**table.state.characters, npc: character}}
        )
    table.run(lambda s: conflict.next_turn(s, cid, GM_USER))
    c = table.state.conflicts[cid]
    assert c.state == "ended" and c.winner == "s1"


def test_r11_3_the_gm_adds_a_zone_mid_conflict_and_it_is_one_move_away() -> None:
    # R11.3: the fight spills into the street; one zone is a free move.
    table = fc_cast()
    cid = graveyard(table)
    street = Zone(name="Street", adjacent=("Gate",))
    gate = Zone(name="Gate", adjacent=("Crypt", "Street"))
    refused("invalid", lambda: conflict.move(table.state, cid, "b", "Street", PAUL))
    events = table.run(
        lambda s: conflict.redraw_zones(s, cid, [gate, *GRAVEYARD[1:], street], {}, GM_USER)
    )
    assert [e.reason for e in events] == ["conflict.zones"]
    c = table.state.conflicts[cid]
    assert [z.name for z in c.zones] == ["Gate", "Crypt", "Tomb", "Street"]
    assert c.positions == {"b": "Gate", "g": "Tomb"}
    refused("needs_overcome", lambda: conflict.move(table.state, cid, "g", "Street", GM_USER))
    table.run(lambda s: conflict.move(s, cid, "b", "Street", PAUL))
    assert table.state.conflicts[cid].positions["b"] == "Street"


def test_r11_3_a_dropped_zone_needs_its_occupants_placed_anew() -> None:
    # R11.3: the tomb caves in; the Ghoul in it must be given a new zone.
    table = fc_cast()
    cid = graveyard(table)
    smaller = [GRAVEYARD[0], Zone(name="Crypt", adjacent=("Gate",))]
    why = refused("invalid", lambda: conflict.redraw_zones(table.state, cid, smaller, {}, GM_USER))
    assert why.field == "positions"
    said = worded(why.code, why.message, why.params)
    assert "Ghoul" in said and "Tomb" in said
    assert table.state.conflicts[cid].zones == GRAVEYARD
    table.run(lambda s: conflict.redraw_zones(s, cid, smaller, {"g": "Crypt"}, GM_USER))
    c = table.state.conflicts[cid]
    assert [z.name for z in c.zones] == ["Gate", "Crypt"]
    assert c.positions == {"b": "Gate", "g": "Crypt"}
    table.run(lambda s: conflict.redraw_zones(s, cid, [], {}, GM_USER))
    c = table.state.conflicts[cid]
    assert c.zones == () and c.positions == {}


def test_r11_3_a_redrawn_map_is_the_gms_and_must_hold_together() -> None:
    # R11.3: only the GM draws the map; names unique, neighbours on the map, positions
    # for members of the conflict in zones of the new map.
    table = fc_cast()
    cid = graveyard(table)
    before = table.state
    gate = Zone(name="Gate")
    why = refused("forbidden", lambda: conflict.redraw_zones(table.state, cid, GRAVEYARD, {}, PAUL))
    assert why.params == {"reason": "gm_only"}  # worded "Only the GM may do that."
    cases: list[tuple[Sequence[Zone], dict[str, str], str, str]] = [
        ([gate, Zone(name="Yard", adjacent=("Moat",))], {}, "zones", "Moat"),
        ([gate, gate], {}, "zones", "Gate"),
        (GRAVEYARD, {"nobody": "Gate"}, "positions", "nobody"),
        (GRAVEYARD, {"b": "Moat"}, "positions", "Moat"),
        ([], {"b": "Gate"}, "positions", "Gate"),
    ]
    for zones, positions, field, named in cases:
        redraw = partial(conflict.redraw_zones, table.state, cid, zones, positions, GM_USER)
        why = refused("invalid", redraw)
        said = worded(why.code, why.message, why.params)
        assert (why.field, named in said) == (field, True), (zones, positions, why)
    refused(
        "not_found",
        lambda: conflict.redraw_zones(table.state, "nope", GRAVEYARD, {}, GM_USER),
    )
    assert table.state == before
    table.run(lambda s: conflict.end_conflict(s, cid, GM_USER))
    refused("wrong_state", lambda: conflict.redraw_zones(table.state, cid, GRAVEYARD, {}, GM_USER))


def test_r11_3_a_conflict_starts_on_a_map_with_unique_zone_names() -> None:
    # R11.3: the start checks the map as a redraw does.
    table = fc_cast()
    gate = Zone(name="Gate")
    why = refused(
        "invalid",
        lambda: conflict.start_conflict(
            table.state, "x", "physical", SIDES, GM_USER, FATE_ACCELERATED, zones=[gate, gate]
        ),
    )
    assert why.field == "zones"


def test_r11_3_conflicts_belong_to_the_fate_rulesets() -> None:
    table = Table(world())
    refused(
        "not_in_ruleset",
        lambda: conflict.start_conflict(
            table.state,
            "x",
            "physical",
            [conflict.ConflictSideSpec("a", ("b",)), conflict.ConflictSideSpec("b", ("g",))],
            GM_USER,
            UNWRITTEN,
        ),
    )


# --- R7.5 and R12 ends ---------------------------------------------------------------


def hurt_table() -> Table:
    hurt = sheet(
        "b",
        "Brousseau",
        owners=["paul"],
        skills={"Lore": 5},
        fate_points=1,
        slots=[
            SheetSlot("mild", 2, "Bruised"),
            SheetSlot("moderate", 4, "Cut"),
            SheetSlot("severe", 6, "Broken"),
        ],
    )
    return Table(world(hurt, MARGOT))


def treat(table: Table, slot_id: str) -> None:
    table.run(
        lambda s: actions.start_action(
            s,
            StartAction("overcome", "b", "Lore", recovery_of=("b", slot_id)),
            PAUL,
            dice((1, 1, 1, 1)),
            UNWRITTEN,
        )
    )
    pass_actor(table, table.action().id, PAUL)


def status(table: Table, slot_id: str) -> tuple[str, bool]:
    slot = next(s for s in table.character("b").consequences if s.id == slot_id)
    return slot.status, slot.aspect_id is not None


def test_r7_5_two_scene_ends_show_mild_recovery_timing() -> None:
    # R7.5: addressed -> recovering (first end) -> removed (second end).
    table = hurt_table()
    treat(table, "mild")
    assert status(table, "mild") == ("addressed", True)
    table.run(lambda s: end_scene(s, GM_USER)[0])
    assert status(table, "mild") == ("recovering", True)
    table.run(lambda s: end_scene(s, GM_USER)[0])
    assert status(table, "mild") == ("fresh", False)


def test_r7_5_moderate_waits_a_session_severe_a_scenario() -> None:
    # R7.5 Decision: moderate goes at the end of the session after it began recovering;
    # severe at the end of the scenario after.
    table = hurt_table()
    treat(table, "moderate")
    treat(table, "severe")
    table.run(lambda s: end_scene(s, GM_USER, scope="session")[0])
    assert status(table, "moderate") == ("recovering", True)
    table.run(lambda s: end_scene(s, GM_USER, scope="session")[0])
    assert status(table, "moderate") == ("fresh", False)
    assert status(table, "severe") == ("recovering", True)
    table.run(lambda s: end_scene(s, GM_USER, scope="scenario")[0])
    assert status(table, "severe") == ("recovering", True)  # began in this scenario
    table.run(lambda s: end_scene(s, GM_USER, scope="scenario")[0])
    assert status(table, "severe") == ("fresh", False)


def test_r12_2_session_refreshes_up_to_refresh_and_scenario_resets() -> None:
    # R12.2: a session refills up to refresh (extras kept); a scenario resets to refresh.
    rich = sheet("b", "Brousseau", owners=["paul"], fate_points=5)
    poor = sheet("m", "Margot", owners=["anna"], fate_points=1)
    table = Table(world(rich, poor))
    events, summary = end_scene(table.state, GM_USER, scope="session")
    table.run(lambda _s: events)
    assert table.character("b").fate_points == 5
    assert table.character("m").fate_points == 3
    assert summary.refreshed == {"m": (1, 3)}
    assert table.state.scene.session == 2
    table.run(lambda s: end_scene(s, GM_USER, scope="scenario")[0])
    assert table.character("b").fate_points == 3
    assert table.state.scene.scenario == 2


def test_r12_2_gm_budget_per_scene() -> None:
    # R12.2: by default one point per player character, or what the GM sets.
    table = Table(world())
    table.run(lambda s: end_scene(s, GM_USER)[0])
    assert table.state.gm_fate_points == 2
    table.run(lambda s: end_scene(s, GM_USER, gm_budget=5)[0])
    assert table.state.gm_fate_points == 5


def test_r12_3_r12_4_compels_and_spending() -> None:
    # R12.4 accept a compel: +1; R12.3 refuse: -1, spend for a detail: -1.
    table = Table(world())
    table.run(
        lambda s: fate.offer_compel(s, "b", "Your skepticism makes you ignore the cold", GM_USER)
    )
    compel_id = next(iter(table.state.compels))
    refused("forbidden", lambda: fate.answer_compel(table.state, compel_id, True, ANNA))
    table.run(lambda s: fate.answer_compel(s, compel_id, True, PAUL))
    assert table.character("b").fate_points == 4
    refused("not_found", lambda: fate.answer_compel(table.state, compel_id, True, PAUL))
    table.run(lambda s: fate.offer_compel(s, "b", "Again", GM_USER))
    second = next(c for c in table.state.compels if c != compel_id)
    table.run(lambda s: fate.answer_compel(s, second, False, PAUL))
    assert table.character("b").fate_points == 3
    table.run(lambda s: fate.spend(s, "b", "detail", PAUL))
    assert table.character("b").fate_points == 2
    broke = Table(world(sheet("b", "B", owners=["paul"], fate_points=0)))
    refused("no_fate_points", lambda: fate.spend(broke.state, "b", "stunt", PAUL))
    broke.run(lambda s: fate.offer_compel(s, "b", "x", GM_USER))
    refused(
        "no_fate_points",
        lambda: fate.answer_compel(broke.state, next(iter(broke.state.compels)), False, PAUL),
    )


def test_r12_5_sacrifice_with_no_fate_points_left() -> None:
    # R12.5: only with none left; rolls up; the GM gets a free invoke; mild 1, moderate 2.
    table = Table(
        world(
            sheet(
                "b",
                "Brousseau",
                owners=["paul"],
                fate_points=0,
                slots=[SheetSlot("mild", 2, "Tired"), *STANDARD_SLOTS[1:]],
            )
        )
    )
    table.run(lambda s: fate.sacrifice(s, "b", 2, "Drained", PAUL, UNWRITTEN))
    brousseau = table.character("b")
    moderate = next(s for s in brousseau.consequences if s.id == "moderate")
    assert table.state.aspects[moderate.aspect_id or ""].free_invokes == {"gm": 1}
    assert brousseau.fate_points == 1  # by the chosen severity: mild gives 1
    refused("has_fate_points", lambda: fate.sacrifice(table.state, "b", 6, "X", PAUL, UNWRITTEN))
    full = Table(world(sheet("b", "B", owners=["paul"], fate_points=0, slots=())))
    refused("no_slot", lambda: fate.sacrifice(full.state, "b", 2, "X", PAUL, UNWRITTEN))


def test_unused_names_stay_importable() -> None:
    assert BROUSSEAU.id == "b" and GHOUL.id == "g" and Helper("b").character_id == "b"


def test_r12_1_scene_end_archives_what_is_finished_and_closes_procedures() -> None:
    # Decision: contests, challenges and conflicts belong to their scene; its end closes
    # them (unfinished ones without a result, named on the summary). Resolved actions leave
    # the live state; an action still in its invoke phase stays. The log keeps everything.
    table = Table(world())
    for _ in range(2):
        rolled = dice(ZERO)
        table.run(
            lambda s, d=rolled: actions.start_action(  # type: ignore[misc]
                s,
                StartAction("overcome", "b", "Athletics", passive_rating=0),
                PAUL,
                d,
                UNWRITTEN,
            )
        )
        gm_confirms(table, rolled)
        if table.state.action_count == 1:
            pass_actor(table, "a1", PAUL)
    cid = direct_contest(table)
    table.run(lambda s: contest.concede_contest(s, cid, "s2", GM_USER))
    table.run(
        lambda s: challenge.start_challenge(
            s, "Unrowed", [challenge.TaskSpec("Row", "Athletics", 1)], GM_USER
        )
    )
    events, summary = end_scene(table.state, GM_USER)
    table.run(lambda _s: events)
    assert set(table.state.actions) == {"a2"}  # a1 resolved; a2 still in its invoke phase
    assert table.state.contests == {} and table.state.challenges == {}
    assert summary.closed_unfinished == ["Unrowed"]
    from bridge.rules.engine import replay

    assert replay(table.log, world()) == table.state


def test_r11_actions_import_nothing_of_the_procedures_that_contain_them() -> None:
    # R11.1, R11.2: contests and challenges observe resolutions (bridge.rules.procedures);
    # the action rules never reach up to them.
    import ast
    from pathlib import Path

    import bridge.rules.actions as action_package

    folder = Path(action_package.__file__).parent
    imported: set[str] = set()
    for source in folder.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
                imported |= {f"{node.module}.{alias.name}" for alias in node.names}
            elif isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names}
    containers = {"contest", "challenge", "conflict", "procedures"}
    assert not {m for m in imported if m.rsplit(".", 1)[-1] in containers}, imported
