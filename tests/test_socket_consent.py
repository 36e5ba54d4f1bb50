"""Consent to harm over real Socket.IO (DESIGN Reach and trust: "the GM owns ... whom a
player's action may harm"; R2.1, R9.1, R10.1 extended; issue 26, item 3).

The attacker's proofs, each first as the hole was reproduced (Paul, owning a second
character, Pierre, against Anna's Margot and the GM's ghoul), then shown closed: the
action waits on the card for the owner's (or the GM's) yes, a no calls it off, and
nobody else can answer."""

from __future__ import annotations

from typing import Any

import pytest

from tests.bridge_process import BridgeProcess, add_world
from tests.conftest import Connect
from tests.seats import BROUSSEAU, GHOUL, MARGOT, Seat, characters, queue, start_action

pytestmark = pytest.mark.both_stores

WORST = [-1, -1, -1, -1]
BEST = [1, 1, 1, 1]
PIERRE: dict[str, Any] = {
    "id": "pierre",
    "name": "Pierre",
    "owners": ["paul"],
    "skills": {"Athletics": 1, "Notice": 0},
    "fate_points": 1,
    "refresh": 3,
    "aspects": [{"key": "hc", "name": "Brousseau's Cousin"}],
}


async def bound_player(gm: Seat, connect: Connect, world: str, user: str) -> Seat:
    seat = Seat(await connect(world, role="player", user=user))
    hello = await seat.ok("hello")
    await gm.ok("user.bind", user_id=user, nonce=hello["bind_nonce"])
    return seat


@pytest.fixture
async def seats(connect: Connect, bridge: BridgeProcess) -> dict[str, Seat]:
    """A Fate Condensed world (it has attacks) at the default settings: Paul plays
    Brousseau and Pierre, Anna plays Margot, Carl plays nobody here, the GM the ghoul."""
    key = add_world(bridge, "fc", ruleset="fate-condensed")
    gm = Seat(await connect("fc", key=key, user="gm"))
    for actor in (BROUSSEAU, PIERRE, MARGOT, GHOUL):
        await gm.ok("actor.sync", actor=actor)
    players = {
        user: await bound_player(gm, connect, "fc", user) for user in ("paul", "anna", "carl")
    }
    return {"gm": gm, **players}


def pinning(**extra: Any) -> dict[str, Any]:
    """The hole's create an advantage: Brousseau on Margot, Pierre (Paul's) opposing."""
    return {
        "type": "create_advantage",
        "actor_id": "brousseau",
        "skill": "Athletics",
        "aspect_name": "Pinned Down",
        "target_id": "margot",
        "opposition": {"kind": "active", "opposer_id": "pierre"},
        **extra,
    }


