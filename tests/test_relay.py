"""Relay mode over real Socket.IO (DESIGN "Reach and trust"): players' intents arrive on the
GM's connection inside ``relay`` envelopes naming the Foundry user who sent them, and get
exactly a directly connected player's authority, limits and answers."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from bridge.service.protocol import NAMESPACE
from bridge.transport.relay import MAX_RELAYED_USERS, RELAYED_BURST
from tests.conftest import Connect
from tests.seats import BROUSSEAU, GHOUL, MARGOT, Seat, overcome_start, queue

pytestmark = pytest.mark.both_stores

_ids = itertools.count(1)


class RelayedSeat:
    """A Foundry user whose intents the GM's client relays (as the module's relay host does)."""

    def __init__(self, gm: Seat, user: str) -> None:
        self.gm = gm
        self.user = user

    async def send(self, event: str, **payload: Any) -> dict[str, Any]:
        payload.setdefault("request_id", f"relayed{next(_ids)}")
        envelope = {"user": self.user, "event": event, "payload": payload}
        return await relay(self.gm, envelope)

    async def ok(self, event: str, **payload: Any) -> dict[str, Any]:
        ack = await self.send(event, **payload)
        assert ack["ok"], ack
        data: dict[str, Any] = ack["data"]
        return data

    async def code(self, event: str, **payload: Any) -> str:
        ack = await self.send(event, **payload)
        assert ack["ok"] is False, ack
        code: str = ack["error"]["code"]
        return code


async def relay(gm: Seat, envelope: object) -> dict[str, Any]:
    """One ``relay`` frame from the GM's connection, as the module's relay host sends it."""
    ack: dict[str, Any] = await gm.client.call("relay", envelope, namespace=NAMESPACE, timeout=10)
    return ack


async def relay_table(
    connect: Connect, world: tuple[str, str]
) -> tuple[Seat, RelayedSeat, RelayedSeat]:
    """A GM with three synced actors, relaying for paul and anna (no player connects)."""
    gm = Seat(await connect(world[0], key=world[1], user="theGM"))
    for actor in (BROUSSEAU, MARGOT, GHOUL):
        await gm.ok("actor.sync", actor=actor)
    await gm.ok("world.settings", trust_player_ratings=True)
    return gm, RelayedSeat(gm, "paul"), RelayedSeat(gm, "anna")


def writers(ack: dict[str, Any]) -> list[str]:
    return [e["data"]["writer"] for e in ack.get("emits", []) if e["event"] == "card"]


async def test_a_relayed_player_acts_for_its_own_actor_and_writes_its_own_card(
    connect: Connect, world: tuple[str, str]
) -> None:
    gm, paul, _anna = await relay_table(connect, world)
    hello = await paul.ok("hello")
    # Foundry vouched for the sender: no nonce to publish, a player's role.
    assert (hello["role"], hello["user"], hello["bound"], hello["bind_nonce"]) == (
        "player",
        "paul",
        True,
        None,
    )
    await queue(gm, [1, 1, 0, 0])
    ack = await paul.send("action.start", **overcome_start(2))
    assert ack["ok"], ack
    assert ack["data"]["card"]["actor"]["leader"]["id"] == "brousseau"
    # The commit's emits ride in the GM's ack (it forwards them); the card is paul's to write.
    assert writers(ack) == ["paul"]
    synced = await paul.ok("world.sync", since=0)
    assert [e["event"] for e in synced["emits"]].count("card") == 1


async def test_a_relayed_player_has_a_players_authority_only(
    connect: Connect, world: tuple[str, str]
) -> None:
    gm, paul, _anna = await relay_table(connect, world)
    # Another player's character, and the GM's NPC.
    assert await paul.code("action.start", **{**overcome_start(2), "actor_id": "margot"}) == (
        "forbidden"
    )
    assert await paul.code("action.start", **{**overcome_start(2), "actor_id": "ghoul"}) == (
        "forbidden"
    )
    # GM-only intents stay GM-only when relayed for a player.
    gm_only: list[tuple[str, dict[str, Any]]] = [
        ("actor.sync", {"actor": {**BROUSSEAU, "fate_points": 9}}),
        ("fate.gm_budget", {"fate_points": 5}),
        ("history.undo", {}),
        ("world.verify", {"anchors": []}),
        ("dev.queue_dice", {"rolls": [[1, 1, 1, 1]]}),
        ("world.settings", {"trust_player_ratings": False}),
    ]
    for event, payload in gm_only:
        assert await paul.code(event, **payload) == "forbidden", event
    state = await gm.ok("world.state")
    brousseau = next(c for c in state["characters"] if c["id"] == "brousseau")
    assert brousseau["fate_points"] == 2


async def test_a_relayed_user_never_has_the_gms_authority(
    connect: Connect, world: tuple[str, str]
) -> None:
    gm, _paul, _anna = await relay_table(connect, world)
    # Even the GM's own user id, relayed, is a player: GMs act on their own connection.
    as_gm = RelayedSeat(gm, "theGM")
    assert (await as_gm.ok("hello"))["role"] == "player"
    assert await as_gm.code("fate.gm_budget", fate_points=4) == "forbidden"
    bad = {"user": "paul", "role": "gm", "event": "hello", "payload": {"request_id": "r"}}
    assert (await relay(gm, bad))["error"]["code"] == "invalid"


async def test_only_a_gm_connection_relays(connect: Connect, world: tuple[str, str]) -> None:
    gm = Seat(await connect(world[0], key=world[1], user="theGM"))
    await gm.ok("actor.sync", actor=BROUSSEAU)
    paul = Seat(await connect(world[0], role="player", user="paul"))
    hello = await paul.ok("hello")
    envelope = {"user": "anna", "event": "hello", "payload": {"request_id": "x1"}}
    # Unbound, then bound: a player's socket never relays, not even for itself.
    assert (await relay(paul, envelope))["error"]["code"] == "forbidden"
    await gm.ok("user.bind", user_id="paul", nonce=hello["bind_nonce"])
    assert (await relay(paul, envelope))["error"]["code"] == "forbidden"
    own = {**envelope, "user": "paul", "event": "action.start", "payload": overcome_start(2)}
    assert (await relay(paul, own))["error"]["code"] == "forbidden"
    assert (await paul.send("relay.leave", user="anna"))["error"]["code"] == "forbidden"


async def test_bad_envelopes_are_refused_and_change_nothing(
    connect: Connect, world: tuple[str, str]
) -> None:
    gm, paul, _anna = await relay_table(connect, world)
    before = await gm.ok("world.sync", since=0)
    bad: list[tuple[dict[str, Any], str]] = [
        ({"user": "paul", "event": "relay", "payload": {}}, "forbidden"),
        ({"user": "paul", "event": "relay.leave", "payload": {}}, "forbidden"),
        ({"user": "paul", "event": "user.bind", "payload": {}}, "forbidden"),
        ({"user": "paul", "event": "no.such", "payload": {}}, "unknown_event"),
        ({"user": "paul", "event": "hello", "payload": "hi"}, "invalid"),
        ({"user": "paul", "event": "hello"}, "invalid"),
        ({"user": "", "event": "hello", "payload": {}}, "invalid"),
        ({"user": "paul", "event": "hello", "payload": {}, "sender": "anna"}, "invalid"),
    ]
    for envelope, code in bad:
        ack = await relay(gm, envelope)
        assert ack["ok"] is False and ack["error"]["code"] == code, (envelope, ack)
    # A sender named inside the relayed message is not a field any intent has.
    forged = {**overcome_start(2), "user": "anna"}
    assert await paul.code("action.start", **forged) == "invalid"
    # A player may name only itself as a card's author.
    await queue(gm, [0, 0, 0, 0])
    card = await paul.ok("action.start", **overcome_start(2))
    written = await paul.send("card.written", action_id=card["action_id"], author="anna")
    assert written["error"]["code"] == "forbidden"
    after = await gm.ok("world.sync", since=0)
    assert len(after["emits"]) == len(before["emits"]) + 1  # the one card started


async def test_each_relayed_user_has_its_own_rate_limit(
    connect: Connect, world: tuple[str, str]
) -> None:
    gm, paul, anna = await relay_table(connect, world)
    floods = await asyncio.gather(
        *(paul.send("world.state") for _ in range(int(RELAYED_BURST) + 20))
    )
    codes = [ack["error"]["code"] for ack in floods if not ack["ok"]]
    assert codes and set(codes) == {"rate_limited"}
    # Paul's flood is paul's: anna and the GM's own intents go through.
    assert (await anna.ok("hello"))["user"] == "anna"
    assert await gm.ok("world.state")


async def test_a_connection_relays_for_a_bounded_number_of_users(
    connect: Connect, world: tuple[str, str]
) -> None:
    gm, _paul, _anna = await relay_table(connect, world)
    for n in range(MAX_RELAYED_USERS):
        await RelayedSeat(gm, f"user{n}").ok("hello")
    assert await RelayedSeat(gm, "oneTooMany").code("hello") == "rate_limited"
    # Leaving frees a seat.
    assert (await gm.ok("relay.leave", user="user0")) == {"user": "user0", "left": True}
    assert (await gm.ok("relay.leave", user="user0")) == {"user": "user0", "left": False}
    assert (await RelayedSeat(gm, "oneTooMany").ok("hello"))["user"] == "oneTooMany"


async def test_a_request_sent_again_through_another_gm_is_answered_once(
    connect: Connect, world: tuple[str, str]
) -> None:
    # The active GM left mid-action: the player's module sends the request again, same id,
    # through the next GM. The action happens once; both answers are the first.
    gm, paul, _anna = await relay_table(connect, world)
    await queue(gm, [1, 0, 0, 0], [-1, -1, -1, -1])
    start = {**overcome_start(2), "request_id": "click-1"}
    first = await paul.send("action.start", **start)
    await gm.client.disconnect()
    second_gm = Seat(await connect(world[0], key=world[1], user="gm2"))
    again = await RelayedSeat(second_gm, "paul").send("action.start", **start)
    assert again["ok"] and again["data"] == first["data"]
    state = await second_gm.ok("world.state")
    assert state["open_actions"] == [first["data"]["action_id"]]
    synced = await second_gm.ok("world.sync", since=0)
    assert [e["event"] for e in synced["emits"]].count("card") == 1


async def test_presence_follows_foundry_through_the_relay(
    connect: Connect, world: tuple[str, str]
) -> None:
    # A card goes to its author while present; once Foundry says the player left (the GM's
    # client relays ``relay.leave``) or the GM's connection closes, to the GM's client.
    gm, paul, _anna = await relay_table(connect, world)
    await gm.ok("world.settings", trust_player_ratings=False)
    await queue(gm, [1, 1, 0, 0])
    started = await paul.send("action.start", **overcome_start(2))
    assert writers(started) == ["paul"]
    await gm.ok("relay.leave", user="paul")
    confirmed = await gm.send(
        "action.confirm", action_id=started["data"]["action_id"], passive_rating=2
    )
    assert confirmed["ok"], confirmed
    # "gm" is the bridge's name for whichever client is the active GM's.
    assert writers(confirmed) == ["gm"]
    # Back at the table (the next relayed message), paul writes its cards again.
    await paul.ok("hello")
    passed = await paul.send("action.pass", action_id=started["data"]["action_id"], side="actor")
    assert passed["ok"], passed
    assert writers(passed) == ["paul"]
