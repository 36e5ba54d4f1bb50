"""Every action resolved by the rules (R2, R4-R10, R12.6), on queued dice."""

from __future__ import annotations

import pytest

from bridge.rules import actions, history, scene
from bridge.rules.actions import (
    AbsorbCommand,
    ChoiceValue,
    CostCommand,
    Helper,
    InvokeCommand,
    InvokeEffect,
    Payment,
    Principal,
    SideName,
    StartAction,
    StressMark,
)
from bridge.rules.consequences import place_consequence
from bridge.rules.dice import Roll
from bridge.rules.draft import Draft
from bridge.rules.engine import SheetSlot, replay
from bridge.rules.errors import RuleViolation
from bridge.rules.events import ActionCancelled, Event
from bridge.rules.ruleset import FATE_CONDENSED, UNWRITTEN
from bridge.rules.state import GM, Aspect, Earning, Stunt, WorldState
from tests.rules_fixtures import (
    ANNA,
    BROUSSEAU,
    GM_USER,
    MARGOT,
    PAUL,
    STANDARD_SLOTS,
    ZERO,
    Table,
    dice,
    gm_confirms,
    one_task_challenge,
    refused,
    sheet,
    with_aspect,
    world,
)

BRIDGE_ASPECT = Aspect(id="sit-bridge", name="Rickety Bridge", kind="situation")


def start(
    table: Table, who: Principal = PAUL, *rolls: Roll, confirm: bool = True, **kwargs: object
) -> None:
    """Declare an action; unless ``confirm`` is False, the GM confirms the player's
    proposal as it stands and accepts every invited helper (R2.1, R9.1, R10.1)."""
    fields: dict[str, object] = {"type": "overcome", "actor_id": "b", "skill": "Athletics"}
    fields.update(kwargs)
    if "passive_rating" not in fields and "opposer_id" not in fields:
        fields["passive_rating"] = 2
    command = StartAction(**fields)  # type: ignore[arg-type]
    queued = dice(*rolls)
    table.run(lambda s: actions.start_action(s, command, who, queued, table.ruleset))
    if confirm:
        gm_confirms(table, queued)


def invoke(
    table: Table,
    who: Principal,
    invoker: str,
    aspect_id: str,
    payment: Payment = "fate_point",
    effect: InvokeEffect = "bonus",
    *rolls: Roll,
    side: SideName | None = None,
) -> None:
    command = InvokeCommand(
        table.action().id,
        invoker,
        aspect_id,
        payment,
        effect,
        side,
    )
    table.run(lambda s: actions.invoke(s, command, who, dice(*rolls), table.ruleset))


def pass_(table: Table, side: SideName, who: Principal) -> None:
    action_id = table.action().id
    table.run(lambda s: actions.pass_invokes(s, action_id, side, who, table.ruleset))


def both_pass(table: Table, actor: Principal = PAUL, opposition: Principal = GM_USER) -> None:
    if not table.action().opposition.passed:
        pass_(table, "opposition", opposition)
    pass_(table, "actor", actor)


def choose(table: Table, choice: ChoiceValue, who: Principal = PAUL, **kwargs: str) -> None:
    action_id = table.action().id
    table.run(lambda s: actions.choose(s, action_id, choice, who, **kwargs))


def cost(table: Table, kind: str, **kwargs: str) -> None:
    command = CostCommand(table.action().id, kind, **kwargs)
    table.run(lambda s: actions.apply_cost(s, command, GM_USER, table.ruleset))


def slot(table: Table, character_id: str, slot_id: str):  # type: ignore[no-untyped-def]
    return next(s for s in table.character(character_id).consequences if s.id == slot_id)


def aspect_named(table: Table, name: str) -> Aspect:
    return next(a for a in table.state.aspects.values() if a.name == name)


# --- R2 opposition ---------------------------------------------------------------------


def test_r2_2_active_opposition_rolls_before_the_actor() -> None:
    # R2.2: the opposer picks its skill and rolls first; then the actor rolls.
    table = Table(world())
    start(table, PAUL, opposer_id="g")
    assert table.action().state == "awaiting_opposition"
    assert table.action().actor.roll.dice is None
    table.run(lambda s: actions.oppose(s, "a1", "Athletics", GM_USER, dice((1, 0, 0, 0), ZERO)))
    action = table.action()
    assert action.opposition.roll.dice == (1, 0, 0, 0)
    assert action.opposition.roll.total == 3  # Ghoul Athletics +2, dice +1
    assert action.actor.roll.dice == ZERO
    assert action.state == "invoking"
    assert action.opposition_action == "oppose"


def test_r2_2_only_the_opposers_owner_or_the_gm_picks_the_skill() -> None:
    # R2.2 Decision: the opposer's owner (or the GM for NPCs) picks the skill.
    table = Table(world())
    start(table, PAUL, opposer_id="m")
    refused(
        "forbidden",
        lambda: actions.oppose(table.state, "a1", "Notice", PAUL, dice(ZERO, ZERO)),
    )
    table.run(lambda s: actions.oppose(s, "a1", "Notice", ANNA, dice(ZERO, ZERO)))
    assert table.action().state == "invoking"


def test_r2_2_an_overwhelmed_target_cannot_oppose() -> None:
    # R2.2, R8.2
    state = world()
    ghoul = state.characters["g"].model_copy(update={"overwhelmed": True})
    state = state.model_copy(update={"characters": {**state.characters, "g": ghoul}})
    table = Table(state)
    refused("overwhelmed", lambda: start(table, PAUL, opposer_id="g"))


def test_r2_3_shifts_against_active_opposition() -> None:
    # R2.3
    table = Table(world())
    start(table, PAUL, opposer_id="g")
    table.run(lambda s: actions.oppose(s, "a1", "Athletics", GM_USER, dice(ZERO, (1, 1, 1, 0))))
    both_pass(table)
    assert table.action().shifts == (3 + 3) - 2


# --- R4 invoke phase --------------------------------------------------------------------


def test_r4_1_invoke_for_plus_two() -> None:
    # R4.1, R4.2 (fate point), R1.2 (invoke bonus in the total)
    table = Table(world())
    start(table, PAUL, ZERO, passive_rating=4)
    invoke(table, PAUL, "b", "b.hc")
    action = table.action()
    assert action.actor.roll.invoke_bonus == 2
    assert action.actor.roll.total == 5
    assert table.character("b").fate_points == 2
    assert action.invokes[0].payment == "fate_point"


