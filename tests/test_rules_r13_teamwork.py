"""R13.1 (approaches only under Accelerated), R13.10 (invoking for an ally) and R13.11
(defending for another): the rules' pure functions, and every refusal they give."""

from __future__ import annotations

from bridge.rules import actions, conflict
from bridge.rules.actions import InvokeCommand, Principal, StartAction
from bridge.rules.dice import Roll
from bridge.rules.ruleset import FATE_ACCELERATED, FATE_CONDENSED, FATE_CORE, Ruleset
from bridge.rules.state import Aspect
from tests.rules_fixtures import (
    ANNA,
    GM_USER,
    PAUL,
    ZERO,
    Table,
    dice,
    refused,
    sheet,
    with_aspect,
    world,
)

ZOE = Principal("zoe", is_gm=False)

SKILLS = {"Athletics": 2, "Fight": 2, "Notice": 1, "Will": 1}


def teamwork_table(ruleset: Ruleset = FATE_CONDENSED) -> Table:
    """Margot (Anna) and Colette (Zoe) act; Paul's Brousseau and Dex, and the GM's Wraith,
    stand by in the scene; the Ghoul is the GM's foe."""
    cast = (
        sheet("m", "Margot", owners=["anna"], skills=SKILLS, aspects=[("hc", "Brave")]),
        sheet("b", "Brousseau", owners=["paul"], skills=SKILLS, aspects=[("hc", "Loyal Friend")]),
        sheet("d", "Dex", owners=["paul"], skills=SKILLS, aspects=[("hc", "Sly")]),
        sheet("c", "Colette", owners=["zoe"], skills=SKILLS, aspects=[("hc", "Proud Rival")]),
        sheet("g", "Ghoul", skills=SKILLS, aspects=[("hc", "Hungry Dead")]),
        sheet("w", "Wraith", skills=SKILLS, aspects=[("hc", "Cold Hatred")]),
    )
    return Table(world(*cast, ruleset=ruleset, gm_fate_points=3))


def own_aspect(table: Table, character_id: str) -> str:
    return next(a.id for a in table.state.aspects.values() if a.attached_to == character_id)


def opened(table: Table, command: StartAction, rolls: tuple[Roll, ...] = (ZERO,)) -> str:
    """The GM starts ``command`` (no proposal step); its id, once it is in the invoke phase."""
    table.run(lambda s: actions.start_action(s, command, GM_USER, dice(*rolls), table.ruleset))
    action = table.action()
    if action.state == "awaiting_opposition":
        table.run(
            lambda s: actions.oppose(
                s, action.id, "Fight", GM_USER, dice(ZERO, ZERO), table.ruleset
            )
        )
    assert table.action(action.id).state == "invoking"
    return action.id


def ally(
    action_id: str,
    invoker: str,
    aspect_id: str,
    side: str | None = None,
    payment: str = "fate_point",
) -> dict[str, object]:
    """An invoke's fields: ``invoker`` invokes ``aspect_id`` on the action for ``side``
    (None: its own side), paying with ``payment``."""
    return {
        "action_id": action_id,
        "invoker": invoker,
        "aspect_id": aspect_id,
        "payment": payment,
        "side": side,
    }


def invoke(table: Table, principal: Principal, **fields: object) -> None:
    command = InvokeCommand(**fields)  # type: ignore[arg-type]
    table.run(lambda s: actions.invoke(s, command, principal, dice(ZERO), table.ruleset))


def refused_invoke(code: str, table: Table, principal: Principal, **fields: object) -> str:
    """The invoke is refused with ``code`` and nothing changes; the refusal's field."""
    before = table.state
    command = InvokeCommand(**fields)  # type: ignore[arg-type]
    refusal = refused(
        code, lambda: actions.invoke(table.state, command, principal, dice(ZERO), table.ruleset)
    )
    assert table.state is before
    return refusal.field or ""


# --- R13.10 invoking for an ally -------------------------------------------------------------


