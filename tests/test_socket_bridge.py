"""The bridge over real Socket.IO, python-socketio clients: the real bridge served in the
test's process, and a real bridge process for its restart."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import socketio

from bridge.service.protocol import NAMESPACE, PROTOCOL_VERSION
from bridge.store.chain import verify_chain
from bridge.store.sqlite_schema import connect_readable
from tests.bridge_process import BridgeProcess, add_world
from tests.conftest import Connect
from tests.in_process import InProcessBridge, serving_in_loop
from tests.seats import Seat, gm_auth

ATHLETE = {
    "id": "actorBrousseau01",
    "name": "Brousseau",
    "owners": ["playerPaul000001"],
    "skills": {"Athletics": 3, "Notice": 1},
}


async def call(client: socketio.AsyncClient, event: str, payload: Any) -> dict[str, Any]:
    ack: dict[str, Any] = await client.call(event, payload, namespace=NAMESPACE, timeout=10)
    return ack


async def refusal(bridge: BridgeProcess, auth: Any) -> dict[str, Any]:
    """Connect with ``auth`` and return the refusal's data (fails if it connects)."""
    client = socketio.AsyncClient(reconnection=False)
    refused: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    async def _refused(data: Any) -> None:
        if not refused.done():
            refused.set_result(data)

    client.on("connect_error", _refused, namespace=NAMESPACE)

    with pytest.raises(socketio.exceptions.ConnectionError):
        await client.connect(
            bridge.url,
            namespaces=[NAMESPACE],
            transports=["websocket"],
            auth=auth,
            wait_timeout=5,
        )
    envelope = await asyncio.wait_for(refused, 5)
    await client.disconnect()
    # python-socketio hands the client {message, data}; the JS client gets err.message, err.data.
    assert envelope["message"] == "refused"
    data: dict[str, Any] = envelope["data"]
    return data


def db_counts(bridge: BridgeProcess) -> tuple[int, int, int]:
    with connect_readable(bridge.data_dir / "bridge.sqlite3") as db:
        events = db.execute("SELECT count(*) FROM events").fetchone()[0]
        emits = db.execute("SELECT count(*) FROM emits").fetchone()[0]
        requests = db.execute("SELECT count(*) FROM requests").fetchone()[0]
    return events, emits, requests


async def test_gm_connects_with_the_right_key_and_says_hello(
    connect: Connect, world: tuple[str, str]
) -> None:
    gm = await connect(world[0], key=world[1])
    ack = await call(gm, "hello", {"request_id": "h1", "module_version": "0.1.0"})
    assert ack["ok"] is True
    assert ack["data"]["world"] == "table"
    assert ack["data"]["role"] == "gm"
    assert ack["data"]["protocol"] == PROTOCOL_VERSION
    assert ack["data"]["dev_dice"] is True


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        ({"key": "not-the-key"}, "bad_key"),
        ({"key": None}, "bad_key"),
        ({"world": "nowhere"}, "unknown_world"),
        ({"protocol": PROTOCOL_VERSION + 1}, "protocol_mismatch"),
        ({"role": "overlord"}, "invalid_auth"),
        ({"user": "x" * 500}, "invalid_auth"),
        ({"extra": 1}, "invalid_auth"),
    ],
)
async def test_bad_handshakes_are_refused_with_a_reason(
    bridge: BridgeProcess, world: tuple[str, str], overrides: dict[str, Any], reason: str
) -> None:
    data = await refusal(bridge, gm_auth(world, **overrides))
    assert data["reason"] == reason
    assert data["message"]
    assert data["bridge_protocol"] == PROTOCOL_VERSION


async def test_an_older_module_is_told_at_connect_to_update_the_module(
    bridge: BridgeProcess, world: tuple[str, str]
) -> None:
    # DESIGN Wire protocol: protocol 7's module reads an action's card off its answer, which
    # 8 leaves to the card's emit in the sender's ack; it is refused at connect, and the
    # refusal says what the GM does about it.
    data = await refusal(bridge, gm_auth(world, protocol=7))
    assert data["reason"] == "protocol_mismatch"
    assert data["bridge_protocol"] == PROTOCOL_VERSION == 8
    assert "protocol 7" in data["message"]
    assert "update the Fate Bridge module" in data["message"]