def test_r4_1_reroll_replaces_the_dice_and_keeps_bonuses() -> None:
    # R4.1: the new dice replace the old; bonuses already gained stay.
    table = Table(world(gm_fate_points=0))
    start(table, PAUL, (-1, -1, -1, -1), passive_rating=4)
    invoke(table, PAUL, "b", "b.hc")
    table.state = with_aspect(
        table.state, BRIDGE_ASPECT.model_copy(update={"free_invokes": {"b": 1}})
    )
    invoke(table, PAUL, "b", "sit-bridge", "free", "reroll", (1, 1, 0, 0))
    action = table.action()
    assert action.actor.roll.dice == (1, 1, 0, 0)
    assert action.actor.roll.invoke_bonus == 2
    assert action.actor.roll.total == 3 + 2 + 2
    assert action.invokes[-1].dice == (1, 1, 0, 0)


def test_r4_1_hostile_invoke_only_in_fate_condensed() -> None:
    # R4.1: Fate Condensed allows -2 to the other side with an aspect on the opponent.
    fc = Table(world(ruleset=FATE_CONDENSED))
    start(fc, PAUL, ZERO, opposer_id="g")
    fc.run(lambda s: actions.oppose(s, "a1", "Athletics", GM_USER, dice(ZERO, ZERO)))
    invoke(fc, PAUL, "b", "g.hc", "fate_point", "hostile")
    assert fc.action().opposition.roll.invoke_bonus == -2
    unwritten = Table(world())
    start(unwritten, PAUL, ZERO, opposer_id="g")
    unwritten.run(lambda s: actions.oppose(s, "a1", "Athletics", GM_USER, dice(ZERO, ZERO)))
    refused(
        "not_in_ruleset",
        lambda: invoke(unwritten, PAUL, "b", "g.hc", "fate_point", "hostile"),
    )


def test_r4_2_npc_invokes_are_paid_from_the_gm_budget() -> None:
    # R4.2: the GM pays NPC invokes from the scene budget.
    table = Table(world(gm_fate_points=1))
    start(table, PAUL, ZERO, opposer_id="g")
    table.run(lambda s: actions.oppose(s, "a1", "Athletics", GM_USER, dice(ZERO, ZERO)))
    invoke(table, GM_USER, "g", "g.hc")
    assert table.state.gm_fate_points == 0
    assert table.action().opposition.roll.invoke_bonus == 2
    table.state = with_aspect(table.state, BRIDGE_ASPECT)
    refused("no_fate_points", lambda: invoke(table, GM_USER, "g", "sit-bridge"))


def test_r4_2_boost_is_spent_by_the_use() -> None:
    # R4.2, R12.6: a boost pays for one invoke and vanishes.
    table = Table(world())
    boost = Aspect(id="boost1", name="Head Start", kind="boost", free_invokes={"b": 1})
    table.state = with_aspect(table.state, boost)
    start(table, PAUL, ZERO)
    invoke(table, PAUL, "b", "boost1", "boost")
    assert "boost1" not in table.state.aspects
    assert table.action().actor.roll.invoke_bonus == 2
    refused("not_found", lambda: invoke(table, PAUL, "b", "boost1", "boost"))


def test_r4_3_an_aspect_is_fate_point_invoked_once_per_side_but_free_invokes_stack() -> None:
    # R4.3
    table = Table(world())
    table.state = with_aspect(
        table.state, BRIDGE_ASPECT.model_copy(update={"free_invokes": {"b": 2}})
    )
    start(table, PAUL, ZERO, passive_rating=8)
    invoke(table, PAUL, "b", "sit-bridge", "fate_point")
    refused("already_invoked", lambda: invoke(table, PAUL, "b", "sit-bridge", "fate_point"))
    invoke(table, PAUL, "b", "sit-bridge", "free")
    invoke(table, PAUL, "b", "sit-bridge", "free")
    assert table.action().actor.roll.invoke_bonus == 6
    assert table.state.aspects["sit-bridge"].free_invokes == {}
    refused("no_free_invokes", lambda: invoke(table, PAUL, "b", "sit-bridge", "free"))


def test_r4_4_invoking_reopens_the_exchange_until_both_pass() -> None:
    # R4.4
    table = Table(world(gm_fate_points=2))
    start(table, PAUL, ZERO, opposer_id="g")
    table.run(lambda s: actions.oppose(s, "a1", "Athletics", GM_USER, dice(ZERO, ZERO)))
    pass_(table, "actor", PAUL)
    assert table.action().state == "invoking"
    invoke(table, GM_USER, "g", "g.hc")
    assert table.action().actor.passed is False
    pass_(table, "opposition", GM_USER)
    assert table.action().state == "invoking"
    pass_(table, "actor", PAUL)
    assert table.action().state != "invoking"
    assert table.action().shifts == 3 - 4


def test_r4_4_only_a_sides_owner_or_the_gm_passes_for_it() -> None:
    table = Table(world())
    start(table, PAUL, ZERO)
    refused("forbidden", lambda: pass_(table, "actor", ANNA))
    refused("forbidden", lambda: pass_(table, "opposition", PAUL))


def test_r4_5_fate_point_on_another_characters_aspect_pays_them_at_scene_end() -> None:
    # R4.5: pending for PCs; NPCs controlled by the GM receive nothing.
    table = Table(world(gm_fate_points=1))
    start(table, PAUL, ZERO, opposer_id="m")
    table.run(lambda s: actions.oppose(s, "a1", "Notice", ANNA, dice(ZERO, ZERO)))
    table.state = with_aspect(
        table.state, Aspect(id="m.hc", name="Nosy Neighbour", kind="character", attached_to="m")
    )
    invoke(table, PAUL, "b", "m.hc")
    assert table.character("m").pending_fate_points == 1
    assert table.character("m").fate_points == 3
    table2 = Table(world())
    start(table2, PAUL, ZERO, opposer_id="g")
    table2.run(lambda s: actions.oppose(s, "a1", "Athletics", GM_USER, dice(ZERO, ZERO)))
    invoke(table2, PAUL, "b", "g.hc")
    assert table2.character("g").pending_fate_points == 0


def test_r4_6_no_fate_points_no_invoke_and_nothing_changes() -> None:
    # R4.6
    table = Table(
        world(
            sheet(
                "b",
                "Brousseau",
                owners=["paul"],
                skills={"Athletics": 3},
                fate_points=0,
                aspects=[("hc", "Skeptic")],
            )
        )
    )
    start(table, PAUL, ZERO)
    before = table.state
    refused("no_fate_points", lambda: invoke(table, PAUL, "b", "b.hc"))
    assert table.state == before


