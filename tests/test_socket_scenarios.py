"""Whole actions over real Socket.IO: a GM and players, each on their own connection."""

from __future__ import annotations

import asyncio

import pytest

from bridge.service.protocol import EMITS_FRAME, AckOk, EmitsFrame
from tests.conftest import Connect
from tests.seats import (
    BROUSSEAU,
    GHOUL,
    MARGOT,
    Seat,
    action_invoke,
    action_start,
    characters,
    overcome_start,
    queue,
    start_action,
)

# The same scenarios on the embedded SQLite store and on Redis.
pytestmark = pytest.mark.both_stores


async def test_player_binding_is_needed_and_proven_through_the_gm(
    connect: Connect, world: tuple[str, str]
) -> None:
    # DESIGN Trust: a player acts only once the GM's client vouches for its nonce.
    gm = Seat(await connect(world[0], key=world[1], user="gm"))
    await gm.ok("actor.sync", actor=BROUSSEAU)
    paul = Seat(await connect(world[0], role="player", user="paul"))
    hello = await paul.ok("hello")
    start = action_start(rating=2)
    assert (await paul.send("action.start", **start))["error"]["code"] == "unbound"
    wrong = await gm.send("user.bind", user_id="anna", nonce=hello["bind_nonce"])
    assert wrong["error"]["code"] == "not_found"
    impostor = await paul.send("user.bind", user_id="paul", nonce=hello["bind_nonce"])
    assert impostor["error"]["code"] == "unbound"
    # Unbound, the player hears nothing of the world and may not read its history.
    assert (await paul.send("world.sync", since=0))["error"]["code"] == "unbound"
    await queue(gm, [0, 0, 0, 0])
    await gm.card("action.start", **start)
    await asyncio.sleep(0.2)
    assert paul.received("card") == []
    await gm.ok("user.bind", user_id="paul", nonce=hello["bind_nonce"])
    assert (await paul.wait_for("notice"))[0]["code"] == "bound"
    synced = await paul.ok("world.sync", since=0)
    assert [e["event"] for e in synced["emits"]] == ["card"]
    await queue(gm, [0, 0, 0, 0])
    card = await paul.card("action.start", **start)
    assert card["actor"]["leader"]["id"] == "brousseau"
    forbidden = await paul.send("action.start", **{**start, "actor_id": "ghoul"})
    assert forbidden["error"]["code"] == "unknown_actor"
    await gm.ok("actor.sync", actor=GHOUL)
    forbidden = await paul.send("action.start", **{**start, "actor_id": "ghoul"})
    assert forbidden["error"]["code"] == "forbidden"


async def test_active_opposition_with_invokes_from_both_sides(table: dict[str, Seat]) -> None:
    # R2.2 R4.1 R4.2 R4.4 R4.5: Brousseau vs Margot; each invokes, then both pass.
    gm, paul, anna = table["gm"], table["paul"], table["anna"]
    card = await start_action(paul, opposer="margot")
    action_id = card["action_id"]
    # Consent to harm (DESIGN Reach and trust): Margot is Anna's, so Anna says yes first.
    assert card["state"] == "confirming"
    assert card["prompt"] == {
        "kind": "confirm",
        "users": ["anna"],
        "gm": True,
        "options": ["consent"],
    }
    card = await anna.card("action.help", action_id=action_id, character_id="margot", accept=True)
    assert card["state"] == "awaiting_opposition"
    assert card["prompt"] == {"kind": "oppose", "users": ["anna"], "gm": True, "options": []}
    await queue(gm, [1, 0, 0, 0], [0, 0, 0, 0])
    card = await anna.card("action.oppose", action_id=action_id, skill="Athletics")
    assert card["opposition"]["total"]["value"] == 3 and card["actor"]["total"]["value"] == 3
    card = await paul.card("action.invoke", **action_invoke(action_id))
    assert card["actor"]["total"]["value"] == 5 and card["shifts"] == 2
    card = await anna.card("action.invoke", **action_invoke(action_id, invoker="margot"))
    assert card["opposition"]["total"]["value"] == 5
    assert [(i["invoker_name"], i["aspect_name"]) for i in card["invokes"]] == [
        ("Brousseau", "Skeptical Ghost Hunter"),
        ("Margot", "Skeptical Ghost Hunter"),
    ]
    await anna.card("action.pass", action_id=action_id, side="opposition")
    card = await paul.card("action.pass", action_id=action_id, side="actor")
    assert card["state"] == "choosing" and card["outcome"] == "tie"
    people = await characters(gm)
    assert people["brousseau"]["fate_points"] == 1
    assert people["margot"]["fate_points"] == 0
    # R4.5: Margot paid to invoke Brousseau's aspect against him: his at scene end.
    assert people["brousseau"]["pending_fate_points"] == 1


