"""No action can block a table, seen over real Socket.IO (issue: stuck actions).

Declaring validates what it references, resolution survives a record that went away, and
the GM can cancel any open action; every refusal is a clear error ack and changes nothing.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.bridge_process import add_world
from tests.conftest import Connect
from tests.seats import BROUSSEAU, GHOUL, Seat, action_invoke, action_start, queue, start_action

pytestmark = pytest.mark.both_stores


async def bound_player(gm: Seat, connect: Connect, world: str, user: str) -> Seat:
    seat = Seat(await connect(world, role="player", user=user))
    hello = await seat.ok("hello")
    await gm.ok("user.bind", user_id=user, nonce=hello["bind_nonce"])
    return seat


async def event_count(gm: Seat) -> int:
    synced = await gm.ok("world.sync", since=0)
    return len(synced["emits"])


async def test_r5_9_an_attack_without_a_target_is_refused_not_stuck(
    connect: Connect, bridge: Any
) -> None:
    # R5.9: seen over the wire: accepted, then every pass/choose answered `internal`.
    key = add_world(bridge, "fc", ruleset="fate-condensed")
    gm = Seat(await connect("fc", key=key, user="gm"))
    for actor in (BROUSSEAU, GHOUL):
        await gm.ok("actor.sync", actor=actor)
    paul = await bound_player(gm, connect, "fc", "paul")
    before = await event_count(gm)
    attack = {
        "type": "attack",
        "actor_id": "brousseau",
        "skill": "Athletics",
        "opposition": {"kind": "passive", "rating": 1},
    }
    refused = await paul.send("action.start", **attack)
    assert refused["ok"] is False
    assert (refused["error"]["code"], refused["error"]["field"]) == ("invalid", "target_id")
    itself = await paul.send("action.start", **attack, target_id="brousseau")
    assert itself["error"]["field"] == "target_id"
    assert await event_count(gm) == before
    # With its target the same attack runs to the end: 3 - 1 against 1, a hit of 1 shift.
    await queue(gm, [0, 0, -1, 0])
    card = await paul.card("action.start", **attack, target_id="ghoul")
    card = await gm.card("action.confirm", action_id=card["action_id"])  # R2.1: Paul's rating
    # Consent to harm (DESIGN Reach and trust): the ghoul is the GM's to put in harm's way.
    card = await gm.card(
        "action.help", action_id=card["action_id"], character_id="ghoul", accept=True
    )
    card = await paul.card("action.pass", action_id=card["action_id"], side="actor")
    assert card["state"] in ("absorbing", "resolved")
    assert {"kind": "hit", "count": 1} in [
        {"kind": e["kind"], "count": e["count"]} for e in card["effects"]
    ]


async def test_an_open_take_advantage_survives_its_aspect_leaving_with_the_scene(
    table: dict[str, Seat],
) -> None:
    # R5.3, R12.1: the scene's end clears the aspect while the action still waits to resolve.
    gm, paul = table["gm"], table["paul"]
    scene = await gm.ok("scene.aspect", op="add", name="Thick Fog")
    fog = next(a["id"] for a in scene["aspects"] if a["name"] == "Thick Fog")
    await queue(gm, [1, 1, 0, 0])
    card = await start_action(
        paul, "take_advantage", skill="Notice", rating=1, target_aspect_id=fog
    )
    await gm.ok("scene.end")
    card = await paul.card("action.pass", action_id=card["action_id"], side="actor")
    assert card["state"] == "resolved"
    assert [e["kind"] for e in card["effects"]] == ["vanished", "success"]
    late = await paul.send(
        "action.start",
        **action_start("take_advantage", skill="Notice", rating=1, target_aspect_id=fog),
    )
    assert (late["error"]["code"], late["error"]["field"]) == ("invalid", "target_aspect_id")


async def test_the_gm_cancels_an_open_action_and_the_fate_point_comes_back(
    table: dict[str, Seat],
) -> None:
    gm, paul = table["gm"], table["paul"]
    await queue(gm, [-1, -1, 0, 0])
    card = await start_action(paul, rating=4)
    action_id = card["action_id"]
    card = await paul.card("action.invoke", **action_invoke(action_id))
    assert card["fate_points"]["brousseau"] == 1
    mine = await paul.send("action.cancel", action_id=action_id, reason="oops")
    assert mine["error"]["code"] == "forbidden"
    unknown = await gm.send("action.cancel", action_id="a999")
    assert unknown["error"]["code"] == "not_found"
    request = {"action_id": action_id, "reason": "Wrong skill", "request_id": "cancel-1"}
    card = await gm.card("action.cancel", **request)
    assert card["state"] == "cancelled"
    assert card["fate_points"]["brousseau"] == 2
    assert [e["kind"] for e in card["effects"]][-2:] == ["refund", "cancelled"]
    # The same request again answers the first time's card and changes nothing.
    assert (await gm.card("action.cancel", **request)) == card
    again = await gm.send("action.cancel", action_id=action_id)
    assert again["error"]["code"] == "wrong_state"
    late = await paul.send("action.pass", action_id=action_id, side="actor")
    assert late["error"]["code"] == "wrong_state"
    world = await gm.ok("world.state")
    assert action_id not in world["open_actions"]
    brousseau = next(c for c in world["characters"] if c["id"] == "brousseau")
    assert brousseau["fate_points"] == 2
    # Every client saw the card update in place.
    updates = await paul.wait_for("card", lambda d: d["card"].get("state") == "cancelled")
    assert updates[0]["card"]["action_id"] == action_id
