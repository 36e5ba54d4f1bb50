"""The roll history and the GM's undo over real Socket.IO, on both stores (R1, R3-R5)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.bridge_process import BridgeProcess
from tests.in_process import run_cli
from tests.seats import Seat, action_invoke, queue, race, start_action

pytestmark = pytest.mark.both_stores


async def overcome(
    seat: Seat, gm: Seat, actor: str, dice: list[int], rating: int = 2, **extra: Any
) -> dict[str, Any]:
    """``actor``'s Athletics overcome against a passive ``rating``, rolling ``dice``."""
    await queue(gm, dice)
    return await start_action(seat, actor=actor, rating=rating, **extra)


async def brousseau_invokes(seat: Seat, action_id: str, effect: str) -> dict[str, Any]:
    """R4.1, R4.2: Brousseau invokes his high concept with a fate point; the card after it."""
    return await seat.card("action.invoke", **action_invoke(action_id, effect=effect, side="actor"))


async def test_history_pages_newest_first_with_filters_and_dice_statistics(
    table: dict[str, Seat],
) -> None:
    # R1.1 dice, R3 outcome, R4 invokes and who paid, R6 costs: each entry as the card had it.
    gm, paul, anna = table["gm"], table["paul"], table["anna"]
    card = await overcome(paul, gm, "brousseau", [1, 1, 0, 0])
    await queue(gm, [1, 1, 1, 0])  # the reroll's dice
    await brousseau_invokes(paul, card["action_id"], "reroll")
    first = await paul.card("action.pass", action_id=card["action_id"], side="actor")
    assert first["state"] == "resolved"
    second = await overcome(anna, gm, "margot", [-1, -1, 0, 0], rating=-2)
    await anna.card("action.pass", action_id=second["action_id"], side="actor")
    third = await overcome(anna, gm, "margot", [0, 0, 0, 0], rating=0)
    await anna.card("action.pass", action_id=third["action_id"], side="actor")

    page = await gm.ok("history.read", limit=2)
    assert [e["action_id"] for e in page["entries"]] == [third["action_id"], second["action_id"]]
    assert page["next_before"] == page["entries"][-1]["seq"]
    older = await gm.ok("history.read", limit=2, before=page["next_before"])
    assert [e["action_id"] for e in older["entries"]] == [card["action_id"]]
    assert older["next_before"] is None
    entry = older["entries"][0]
    assert len(entry["hash"]) == 64 and entry["card_id"] == f"table.{card['action_id']}"
    assert entry["actor"]["leader"]["name"] == "Brousseau"
    # R4.1: the reroll keeps the dice it replaced; both rolls are in the record.
    assert [r["reroll"] for r in entry["rolls"]] == [False, True]
    assert entry["rolls"][0]["dice"] == [1, 1, 0, 0]
    assert entry["invokes"][0]["payment"] == "fate_point"
    assert entry["invokes"][0]["invoker_name"] == "Brousseau"
    assert entry["outcome"] in ("succeed", "excel")

    mine = await paul.ok("history.read", character="brousseau")
    assert [e["action_id"] for e in mine["entries"]] == [card["action_id"]]
    none = await paul.ok("history.read", kind="discover")
    assert none["entries"] == [] and none["next_before"] is None
    scene_one = await paul.ok("history.read", scene=1)
    assert len(scene_one["entries"]) == 3

    stats = await anna.ok("history.stats")
    assert stats["world"]["rolls"] == 4  # three first rolls and one reroll
    assert sum(stats["world"]["expected"]) == pytest.approx(1.0)
    assert stats["world"]["expected"][4] == pytest.approx(19 / 81)
    assert stats["characters"]["margot"]["counts"][4 - 2] == 1  # the -2
    assert stats["characters"]["margot"]["counts"][4] == 1  # the 0
    assert stats["names"]["brousseau"] == "Brousseau"


async def test_history_refuses_bad_paging_with_clear_errors(table: dict[str, Seat]) -> None:
    gm = table["gm"]
    for bad in ({"limit": 0}, {"limit": 51}, {"before": 0}, {"kind": "juggle"}, {"scene": "1"}):
        ack = await gm.send("history.read", **bad)
        assert ack["ok"] is False and ack["error"]["code"] == "invalid", (bad, ack)
    ack = await gm.send("history.undo", back_to=-1)
    assert ack["error"]["code"] == "invalid"