async def test_tie_turned_into_success_at_a_minor_cost(table: dict[str, Seat]) -> None:
    # R5.1 tie, R6.1
    gm, paul = table["gm"], table["paul"]
    await queue(gm, [-1, 0, 0, 0])
    card = await start_action(paul, rating=2)
    card = await paul.card("action.pass", action_id=card["action_id"], side="actor")
    assert card["prompt"]["kind"] == "choose"
    assert card["prompt"]["options"] == ["fail", "succeed_at_cost"]
    card = await paul.card("action.choose", action_id=card["action_id"], choice="succeed_at_cost")
    assert card["state"] == "costing" and card["cost_severity"] == "minor"
    refused = await paul.send("action.cost", action_id=card["action_id"], kind="wrinkle", text="x")
    assert refused["error"]["code"] == "forbidden"
    card = await gm.card(
        "action.cost",
        action_id=card["action_id"],
        kind="npc_boost",
        target_id="ghoul",
        aspect_name="Smells Blood",
    )
    assert card["state"] == "resolved" and card["succeeded"] is True
    assert any(e["kind"] == "boost" and e["character"]["id"] == "ghoul" for e in card["effects"])


async def test_serious_cost_consequence_rolls_up_to_moderate(table: dict[str, Seat]) -> None:
    # R6.2 R7.2: the mild slot is already filled, so the mild consequence rolls up.
    gm, paul = table["gm"], table["paul"]
    await gm.ok(
        "actor.sync",
        actor={
            **BROUSSEAU,
            "consequences": [
                {"id": "mild", "severity": 2, "name": "Scraped Knee"},
                {"id": "moderate", "severity": 4},
                {"id": "severe", "severity": 6},
            ],
        },
    )
    await queue(gm, [-1, -1, -1, 0])
    card = await start_action(paul, rating=2)
    action_id = card["action_id"]
    await paul.card("action.pass", action_id=action_id, side="actor")
    await paul.card("action.choose", action_id=action_id, choice="succeed_at_cost")
    card = await gm.card(
        "action.cost", action_id=action_id, kind="mild_consequence", aspect_name="Cracked Rib"
    )
    consequence = next(e for e in card["effects"] if e["kind"] == "consequence")
    assert consequence["count"] == 4 and "Cracked Rib" in consequence["text"]
    patches = await gm.wait_for("actor.patch", lambda p: p["actor_id"] == "brousseau")
    slots = {s["id"]: s for s in patches[-1]["consequences"]}
    assert slots["mild"]["name"] == "Scraped Knee"
    assert slots["moderate"]["name"] == "Cracked Rib"
    assert patches[-1]["writer"] == "gm"


async def test_dangerous_fumble_overwhelms_the_actor(table: dict[str, Seat]) -> None:
    # R9.1 R9.2 R8.1 R8.2
    gm, paul = table["gm"], table["paul"]
    card = await start_action(paul, rating=4, dangerous={"actor": True})
    # R9.1 Decision: the player's danger flag waits for the GM, who confirms it.
    assert card["state"] == "confirming" and card["proposal"]["dangerous_actor"] is True
    card = await gm.card("action.confirm", action_id=card["action_id"])
    assert card["state"] == "declared" and card["prompt"]["options"] == ["concede"]
    await queue(gm, [-1, -1, 0, 0])
    await paul.card("action.roll", action_id=card["action_id"])
    card = await paul.card("action.pass", action_id=card["action_id"], side="actor")
    assert card["state"] == "resolved"
    assert any(
        e["kind"] == "overwhelmed" and e["character"]["id"] == "brousseau" for e in card["effects"]
    )
    again = await paul.send("action.start", **action_start(rating=0))
    assert again["error"]["code"] == "overwhelmed"
    statuses = await gm.wait_for("token.status", lambda s: s["actor_id"] == "brousseau")
    assert statuses[-1]["statuses"]["overwhelmed"] is True