async def test_handshake_that_is_not_an_object_is_refused(bridge: BridgeProcess) -> None:
    data = await refusal(bridge, None)
    assert data["reason"] == "invalid_auth"


async def _sync_and_roll(gm: socketio.AsyncClient, request_id: str = "roll-1") -> dict[str, Any]:
    assert (await call(gm, "actor.sync", {"request_id": "sync-1", "actor": ATHLETE}))["ok"]
    queued = await call(gm, "dev.queue_dice", {"request_id": "dice-1", "rolls": [[1, 1, 0, 0]]})
    assert queued == {"ok": True, "data": {"queued": 1}}
    return await call(
        gm,
        "action.start",
        {
            "request_id": request_id,
            "type": "overcome",
            "actor_id": ATHLETE["id"],
            "skill": "Athletics",
            "opposition": {"kind": "passive", "rating": 4},
        },
    )


async def test_overcome_worked_example_over_socketio(
    connect: Connect, world: tuple[str, str]
) -> None:
    # R1.2 R2.1 R2.3 R3.1 R5.1: seed 004's example: Good +3, dice +2, vs Great +4.
    gm = await connect(world[0], key=world[1])
    assistant = await connect(world[0], key=world[1], user="gmAssistant00001")
    ack = await _sync_and_roll(gm)
    assert ack["ok"] is True, ack
    card = ack["data"]["card"]
    assert card["actor"]["dice"] == [1, 1, 0, 0]
    assert card["actor"]["total"] == {"value": 5}  # the word is the reader's (protocol 7)
    assert card["opposition"]["total"] == {"value": 4}
    assert card["shifts"] == 1
    assert card["outcome"] == "succeed"
    assert card["provisional"] is True  # R3.2: until the invoke phase ends
    assert card["state"] == "invoking"
    passed = await call(
        gm, "action.pass", {"request_id": "pass-1", "action_id": card["action_id"], "side": "actor"}
    )
    final = passed["data"]["card"]
    assert final["state"] == "resolved"
    assert final["outcome"] == "succeed" and final["provisional"] is False
    for client in (gm, assistant):
        emits = await Seat(client).wait_for("card", count=2)
        assert len(emits) == 2
        assert {e["writer"] for e in emits} == {"gmUser0000000001"}
        assert [e["op"] for e in emits] == ["create", "update"]
        assert emits[0]["card"] == card
        assert emits[1]["card"] == final


async def test_the_sender_hears_its_card_once(connect: Connect, world: tuple[str, str]) -> None:
    # DESIGN "The path of one action" step 4: the ack answers with the card, and the commit's
    # emits come in the same ack; the card travels once, in its emit (protocol.ActionData).
    gm = await connect(world[0], key=world[1])
    assert (await call(gm, "actor.sync", {"request_id": "sync-1", "actor": ATHLETE}))["ok"]
    start = {
        "request_id": "once-1",
        "type": "overcome",
        "actor_id": ATHLETE["id"],
        "skill": "Athletics",
        "opposition": {"kind": "passive", "rating": 2},
    }
    # The ack as it comes off the wire (the fixture's client puts the card back, as the
    # module does).
    wire = socketio.AsyncClient.call
    raw = await wire(gm, "action.start", start, namespace=NAMESPACE, timeout=10)
    assert raw["ok"] is True, raw
    assert raw["data"]["card"] is None
    (emit,) = [
        e["data"]
        for e in raw["emits"]
        if e["event"] == "card" and e["data"]["card_id"] == raw["data"]["card_id"]
    ]
    card = emit["card"]
    assert card["action_id"] == raw["data"]["action_id"] and card["state"] == "invoking"
    assert json.dumps(raw).count(json.dumps(card)) == 1
    # A retry gets the stored answer, emits long gone: the card is in the answer itself.
    again = await wire(gm, "action.start", start, namespace=NAMESPACE, timeout=10)
    assert again["ok"] is True and "emits" not in again
    assert again["data"]["card"] == card


