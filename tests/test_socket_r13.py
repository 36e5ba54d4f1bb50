"""R13 over real Socket.IO: the GM chooses a Fate SRD ruleset from Foundry, and a Fate
Core conflict plays by its turns, stunts, full defense and concession; every refusal is
a clear error that changes nothing."""

from __future__ import annotations

from tests.seats import BROUSSEAU, GHOUL, MARGOT, Seat, overcome_start, queue, start_conflict

CORE_SKILLS = {"Notice": 2, "Athletics": 1, "Fight": 2, "Physique": 1, "Will": 1}
STUNTS = [
    {"name": "Parry", "skill": "Fight", "bonus": 2, "actions": ["defend"]},
    {"name": "Brawler", "skill": "Fight", "bonus": 2, "actions": ["attack"]},
]


async def core_table(table: dict[str, Seat]) -> Seat:
    """The table's GM switches the world to Fate Core and gives the cast Core skills:
    Margot (Notice 4) opens a physical conflict, then the ghoul, then Brousseau."""
    gm = table["gm"]
    changed = await gm.ok("world.ruleset", ruleset="fate-core")
    assert changed["changed"] is True and changed["rules"]["turn_order"] == "ranked"
    await gm.ok("actor.sync", actor={**BROUSSEAU, "skills": CORE_SKILLS, "stunts": STUNTS})
    await gm.ok("actor.sync", actor={**MARGOT, "skills": {**CORE_SKILLS, "Notice": 4}})
    await gm.ok("actor.sync", actor={**GHOUL, "skills": {**CORE_SKILLS, "Notice": 3, "Fight": 3}})
    return gm


async def test_r13_9_the_gm_chooses_the_ruleset_and_a_change_keeps_the_log(
    table: dict[str, Seat],
) -> None:
    # R13.9: set by the GM (a player is refused), between procedures only, and the log
    # before it stays history: the world still verifies.
    gm, paul = table["gm"], table["paul"]
    hello = await paul.ok("hello")
    assert (hello["ruleset"], hello["rules"]["conflicts"]) == ("unwritten", False)
    refused = await paul.send("world.ruleset", ruleset="fate-core")
    assert refused["error"]["code"] == "forbidden"
    for bad in ("dresden", "", "x" * 41):
        ack = await gm.send("world.ruleset", ruleset=bad)
        assert ack["ok"] is False and ack["error"]["code"] == "invalid", ack
        assert ack["error"]["field"] == "ruleset"
    await queue(gm, [0, 0, 0, 0])
    card = await gm.card("action.start", **overcome_start(1))
    assert card["state"] == "invoking"
    busy = await gm.send("world.ruleset", ruleset="fate-core")
    assert busy["error"]["code"] == "wrong_state" and "unresolved" in busy["error"]["message"]
    await gm.ok("action.cancel", action_id=card["action_id"])

    await core_table(table)
    emitted = await paul.wait_for("scene.state", lambda e: e["state"]["ruleset"] == "fate-core")
    rules = emitted[-1]["state"]["rules"]
    assert rules == {
        "id": "fate-core",
        "title": "Fate Core",
        "conflicts": True,
        "ratings": "skills",
        "turn_order": "ranked",
        "full_defense": True,
        "stress_rule": "one_box",
        "stunts_chosen": True,
        "full_defense_optional": False,
        "approaches": [],
        "defend_for_another": True,
    }
    assert (await paul.ok("hello"))["ruleset"] == "fate-core"
    again = await gm.ok("world.ruleset", ruleset="fate-core")
    assert again["changed"] is False
    conflict = await start_conflict(gm)
    mid = await gm.send("world.ruleset", ruleset="fate-accelerated")
    assert mid["error"]["code"] == "wrong_state" and "Crypt" in mid["error"]["message"]
    assert (await gm.ok("scene.read"))["ruleset"] == "fate-core"
    await gm.ok("conflict.end", conflict_id=conflict["id"])
    changed = await gm.ok("world.ruleset", ruleset="fate-condensed")
    assert changed["rules"]["turn_order"] == "elective"
    verified = await gm.ok("world.verify")
    assert verified["ok"] and verified["replay_matches"], verified