def test_r4_6_only_the_holder_spends_free_invokes() -> None:
    # R4.6
    table = Table(world())
    table.state = with_aspect(
        table.state, BRIDGE_ASPECT.model_copy(update={"free_invokes": {"m": 1}})
    )
    start(table, PAUL, ZERO)
    refused("no_free_invokes", lambda: invoke(table, PAUL, "b", "sit-bridge", "free"))
    refused("forbidden", lambda: invoke(table, PAUL, "m", "sit-bridge", "free"))


# --- R5 resolution ---------------------------------------------------------------------


def create_advantage(table: Table, roll: Roll, rating: int = 2, **kwargs: object) -> None:
    start(
        table,
        PAUL,
        roll,
        confirm=True,
        type="create_advantage",
        skill="Notice",
        passive_rating=rating,
        aspect_name="Loose Floorboard",
        **kwargs,
    )
    both_pass(table)


def test_r5_2_create_advantage_succeed_places_an_aspect_with_one_free_invoke() -> None:
    # R5.2
    table = Table(world())
    create_advantage(table, (1, 0, 0, 0))  # Notice 2 + 1 = 3 vs 2: succeed
    aspect = aspect_named(table, "Loose Floorboard")
    assert aspect.kind == "situation"
    assert aspect.free_invokes == {"b": 1}
    assert table.action().state == "resolved"


def test_r5_2_create_advantage_excel_gives_two_free_invokes() -> None:
    # R5.2
    table = Table(world())
    create_advantage(table, (1, 1, 1, 0))
    assert aspect_named(table, "Loose Floorboard").free_invokes == {"b": 2}


def test_r5_2_create_advantage_tie_gives_a_boost_instead() -> None:
    # R5.2
    table = Table(world())
    create_advantage(table, ZERO)
    assert not any(
        a.name == "Loose Floorboard" and a.kind == "situation" for a in table.state.aspects.values()
    )
    boost = aspect_named(table, "Loose Floorboard")
    assert boost.kind == "boost" and boost.free_invokes == {"b": 1}


def test_r5_2_create_advantage_fumble_choices() -> None:
    # R5.2: fail; an aspect not what the actor intended, which the actor chooses and
    # describes (the GM may rename it) with no free invokes; or a serious cost (Decision:
    # the aspect is then placed with one free invoke); the GM may gift a free invoke.
    unintended = Table(world())
    create_advantage(unintended, (-1, -1, 0, 0))
    assert unintended.action().pending_choice == "advantage_fumble"
    refused(
        "forbidden",
        lambda: choose(unintended, "unintended_aspect", ANNA, aspect_name="Creaking Noise"),
    )
    refused("invalid", lambda: choose(unintended, "unintended_aspect", PAUL))
    choose(unintended, "unintended_aspect", PAUL, aspect_name="Creaking Noise")
    assert aspect_named(unintended, "Creaking Noise").free_invokes == {}
    aspect_id = aspect_named(unintended, "Creaking Noise").id
    # R5.2: the GM may rename it.
    unintended.run(
        lambda s: scene.edit_aspect(s, GM_USER, "edit", aspect_id=aspect_id, name="Loud Creak")
    )
    assert unintended.state.aspects[aspect_id].name == "Loud Creak"
    unintended.run(lambda s: actions.gift_free_invoke(s, "a1", aspect_id, "g", GM_USER))
    assert unintended.state.aspects[aspect_id].free_invokes == {"g": 1}
    refused(
        "invalid",
        lambda: actions.gift_free_invoke(unintended.state, "a1", aspect_id, "b", GM_USER),
    )

    at_cost = Table(world())
    create_advantage(at_cost, (-1, -1, 0, 0))
    choose(at_cost, "succeed_at_cost")
    cost(at_cost, "delay", text="It takes all night")
    assert aspect_named(at_cost, "Loose Floorboard").free_invokes == {"b": 1}


def test_r5_3_take_advantage_of_an_existing_aspect() -> None:
    # R5.3: tie or succeed one free invoke; excel two; fumble -> fail or serious cost + one.
    cases: tuple[tuple[Roll, int], ...] = (((-1, 0, 0, 0), 1), ((1, 0, 0, 0), 1), ((1, 1, 1, 0), 2))
    for roll, expected in cases:
        table = Table(with_aspect(world(), BRIDGE_ASPECT))
        start(
            table,
            PAUL,
            roll,
            type="take_advantage",
            skill="Athletics",
            passive_rating=2,
            target_aspect_id="sit-bridge",
        )
        both_pass(table)
        assert table.state.aspects["sit-bridge"].free_invokes == {"b": expected}, roll
    fumble = Table(with_aspect(world(), BRIDGE_ASPECT))
    start(
        fumble,
        PAUL,
        (-1, -1, -1, 0),
        type="take_advantage",
        skill="Athletics",
        passive_rating=2,
        target_aspect_id="sit-bridge",
    )
    both_pass(fumble)
    choose(fumble, "succeed_at_cost")
    cost(fumble, "mild_consequence", aspect_name="Splinters")
    assert fumble.state.aspects["sit-bridge"].free_invokes == {"b": 1}
    refused(
        "invalid",
        lambda: start(Table(world()), PAUL, ZERO, type="take_advantage", target_aspect_id="nope"),
    )


def test_r5_4_leave_a_mark_places_a_mild_consequence_with_the_other_free_invoke() -> None:
    # R5.4 (Decision: the remaining free invoke sits on that consequence)
    table = Table(world())
    create_advantage(table, (1, 1, 1, 0), target_id="m")
    assert table.action().pending_choice == "leave_mark"
    choose(table, "mark", consequence_name="Twisted Ankle")
    margot_mild = slot(table, "m", "mild")
    consequence = table.state.aspects[margot_mild.aspect_id or ""]
    assert consequence.name == "Twisted Ankle"
    assert consequence.kind == "consequence"
    assert consequence.free_invokes == {"b": 1}


def test_r5_4_leave_a_mark_on_a_full_track_overwhelms() -> None:
    # R5.4, R7.2, R8.1
    full = sheet("m", "Margot", owners=["anna"], skills={"Notice": 1}, slots=())
    table = Table(world(BROUSSEAU, full))
    create_advantage(table, (1, 1, 1, 0), target_id="m")
    choose(table, "mark", consequence_name="Twisted Ankle")
    assert table.character("m").overwhelmed
    assert table.character("m").overwhelmed_by == "b"


def test_r5_4_choosing_the_aspect_keeps_two_free_invokes() -> None:
    table = Table(world())
    create_advantage(table, (1, 1, 1, 0), target_id="m")
    choose(table, "aspect")
    aspect = aspect_named(table, "Loose Floorboard")
    assert aspect.free_invokes == {"b": 2}
    assert aspect.attached_to == "m"