async def test_excel_gives_the_actor_a_boost(connect: Connect, world: tuple[str, str]) -> None:
    # R5.1 excel: success and a boost (R12.6).
    gm = await connect(world[0], key=world[1])
    await call(gm, "actor.sync", {"request_id": "s", "actor": ATHLETE})
    await call(gm, "dev.queue_dice", {"request_id": "d", "rolls": [[1, 1, 1, 1]]})
    ack = await call(
        gm,
        "action.start",
        {
            "request_id": "r",
            "type": "overcome",
            "actor_id": ATHLETE["id"],
            "skill": "Athletics",
            "opposition": {"kind": "passive", "rating": 2},
        },
    )
    action_id = ack["data"]["action_id"]
    passed = await call(
        gm, "action.pass", {"request_id": "p", "action_id": action_id, "side": "actor"}
    )
    card = passed["data"]["card"]
    assert card["shifts"] == 5 and card["outcome"] == "excel"
    boost = next(e for e in card["effects"] if e["kind"] == "boost")
    assert boost["character"]["id"] == ATHLETE["id"]
    assert any(a["id"] == boost["aspect_id"] and a["kind"] == "boost" for a in card["aspects"])


@pytest.mark.process
async def test_state_survives_a_restart(
    bridge: BridgeProcess, connect: Connect, world: tuple[str, str]
) -> None:
    gm = await connect(world[0], key=world[1])
    first = await _sync_and_roll(gm)
    await gm.disconnect()
    bridge.restart()
    again = await connect(world[0], key=world[1])
    hello = await call(again, "hello", {"request_id": "after-restart"})
    assert hello["data"]["last_seq"] == 1  # one card emitted before the restart
    synced = await call(again, "world.sync", {"request_id": "sync-after", "since": 0})
    assert [e["data"]["card"] for e in synced["data"]["emits"]] == [first["data"]["card"]]
    # The actor is still known: a new roll needs no new sync.
    await call(again, "dev.queue_dice", {"request_id": "d2", "rolls": [[-1, -1, -1, -1]]})
    second = await call(
        again,
        "action.start",
        {
            "request_id": "roll-2",
            "type": "overcome",
            "actor_id": ATHLETE["id"],
            "skill": "Athletics",
            "opposition": {"kind": "passive", "rating": 0},
        },
    )
    assert second["data"]["action_id"] == "a2"
    passed = await call(
        again, "action.pass", {"request_id": "pass-2", "action_id": "a2", "side": "actor"}
    )
    assert passed["data"]["card"]["outcome"] == "fumble"
    assert passed["data"]["card"]["state"] == "choosing"


async def test_repeated_request_id_returns_the_first_answer(
    bridge: BridgeProcess, connect: Connect, world: tuple[str, str]
) -> None:
    gm = await connect(world[0], key=world[1])
    first = await _sync_and_roll(gm, request_id="same-id")
    before = db_counts(bridge)
    await call(gm, "dev.queue_dice", {"request_id": "dice-2", "rolls": [[-1, -1, -1, -1]]})
    repeat = await _sync_and_roll(gm, request_id="same-id")
    # The same answer; the emits the first carried are not sent again (world.sync has them).
    assert first["emits"] and "emits" not in repeat
    assert repeat == {key: value for key, value in first.items() if key != "emits"}
    assert db_counts(bridge)[:2] == before[:2]
    await Seat(gm).wait_for("card")
    await asyncio.sleep(0.2)
    assert len([e for e, _ in gm.received if e == "card"]) == 1


