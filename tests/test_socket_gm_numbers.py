"""The GM owns the numbers, over real Socket.IO (R2.1, R9.1, R10.1), the contest roll
waits for its advantage (R11.2) and hints are taken on the card (R5.5).

Each hole is first reproduced as a player would try it, then shown closed."""

from __future__ import annotations

from typing import Any

import pytest

from tests.seats import Seat, characters, queue, race, start_action

pytestmark = pytest.mark.both_stores

BEST_DICE = [1, 1, 1, 1]


async def shortcut(seat: Seat, contest_id: str, rating: int) -> dict[str, Any]:
    """R11.2: Brousseau's side (s1) creates the advantage Shortcut with Notice before its
    contest roll, against a passive ``rating``: the advantage's first card."""
    return await seat.card(
        "contest.advantage",
        contest_id=contest_id,
        side_id="s1",
        actor_id="brousseau",
        skill="Notice",
        aspect_name="Shortcut",
        opposition={"kind": "passive", "rating": rating},
    )


async def test_r2_1_a_players_rating_of_minus_10_no_longer_excels_without_the_gm(
    strict_table: dict[str, Seat],
) -> None:
    # R2.1: the hole: Paul sends passive -10 and excels with no GM step. Now it waits.
    gm, paul, anna = strict_table["gm"], strict_table["paul"], strict_table["anna"]
    await queue(gm, [0, 0, 0, 0])
    card = await start_action(paul, rating=-10)
    action_id = card["action_id"]
    assert card["state"] == "confirming" and card["outcome"] is None
    assert card["actor"]["dice"] is None
    assert card["proposal"] == {
        "passive_rating": {"value": -10},
        "dangerous_actor": False,
        "dangerous_opposition": False,
    }
    assert card["prompt"] == {"kind": "confirm", "users": [], "gm": True, "options": ["confirm"]}
    # Nobody but the GM gets past it: not by passing, rolling or confirming.
    for event, payload in (
        ("action.pass", {"side": "actor"}),
        ("action.roll", {}),
        ("action.confirm", {}),
    ):
        refused = await paul.send(event, action_id=action_id, **payload)
        assert not refused["ok"], (event, refused)
    assert (await paul.send("action.roll", action_id=action_id))["error"]["code"] == "awaiting_gm"
    assert (await anna.send("action.confirm", action_id=action_id))["error"]["code"] == "forbidden"
    # Bad input to the confirmation is refused and changes nothing.
    bad = await gm.send("action.confirm", action_id=action_id, passive_rating=10**6)
    assert bad["error"]["code"] == "invalid"
    bad = await gm.send("action.confirm", action_id=action_id, passive_rating="4")
    assert bad["error"]["code"] == "invalid"
    # One click: the GM changes the rating to Great (+4) and the dice fall.
    card = await gm.card("action.confirm", action_id=action_id, passive_rating=4)
    assert card["state"] == "invoking" and card["proposal"] is None
    assert card["opposition"]["total"]["value"] == 4
    card = await paul.card("action.pass", action_id=action_id, side="actor")
    assert card["outcome"] == "fumble"
    again = await gm.send("action.confirm", action_id=action_id)
    assert again["error"]["code"] == "wrong_state"


async def test_r2_1_the_world_setting_lets_a_table_trust_its_players_ratings(
    strict_table: dict[str, Seat],
) -> None:
    # R2.1 Decision: off by default; only the GM turns it on; the scene panel hears it.
    gm, paul = strict_table["gm"], strict_table["paul"]
    scene = await gm.ok("scene.read")
    assert scene["settings"] == {"trust_player_ratings": False, "full_defense": False}
    refused = await paul.send("world.settings", trust_player_ratings=True)
    assert refused["error"]["code"] == "forbidden"
    bad = await gm.send("world.settings", trust_player_ratings="yes please")
    assert bad["error"]["code"] == "invalid"
    bad = await gm.send("world.settings", trust_danger=True)
    assert bad["error"]["code"] == "invalid"
    scene = await gm.ok("world.settings", trust_player_ratings=True)
    assert scene["settings"] == {"trust_player_ratings": True, "full_defense": False}
    emitted = await gm.wait_for(
        "scene.state", lambda e: e["state"]["settings"]["trust_player_ratings"]
    )
    assert emitted
    await queue(gm, [0, 0, 0, 0])
    card = await start_action(paul, rating=1)
    assert card["state"] == "invoking"
    # Danger is the GM's whatever the setting (R9.1).
    card = await start_action(paul, skill="Notice", rating=1, dangerous={"actor": True})
    assert card["state"] == "confirming"
    assert card["proposal"]["passive_rating"] is None and card["proposal"]["dangerous_actor"]