async def test_gm_undo_returns_fate_points_and_free_invokes_and_marks_the_card(
    table: dict[str, Seat], bridge: BridgeProcess, world: tuple[str, str]
) -> None:
    # R4.2 paid invokes and R5.2 free invokes come back exactly when the GM undoes.
    gm, paul, anna = table["gm"], table["paul"], table["anna"]
    before = await gm.ok("world.state")
    await queue(gm, [1, 1, 1, 0])
    card = await start_action(paul, "create_advantage", rating=1, aspect_name="High Ground")
    await brousseau_invokes(paul, card["action_id"], "bonus")
    done = await paul.card("action.pass", action_id=card["action_id"], side="actor")
    assert done["state"] == "resolved"
    during = await gm.ok("world.state")
    assert during != before

    refused = await paul.send("history.undo")
    assert refused["error"]["code"] == "forbidden"
    undo = await gm.ok("history.undo")
    assert undo["card_ids"] == [f"table.{card['action_id']}"]
    assert len(undo["resolutions"]) == 1
    after = await gm.ok("world.state")
    assert after == before
    # The card of the taken-back action updates in place, marked undone, for everyone.
    taken = await anna.wait_for(
        "card", lambda d: d["card"].get("action_id") == card["action_id"] and d["card"]["undone"]
    )
    assert taken[-1]["op"] == "update" and taken[-1]["writer"] == "gm"

    # The GM's history keeps it, marked; a player's no longer shows it.
    assert (await gm.ok("history.read"))["entries"][0]["undone"] is True
    assert (await paul.ok("history.read"))["entries"] == []
    again = await gm.send("history.undo")
    assert again["error"]["code"] == "nothing_to_undo"
    # The log stays append-only and verifiable; replaying it gives the stored state.
    assert run_cli(bridge, "world", "verify", world[0]).stdout.startswith("OK:")


async def test_undo_back_to_an_event_and_never_across_a_scene_end(
    table: dict[str, Seat],
) -> None:
    # R12.1: a scene's end paid out and cleared what no undo should take back.
    gm, paul = table["gm"], table["paul"]
    first = await overcome(paul, gm, "brousseau", [0, 0, 0, 0])
    await paul.card("action.pass", action_id=first["action_id"], side="actor")
    kept = (await gm.ok("history.read"))["entries"][0]
    second = await overcome(paul, gm, "brousseau", [1, 0, 0, 0])
    await paul.card("action.pass", action_id=second["action_id"], side="actor")
    # The start wrote the world's counters, then the action: between them is no state.
    mid = await gm.send("history.undo", back_to=kept["seq"] - 2)
    assert mid["error"]["code"] == "mid_commit" and mid["error"]["field"] == "back_to"
    assert f"event {kept['seq'] - 1}" in mid["error"]["message"]
    latest = (await gm.ok("history.read"))["entries"][0]
    # Back to just before the second pass: the action is open again, its card back at
    # the invoke phase, the first resolution untouched.
    undo = await gm.ok("history.undo", back_to=latest["seq"] - 1)
    assert undo["resolutions"] == [latest["seq"]]
    assert (await gm.ok("world.state"))["open_actions"] == [second["action_id"]]
    reopened = await paul.wait_for(
        "card",
        lambda d: (
            d["card"].get("action_id") == second["action_id"]
            and d["card"]["state"] == "invoking"
            and d["op"] == "update"
        ),
    )
    assert reopened[-1]["card"]["undone"] is False
    entries = (await paul.ok("history.read"))["entries"]
    assert [e["action_id"] for e in entries] == [first["action_id"]]
    await gm.ok("scene.end")
    refused = await gm.send("history.undo", back_to=kept["seq"])
    assert refused["error"]["code"] == "scene_ended"
    assert "scene ended" in refused["error"]["message"]
    nothing = await gm.send("history.undo")
    assert nothing["error"]["code"] == "nothing_to_undo"


async def test_undo_a_chosen_resolution_and_everything_after_it(table: dict[str, Seat]) -> None:
    # The history window's "undo from here": that roll and every later change go.
    gm, paul, anna = table["gm"], table["paul"], table["anna"]
    before = await gm.ok("world.state")
    first = await overcome(paul, gm, "brousseau", [0, 0, 0, 0])
    await paul.card("action.pass", action_id=first["action_id"], side="actor")
    second = await overcome(anna, gm, "margot", [1, 1, 0, 0])
    await anna.card("action.pass", action_id=second["action_id"], side="actor")
    oldest = (await gm.ok("history.read"))["entries"][-1]
    assert oldest["action_id"] == first["action_id"]
    both = await gm.send("history.undo", back_to=1, resolution=oldest["seq"])
    assert both["error"]["code"] == "invalid" and both["error"]["field"] == "resolution"
    missing = await gm.send("history.undo", resolution=oldest["seq"] - 1)
    assert missing["error"]["code"] == "not_found"
    undo = await gm.ok("history.undo", resolution=oldest["seq"])
    assert sorted(undo["action_ids"]) == sorted([first["action_id"], second["action_id"]])
    assert len(undo["resolutions"]) == 2
    assert await gm.ok("world.state") == before