async def test_a_request_id_used_again_on_another_event_is_another_request(
    bridge: BridgeProcess, connect: Connect, world: tuple[str, str]
) -> None:
    # Found by the socket fuzzer: action.absorb sent with the request id of an earlier
    # actor.sync was answered with that sync's world view, an answer of another shape.
    gm = await connect(world[0], key=world[1])
    rolled = await _sync_and_roll(gm)
    refused = await call(gm, "action.absorb", {"request_id": "sync-1", "action_id": "a9"})
    assert refused["ok"] is False and refused["error"]["code"] == "not_found", refused
    passed = await call(
        gm, "action.pass", {"request_id": "sync-1", "action_id": "a1", "side": "actor"}
    )
    assert passed["ok"], passed
    assert passed["data"]["action_id"] == "a1"
    assert passed["data"]["card"]["state"] != rolled["data"]["card"]["state"]
    # A retry of each is still answered as the first time, and changes nothing.
    before = db_counts(bridge)
    again = await call(
        gm, "action.pass", {"request_id": "sync-1", "action_id": "a1", "side": "actor"}
    )
    assert again == {key: value for key, value in passed.items() if key != "emits"}
    synced = await call(gm, "actor.sync", {"request_id": "sync-1", "actor": ATHLETE})
    # The first answer (a sync of the same sheet now would say nothing changed).
    assert synced == {"ok": True, "data": {"actor_id": ATHLETE["id"], "changed": True}}
    assert db_counts(bridge) == before


async def test_the_event_log_is_a_verifiable_hash_chain(
    bridge: BridgeProcess, connect: Connect, world: tuple[str, str]
) -> None:
    gm = await connect(world[0], key=world[1])
    await _sync_and_roll(gm)
    with connect_readable(bridge.data_dir / "bridge.sqlite3") as db:
        rows = db.execute(
            "SELECT seq, type, payload, created_at, prev_hash, hash FROM events ORDER BY seq"
        ).fetchall()
    decoded = [(s, t, json.loads(p), c, ph, h) for s, t, p, c, ph, h in rows]
    # character synced, action declared and rolled, action-count counter
    assert [row[1] for row in decoded] == ["character.put", "world.counters", "action.put"]
    assert verify_chain(decoded) is None
    tampered = [*decoded[:2], (*decoded[2][:2], {"forged": True}, *decoded[2][3:])]
    assert verify_chain(tampered) == 3
    reordered = [decoded[1], decoded[0], decoded[2]]
    assert verify_chain(reordered) == 2


BAD_INPUTS: list[tuple[str, Any, str, str | None]] = [
    ("action.start", "not an object", "invalid", None),
    ("action.start", [1, 2, 3], "invalid", None),
    ("action.start", {"type": "overcome"}, "invalid", "request_id"),
    (
        "action.start",
        {
            "request_id": "x1",
            "type": "overcome",
            "actor_id": ATHLETE["id"],
            "skill": "Athletics",
        },
        "invalid",
        "opposition",
    ),
    (
        "action.start",
        {
            "request_id": "x2",
            "type": "overcome",
            "actor_id": ATHLETE["id"],
            "skill": "Athletics",
            "opposition": {"kind": "passive", "rating": 2},
            "dice": [1, 1, 1, 1],
        },
        "invalid",
        "dice",
    ),
    (
        "action.start",
        {
            "request_id": "x3",
            "type": "overcome",
            "actor_id": ATHLETE["id"],
            "skill": "Athletics",
            "opposition": {"kind": "passive", "rating": "4"},
        },
        "invalid",
        "opposition.passive.rating",
    ),
    (
        "action.start",
        {
            "request_id": "x4",
            "type": "overcome",
            "actor_id": ATHLETE["id"],
            "skill": "A" * 5000,
            "opposition": {"kind": "passive", "rating": 2},
        },
        "invalid",
        "skill",
    ),
    (
        "action.start",
        {
            "request_id": "x5",
            "type": "summon",
            "actor_id": ATHLETE["id"],
            "skill": "Athletics",
            "opposition": {"kind": "passive", "rating": 2},
        },
        "invalid",
        "type",
    ),
    (
        "action.start",
        {
            "request_id": "x6",
            "type": "overcome",
            "actor_id": "nobody",
            "skill": "Athletics",
            "opposition": {"kind": "passive", "rating": 2},
        },
        "unknown_actor",
        "actor_id",
    ),
    ("dev.queue_dice", {"request_id": "x7", "rolls": [[2, 0, 0, 0]]}, "invalid", "rolls.0.0"),
    ("dev.queue_dice", {"request_id": "x8", "rolls": [[1, 0, 0]]}, "invalid", "rolls.0"),
    (
        "actor.sync",
        {"request_id": "x9", "actor": {**ATHLETE, "skills": {"X": 99}}},
        "invalid",
        "actor.skills.X",
    ),
    ("world.delete", {"request_id": "x10"}, "unknown_event", None),
    ("hello", {"request_id": "has spaces"}, "invalid", "request_id"),
    ("action.start", {"request_id": "big", "description": "z" * 70000}, "too_large", None),
]