def discover(table: Table, roll: Roll, rating: int = 1, situation: str = "the study") -> None:
    start(
        table,
        PAUL,
        roll,
        type="discover",
        skill="Notice",
        passive_rating=rating,
        situation=situation,
    )
    both_pass(table)


def test_r5_5_discover_one_question_per_shift_and_a_hint_on_excel() -> None:
    # R5.5
    table = Table(world())
    discover(table, (1, 0, 0, 0))  # 3 vs 1: two shifts
    questions = next(e for e in table.action().effects if e.kind == "questions")
    assert questions.count == 2
    excel = Table(world())
    discover(excel, (1, 1, 0, 0), rating=0)  # 4 shifts
    kinds = [e.kind for e in excel.action().effects]
    assert "hint" in kinds
    assert next(e for e in excel.action().effects if e.kind == "questions").count == 4
    assert excel.state.scene.hints_open == ("b",)


def test_r5_5_discover_tie_at_a_minor_cost_asks_one_question() -> None:
    # R5.5
    table = Table(world())
    discover(table, (-1, 0, 0, 0))  # 1 vs 1 tie
    assert table.action().cost_severity == "minor"
    choose(table, "succeed_at_cost")
    cost(table, "wrinkle", text="The lamp goes out")
    assert next(e for e in table.action().effects if e.kind == "questions").count == 1


def test_r5_6_discover_is_exhausted_until_the_situation_changes() -> None:
    # R5.6 (Decision: tracked per actor and situation; the GM may allow a repeat)
    table = Table(world())
    discover(table, (1, 0, 0, 0))
    refused("exhausted", lambda: discover(table, (1, 0, 0, 0)))
    discover(table, (1, 0, 0, 0), situation="the cellar")
    start(
        table,
        GM_USER,
        (1, 0, 0, 0),
        type="discover",
        skill="Notice",
        passive_rating=1,
        situation="the study",
        allow_repeat=True,
    )
    assert table.action().state == "invoking"
    # A create-an-advantage on the situation changes it.
    fresh = Table(world())
    discover(fresh, (1, 0, 0, 0))
    create_advantage(fresh, (1, 0, 0, 0), situation="the study")
    discover(fresh, (1, 0, 0, 0))
    assert fresh.action().type == "discover"


def test_r5_7_opposer_excels_by_three_and_gains_a_boost() -> None:
    # R5.7
    table = Table(world())
    start(table, PAUL, opposer_id="m")
    table.run(lambda s: actions.oppose(s, "a1", "Lore", ANNA, dice((1, 1, 0, 0), (-1, -1, 0, 0))))
    both_pass(table, opposition=ANNA)
    assert table.action().shifts == 1 - 6
    boost = next(e for e in table.action().effects if e.kind == "boost")
    assert boost.character_id == "m"


def test_r5_8_an_overcome_obstacle_stays_overcome() -> None:
    # R5.8 (Decision: recorded; a repeat is refused unless the GM allows it)
    table = Table(world())
    start(table, PAUL, ZERO, situation="the chasm")
    both_pass(table)
    refused("already_overcome", lambda: start(table, PAUL, ZERO, situation="the chasm"))
    start(table, GM_USER, ZERO, situation="the chasm", allow_repeat=True)


def fc_attack(table: Table, attack_roll: Roll, defend_roll: Roll = ZERO) -> None:
    start(table, PAUL, type="attack", skill="Athletics", opposer_id="g")
    table.run(
        lambda s: actions.oppose(s, "a1", "Athletics", GM_USER, dice(defend_roll, attack_roll))
    )
    both_pass(table)


def fc_world() -> WorldState:
    ghoul = sheet("g", "Ghoul", skills={"Athletics": 2}, stress=3, aspects=[("hc", "Hungry")])
    return world(BROUSSEAU, ghoul, ruleset=FATE_CONDENSED)


def test_r5_9_attack_outcomes() -> None:
    # R5.9: fail no hit; tie a boost; succeed a hit of the shifts; excel a choice.
    fail = Table(fc_world())
    fc_attack(fail, (-1, -1, 0, 0))
    assert fail.action().state == "resolved" and not fail.action().succeeded
    tie = Table(fc_world())
    fc_attack(tie, (-1, 0, 0, 0))
    assert any(e.kind == "boost" and e.character_id == "b" for e in tie.action().effects)
    hit = Table(fc_world())
    fc_attack(hit, (1, 0, 0, 0))
    assert hit.action().state == "absorbing" and hit.action().pending_hit == 2
    style = Table(fc_world())
    fc_attack(style, (1, 1, 1, 1))
    assert style.action().pending_choice == "attack_style"
    choose(style, "boost")
    assert style.action().pending_hit == 4
    assert any(e.kind == "boost" for e in style.action().effects)


def test_r5_9_defend_excel_gives_the_defender_a_boost() -> None:
    # R5.9 defend: excel, denied and a boost.
    table = Table(fc_world())
    fc_attack(table, (-1, -1, -1, 0), (1, 1, 0, 0))
    assert table.action().opposition_action == "defend"
    assert any(e.kind == "boost" and e.character_id == "g" for e in table.action().effects)


def marks(*boxes: int, track: str = "physical") -> tuple[StressMark, ...]:
    return (StressMark(track, boxes),)


def test_r5_10_a_hit_is_absorbed_by_stress_and_consequences() -> None:
    # R5.10: boxes one shift each, consequences their value; must absorb it all.
    table = Table(fc_world())
    fc_attack(table, (1, 1, 1, 0))  # 6 vs 2: excel -> choose full hit of 4
    choose(table, "full_hit")
    action_id = table.action().id
    refused(
        "invalid",
        lambda: actions.absorb(table.state, AbsorbCommand(action_id, marks(0, 1)), GM_USER),
    )
    table.run(
        lambda s: actions.absorb(
            s,
            AbsorbCommand(action_id, marks(0, 1), consequences={"mild": "Bitten"}),
            GM_USER,
        )
    )
    ghoul = table.character("g")
    assert [b.marked for b in ghoul.stress[0].boxes] == [True, True, False]
    assert slot(table, "g", "mild").aspect_id is not None
    assert table.action().state == "resolved"


def test_r5_10_a_hit_beyond_capacity_takes_the_target_out() -> None:
    # R5.10, R8.1 (Fate Condensed: taken out)
    weak = sheet("g", "Ghoul", skills={"Athletics": 0}, stress=1, slots=())
    table = Table(world(BROUSSEAU, weak, ruleset=FATE_CONDENSED))
    fc_attack(table, (1, 1, 0, 0))  # 5 vs 0: excel
    choose(table, "full_hit")
    assert table.character("g").overwhelmed
    assert table.action().state == "resolved"