def test_r13_10_an_ally_invokes_its_own_aspect_for_a_side_with_its_own_fate_point() -> None:
    # R13.10: Brousseau, not taking part, invokes his own aspect for +2 on Margot's roll,
    # paying his own fate point; he never joins the action.
    table = teamwork_table()
    action_id = opened(table, StartAction("overcome", "m", "Athletics", passive_rating=3))
    points = table.character("b").fate_points
    invoke(
        table,
        PAUL,
        action_id=action_id,
        invoker="b",
        aspect_id=own_aspect(table, "b"),
        payment="fate_point",
        side="actor",
    )
    action = table.action(action_id)
    assert action.actor.roll.invoke_bonus == 2 and action.actor.roll.total == 4
    assert table.character("b").fate_points == points - 1
    assert table.character("m").fate_points == 3  # Margot pays nothing
    record = action.invokes[-1]
    assert (record.side, record.invoker, record.aspect_name) == ("actor", "b", "Loyal Friend")
    assert "b" not in action.actor.members and "b" not in action.opposition.members
    # R4.4: an invoke reopens the phase; the actor passes and it resolves, with no cost,
    # consequence or effect for the ally, and no point to him for his own aspect (R4.5).
    table.run(lambda s: actions.pass_invokes(s, action_id, "actor", ANNA, table.ruleset))
    assert table.action(action_id).succeeded is True
    assert table.character("b").pending_fate_points == 0
    assert all(e.character_id != "b" for e in table.action(action_id).effects)


def test_r13_10_r4_3_one_fate_point_per_aspect_for_the_side_helped_free_invokes_stack() -> None:
    # R13.10 with R4.3: the side helped has had this aspect invoked by fate point, so the
    # ally may not pay a point for it again; its own free invokes and boosts still count.
    table = teamwork_table()
    table.state = with_aspect(
        table.state,
        Aspect(id="fog", name="Thick Fog", kind="situation", free_invokes={"b": 1, "m": 1}),
    )
    table.state = with_aspect(
        table.state, Aspect(id="edge", name="Edge", kind="boost", free_invokes={"b": 1})
    )
    action_id = opened(table, StartAction("overcome", "m", "Athletics", passive_rating=5))
    invoke(table, ANNA, action_id=action_id, invoker="m", aspect_id="fog", payment="fate_point")
    field = refused_invoke("already_invoked", table, PAUL, **ally(action_id, "b", "fog", "actor"))
    assert field == "aspect_id"
    points = table.character("b").fate_points
    invoke(
        table, PAUL, action_id=action_id, invoker="b", aspect_id="fog", payment="free", side="actor"
    )
    invoke(table, PAUL, **ally(action_id, "b", "edge", "actor", payment="boost"))
    assert table.character("b").fate_points == points  # paid with what he held
    assert table.state.aspects["fog"].free_invokes == {"m": 1}  # Margot's stays hers
    assert "edge" not in table.state.aspects  # R12.6: a boost is spent by its use
    assert table.action(action_id).actor.roll.invoke_bonus == 6
    # Nothing of his held: the free invoke is refused, and nothing changes.
    refused_invoke(
        "no_free_invokes", table, PAUL, **ally(action_id, "b", "fog", "actor", payment="free")
    )


def test_r13_10_r4_5_the_point_goes_to_the_owner_of_the_aspect_invoked() -> None:
    # R13.10 with R4.5: Brousseau invokes Colette's aspect for Margot's side against her;
    # the point goes to Colette's player at the end of the scene.
    table = teamwork_table()
    command = StartAction("overcome", "m", "Athletics", opposer_id="c")
    table.run(lambda s: actions.start_action(s, command, GM_USER, dice(ZERO), table.ruleset))
    action_id = table.action().id
    table.run(
        lambda s: actions.oppose(s, action_id, "Athletics", ZOE, dice(ZERO, ZERO), table.ruleset)
    )
    invoke(
        table,
        PAUL,
        action_id=action_id,
        invoker="b",
        aspect_id=own_aspect(table, "c"),
        payment="fate_point",
        side="actor",
    )
    assert table.character("c").pending_fate_points == 1
    assert table.character("c").pending_reasons[-1].aspect == "Proud Rival"
    # The GM calls it off: the ally's point goes back, Colette's pending one is withdrawn.
    points = table.character("b").fate_points
    table.run(lambda s: actions.cancel(s, action_id, GM_USER))
    assert table.character("b").fate_points == points + 1
    assert table.character("c").pending_fate_points == 0


def test_r13_10_the_gm_invokes_for_an_npc_ally_from_the_gm_budget() -> None:
    # R13.10, R4.2: the Wraith, an NPC not taking part, helps the Ghoul; the GM's budget pays.
    table = teamwork_table()
    action_id = opened(table, StartAction("attack", "m", "Fight", opposer_id="g"))
    refused_invoke(
        "forbidden",
        table,
        PAUL,
        action_id=action_id,
        invoker="w",
        aspect_id=own_aspect(table, "w"),
        payment="fate_point",
        side="opposition",
    )
    invoke(
        table,
        GM_USER,
        action_id=action_id,
        invoker="w",
        aspect_id=own_aspect(table, "w"),
        payment="fate_point",
        side="opposition",
    )
    assert table.state.gm_fate_points == 2
    assert table.action(action_id).opposition.roll.invoke_bonus == 2