async def test_undoing_the_roll_that_closed_an_exchange_reopens_it_and_marks_its_card(
    table: dict[str, Seat],
) -> None:
    # R11.2: the contest observed the resolution; the undo puts the contest back as it was.
    gm, paul, anna = table["gm"], table["paul"], table["anna"]
    scene = await race(gm, "brousseau", "margot")
    cid = scene["created_id"]
    assert [c["id"] for c in scene["contests"]] == [cid]
    await queue(gm, [1, 1, 0, 0])
    card = await paul.card("contest.roll", contest_id=cid, side_id="s1")
    await paul.card("action.pass", action_id=card["action_id"], side="actor")
    await queue(gm, [0, 0, 0, 0])
    card = await anna.card("contest.roll", contest_id=cid, side_id="s2")
    await anna.card("action.pass", action_id=card["action_id"], side="actor")
    contest = (await gm.ok("scene.read"))["contests"][0]
    assert len(contest["history"]) == 1 and contest["sides"][0]["progress"] == 2

    await gm.ok("history.undo")
    contest = (await gm.ok("scene.read"))["contests"][0]
    assert contest["history"] == [] and contest["sides"][0]["progress"] == 0
    taken = await paul.wait_for(
        "card",
        lambda d: d["card_id"] == f"table.{cid}.x1" and d["card"].get("undone") is True,
    )
    assert taken[-1]["op"] == "update"
    # Margot's side may roll again this exchange; Brousseau's roll stands.
    await queue(gm, [1, 0, 0, 0])
    again = await anna.card("contest.roll", contest_id=cid, side_id="s2")
    assert again["state"] == "invoking"


async def test_scene_intents_answer_with_the_id_they_created(table: dict[str, Seat]) -> None:
    # Macros need not find a new aspect or contest by its name.
    gm = table["gm"]
    added = await gm.ok("scene.aspect", op="add", name="Thick Fog")
    fog = next(a for a in added["aspects"] if a["name"] == "Thick Fog")
    assert added["created_id"] == fog["id"]
    edited = await gm.ok("scene.aspect", op="edit", aspect_id=fog["id"], name="Thicker Fog")
    assert edited["created_id"] is None
    challenge = await gm.ok(
        "challenge.start", name="Escape", tasks=[{"name": "Run", "skill": "Athletics", "rating": 2}]
    )
    assert challenge["created_id"] == challenge["challenges"][0]["id"]


async def cancelled_roll(
    paul: Seat, gm: Seat, dice: list[int], reason: str = "Wrong skill"
) -> dict[str, Any]:
    """Brousseau's overcome, rolled, a fate point invoked for +2, then called off by the GM:
    the cancelled card."""
    card = await overcome(paul, gm, "brousseau", dice, rating=4)
    await brousseau_invokes(paul, card["action_id"], "bonus")
    cancelled = await gm.card("action.cancel", action_id=card["action_id"], reason=reason)
    assert cancelled["state"] == "cancelled"
    return cancelled