# --- R6 costs -------------------------------------------------------------------------


def overcome_tie(table: Table) -> None:
    start(table, PAUL, (-1, 0, 0, 0), passive_rating=2)
    both_pass(table)


def test_r6_1_minor_costs() -> None:
    # R6.1: give an NPC a boost; place a situation aspect on the actor; or narrative text.
    boost = Table(world())
    overcome_tie(boost)
    choose(boost, "succeed_at_cost")
    refused("invalid", lambda: cost(boost, "mild_consequence", aspect_name="X"))
    refused("invalid", lambda: cost(boost, "npc_boost", target_id="m"))
    cost(boost, "npc_boost", target_id="g", aspect_name="Flanking")
    assert aspect_named(boost, "Flanking").free_invokes == {"g": 1}
    assert boost.action().succeeded is True
    aspect = Table(world())
    overcome_tie(aspect)
    choose(aspect, "succeed_at_cost")
    cost(aspect, "aspect_on_actor", aspect_name="Out of Breath")
    assert aspect_named(aspect, "Out of Breath").attached_to == "b"
    text = Table(world())
    overcome_tie(text)
    choose(text, "succeed_at_cost")
    refused("invalid", lambda: cost(text, "wrinkle"))
    cost(text, "wrinkle", text="The guard dog wakes")
    assert text.action().costs[0].text == "The guard dog wakes"


def test_r6_2_serious_cost_places_a_mild_consequence_rolling_up() -> None:
    # R6.2, R7.2: the mild slot is taken, so it rolls up to moderate.
    state = world()
    table = Table(state)
    start(table, PAUL, (-1, -1, -1, -1), passive_rating=2)
    both_pass(table)
    choose(table, "succeed_at_cost")
    cost(table, "mild_consequence", aspect_name="Bruised Ribs")
    start(table, PAUL, (-1, -1, -1, -1), passive_rating=2)
    both_pass(table)
    choose(table, "succeed_at_cost")
    cost(table, "mild_consequence", aspect_name="Sprained Wrist")
    assert table.state.aspects[slot(table, "b", "mild").aspect_id or ""].name == "Bruised Ribs"
    assert (
        table.state.aspects[slot(table, "b", "moderate").aspect_id or ""].name == "Sprained Wrist"
    )


def test_r6_2_serious_cost_gives_an_opponent_an_advantage() -> None:
    # R6.2
    table = Table(world())
    start(table, PAUL, (-1, -1, -1, -1), passive_rating=2)
    both_pass(table)
    choose(table, "succeed_at_cost")
    cost(table, "opponent_advantage", target_id="g", aspect_name="Cornered")
    assert aspect_named(table, "Cornered").free_invokes == {"g": 1}


def test_r6_3_a_cost_on_combined_skills_falls_on_every_participant() -> None:
    # R6.3
    table = Table(world())
    start(table, PAUL, (-1, -1, -1, -1), passive_rating=2, helpers=(Helper("m"),))
    both_pass(table)
    choose(table, "succeed_at_cost")
    cost(table, "mild_consequence", aspect_name="Exhausted")
    assert slot(table, "b", "mild").aspect_id is not None
    assert slot(table, "m", "mild").aspect_id is not None


def test_r6_only_the_gm_picks_the_cost_and_only_the_owner_chooses() -> None:
    table = Table(world())
    overcome_tie(table)
    refused("forbidden", lambda: choose(table, "succeed_at_cost", ANNA))
    choose(table, "succeed_at_cost")
    refused(
        "forbidden",
        lambda: actions.apply_cost(
            table.state, CostCommand("a1", "wrinkle", text="x"), PAUL, UNWRITTEN
        ),
    )


# --- R7 consequences -----------------------------------------------------------------


def test_r7_1_default_slots_mild_moderate_severe() -> None:
    # R7.1
    table = Table(world())
    assert [s.severity for s in table.character("b").consequences] == [2, 4, 6]


def test_r7_2_roll_up_to_the_lowest_empty_slot_then_overwhelm() -> None:
    # R7.2, R8.1
    from bridge.rules.consequences import place_consequence
    from bridge.rules.draft import Draft

    draft = Draft(world(), "test")
    taken = [place_consequence(draft, "b", 2, f"C{i}", caused_by="gm") for i in range(4)]
    assert [p.slot.severity if p.slot else None for p in taken] == [2, 4, 6, None]
    assert draft.character("b").overwhelmed


def test_r7_3_consequences_carry_no_free_invokes_unless_a_rule_says_so() -> None:
    # R7.3
    table = Table(world())
    start(table, PAUL, (-1, -1, -1, -1), passive_rating=2)
    both_pass(table)
    choose(table, "succeed_at_cost")
    cost(table, "mild_consequence", aspect_name="Bruised")
    assert aspect_named(table, "Bruised").free_invokes == {}


def test_r7_4_recovery_overcome_marks_the_consequence_addressed() -> None:
    # R7.4: against the consequence's value, +2 when treating oneself.
    hurt = sheet(
        "b",
        "Brousseau",
        owners=["paul"],
        skills={"Lore": 1},
        slots=[],
    )

    hurt = sheet(
        "b",
        "Brousseau",
        owners=["paul"],
        skills={"Lore": 1},
        slots=[SheetSlot("mild", 2, "Sprained Ankle"), *STANDARD_SLOTS[1:]],
    )
    table = Table(world(hurt, MARGOT))
    start(table, ANNA, (1, 1, 0, 0), actor_id="m", skill="Lore", recovery_of=("b", "mild"))
    assert table.action().opposition.roll.passive_rating == 2
    both_pass(table, actor=ANNA)
    assert slot(table, "b", "mild").status == "addressed"
    self_treat = Table(world(hurt, MARGOT))
    start(self_treat, PAUL, ZERO, skill="Lore", recovery_of=("b", "mild"))
    assert self_treat.action().opposition.roll.passive_rating == 4


# --- R8 overwhelmed, R9 danger and concession ------------------------------------------


def test_r8_2_an_overwhelmed_character_cannot_act_oppose_or_help() -> None:
    # R8.2
    table = Table(world())
    start(table, PAUL, (-1, -1, -1, -1), passive_rating=2, dangerous_actor=True)
    table.run(lambda s: actions.roll_now(s, "a1", PAUL, dice((-1, -1, -1, -1))))
    both_pass(table)
    assert table.character("b").overwhelmed
    refused("overwhelmed", lambda: start(table, PAUL, ZERO))
    refused("overwhelmed", lambda: start(table, ANNA, ZERO, actor_id="m", helpers=(Helper("b"),)))
    refused("overwhelmed", lambda: start(table, ANNA, ZERO, actor_id="m", opposer_id="b"))


