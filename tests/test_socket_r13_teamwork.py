"""R13.10 (invoking for an ally), R13.11 (defending for another) and R13.1 (approaches only
under Accelerated) over real Socket.IO: each works end to end, and each bad input gets a
refusal with its own code and field that changes nothing."""

from __future__ import annotations

import json
from typing import Any

from bridge.service.webhooks.payloads import CARD_EMIT, discord_body
from tests.seats import (
    BROUSSEAU,
    GHOUL,
    MARGOT,
    Seat,
    action_invoke,
    characters,
    queue,
    start_action,
    start_conflict,
)
from tests.test_socket_r13 import core_table

DEX: dict[str, Any] = {**BROUSSEAU, "id": "dex", "name": "Dex", "aspects": []}


async def aspect_of(gm: Seat, character_id: str) -> str:
    state = await gm.ok("world.state")
    return next(
        str(a["id"])
        for a in state["aspects"]
        if a["attached_to"] and a["attached_to"]["id"] == character_id
    )


async def refused(seat: Seat, code: str, event: str, **payload: Any) -> dict[str, Any]:
    ack = await seat.send(event, **payload)
    assert ack["ok"] is False and ack["error"]["code"] == code, ack
    return dict(ack["error"])


async def test_r13_10_an_ally_invokes_for_margot_over_the_wire(table: dict[str, Seat]) -> None:
    # R13.10: Paul's Brousseau, not taking part, invokes his own aspect for +2 on Margot's
    # overcome with his own fate point; the card names him; R4.3 holds for her side.
    gm, paul, anna = table["gm"], table["paul"], table["anna"]
    await queue(gm, [0, 0, 0, 0])
    card = await start_action(anna, actor="margot", rating=3)
    action_id, hunter = card["action_id"], await aspect_of(gm, "brousseau")
    assert card["state"] == "invoking" and card["actor"]["total"]["value"] == 2
    before = await gm.ok("world.state")

    # A character the player does not control; no side named; Margot naming the other side.
    error = await refused(
        anna, "forbidden", "action.invoke", **action_invoke(action_id, hunter, side="actor")
    )
    assert error["field"] == "invoker"
    error = await refused(
        paul, "side_required", "action.invoke", **action_invoke(action_id, hunter)
    )
    assert error["field"] == "side"
    await refused(
        anna,
        "against_own_side",
        "action.invoke",
        **action_invoke(action_id, hunter, invoker="margot", side="opposition"),
    )
    assert await gm.ok("world.state") == before  # nothing lost, nothing paid

    card = await paul.card("action.invoke", **action_invoke(action_id, hunter, side="actor"))
    assert card["actor"]["total"]["value"] == 4
    invoked = card["invokes"][-1]
    assert (invoked["side"], invoked["invoker_name"], invoked["aspect_name"]) == (
        "actor",
        "Brousseau",
        "Skeptical Ghost Hunter",
    )
    # R4.3: twice by fate point on one aspect for one side.
    await refused(
        paul, "already_invoked", "action.invoke", **action_invoke(action_id, hunter, side="actor")
    )
    points = {key: c["fate_points"] for key, c in (await characters(gm)).items()}
    assert points["brousseau"] == BROUSSEAU["fate_points"] - 1
    assert points["margot"] == MARGOT["fate_points"]
    # After both sides passed: resolved, and no invoke moves it.
    resolved = await anna.card("action.pass", action_id=action_id, side="actor")
    assert resolved["state"] == "resolved" and resolved["succeeded"] is True
    error = await refused(
        paul,
        "wrong_state",
        "action.invoke",
        **action_invoke(action_id, hunter, payment="free", side="actor"),
    )
    assert error["field"] == "action_id"


async def test_r13_11_the_gm_lets_brousseau_defend_for_margot(table: dict[str, Seat]) -> None:
    # R13.11 (Core): the GM allows it; Brousseau rolls the defense and takes the hit.
    gm = await core_table(table)
    paul, anna = table["paul"], table["anna"]
    await gm.ok("actor.sync", actor=DEX)
    await start_conflict(gm)
    card = await start_action(gm, "attack", actor="ghoul", skill="Fight", opposer="margot")
    action_id = card["action_id"]
    assert card["prompt"]["kind"] == "oppose" and card["prompt"]["users"] == ["anna"]

    await refused(
        paul, "forbidden", "action.interpose", action_id=action_id, defender_id="brousseau"
    )
    error = await refused(
        gm, "not_in_conflict", "action.interpose", action_id=action_id, defender_id="dex"
    )
    assert error["field"] == "defender_id"
    await refused(gm, "unknown_actor", "action.interpose", action_id=action_id, defender_id="zz")
    await refused(
        gm, "already_defending", "action.interpose", action_id=action_id, defender_id="margot"
    )

    card = await gm.card("action.interpose", action_id=action_id, defender_id="brousseau")
    assert card["opposition"]["leader"]["name"] == "Brousseau"
    assert card["interposed_for"] == {"id": "margot", "name": "Margot"}
    assert card["target"]["id"] == "brousseau"
    assert card["prompt"]["users"] == ["paul"]
    await refused(anna, "forbidden", "action.oppose", action_id=action_id, skill="Athletics")
    # Fight 3 + 4 against Athletics 1 - 4: a hit Brousseau absorbs.
    await queue(gm, [-1, -1, -1, -1], [1, 1, 1, 1])
    card = await paul.card("action.oppose", action_id=action_id, skill="Athletics")
    await paul.ok("action.pass", action_id=action_id, side="opposition")
    card = await gm.card("action.pass", action_id=action_id, side="actor")
    if card["pending_choice"] == "attack_style":
        card = await gm.card("action.choose", action_id=action_id, choice="full_hit")
    assert card["state"] == "absorbing" and card["prompt"]["users"] == ["paul"]
    assert card["target"]["name"] == "Brousseau" and card["interposed_for"]["name"] == "Margot"
    # The Discord embed says it too.
    stored = {"seq": 1, "world": "w", "writer": "gm", "op": "update", "card_id": "c", "card": card}
    (embed,) = json.loads(discord_body(CARD_EMIT.validate_python(stored)))["embeds"]
    assert embed["description"].startswith("Brousseau defends for Margot")
    # Too late to step in once the defense is rolled.
    await refused(gm, "wrong_state", "action.interpose", action_id=action_id, defender_id="margot")


async def test_r13_1_accelerated_refuses_a_skill_over_the_wire(table: dict[str, Seat]) -> None:
    # R13.1: Fate Accelerated rolls only its six approaches; the hello tells the module.
    gm, paul = table["gm"], table["paul"]
    changed = await gm.ok("world.ruleset", ruleset="fate-accelerated")
    approaches = ["Careful", "Clever", "Flashy", "Forceful", "Quick", "Sneaky"]
    assert changed["rules"]["approaches"] == approaches
    assert (await paul.ok("hello"))["rules"]["defend_for_another"] is False
    await gm.ok("actor.sync", actor={**GHOUL, "skills": {"Quick": 2}})
    start = {
        "type": "overcome",
        "actor_id": "brousseau",
        "opposition": {"kind": "passive", "rating": 1},
    }
    error = await refused(paul, "not_an_approach", "action.start", skill="Athletics", **start)
    assert error["field"] == "skill" and "Quick" in error["message"]
    assert (await gm.ok("world.state"))["open_actions"] == []
    await queue(gm, [0, 0, 0, 0])
    card = await paul.card("action.start", skill="Quick", **start)
    assert card["actor"]["skill"] == "Quick"