async def test_a_players_advantage_on_anothers_character_waits_for_its_owners_yes(
    seats: dict[str, Seat],
) -> None:
    # Consent to harm, R2.1, R10.1. The hole: Paul opposes his own action with Pierre
    # (active opposition makes no proposal), rolls Pierre low and leaves a mark on
    # Margot with a free invoke for himself, Anna never asked. Now it waits for her.
    gm, paul, anna, carl = seats["gm"], seats["paul"], seats["anna"], seats["carl"]
    margot_before = (await characters(gm))["margot"]
    card = await paul.card("action.start", **pinning())
    action_id = card["action_id"]
    assert card["state"] == "confirming" and card["proposal"] is None
    assert card["actor"]["dice"] is None and card["opposition"]["dice"] is None
    assert card["consents"] == [
        {
            "character": {"id": "margot", "name": "Margot"},
            "parts": ["target"],
            "status": "asked",
            "controllers": ["anna"],
        }
    ]
    assert card["prompt"] == {
        "kind": "confirm",
        "users": ["anna"],
        "gm": True,
        "options": ["consent"],
    }
    # Paul gets past it no way: not by opposing with Pierre, rolling, passing, choosing,
    # nor by answering for Margot; Carl, a third player, cannot answer either.
    for event, payload, code in (
        ("action.oppose", {"skill": "Notice"}, "wrong_state"),
        ("action.roll", {}, "awaiting_consent"),
        ("action.pass", {"side": "actor"}, "wrong_state"),
        ("action.choose", {"choice": "mark"}, "wrong_state"),
        ("action.confirm", {}, "forbidden"),
        ("action.help", {"character_id": "margot", "accept": True}, "forbidden"),
    ):
        refused = await paul.send(event, action_id=action_id, **payload)
        assert refused["error"]["code"] == code, (event, refused)
    forged = await carl.send("action.help", action_id=action_id, character_id="margot", accept=True)
    assert forged["error"]["code"] == "forbidden"
    # Bad answers are refused and change nothing.
    for payload, code in (
        ({"character_id": "pierre", "accept": True}, "not_found"),  # not asked about
        ({"character_id": "nobody", "accept": True}, "not_found"),
        ({"character_id": "margot", "accept": "yes"}, "invalid"),
        ({"character_id": "margot"}, "invalid"),
        ({"character_id": "margot", "accept": True, "as": "gm"}, "invalid"),
    ):
        bad = await anna.send("action.help", action_id=action_id, **payload)
        assert bad["error"]["code"] == code, (payload, bad)
    unknown = await anna.send("action.help", action_id="a999", character_id="margot", accept=True)
    assert unknown["error"]["code"] == "not_found"
    assert (await characters(gm))["margot"] == margot_before
    # Anna says yes on the card: the action goes on as declared, Pierre rolling first.
    card = await anna.card("action.help", action_id=action_id, character_id="margot", accept=True)
    assert card["state"] == "awaiting_opposition"
    assert card["consents"][0]["status"] == "accepted"
    again = await anna.send("action.help", action_id=action_id, character_id="margot", accept=False)
    assert again["error"]["code"] == "wrong_state"
    await queue(gm, WORST, BEST)
    await paul.card("action.oppose", action_id=action_id, skill="Notice")
    await paul.card("action.pass", action_id=action_id, side="opposition")
    card = await paul.card("action.pass", action_id=action_id, side="actor")
    assert card["pending_choice"] == "leave_mark"
    card = await paul.card("action.choose", action_id=action_id, choice="mark")
    margot = (await characters(gm))["margot"]
    assert next(s for s in margot["consequences"] if s["id"] == "mild")["name"] == "Pinned Down"


async def test_a_decline_calls_the_action_off_and_leaves_the_character_untouched(
    seats: dict[str, Seat],
) -> None:
    # Consent to harm: Anna says no: the card says the action is called off, no dice
    # fell, Margot is as she was, and the action takes no more presses.
    gm, paul, anna = seats["gm"], seats["paul"], seats["anna"]
    margot_before = (await characters(gm))["margot"]
    card = await paul.card("action.start", **pinning())
    action_id = card["action_id"]
    card = await anna.card("action.help", action_id=action_id, character_id="margot", accept=False)
    assert card["state"] == "cancelled" and card["outcome"] is None
    assert card["prompt"]["kind"] == "none"
    assert card["consents"][0]["status"] == "declined"
    declined = [e for e in card["effects"] if e["kind"] == "declined"]
    assert [(e["character"]["id"], e["detail"]) for e in declined] == [("margot", "target")]
    assert card["actor"]["dice"] is None and card["opposition"]["dice"] is None
    assert (await characters(gm))["margot"] == margot_before
    for seat, event, payload in (
        (anna, "action.help", {"character_id": "margot", "accept": True}),
        (gm, "action.help", {"character_id": "margot", "accept": True}),
        (paul, "action.oppose", {"skill": "Notice"}),
        (paul, "action.roll", {}),
    ):
        late = await seat.send(event, action_id=action_id, **payload)
        assert late["error"]["code"] == "wrong_state", (event, late)
    # A roll never made is no roll of the record (R1.1): the history has no entry for it.
    assert (await gm.ok("history.read"))["entries"] == []