def test_r9_1_r9_2_dangerous_fumble_overwhelms_the_fumbling_side() -> None:
    # R9.1, R9.2
    table = Table(world())
    start(table, PAUL, passive_rating=2, dangerous_actor=True)
    assert table.action().state == "declared"
    table.run(lambda s: actions.roll_now(s, "a1", PAUL, dice((-1, -1, 0, 0))))
    both_pass(table)
    assert table.action().state == "resolved"
    assert table.character("b").overwhelmed


def test_r9_2_dangerous_for_the_opposition_only() -> None:
    # R9.2: only the endangered side is overwhelmed when it fumbles.
    table = Table(world())
    start(table, PAUL, opposer_id="g", dangerous_opposition=True)
    table.run(lambda s: actions.roll_now(s, "a1", PAUL, dice()))
    table.run(lambda s: actions.oppose(s, "a1", "Athletics", GM_USER, dice(ZERO, (1, 0, 0, 0))))
    both_pass(table)
    assert table.character("g").overwhelmed
    assert not table.character("b").overwhelmed


def test_r9_3_concession_before_the_roll_pays_a_fate_point_after_the_scene() -> None:
    # R9.3
    table = Table(world())
    start(table, PAUL, passive_rating=5, dangerous_actor=True)
    table.run(lambda s: actions.concede(s, "a1", "b", PAUL))
    brousseau = table.character("b")
    assert brousseau.overwhelmed
    assert brousseau.pending_fate_points == 1
    assert brousseau.fate_points == 3
    assert table.action().state == "resolved" and table.action().succeeded is False


def test_r9_3_no_concession_after_the_roll_or_when_not_dangerous() -> None:
    # R9.3: never after the dice hit the table.
    table = Table(world())
    start(table, PAUL, passive_rating=5, dangerous_actor=True)
    table.run(lambda s: actions.roll_now(s, "a1", PAUL, dice(ZERO)))
    refused("wrong_state", lambda: actions.concede(table.state, "a1", "b", PAUL))
    safe = Table(world())
    start(safe, PAUL, passive_rating=5, opposer_id="g")
    refused("not_dangerous", lambda: actions.concede(safe.state, "a1", "b", PAUL))


# --- R10 teamwork ----------------------------------------------------------------------


def test_r10_1_combined_skills_highest_leads_helpers_add_one() -> None:
    # R10.1: Margot (Lore 4) leads; Brousseau (Lore 1) adds +1; a Lore 0 helper adds nothing.
    nobody = sheet("n", "Nobody", owners=["paul"], skills={"Lore": 0})
    table = Table(world(BROUSSEAU, MARGOT, nobody))
    start(table, PAUL, ZERO, skill="Lore", helpers=(Helper("m"), Helper("n")))
    action = table.action()
    assert action.actor.leader == "m"
    assert set(action.actor.helpers) == {"b", "n"}
    assert action.actor.roll.skill_rating == 4
    assert action.actor.roll.teamwork_bonus == 1
    assert action.actor.roll.total == 5


def test_r10_1_helpers_bring_a_similar_skill() -> None:
    table = Table(world())
    start(table, PAUL, ZERO, helpers=(Helper("m", "Lore"),))
    assert table.action().actor.leader == "m"  # Lore 4 beats Athletics 3
    assert table.action().actor.roll.teamwork_bonus == 1


def test_r10_2_stack_advantages_by_handing_over_free_invokes() -> None:
    # R10.2
    table = Table(world())
    table.state = with_aspect(
        table.state, BRIDGE_ASPECT.model_copy(update={"free_invokes": {"m": 2, "b": 1}})
    )
    table.run(lambda s: actions.give_free_invokes(s, "sit-bridge", "m", "b", 2, ANNA))
    assert table.state.aspects["sit-bridge"].free_invokes == {"b": 3}
    refused(
        "no_free_invokes",
        lambda: actions.give_free_invokes(table.state, "sit-bridge", "m", "b", 1, ANNA),
    )
    refused(
        "forbidden",
        lambda: actions.give_free_invokes(table.state, "sit-bridge", "b", "m", 1, ANNA),
    )


# --- R12.6 boosts ------------------------------------------------------------------------


def test_r12_6_a_boost_has_exactly_one_free_invoke_and_vanishes_when_used() -> None:
    # R12.6
    table = Table(world())
    start(table, PAUL, ZERO, passive_rating=0)
    both_pass(table)
    boost_id = next(e.aspect_id for e in table.action().effects if e.kind == "boost") or ""
    assert table.state.aspects[boost_id].free_invokes == {"b": 1}
    start(table, PAUL, ZERO)
    invoke(table, PAUL, "b", boost_id, "boost")
    assert boost_id not in table.state.aspects


# --- rulesets as data -------------------------------------------------------------------


def test_rulesets_name_their_actions() -> None:
    table = Table(world())
    refused("not_in_ruleset", lambda: start(table, PAUL, type="attack", opposer_id="g"))
    fc = Table(world(ruleset=FATE_CONDENSED))
    refused("not_in_ruleset", lambda: start(fc, PAUL, type="take_advantage", target_aspect_id="x"))


def test_stunt_bonus_applies_to_its_skill_and_action() -> None:
    # R1.2: applicable stunt bonuses.
    acrobat = sheet(
        "b",
        "Brousseau",
        owners=["paul"],
        skills={"Athletics": 3},
        stunts=[Stunt(name="Parkour", skill="Athletics", bonus=2, actions=("overcome",))],
    )
    table = Table(world(acrobat))
    start(table, PAUL, ZERO)
    assert table.action().actor.roll.stunt_bonus == 2
    start(table, PAUL, ZERO, type="discover", situation="x")
    assert table.action().actor.roll.stunt_bonus == 0


def test_the_log_replays_to_the_same_state() -> None:
    table = Table(world())
    start(table, PAUL, (-1, 0, 0, 0))
    invoke(table, PAUL, "b", "b.hc")
    both_pass(table)
    assert replay(table.log, world()) == table.state


# --- R12.1 scene end (what issue 3's concession and invokes need) ---------------------