@pytest.mark.parametrize(("event", "payload", "code", "field"), BAD_INPUTS)
async def test_bad_input_gets_a_clear_error_and_changes_nothing(
    bridge: BridgeProcess,
    connect: Connect,
    world: tuple[str, str],
    event: str,
    payload: Any,
    code: str,
    field: str | None,
) -> None:
    gm = await connect(world[0], key=world[1])
    await call(gm, "actor.sync", {"request_id": "base-sync", "actor": ATHLETE})
    before = db_counts(bridge)
    ack = await call(gm, event, payload)
    assert ack["ok"] is False
    assert ack["error"]["code"] == code
    assert ack["error"]["message"]
    assert ack["error"].get("field") == field
    assert db_counts(bridge) == before
    still = await call(gm, "hello", {"request_id": "still-serving"})
    assert still["ok"] is True


async def test_player_cannot_act_before_being_bound(
    connect: Connect, world: tuple[str, str]
) -> None:
    gm = await connect(world[0], key=world[1])
    await call(gm, "actor.sync", {"request_id": "s", "actor": ATHLETE})
    player = await connect(world[0], role="player", user="playerPaul000001")
    ack = await call(
        player,
        "action.start",
        {
            "request_id": "p1",
            "type": "overcome",
            "actor_id": ATHLETE["id"],
            "skill": "Athletics",
            "opposition": {"kind": "passive", "rating": 2},
        },
    )
    assert ack["ok"] is False and ack["error"]["code"] == "unbound"
    sync = await call(player, "actor.sync", {"request_id": "p2", "actor": ATHLETE})
    assert sync["error"]["code"] == "unbound"
    hello = await call(player, "hello", {"request_id": "p3"})
    assert hello["data"]["bound"] is False
    assert len(hello["data"]["bind_nonce"]) >= 16


async def test_queued_dice_are_refused_without_dev_dice(tmp_path: Path) -> None:
    key = add_world(tmp_path, "prod")
    async with serving_in_loop(InProcessBridge(tmp_path, dev_dice=False)) as bridge:
        client = socketio.AsyncClient(reconnection=False)
        await client.connect(
            bridge.url,
            namespaces=[NAMESPACE],
            transports=["websocket"],
            auth=gm_auth(("prod", key), "gm1"),
        )
        ack = await call(client, "dev.queue_dice", {"request_id": "q", "rolls": [[1, 1, 1, 1]]})
        assert ack["ok"] is False
        assert ack["error"]["code"] == "dev_dice_disabled"
        await client.disconnect()


async def test_a_flood_is_rate_limited_without_dropping_the_client(
    connect: Connect, world: tuple[str, str]
) -> None:
    gm = await connect(world[0], key=world[1])
    acks = await asyncio.gather(
        *(call(gm, "hello", {"request_id": f"flood-{n}"}) for n in range(120))
    )
    codes = {a["error"]["code"] for a in acks if not a["ok"]}
    assert codes == {"rate_limited"}
    assert sum(1 for a in acks if a["ok"]) >= 20
    await asyncio.sleep(2.5)
    assert (await call(gm, "hello", {"request_id": "after-flood"}))["ok"] is True