def test_r13_10_refusals_and_nothing_changes() -> None:
    # R13.10: each bad ally's invoke is refused with its own code; the state is untouched.
    table = teamwork_table()
    action_id = opened(table, StartAction("overcome", "b", "Athletics", opposer_id="g"))
    aspect = own_aspect(table, "d")
    # A character the player does not control.
    assert (
        refused_invoke("forbidden", table, ANNA, **ally(action_id, "d", aspect, "actor"))
        == "invoker"
    )
    # No side named for a character not taking part.
    assert refused_invoke("side_required", table, PAUL, **ally(action_id, "d", aspect)) == "side"
    # The opposing side of its own character's action: Paul's Brousseau acts, so Paul's
    # Dex may not help the Ghoul; nor may Brousseau name the Ghoul's side.
    assert (
        refused_invoke(
            "against_own_side", table, PAUL, **ally(action_id, "d", aspect, "opposition")
        )
        == "side"
    )
    refused_invoke("against_own_side", table, PAUL, **ally(action_id, "b", aspect, "opposition"))
    # Twice by fate point on one aspect for one side (R4.3).
    invoke(table, PAUL, **ally(action_id, "d", aspect, "actor"))
    refused_invoke("already_invoked", table, PAUL, **ally(action_id, "d", aspect, "actor"))
    # After both sides passed the action is resolved: no invoke moves it.
    table.run(lambda s: actions.pass_invokes(s, action_id, "opposition", GM_USER, table.ruleset))
    table.run(lambda s: actions.pass_invokes(s, action_id, "actor", PAUL, table.ruleset))
    assert table.action(action_id).state == "resolved"
    assert (
        refused_invoke(
            "wrong_state",
            table,
            ZOE,
            action_id=action_id,
            invoker="c",
            aspect_id=own_aspect(table, "c"),
            payment="fate_point",
            side="actor",
        )
        == "action_id"
    )
    # A passive opposition has nobody to help.
    passive = opened(table, StartAction("overcome", "m", "Athletics", passive_rating=2))
    refused_invoke(
        "no_ally_on_side",
        table,
        ZOE,
        action_id=passive,
        invoker="c",
        aspect_id=own_aspect(table, "c"),
        payment="fate_point",
        side="opposition",
    )


# --- R13.11 defending for another -------------------------------------------------------------


def crypt(table: Table) -> str:
    """A Core conflict: Margot, Brousseau and Colette against the Ghoul (Dex stays out)."""
    sides = (
        conflict.ConflictSideSpec("Hunters", ("m", "b", "c")),
        conflict.ConflictSideSpec("Dead", ("g",)),
    )
    table.run(
        lambda s: conflict.start_conflict(s, "Crypt", "physical", sides, GM_USER, table.ruleset)
    )
    return next(c.id for c in table.state.conflicts.values() if c.state == "open")


def ghoul_attacks_margot(table: Table) -> str:
    attack = StartAction("attack", "g", "Fight", opposer_id="m")
    table.run(lambda s: actions.start_action(s, attack, GM_USER, dice(), table.ruleset))
    action = table.action()
    assert action.state == "awaiting_opposition"
    return action.id


def test_r13_11_the_gm_lets_an_ally_interpose_it_rolls_the_defense_and_takes_the_hit() -> None:
    # R13.11 (Core): Brousseau steps between the Ghoul and Margot, rolls the defense and
    # suffers the effects of the failed roll.
    table = teamwork_table(FATE_CORE)
    crypt(table)
    action_id = ghoul_attacks_margot(table)
    # Never a player's say-so: the GM allows it.
    refused(
        "forbidden",
        lambda: actions.interpose(table.state, action_id, "b", PAUL, table.ruleset),
    )
    table.run(lambda s: actions.interpose(s, action_id, "b", GM_USER, table.ruleset))
    action = table.action(action_id)
    assert (action.opposition.leader, action.target_id, action.interposed_for) == ("b", "b", "m")
    # Margot may take her own defense back, and Brousseau step in again.
    table.run(lambda s: actions.interpose(s, action_id, "m", GM_USER, table.ruleset))
    action = table.action(action_id)
    assert (action.opposition.leader, action.target_id, action.interposed_for) == ("m", "m", None)
    table.run(lambda s: actions.interpose(s, action_id, "b", GM_USER, table.ruleset))
    # Brousseau's player rolls the defense now, not Margot's.
    refused(
        "forbidden",
        lambda: actions.oppose(table.state, action_id, "Athletics", ANNA, dice(ZERO)),
    )
    table.run(
        lambda s: actions.oppose(
            s, action_id, "Athletics", PAUL, dice((-1, -1, 0, 0), (1, 1, 0, 0)), table.ruleset
        )
    )
    # Fight 2 + 2 against Athletics 2 - 2: a 4-shift hit lands on Brousseau.
    table.run(lambda s: actions.pass_invokes(s, action_id, "opposition", PAUL, table.ruleset))
    table.run(lambda s: actions.pass_invokes(s, action_id, "actor", GM_USER, table.ruleset))
    if table.action(action_id).pending_choice == "attack_style":
        table.run(lambda s: actions.choose(s, action_id, "full_hit", GM_USER))
    action = table.action(action_id)
    assert action.state == "absorbing" and action.pending_hit == 4
    assert action.target_id == "b"


