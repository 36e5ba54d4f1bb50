"""Scenes and zoomed-in play over real Socket.IO: a GM and two players (R11, R12)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Connect
from tests.seats import BROUSSEAU, GHOUL, MARGOT, Seat, characters, queue, race, start_conflict

# The same scenarios on the embedded SQLite store and on Redis.
pytestmark = pytest.mark.both_stores

# R11.3: two zones of a graveyard; Brousseau at the gate, the ghoul in the crypt.
GATE_AND_CRYPT = [{"name": "Gate", "adjacent": ["Crypt"]}, {"name": "Crypt", "adjacent": ["Gate"]}]
AT_THE_GATE = {"brousseau": "Gate", "ghoul": "Crypt"}


async def test_a_contest_run_end_to_end_by_a_gm_and_two_players(table: dict[str, Seat]) -> None:
    # R11.2: Brousseau (paul) against Margot (anna), direct, Athletics 3 vs 2, first to 3.
    gm, paul, anna = table["gm"], table["paul"], table["anna"]
    scene = await race(gm, "brousseau", "margot", name="Race to the lighthouse")
    contest = scene["contests"][0]
    cid = contest["id"]
    assert [s["controllers"] for s in contest["sides"]] == [["paul"], ["anna"]]
    refused = await paul.send(
        "contest.start",
        name="x",
        mode="direct",
        skill="A",
        sides=[{"name": "a", "members": ["brousseau"]}, {"name": "b", "members": ["margot"]}],
    )
    assert refused["error"]["code"] == "forbidden"
    not_mine = await paul.send("contest.roll", contest_id=cid, side_id="s2")
    assert not_mine["error"]["code"] == "forbidden"

    async def exchange(paul_roll: list[int], anna_roll: list[int]) -> dict[str, Any]:
        await queue(gm, paul_roll)
        card = await paul.card("contest.roll", contest_id=cid, side_id="s1")
        await paul.card("action.pass", action_id=card["action_id"], side="actor")
        await queue(gm, anna_roll)
        card = await anna.card("contest.roll", contest_id=cid, side_id="s2")
        await anna.card("action.pass", action_id=card["action_id"], side="actor")
        state = await gm.ok("scene.read")
        return next(c for c in state["contests"] if c["id"] == cid)

    # Exchange 1: 3 vs 3, a tie for the highest: a twist, no progress.
    contest = await exchange([0, 0, 0, 0], [1, 0, 0, 0])
    assert contest["history"][-1]["twist"] is True
    assert contest["twist_pending"] is True
    scene = await gm.ok("contest.twist", contest_id=cid, name="Fog Rolls In")
    assert any(a["name"] == "Fog Rolls In" for a in scene["aspects"])
    # The first exchange's card is updated in place to name the twist.
    named = await anna.wait_for(
        "card",
        lambda d: (
            d["op"] == "update"
            and d["card"]["kind"] == "contest"
            and d["card"]["exchange"]["twist_aspect"] == "Fog Rolls In"
        ),
    )
    assert named[0]["card_id"].endswith(".x1")
    # Exchange 2: 6 vs 2: margin 4, excels -> 2 progress.
    contest = await exchange([1, 1, 1, 0], [0, 0, 0, 0])
    assert contest["history"][-1]["progress"] == 2
    # Exchange 3: 4 vs 3 -> 1 progress: 3 in all, Brousseau wins.
    contest = await exchange([1, 0, 0, 0], [1, 0, 0, 0])
    assert contest["state"] == "won" and contest["winner"] == "s1"
    assert [s["progress"] for s in contest["sides"]] == [3, 0]

    # Every client saw one exchange card per exchange, written by the active GM.
    cards = await anna.wait_for(
        "card", lambda d: d["card"]["kind"] == "contest" and d["op"] == "create", count=3
    )
    assert len(cards) == 3
    assert {c["writer"] for c in cards} == {"gm"}
    assert [c["card"]["exchange"]["number"] for c in cards] == [1, 2, 3]
    assert cards[-1]["card"]["contest"]["winner"] == "s1"
    states = await paul.wait_for("scene.state", lambda d: d["state"]["contests"])
    assert states[-1]["writer"] == "gm"


async def test_a_challenge_and_the_scene_end_card(table: dict[str, Seat]) -> None:
    # R11.1 summary once all tasks are in; R12.1 scene end card.
    gm, paul, anna = table["gm"], table["paul"], table["anna"]
    scene = await gm.ok(
        "challenge.start",
        name="Flooded crypt",
        tasks=[
            {"name": "Hold the door", "skill": "Athletics", "rating": 2},
            {"name": "Find the lever", "skill": "Notice", "rating": 3},
        ],
    )
    ch = scene["challenges"][0]
    await queue(gm, [1, 0, 0, 0], [0, 0, 0, 0])
    card = await paul.card(
        "challenge.roll", challenge_id=ch["id"], task_id="t1", actor_id="brousseau"
    )
    await paul.card("action.pass", action_id=card["action_id"], side="actor")
    card = await anna.card("challenge.roll", challenge_id=ch["id"], task_id="t2", actor_id="margot")
    await anna.card("action.pass", action_id=card["action_id"], side="actor")
    summaries = await gm.wait_for("card", lambda d: d["card"]["kind"] == "challenge")
    tasks = summaries[0]["card"]["challenge"]["tasks"]
    assert [(t["name"], t["outcome"]) for t in tasks] == [
        ("Hold the door", "succeed"),
        ("Find the lever", "succeed"),
    ]
    assert summaries[0]["card"]["challenge"]["state"] == "complete"
    summary = await gm.ok("scene.end", scope="session")
    assert summary["ended_scene"] == 1
    ends = await paul.wait_for("card", lambda d: d["card"]["kind"] == "scene_end")
    assert ends[0]["card"]["scope"] == "session" and ends[0]["writer"] == "gm"
    state = await gm.ok("scene.read")
    assert state["scene"] == {"number": 2, "session": 2, "scenario": 1}
    assert state["gm_fate_points"] == 2  # one per player character by default (R12.2)


async def test_setting_the_gm_budget_updates_every_scene_panel(table: dict[str, Seat]) -> None:
    # R12.2: the GM's budget for the scene, shown on the panel.
    gm, paul = table["gm"], table["paul"]
    await gm.ok("fate.gm_budget", fate_points=7)
    states = await paul.wait_for("scene.state", lambda d: d["state"]["gm_fate_points"] == 7)
    assert states[-1]["writer"] == "gm"
    refused = await paul.send("fate.gm_budget", fate_points=9)
    assert refused["error"]["code"] == "forbidden"


async def test_compels_through_the_bridge(table: dict[str, Seat]) -> None:
    # R12.3 R12.4
    gm, paul, anna = table["gm"], table["paul"], table["anna"]
    scene = await gm.ok("fate.compel", character_id="brousseau", text="You scoff at the warning")
    compel = scene["compels"][0]
    assert compel["controllers"] == ["paul"]
    wrong = await anna.send("fate.compel_answer", compel_id=compel["id"], accept=True)
    assert wrong["error"]["code"] == "forbidden"
    await paul.ok("fate.compel_answer", compel_id=compel["id"], accept=True)
    assert (await characters(gm))["brousseau"]["fate_points"] == 3


async def test_conflicts_are_refused_in_unwritten_with_a_reason(table: dict[str, Seat]) -> None:
    refused = await table["gm"].send(
        "conflict.start",
        name="Brawl",
        kind="physical",
        sides=[{"name": "a", "members": ["brousseau"]}, {"name": "b", "members": ["ghoul"]}],
    )
    assert refused["error"]["code"] == "not_in_ruleset"


async def test_a_fate_accelerated_conflict_orders_turns(connect: Connect, bridge: Any) -> None:
    # R11.3, R13.5 over the wire, in a Fate Accelerated world (Quick, seed 003).
    from tests.bridge_process import add_world

    key = add_world(bridge, "fc", ruleset="fate-accelerated")
    gm = Seat(await connect("fc", key=key, user="gm"))
    for actor, quick in ((BROUSSEAU, 3), (MARGOT, 1), (GHOUL, 3)):
        await gm.ok("actor.sync", actor={**actor, "skills": {**actor["skills"], "Quick": quick}})
    conflict = await start_conflict(
        gm, "Graveyard", tie_break=["ghoul"], zones=GATE_AND_CRYPT, positions=AT_THE_GATE
    )
    assert [t["character"]["id"] for t in conflict["order"]] == ["ghoul", "brousseau", "margot"]
    scene = await gm.ok("conflict.next", conflict_id=conflict["id"])
    assert scene["conflicts"][0]["turn"] == 1


async def test_the_gm_redraws_a_conflicts_zones_mid_conflict(table: dict[str, Seat]) -> None:
    # R11.3 over the wire: the fight spills into the street, the crypt caves in.
    gm, paul = table["gm"], table["paul"]
    await gm.ok("world.ruleset", ruleset="fate-accelerated")
    conflict = await start_conflict(gm, "Graveyard", zones=GATE_AND_CRYPT, positions=AT_THE_GATE)
    cid = conflict["id"]
    street = [{"name": "Gate", "adjacent": ["Street"]}, {"name": "Street", "adjacent": ["Gate"]}]

    unplaced = await gm.send("conflict.zones", conflict_id=cid, zones=street)
    assert unplaced["ok"] is False
    assert unplaced["error"]["code"] == "invalid"
    assert unplaced["error"]["field"] == "positions"
    assert "Ghoul" in unplaced["error"]["message"]
    assert "Crypt" in unplaced["error"]["message"]

    scene = await gm.ok(
        "conflict.zones", conflict_id=cid, zones=street, positions={"ghoul": "Street"}
    )
    zones = scene["conflicts"][0]["zones"]
    assert [(z["name"], z["adjacent"]) for z in zones] == [
        ("Gate", ["Street"]),
        ("Street", ["Gate"]),
    ]
    assert [[o["id"] for o in z["occupants"]] for z in zones] == [["brousseau"], ["ghoul"]]

    forbidden = await paul.send("conflict.zones", conflict_id=cid, zones=[])
    assert forbidden["ok"] is False
    assert forbidden["error"]["code"] == "forbidden"

    too_many = [{"name": f"Zone {n}"} for n in range(31)]
    for bad, field in (
        ({"zones": "Gate"}, "zones"),
        ({"zones": too_many}, "zones"),
        ({"zones": [{"name": "Gate", "adjacent": "Street"}]}, "zones.0.adjacent"),
        ({"zones": street, "positions": ["ghoul", "Street"]}, "positions"),
        ({"zones": street, "extra": True}, "extra"),
        ({}, "zones"),
    ):
        ack = await gm.send("conflict.zones", conflict_id=cid, **bad)
        assert ack["ok"] is False, bad
        assert (ack["error"]["code"], ack["error"]["field"]) == ("invalid", field), ack
    after = await gm.ok("scene.read")
    assert after["conflicts"][0]["zones"] == zones