async def test_concession_pays_a_fate_point_at_scene_end(table: dict[str, Seat]) -> None:
    # R9.3 R12.1
    gm, paul = table["gm"], table["paul"]
    card = await start_action(paul, opposer="ghoul", dangerous={"actor": True, "opposition": False})
    card = await gm.card("action.confirm", action_id=card["action_id"])  # R9.1
    # Consent to harm: the ghoul is the GM's to put in Brousseau's way.
    card = await gm.card(
        "action.help", action_id=card["action_id"], character_id="ghoul", accept=True
    )
    card = await paul.card("action.concede", action_id=card["action_id"], character_id="brousseau")
    assert card["state"] == "resolved" and card["succeeded"] is False
    before = await characters(gm)
    assert before["brousseau"]["fate_points"] == 2
    assert before["brousseau"]["pending_fate_points"] == 1
    assert (await paul.send("scene.end"))["error"]["code"] == "forbidden"
    summary = await gm.ok("scene.end")
    assert summary["fate_points"] == [
        {
            "character": {"id": "brousseau", "name": "Brousseau"},
            "gained": 1,
            "reasons": [{"kind": "conceded", "aspect": None}],
        }
    ]
    after = await characters(gm)
    assert after["brousseau"]["fate_points"] == 3
    assert after["brousseau"]["overwhelmed"] is False


async def test_leave_a_mark_on_a_full_track_overwhelms_the_target(table: dict[str, Seat]) -> None:
    # R5.4 R7.2 R8.1
    gm, paul, anna = table["gm"], table["paul"], table["anna"]
    await gm.ok(
        "actor.sync",
        actor={
            **MARGOT,
            "consequences": [
                {"id": "mild", "severity": 2, "name": "Tired"},
                {"id": "moderate", "severity": 4, "name": "Shaken"},
            ],
        },
    )
    await queue(gm, [1, 1, 1, 0])
    card = await start_action(
        paul,
        "create_advantage",
        skill="Notice",
        rating=1,
        target_id="margot",
        aspect_name="Rattled",
    )
    action_id = card["action_id"]
    # Consent to harm: a mark on Margot needs Anna's yes.
    assert card["state"] == "confirming"
    await anna.card("action.help", action_id=action_id, character_id="margot", accept=True)
    card = await paul.card("action.pass", action_id=action_id, side="actor")
    assert card["pending_choice"] == "leave_mark" and card["outcome"] == "excel"
    card = await paul.card(
        "action.choose", action_id=action_id, choice="mark", consequence_name="Rattled"
    )
    overwhelmed = [e for e in card["effects"] if e["kind"] == "overwhelmed"]
    assert overwhelmed and overwhelmed[0]["character"]["id"] == "margot"
    assert overwhelmed[0]["cause"]["id"] == "brousseau"  # who describes it (R8.2)


async def test_teamwork_with_two_helpers(table: dict[str, Seat]) -> None:
    # R10.1: Margot (Notice 4) leads; Brousseau (2) and the Ghoul (1) add +1 each.
    gm, paul = table["gm"], table["paul"]
    await queue(gm, [0, 0, 0, 0])
    card = await start_action(
        paul,
        "discover",
        skill="Notice",
        rating=4,
        situation="the attic",
        helpers=[{"character_id": "margot"}, {"character_id": "ghoul"}],
    )
    # R10.1 Decision: Anna accepts for Margot, the GM for the Ghoul (an NPC).
    assert [p["status"] for p in card["participants"]] == ["joined", "invited", "invited"]
    await table["anna"].card(
        "action.help", action_id=card["action_id"], character_id="margot", accept=True
    )
    card = await gm.card(
        "action.help", action_id=card["action_id"], character_id="ghoul", accept=True
    )
    assert card["actor"]["leader"]["id"] == "margot"
    assert {h["id"] for h in card["actor"]["helpers"]} == {"brousseau", "ghoul"}
    assert card["actor"]["teamwork_bonus"] == 2
    assert card["actor"]["total"]["value"] == 6
    # The lead's owner (or the GM) passes for the acting side now.
    refused = await paul.send("action.pass", action_id=card["action_id"], side="actor")
    assert refused["error"]["code"] == "forbidden"
    card = await table["anna"].card("action.pass", action_id=card["action_id"], side="actor")
    assert card["outcome"] == "succeed"
    assert any(e["kind"] == "questions" and e["count"] == 2 for e in card["effects"])