def test_r13_11_refusals_and_nothing_changes() -> None:
    # R13.11: only in a conflict, only an attack's defense before it is rolled, only a
    # character in that conflict, only where the ruleset has it.
    table = teamwork_table(FATE_CORE)
    crypt(table)
    action_id = ghoul_attacks_margot(table)
    before = table.state

    def refused_interpose(code: str, defender: str, action: str = action_id) -> str:
        refusal = refused(
            code, lambda: actions.interpose(table.state, action, defender, GM_USER, table.ruleset)
        )
        assert table.state is before
        return refusal.field or ""

    assert refused_interpose("not_in_conflict", "d") == "defender_id"  # Dex stayed out
    assert refused_interpose("unknown_actor", "nobody") == "defender_id"
    assert refused_interpose("already_defending", "m") == "defender_id"
    assert refused_interpose("against_own_side", "g") == "defender_id"
    condensed = Table(table.state, FATE_CONDENSED)
    refused(
        "not_in_ruleset",
        lambda: actions.interpose(condensed.state, action_id, "b", GM_USER, FATE_CONDENSED),
    )
    # Once the defense is rolled, it is too late to step in.
    table.run(
        lambda s: actions.oppose(s, action_id, "Athletics", ANNA, dice(ZERO, ZERO), table.ruleset)
    )
    before = table.state
    assert refused_interpose("wrong_state", "b") == "action_id"
    # Not an attack: nobody defends an overcome for another.
    overcome = StartAction("overcome", "m", "Athletics", opposer_id="g")
    table.run(lambda s: actions.start_action(s, overcome, GM_USER, dice(), table.ruleset))
    before = table.state
    assert refused_interpose("not_an_attack", "b", table.action().id) == "action_id"


# --- R13.1 approaches only under Accelerated --------------------------------------------------


def test_r13_1_accelerated_refuses_a_skill_that_is_not_an_approach() -> None:
    # R13.1: Accelerated rolls only Careful, Clever, Flashy, Forceful, Quick and Sneaky,
    # for the actor, a helper and the opposer alike.
    approaches = {"Careful": 1, "Clever": 2, "Flashy": 0, "Forceful": 3, "Quick": 2, "Sneaky": 1}
    fae = sheet("f", "Fae", owners=["anna"], skills={**approaches, "Athletics": 4})
    foe = sheet("g", "Ghoul", skills=approaches)
    table = Table(world(fae, foe, ruleset=FATE_ACCELERATED))
    before = table.state
    athletics = StartAction("overcome", "f", "Athletics", passive_rating=1)
    refusal = refused(
        "not_an_approach",
        lambda: actions.start_action(table.state, athletics, GM_USER, dice(ZERO), table.ruleset),
    )
    assert refusal.field == "skill" and "Forceful" in str(refusal.params["approaches"])
    assert table.state is before
    attack = StartAction("attack", "f", "Forceful", opposer_id="g")
    table.run(lambda s: actions.start_action(s, attack, GM_USER, dice(), table.ruleset))
    action_id = table.action().id
    refused(
        "not_an_approach",
        lambda: actions.oppose(
            table.state, action_id, "Fight", GM_USER, dice(ZERO, ZERO), table.ruleset
        ),
    )
    table.run(
        lambda s: actions.oppose(s, action_id, "Quick", GM_USER, dice(ZERO, ZERO), table.ruleset)
    )
    assert table.action(action_id).opposition.roll.skill == "Quick"
    # Core and Condensed roll their skills as before.
    core = Table(world(fae, foe, ruleset=FATE_CORE))
    core.run(lambda s: actions.start_action(s, athletics, GM_USER, dice(ZERO), core.ruleset))
    assert core.action().actor.roll.skill_rating == 4