def test_r9_3_r12_1_concession_point_is_paid_when_the_scene_ends() -> None:
    # R9.3, R12.1, R12.4
    from bridge.rules.scene import end_scene

    table = Table(world())
    start(table, PAUL, passive_rating=5, dangerous_actor=True)
    table.run(lambda s: actions.concede(s, "a1", "b", PAUL))
    refused("forbidden", lambda: end_scene(table.state, PAUL))
    events, summary = end_scene(table.state, GM_USER)
    table.run(lambda _s: events)
    brousseau = table.character("b")
    assert brousseau.fate_points == 4
    assert brousseau.pending_fate_points == 0
    assert not brousseau.overwhelmed
    assert summary.fate_points == {"b": (1, [Earning(kind="conceded")])}


def test_r7_5_mild_recovery_takes_two_scene_ends() -> None:
    # R7.5: addressed -> recovering at the first scene end -> removed at the second.
    from bridge.rules.scene import end_scene

    hurt = sheet(
        "b",
        "Brousseau",
        owners=["paul"],
        skills={"Lore": 3},
        slots=[SheetSlot("mild", 2, "Sprained Ankle"), *STANDARD_SLOTS[1:]],
    )
    table = Table(world(hurt))
    start(table, PAUL, (1, 1, 0, 0), skill="Lore", recovery_of=("b", "mild"))
    both_pass(table)  # Lore 3 + 2 = 5 against Fair (+2) +2 for treating oneself
    assert slot(table, "b", "mild").status == "addressed"
    table.run(lambda s: end_scene(s, GM_USER)[0])
    assert slot(table, "b", "mild").status == "recovering"
    assert slot(table, "b", "mild").aspect_id is not None
    table.run(lambda s: end_scene(s, GM_USER)[0])
    assert slot(table, "b", "mild").aspect_id is None
    assert not any(a.kind == "consequence" for a in table.state.aspects.values())


def test_r12_1_boosts_expire_and_situation_aspects_clear_unless_kept() -> None:
    # R12.1, R12.6
    from bridge.rules.scene import end_scene

    table = Table(world())
    table.state = with_aspect(table.state, BRIDGE_ASPECT)
    table.state = with_aspect(table.state, Aspect(id="sit-fire", name="On Fire", kind="situation"))
    table.state = with_aspect(
        table.state, Aspect(id="boost1", name="Edge", kind="boost", free_invokes={"b": 1})
    )
    events, summary = end_scene(table.state, GM_USER, keep_aspects=("sit-fire",))
    table.run(lambda _s: events)
    assert set(table.state.aspects) >= {"sit-fire", "b.hc"}
    assert "sit-bridge" not in table.state.aspects and "boost1" not in table.state.aspects
    assert summary.expired_boosts == ["Edge"]
    assert table.state.scene.number == 2


def test_r5_5_unused_hint_pays_a_fate_point_at_scene_end() -> None:
    # R5.5
    from bridge.rules.scene import end_scene

    table = Table(world())
    discover(table, (1, 1, 0, 0), rating=0)
    table.run(lambda s: end_scene(s, GM_USER)[0])
    assert table.character("b").fate_points == 4


def test_r4_4_passive_opposition_does_not_need_the_gm_to_pass_again() -> None:
    # R4.4 Decision: with passive opposition the GM side stays passed when the actor
    # invokes; if the GM invokes, the actor gets to answer.
    table = Table(world(gm_fate_points=1))
    table.state = with_aspect(table.state, BRIDGE_ASPECT)
    start(table, PAUL, ZERO, passive_rating=4)
    invoke(table, PAUL, "b", "b.hc")
    assert table.action().opposition.passed
    invoke(table, GM_USER, GM, "sit-bridge")
    assert table.action().opposition.passed and not table.action().actor.passed
    pass_(table, "actor", PAUL)
    assert table.action().state == "choosing"  # 5 against 6: the invoke phase is over
    assert table.action().opposition.roll.total == 6


def test_r7_1_a_sheet_without_slots_gets_the_rulesets_defaults() -> None:
    # R7.1 Decision: one slot of each severity by default; Fate Condensed adds stress
    # (R5.10 Decision: a physical and a mental track of three 1-shift boxes).
    from bridge.rules.engine import Sheet, apply_all, sync_character

    bare = Sheet(id="x", name="Bare", owners=("paul",), skills={"Notice": 1})
    condensed = [("physical", "physical", [1, 1, 1]), ("mental", "mental", [1, 1, 1])]
    for ruleset, tracks in ((UNWRITTEN, []), (FATE_CONDENSED, condensed)):
        state = apply_all(
            WorldState(ruleset=ruleset.id),
            sync_character(WorldState(ruleset=ruleset.id), bare, ruleset),
        )
        character = state.characters["x"]
        assert [(s.id, s.severity) for s in character.consequences] == [
            ("mild", 2),
            ("moderate", 4),
            ("severe", 6),
        ]
        assert [(t.id, t.kind, [b.value for b in t.boxes]) for t in character.stress] == tracks
        assert not any(b.marked for t in character.stress for b in t.boxes)
        # A later sync that says nothing of consequences keeps them.
        again = sync_character(state, bare, ruleset)
        assert again == []


# --- No action blocks the table: declaring validates, resolution survives, the GM cancels ---


def run_refused(table: Table, command: object) -> RuleViolation:
    """The command is refused and the table keeps its state."""
    before = table.state
    with pytest.raises(RuleViolation) as caught:
        table.run(command)  # type: ignore[arg-type]
    assert table.state == before
    return caught.value


def test_r5_9_an_attack_needs_a_target() -> None:
    # R5.9, R5.10: a hit lands on someone; without one the action could never resolve.
    table = Table(fc_world())
    command = StartAction("attack", "b", "Athletics", passive_rating=1)
    error = run_refused(
        table, lambda s: actions.start_action(s, command, PAUL, dice(ZERO), table.ruleset)
    )
    assert (error.code, error.field) == ("invalid", "target_id")
    assert table.state.actions == {}
    itself = StartAction("attack", "b", "Athletics", passive_rating=1, target_id="b")
    error = run_refused(
        table, lambda s: actions.start_action(s, itself, PAUL, dice(ZERO), table.ruleset)
    )
    assert error.field == "target_id"


def test_declaring_refuses_an_aspect_that_does_not_exist() -> None:
    table = Table(world())
    command = StartAction(
        "overcome", "b", "Athletics", passive_rating=1, target_aspect_id="sit-nowhere"
    )
    error = run_refused(
        table, lambda s: actions.start_action(s, command, PAUL, dice(ZERO), table.ruleset)
    )
    assert (error.code, error.field) == ("not_found", "target_aspect_id")