async def test_r9_1_a_players_danger_flag_does_not_overwhelm_another_players_character(
    table: dict[str, Seat],
) -> None:
    # R9.1: the hole: Paul marks his action dangerous for Margot (Anna's) and overwhelms
    # her on success. Now the flag is a request; the GM strikes it out on the card.
    gm, paul, anna = table["gm"], table["paul"], table["anna"]
    card = await start_action(paul, opposer="margot", dangerous={"opposition": True})
    action_id = card["action_id"]
    assert card["state"] == "confirming" and card["proposal"]["dangerous_opposition"]
    early = await anna.send("action.oppose", action_id=action_id, skill="Athletics")
    assert early["error"]["code"] == "wrong_state"
    early = await anna.send("action.concede", action_id=action_id, character_id="margot")
    assert early["error"]["code"] == "wrong_state"
    card = await gm.card(
        "action.confirm", action_id=action_id, dangerous={"actor": False, "opposition": False}
    )
    # Consent to harm (DESIGN Reach and trust): Margot opposes only once Anna says yes.
    assert card["state"] == "confirming" and card["prompt"]["options"] == ["consent"]
    card = await anna.card("action.help", action_id=action_id, character_id="margot", accept=True)
    assert card["state"] == "awaiting_opposition"
    assert card["opposition"]["dangerous"] is False
    await queue(gm, [-1, -1, 0, 0], BEST_DICE)
    await anna.card("action.oppose", action_id=action_id, skill="Athletics")
    await anna.card("action.pass", action_id=action_id, side="opposition")
    card = await paul.card("action.pass", action_id=action_id, side="actor")
    assert card["outcome"] == "excel"
    assert not any(e["kind"] == "overwhelmed" for e in card["effects"])
    assert not (await characters(gm))["margot"]["overwhelmed"]


async def test_r10_1_a_named_foreign_helper_is_not_dragged_into_a_conceded_danger(
    table: dict[str, Seat],
) -> None:
    # R10.1: the hole: Paul names Margot as a helper on a dangerous action and concedes;
    # she is overwhelmed with him. Now she is only invited; rolling without an answer
    # drops her (Decision), and the concession takes only Brousseau out.
    gm, paul, anna = table["gm"], table["paul"], table["anna"]
    card = await start_action(
        paul, rating=3, dangerous={"actor": True}, helpers=[{"character_id": "margot"}]
    )
    action_id = card["action_id"]
    assert card["actor"]["helpers"] == []
    margot = card["participants"][1]
    assert margot == {
        "character": {"id": "margot", "name": "Margot"},
        "skill": "Athletics",
        "status": "invited",
        "controllers": ["anna"],
    }
    assert card["prompt"]["users"] == ["anna"]
    assert card["prompt"]["options"] == ["confirm", "help"]
    # Paul cannot accept for Anna, nor for a character that was not named.
    forged = await paul.send("action.help", action_id=action_id, character_id="margot", accept=True)
    assert forged["error"]["code"] == "forbidden"
    unnamed = await anna.send("action.help", action_id=action_id, character_id="ghoul", accept=True)
    assert unnamed["error"]["code"] == "not_found"
    card = await gm.card("action.confirm", action_id=action_id)
    assert card["state"] == "confirming"  # only Margot's answer is left
    assert card["prompt"]["options"] == ["roll", "help"]
    assert set(card["prompt"]["users"]) == {"anna", "paul"}
    card = await paul.card("action.roll", action_id=action_id)
    assert card["state"] == "declared"
    assert card["participants"][1]["status"] == "dropped"
    late = await anna.send("action.help", action_id=action_id, character_id="margot", accept=True)
    assert late["error"]["code"] == "wrong_state"
    card = await paul.card("action.concede", action_id=action_id, character_id="brousseau")
    overwhelmed = {e["character"]["id"] for e in card["effects"] if e["kind"] == "overwhelmed"}
    assert overwhelmed == {"brousseau"}


async def test_r10_1_an_accepted_helper_joins_and_a_declined_one_stays_out(
    table: dict[str, Seat],
) -> None:
    # R10.1 Decision: the owner accepts on the card; teamwork counts only who joined.
    gm, paul, anna = table["gm"], table["paul"], table["anna"]
    card = await start_action(
        paul, rating=2, helpers=[{"character_id": "margot"}, {"character_id": "ghoul"}]
    )
    action_id = card["action_id"]
    card = await anna.card("action.help", action_id=action_id, character_id="margot", accept=True)
    assert [h["id"] for h in card["actor"]["helpers"]] == ["margot"]
    assert card["actor"]["teamwork_bonus"] == 1 and card["state"] == "confirming"
    await queue(gm, [0, 0, 0, 0])
    card = await gm.card("action.help", action_id=action_id, character_id="ghoul", accept=False)
    assert card["state"] == "invoking"
    assert [p["status"] for p in card["participants"]] == ["joined", "joined", "declined"]
    assert card["actor"]["total"]["value"] == 4  # Athletics 3 + 1 for Margot