async def test_an_attack_on_anothers_character_owes_no_hit_without_a_yes(
    seats: dict[str, Seat],
) -> None:
    # R5.9, R5.10, consent to harm. The hole: the same with type attack left Margot owing
    # an 11-shift hit (Athletics +3 and ++++ against Pierre's Notice 0 and ----). Now Anna
    # declines it; the same attack again waits until the GM, who may answer for any
    # character, accepts it.
    gm, paul, anna = seats["gm"], seats["paul"], seats["anna"]
    margot_before = (await characters(gm))["margot"]
    attack = {
        "type": "attack",
        "actor_id": "brousseau",
        "skill": "Athletics",
        "target_id": "margot",
        "opposition": {"kind": "active", "opposer_id": "pierre"},
    }
    card = await paul.card("action.start", **attack)
    assert card["state"] == "confirming" and card["opposition_action"] == "defend"
    assert card["consents"][0]["parts"] == ["target"]
    card = await anna.card(
        "action.help", action_id=card["action_id"], character_id="margot", accept=False
    )
    assert card["state"] == "cancelled" and card["pending_hit"] == 0
    assert (await characters(gm))["margot"] == margot_before
    card = await paul.card("action.start", **attack)
    action_id = card["action_id"]
    card = await gm.card("action.help", action_id=action_id, character_id="margot", accept=True)
    assert card["state"] == "awaiting_opposition"
    await queue(gm, WORST, BEST)
    await paul.card("action.oppose", action_id=action_id, skill="Notice")
    await paul.card("action.pass", action_id=action_id, side="opposition")
    card = await paul.card("action.pass", action_id=action_id, side="actor")
    assert card["shifts"] == 11 and card["pending_choice"] == "attack_style"


async def test_an_attack_on_the_gms_npc_waits_for_the_gm_alone(seats: dict[str, Seat]) -> None:
    # Consent to harm: the ghoul is the GM's; no player answers for it.
    gm, paul, anna, carl = seats["gm"], seats["paul"], seats["anna"], seats["carl"]
    card = await start_action(paul, "attack", opposer="pierre", target_id="ghoul")
    action_id = card["action_id"]
    assert card["state"] == "confirming"
    assert card["consents"] == [
        {
            "character": {"id": "ghoul", "name": "Ghoul"},
            "parts": ["target"],
            "status": "asked",
            "controllers": [],
        }
    ]
    assert card["prompt"] == {"kind": "confirm", "users": [], "gm": True, "options": ["consent"]}
    for seat in (paul, anna, carl):
        forged = await seat.send(
            "action.help", action_id=action_id, character_id="ghoul", accept=True
        )
        assert forged["error"]["code"] == "forbidden"
    card = await gm.card("action.help", action_id=action_id, character_id="ghoul", accept=True)
    assert card["state"] == "awaiting_opposition"


async def test_trusted_ratings_do_not_skip_a_yes_a_passive_minus_10_waits_too(
    seats: dict[str, Seat],
) -> None:
    # R2.1 Decision and consent to harm. The hole: with trusted ratings a passive -10 did
    # it alone (no opposer at all). Now the rating goes through unconfirmed, as the
    # table chose, but the mark on Margot and the hit on the ghoul wait for their owners.
    gm, paul, anna = seats["gm"], seats["paul"], seats["anna"]
    await gm.ok("world.settings", trust_player_ratings=True)
    minus_10 = {"kind": "passive", "rating": -10}
    card = await paul.card("action.start", **pinning(opposition=minus_10))
    action_id = card["action_id"]
    assert card["state"] == "confirming" and card["proposal"] is None
    assert card["opposition"]["total"]["value"] == -10
    assert card["consents"][0]["character"]["id"] == "margot"
    assert (await paul.send("action.roll", action_id=action_id))["error"]["code"] == (
        "awaiting_consent"
    )
    await queue(gm, [0, 0, 0, 0])
    card = await anna.card("action.help", action_id=action_id, character_id="margot", accept=True)
    assert card["state"] == "invoking" and card["actor"]["dice"] == [0, 0, 0, 0]
    card = await start_action(paul, "attack", opposition=minus_10, target_id="ghoul")
    assert card["state"] == "confirming" and card["consents"][0]["character"]["id"] == "ghoul"
    card = await gm.card(
        "action.help", action_id=card["action_id"], character_id="ghoul", accept=False
    )
    assert card["state"] == "cancelled"


async def test_the_gms_own_actions_and_a_players_own_characters_ask_nobody(
    seats: dict[str, Seat],
) -> None:
    # DESIGN Reach and trust: the GM's own actions go straight through; so does a
    # player's action that touches only its own characters.
    gm, paul = seats["gm"], seats["paul"]
    await queue(gm, [0, 0, 0, 0])
    card = await start_action(gm, "attack", actor="ghoul", rating=0, target_id="margot")
    assert card["state"] == "invoking" and card["consents"] == []
    card = await start_action(
        paul, "create_advantage", opposer="pierre", aspect_name="Drilled", target_id="pierre"
    )
    assert card["state"] == "awaiting_opposition" and card["consents"] == []