def test_r5_3_take_advantage_of_an_aspect_that_vanished_resolves_without_invokes() -> None:
    # R5.3: the aspect left (the GM removed it) while the action was open: a clear outcome.
    table = Table(with_aspect(world(), BRIDGE_ASPECT))
    start(table, PAUL, (1, 1, 0, 0), type="take_advantage", target_aspect_id="sit-bridge")
    table.state = table.state.model_copy(update={"aspects": {}})
    both_pass(table)
    action = table.action()
    assert action.state == "resolved"
    assert [e.kind for e in action.effects] == ["vanished", "success"]
    assert action.effects[0].detail == "aspect"


def test_r7_4_recovery_of_a_consequence_already_gone_resolves_with_a_clear_effect() -> None:
    # R7.4: the consequence left its slot before the recovery roll resolved.
    table = Table(world())

    def hurt(state: WorldState) -> list[Event]:
        draft = Draft(state, "test")
        place_consequence(draft, "b", 2, "Sprained Ankle", caused_by=GM)
        return draft.events()

    table.run(hurt)
    start(table, PAUL, (1, 1, 1, 0), recovery_of=("b", "mild"))
    slots = tuple(
        s.model_copy(update={"aspect_id": None}) if s.id == "mild" else s
        for s in table.character("b").consequences
    )
    characters = {
        **table.state.characters,
        "b": table.character("b").model_copy(update={"consequences": slots}),
    }
    table.state = table.state.model_copy(update={"characters": characters})
    both_pass(table)
    assert [e.kind for e in table.action().effects] == ["vanished", "success"]
    assert table.action().effects[0].detail == "consequence"
    assert all(s.status == "fresh" for s in table.character("b").consequences)


def test_the_gm_cancels_an_open_action_and_invoke_payments_return() -> None:
    table = Table(with_aspect(world(gm_fate_points=2), BRIDGE_ASPECT))
    free = BRIDGE_ASPECT.model_copy(update={"id": "sit-fog", "free_invokes": {"b": 1}})
    boost = Aspect(id="boost-e", name="Edge", kind="boost", free_invokes={"b": 1})
    table.state = with_aspect(with_aspect(table.state, free), boost)
    initial = table.state
    start(table, PAUL, ZERO, opposer_id="g")
    table.run(lambda s: actions.oppose(s, "a1", "Athletics", GM_USER, dice(ZERO, ZERO)))
    before = table.state
    invoke(table, PAUL, "b", "b.hc")  # a fate point
    invoke(table, PAUL, "b", "sit-fog", "free")
    invoke(table, PAUL, "b", "boost-e", "boost")
    invoke(table, GM_USER, "g", "b.hc")  # against Brousseau: R4.5 pays him at scene end
    assert table.character("b").pending_fate_points == 1
    assert "boost-e" not in table.state.aspects
    error = run_refused(table, lambda s: actions.cancel(s, "a1", PAUL, "mine"))
    assert error.code == "forbidden"
    table.run(lambda s: actions.cancel(s, "a1", GM_USER, "Misclick"))
    action = table.action()
    assert action.state == "cancelled" and action.closed
    assert [e.kind for e in action.effects].count("refund") == 4
    assert action.effects[-1].kind == "cancelled" and action.effects[-1].text == "Misclick"
    after = table.state
    assert after.characters["b"].fate_points == before.characters["b"].fate_points
    assert after.characters["b"].pending_fate_points == 0
    assert after.gm_fate_points == before.gm_fate_points
    assert after.aspects["sit-fog"].free_invokes == {"b": 1}
    assert after.aspects["boost-e"].free_invokes == {"b": 1}
    # Closed: nothing moves it any more, and the log replays to the same state.
    error = run_refused(table, lambda s: actions.pass_invokes(s, "a1", "actor", PAUL, UNWRITTEN))
    assert error.code == "wrong_state"
    error = run_refused(table, lambda s: actions.cancel(s, "a1", GM_USER, ""))
    assert error.code == "wrong_state"
    assert replay(table.log, initial) == table.state


def test_a_cancel_is_logged_as_one_and_is_a_history_entry_once_dice_were_rolled() -> None:
    # R1.1: a roll made stays on the record; R2.2: before the opposer rolls, nobody has.
    table = Table(world())
    initial = table.state
    start(table, PAUL, ZERO, opposer_id="g")
    assert table.action().state == "awaiting_opposition"
    early = table.run(lambda s: actions.cancel(s, "a1", GM_USER, "Too early"))
    (logged,) = [e for e in early if isinstance(e, ActionCancelled)]
    assert logged.scene == table.state.scene.number and logged.action.state == "cancelled"
    assert history.entry_of(logged) is None
    start(table, PAUL, ZERO, opposer_id="g")
    # The opposer's dice, then the actor's.
    table.run(
        lambda s: actions.oppose(s, "a2", "Athletics", GM_USER, dice((1, 0, 0, 0), (-1, -1, 0, 0)))
    )
    late = table.run(lambda s: actions.cancel(s, "a2", GM_USER, ""))
    (logged,) = [e for e in late if isinstance(e, ActionCancelled)]
    entry = history.entry_of(logged)
    assert entry is logged
    assert {(r.side, r.dice) for r in history.rolls_of(entry.action)} == {
        ("opposition", (1, 0, 0, 0)),
        ("actor", (-1, -1, 0, 0)),
    }
    # Its kind is the action's own; the cancelled filter tells it from a resolution.
    assert history.matches(entry, kind="overcome", cancelled=True)
    assert not history.matches(entry, cancelled=False)
    # An upsert like any other: the log replays to the same state.
    assert replay(table.log, initial) == table.state


def test_r11_1_a_cancelled_challenge_task_may_be_rolled_again() -> None:
    # R11.1: cancelling a task's roll frees the task; the challenge is not complete.
    from bridge.rules import challenge

    table = Table(world())
    challenge_id = one_task_challenge(table, "Climb", 2)
    task_id = table.state.challenges[challenge_id].tasks[0].id
    table.run(
        lambda s: challenge.roll_task(s, challenge_id, task_id, "b", PAUL, dice(ZERO), UNWRITTEN)
    )
    action_id = table.state.challenges[challenge_id].tasks[0].action_id
    assert action_id is not None
    table.run(lambda s: actions.cancel(s, action_id, GM_USER, ""))
    current = table.state.challenges[challenge_id]
    assert current.tasks[0].action_id is None and current.state == "open"
    table.run(
        lambda s: challenge.roll_task(s, challenge_id, task_id, "b", PAUL, dice(ZERO), UNWRITTEN)
    )
    assert table.state.challenges[challenge_id].tasks[0].action_id not in (None, action_id)