async def test_r2_1_challenge_and_contest_advantages_with_player_ratings_wait_for_the_gm(
    strict_table: dict[str, Seat],
) -> None:
    # R2.1 for challenge.advantage (R11.1) and contest.advantage (R11.2): a player's
    # rating there is a proposal too; the GM's task ratings are not.
    gm, paul = strict_table["gm"], strict_table["paul"]
    scene = await gm.ok(
        "challenge.start",
        name="Flooded crypt",
        tasks=[{"name": "Hold the door", "skill": "Athletics", "rating": 2}],
    )
    chid = scene["challenges"][0]["id"]
    card = await paul.card(
        "challenge.advantage",
        challenge_id=chid,
        actor_id="brousseau",
        skill="Notice",
        aspect_name="Dry Ledge",
        rating=-8,
    )
    assert card["state"] == "confirming" and card["proposal"]["passive_rating"]["value"] == -8
    await queue(gm, [0, 0, 0, 0])
    task = await paul.card("challenge.roll", challenge_id=chid, task_id="t1", actor_id="brousseau")
    assert task["state"] == "invoking"  # the GM set this rating
    scene = await race(gm, "brousseau", "ghoul")
    cid = scene["contests"][0]["id"]
    card = await shortcut(paul, cid, -8)
    assert card["state"] == "confirming"


async def test_r11_2_a_contest_roll_waits_for_the_sides_advantage_and_a_fumble_forfeits(
    table: dict[str, Seat],
) -> None:
    # R11.2: the hole: the side rolls while its advantage is in the invoke phase, and the
    # advantage's fumble then forfeits nothing. Now the roll is refused until it resolves.
    gm, paul = table["gm"], table["paul"]
    scene = await race(gm, "brousseau", "ghoul")
    cid = scene["contests"][0]["id"]
    await queue(gm, [-1, -1, -1, 0])
    card = await shortcut(paul, cid, 2)
    advantage = card["action_id"]
    assert card["state"] == "invoking"
    early = await paul.send("contest.roll", contest_id=cid, side_id="s1")
    assert early["error"] == {
        "code": "advantage_pending",
        "message": "Brousseau's advantage before the roll is not resolved yet; "
        "its contest roll waits for it.",
        "field": "side_id",
        "params": {"reason": "advantage_first", "name": "Brousseau"},
    }
    card = await paul.card("action.pass", action_id=advantage, side="actor")
    assert card["outcome"] == "fumble"
    forfeited = await paul.send("contest.roll", contest_id=cid, side_id="s1")
    assert forfeited["error"]["code"] == "forfeited"
    scene = await gm.ok("scene.read")
    slot = next(r for r in scene["contests"][0]["current"] if r["side_id"] == "s1")
    assert slot["forfeited"] is True


async def excelled_discover(paul: Seat, gm: Seat) -> dict[str, Any]:
    await queue(gm, BEST_DICE)
    card = await start_action(paul, "discover", skill="Notice", rating=1)
    card = await paul.card("action.pass", action_id=card["action_id"], side="actor")
    assert card["outcome"] == "excel" and card["hint"] == {"status": "offered", "text": None}
    return card


async def test_r5_5_the_actor_takes_the_hint_and_each_untaken_hint_pays_its_point(
    table: dict[str, Seat],
) -> None:
    # R5.5: the holes: no intent takes the hint, and two unused hints paid one point.
    gm, paul, anna = table["gm"], table["paul"], table["anna"]
    for _ in range(3):
        card = await excelled_discover(paul, gm)
    assert card["prompt"] == {"kind": "hint", "users": ["paul"], "gm": True, "options": ["take"]}
    taken = card["action_id"]
    assert (await anna.send("action.hint", action_id=taken))["error"]["code"] == "forbidden"
    early = await gm.send("action.hint_give", action_id=taken, text="Too soon")
    assert early["error"]["code"] == "wrong_state"
    card = await paul.card("action.hint", action_id=taken)
    assert card["hint"] == {"status": "asked", "text": None}
    assert card["prompt"] == {"kind": "hint", "users": [], "gm": True, "options": ["give"]}
    assert (await paul.send("action.hint", action_id=taken))["error"]["code"] == "wrong_state"
    forged = await paul.send("action.hint_give", action_id=taken, text="I know")
    assert forged["error"]["code"] == "forbidden"
    empty = await gm.send("action.hint_give", action_id=taken, text="")
    assert empty["error"]["code"] == "invalid"
    card = await gm.card("action.hint_give", action_id=taken, text="The cellar door is new.")
    assert card["hint"] == {"status": "given", "text": "The cellar door is new."}
    assert card["prompt"]["kind"] == "none"
    summary = await gm.ok("scene.end")
    gain = next(g for g in summary["fate_points"] if g["character"]["id"] == "brousseau")
    assert gain["gained"] == 2  # two hints untaken, two points; the taken one pays none
    assert [r["kind"] for r in gain["reasons"]] == ["hint_unused", "hint_unused"]