async def test_two_simultaneous_invokes_race_for_the_last_fate_point(
    connect: Connect, world: tuple[str, str], table: dict[str, Seat]
) -> None:
    # R4.6 under concurrency: two browsers of the same player, one fate point left.
    gm, paul = table["gm"], table["paul"]
    await gm.ok(
        "actor.sync",
        actor={
            **BROUSSEAU,
            "fate_points": 1,
            "aspects": [{"key": "hc", "name": "Skeptic"}, {"key": "tr", "name": "Old Soldier"}],
        },
    )
    second = Seat(await connect(world[0], role="player", user="paul"))
    hello = await second.ok("hello")
    await gm.ok("user.bind", user_id="paul", nonce=hello["bind_nonce"])
    await queue(gm, [0, 0, 0, 0])
    card = await paul.card("action.start", **overcome_start(5))
    results = await asyncio.gather(
        paul.send("action.invoke", **action_invoke(card["action_id"])),
        second.send("action.invoke", **action_invoke(card["action_id"], "brousseau.tr")),
    )
    assert sorted(r["ok"] for r in results) == [False, True]
    loser = next(r for r in results if not r["ok"])
    assert loser["error"]["code"] == "no_fate_points"
    assert (await characters(gm))["brousseau"]["fate_points"] == 0
    final = await gm.card("action.pass", action_id=card["action_id"], side="actor")
    assert final["actor"]["invoke_bonus"] == 2 and len(final["invokes"]) == 1


async def test_each_commit_reaches_the_room_in_one_frame(table: dict[str, Seat]) -> None:
    # DESIGN data flow: what one intent committed (the card, the actor's patch and status,
    # the scene) reaches everyone in the world's room as one `emits` frame, in seq order,
    # each item as its own schema says, and world.sync replays the very same items. The
    # sender hears the same items in its ack, and no frame (protocol 4: AckOk.emits).
    gm, paul, anna = table["gm"], table["paul"], table["anna"]
    since = (await gm.ok("world.sync", since=0))["last_seq"]
    heard = {seat: len(seat.client.frames) for seat in (paul, anna)}
    await queue(gm, [1, 1, 1, 1])
    await paul.ok("world.state")  # an answer that committed nothing carries no emits
    start_ack = await paul.send("action.start", **overcome_start(2))
    pass_ack = await paul.send(
        "action.pass", action_id=start_ack["data"]["action_id"], side="actor"
    )
    frames = (await anna.wait_frames(heard[anna] + 2))[heard[anna] :]
    assert [event for event, _ in frames] == [EMITS_FRAME, EMITS_FRAME]
    start_items, pass_items = (EmitsFrame.model_validate(frame).emits for _, frame in frames)
    assert [item.event for item in start_items] == ["card"]
    assert pass_items[0].event == "card"
    assert {"actor.patch", "scene.state"} <= {item.event for item in pass_items}
    items = [*start_items, *pass_items]
    seqs = [item.data["seq"] for item in items]
    assert seqs == list(range(since + 1, since + 1 + len(items)))
    # The sender heard the same items in its two acks, and not as frames.
    assert [start_ack["emits"], pass_ack["emits"]] == [frame["emits"] for _, frame in frames]
    assert AckOk.model_validate(pass_ack).emits == pass_items
    await anna.ok("world.state")  # anna's frames are in, so paul's would have been too
    assert len(paul.client.frames) == heard[paul]
    replayed = (await gm.ok("world.sync", since=since))["emits"]
    assert replayed == [item.model_dump(mode="json") for item in items]