async def test_r13_5_to_r13_8_a_fate_core_conflict_over_the_wire(table: dict[str, Seat]) -> None:
    # R13.5 turns, R13.7 full defense, R13.8 stunts named per roll, R13.6 concession.
    gm = await core_table(table)
    paul, anna = table["paul"], table["anna"]
    conflict = await start_conflict(gm)
    cid = conflict["id"]
    assert [t["character"]["id"] for t in conflict["order"]] == ["margot", "ghoul", "brousseau"]
    assert conflict["current"] == "margot" and conflict["order_method"] == "ranked"
    assert conflict["clears_stress"] is True

    # R13.5: Brousseau may not act on Margot's turn; the refusal changes nothing.
    out_of_turn = await paul.send("action.start", **overcome_start(1))
    assert out_of_turn["error"]["code"] == "not_your_turn", out_of_turn
    assert "Margot" in out_of_turn["error"]["message"]
    assert (await gm.ok("world.state"))["open_actions"] == []
    early = await paul.send("conflict.full_defense", conflict_id=cid, character_id="brousseau")
    assert early["error"]["code"] == "not_your_turn"

    await anna.ok("conflict.next", conflict_id=cid)
    await gm.ok("conflict.next", conflict_id=cid)
    scene = await paul.ok("conflict.full_defense", conflict_id=cid, character_id="brousseau")
    assert scene["conflicts"][0]["full_defense"] == ["brousseau"]
    await paul.ok("conflict.next", conflict_id=cid)

    # The GM's ghoul attacks out of turn; Brousseau defends (no turn needed) with Parry,
    # +2 of full defense on top. A stunt that does not fit is refused first.
    attack = {
        "type": "attack",
        "actor_id": "ghoul",
        "skill": "Fight",
        "opposition": {"kind": "active", "opposer_id": "brousseau"},
    }
    card = await gm.card("action.start", **attack)
    assert card["state"] == "awaiting_opposition"
    for bad in (["Brawler"], ["Parry", "Parry"], ["Nope"]):
        ack = await paul.send(
            "action.oppose", action_id=card["action_id"], skill="Fight", stunts=bad
        )
        assert ack["error"]["code"] == "invalid" and ack["error"]["field"] == "stunts", ack
    await queue(gm, [0, 0, 0, 0], [1, 1, 1, 1])
    card = await paul.card(
        "action.oppose", action_id=card["action_id"], skill="Fight", stunts=["Parry"]
    )
    defence = card["opposition"]
    assert (defence["stunts"], defence["stunt_bonus"], defence["full_defense"]) == (
        ["Parry"],
        2,
        True,
    )
    assert defence["total"]["value"] == 2 + 2 + 2
    assert card["actor"]["stunts"] == [] and card["stress_rule"] == "one_box"

    # R13.6: Brousseau concedes, then Margot: the conflict ends at once, the ghoul's side
    # wins, and each conceder gets its point.
    await gm.ok("action.cancel", action_id=card["action_id"])
    before = {c["id"]: c["fate_points"] for c in (await gm.ok("world.state"))["characters"]}
    refused = await anna.send("conflict.concede", conflict_id=cid, character_id="brousseau")
    assert refused["error"]["code"] == "forbidden"
    await paul.ok("conflict.concede", conflict_id=cid, character_id="brousseau")
    scene = await anna.ok("conflict.concede", conflict_id=cid, character_id="margot")
    ended = scene["conflicts"][0]
    assert (ended["state"], ended["winner"], ended["conceded"]) == (
        "ended",
        "s2",
        ["brousseau", "margot"],
    )
    after = {c["id"]: c["fate_points"] for c in (await gm.ok("world.state"))["characters"]}
    assert after["brousseau"] == before["brousseau"] + 1
    assert after["margot"] == before["margot"] + 1