async def test_a_roll_the_gm_cancels_stays_in_everyones_history_marked_cancelled(
    table: dict[str, Seat],
) -> None:
    # R1.1: a roll made is a roll of the record, whatever the GM does with it after; R4.2
    # its fate-point invoke is refunded and the entry lists the refund and the GM's reason.
    gm, paul, anna = table["gm"], table["paul"], table["anna"]
    kept = await overcome(anna, gm, "margot", [1, 0, 0, 0], rating=0)
    await anna.card("action.pass", action_id=kept["action_id"], side="actor")
    called_off = await cancelled_roll(paul, gm, [-1, -1, 0, -1])
    # Cancelled before any dice (the opposer has not rolled yet, R2.2): no roll, no entry.
    waiting = await start_action(anna, actor="margot", opposer="brousseau")
    # Consent to harm (DESIGN Reach and trust): Brousseau opposes once Paul says yes.
    waiting = await paul.card(
        "action.help", action_id=waiting["action_id"], character_id="brousseau", accept=True
    )
    assert waiting["state"] == "awaiting_opposition"
    assert (await gm.card("action.cancel", action_id=waiting["action_id"]))["state"] == "cancelled"

    for seat in (paul, anna, gm):
        entries = (await seat.ok("history.read"))["entries"]
        assert [e["action_id"] for e in entries] == [called_off["action_id"], kept["action_id"]]
        entry = entries[0]
        assert (entry["cancelled"], entry["undone"]) == (True, False)
        assert entries[1]["cancelled"] is False
        assert entry["rolls"] == [
            {
                "character": {"id": "brousseau", "name": "Brousseau"},
                "side": "actor",
                "dice": [-1, -1, 0, -1],
                "reroll": False,
            }
        ]
        assert [(i["payment"], i["effect"]) for i in entry["invokes"]] == [("fate_point", "bonus")]
        effects = [(e["kind"], e["text"], e["detail"]) for e in entry["effects"]]
        assert effects == [
            ("refund", "Skeptical Ghost Hunter", "fate_point"),
            ("cancelled", "Wrong skill", ""),
        ]
        # No outcome stands on a cancelled action, as its card says.
        assert entry["outcome"] is None and entry["succeeded"] is None
        assert len(entry["hash"]) == 64 and entry["card_id"] == f"table.{called_off['action_id']}"

    # The kind is the action's own; `cancelled` picks the rolls called off, or the others.
    overcomes = (await paul.ok("history.read", kind="overcome"))["entries"]
    assert len(overcomes) == 2
    only = (await paul.ok("history.read", cancelled=True))["entries"]
    assert [e["action_id"] for e in only] == [called_off["action_id"]]
    rest = (await paul.ok("history.read", cancelled=False, kind="overcome"))["entries"]
    assert [e["action_id"] for e in rest] == [kept["action_id"]]
    assert (await paul.ok("history.read", cancelled=True, kind="discover"))["entries"] == []
    assert (
        len((await paul.ok("history.read", cancelled=True, character="brousseau"))["entries"]) == 1
    )
    for bad in ("yes", 1, "true", [True]):
        ack = await paul.send("history.read", cancelled=bad)
        assert ack["ok"] is False and ack["error"]["code"] == "invalid", (bad, ack)
        assert ack["error"]["field"] == "cancelled"

    # The chart counts the cancelled roll's dice (they were rolled), and says how many.
    stats = await anna.ok("history.stats")
    assert stats["world"]["rolls"] == 2 and stats["world"]["cancelled"] == 1
    assert stats["world"]["counts"][4 - 3] == 1  # the cancelled -3
    assert stats["characters"]["brousseau"]["cancelled"] == 1
    assert stats["characters"]["margot"]["cancelled"] == 0


async def test_undo_takes_back_a_cancelled_roll_like_a_resolution(
    table: dict[str, Seat], bridge: BridgeProcess, world: tuple[str, str]
) -> None:
    # The GM's undo across a cancel: the newest entry (the cancelled roll) goes first and
    # alone; an undo from an older resolution takes every later entry, cancelled ones
    # included, and marks each undone. R4.2: the refunded fate point stays exactly right.
    gm, paul = table["gm"], table["paul"]
    first = await overcome(paul, gm, "brousseau", [0, 0, 0, 0])
    await paul.card("action.pass", action_id=first["action_id"], side="actor")
    before_cancel = await gm.ok("world.state")
    b = await cancelled_roll(paul, gm, [-1, 0, 0, 0])

    undo = await gm.ok("history.undo")
    assert undo["action_ids"] == [b["action_id"]] and len(undo["resolutions"]) == 1
    assert await gm.ok("world.state") == before_cancel
    gm_entries = (await gm.ok("history.read"))["entries"]
    assert [(e["action_id"], e["cancelled"], e["undone"]) for e in gm_entries] == [
        (b["action_id"], True, True),
        (first["action_id"], False, False),
    ]
    assert [e["action_id"] for e in (await paul.ok("history.read"))["entries"]] == [
        first["action_id"]
    ]
    # A player's chart drops what the GM took back; the GM's keeps it.
    assert (await paul.ok("history.stats"))["world"]["cancelled"] == 0
    assert (await gm.ok("history.stats"))["world"]["cancelled"] == 1

    c = await cancelled_roll(paul, gm, [1, 0, 0, 0])
    d = await overcome(paul, gm, "brousseau", [1, 1, 0, 0])
    await paul.card("action.pass", action_id=d["action_id"], side="actor")
    oldest = gm_entries[-1]
    undo = await gm.ok("history.undo", resolution=oldest["seq"])
    # Every action put after the target (b's too: its card says undone again).
    assert undo["action_ids"] == [
        first["action_id"],
        b["action_id"],
        c["action_id"],
        d["action_id"],
    ]
    assert len(undo["resolutions"]) == 3  # not b's: it was undone already
    assert (await paul.ok("history.read"))["entries"] == []
    assert all(e["undone"] for e in (await gm.ok("history.read"))["entries"])
    # A cancelled roll's seq names it for "undo from here"; once undone it is none.
    taken = next(e for e in gm_entries if e["cancelled"])
    refused = await gm.send("history.undo", resolution=taken["seq"])
    assert refused["error"]["code"] == "not_found"
    assert run_cli(bridge, "world", "verify", world[0]).stdout.startswith("OK:")
