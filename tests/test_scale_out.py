"""Two bridge processes sharing one Redis: rooms, binding and the fate point race span them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bridge_process import BridgeProcess, add_world, cli
from tests.conftest import Connect, bridge_args
from tests.receiver import Receiver
from tests.seats import BROUSSEAU, Seat, action_invoke, characters, overcome, queue

pytestmark = pytest.mark.redis_only


@pytest.fixture
def second_node(
    tmp_path: Path, bridge: BridgeProcess, request: pytest.FixtureRequest
) -> Iterator[BridgeProcess]:
    other = BridgeProcess(tmp_path / "node-b", redis_url=bridge.redis_url)
    other.data_dir.mkdir()
    other.start(*bridge_args(request))
    try:
        yield other
    finally:
        other.stop()


@pytest.mark.process
async def test_two_nodes_share_rooms_binding_and_state(
    bridge: BridgeProcess, second_node: BridgeProcess, connect: Connect
) -> None:
    key = add_world(bridge, "shared")
    gm = Seat(await connect("shared", key=key, user="gm"))  # on node A
    await gm.ok(
        "actor.sync",
        actor={
            **BROUSSEAU,
            "fate_points": 1,
            "aspects": [{"key": "hc", "name": "Skeptic"}, {"key": "tr", "name": "Old Soldier"}],
        },
    )
    # The player is on node B: binding crosses nodes through the store.
    paul = Seat(await connect("shared", role="player", user="paul", url=second_node.url))
    hello = await paul.ok("hello")
    await gm.ok("user.bind", user_id="paul", nonce=hello["bind_nonce"])
    assert (await paul.wait_for("notice"))[0]["code"] == "bound"

    # An action on node B reaches the GM's client on node A.
    await queue(gm, [0, 0, 0, 0])
    card = await overcome(paul, 5)
    assert (await gm.wait_for("card"))[0]["card"]["action_id"] == card["action_id"]
    # R2.1: the GM on node A confirms the rating Paul proposed on node B.
    assert card["state"] == "confirming"
    card = await gm.card("action.confirm", action_id=card["action_id"])
    assert card["state"] == "invoking"

    # Two invokes on two nodes race for the last fate point: exactly one wins.
    gm_invoke = gm.send("action.invoke", **action_invoke(card["action_id"]))
    paul_invoke = paul.send("action.invoke", **action_invoke(card["action_id"], "brousseau.tr"))
    results = await asyncio.gather(gm_invoke, paul_invoke)
    assert sorted(r["ok"] for r in results) == [False, True]
    assert (await characters(gm))["brousseau"]["fate_points"] == 0


@pytest.mark.process
@pytest.mark.bridge_args("--webhook-allow", "127.0.0.1")  # the receiver is on loopback
async def test_two_nodes_send_each_webhook_item_once(
    bridge: BridgeProcess, second_node: BridgeProcess, connect: Connect, receiver: Receiver
) -> None:
    """Both nodes run the outbox on one Redis; the lease lets exactly one send each item."""
    key = add_world(bridge, "shared")
    added = cli(
        second_node, "world", "webhooks", "add", "shared", "json", receiver.url, "--json",
        "--webhook-allow", "127.0.0.1",
    )  # fmt: skip
    assert json.loads(added.stdout)["secret"].startswith("whsec_")
    gm_a = Seat(await connect("shared", key=key, user="gm"))
    gm_b = Seat(await connect("shared", key=key, user="gm2", url=second_node.url))
    await gm_a.ok("actor.sync", actor=BROUSSEAU)
    resolved = []
    for number, gm in enumerate((gm_a, gm_b, gm_a, gm_b)):
        await queue(gm, [1, 1, 0, 0])
        card = await overcome(gm, 2, request_id=f"start-{number}")
        final = await gm.card("action.pass", action_id=card["action_id"], side="actor")
        resolved.append(final["action_id"])
    await receiver.wait(4)
    listing = cli(bridge, "world", "webhooks", "list", "shared", "--json")
    for _ in range(100):  # until both outboxes have settled every item
        statuses = [d["status"] for d in json.loads(listing.stdout)["deliveries"]]
        if statuses == ["delivered"] * 4:
            break
        await asyncio.sleep(0.05)
        listing = cli(bridge, "world", "webhooks", "list", "shared", "--json")
    assert statuses == ["delivered"] * 4
    delivered = [json.loads(body)["card"]["action_id"] for _headers, body in receiver.got]
    assert sorted(delivered) == sorted(resolved)
    assert len({headers["X-Fate-Bridge-Delivery"] for headers, _ in receiver.got}) == 4


@pytest.mark.process
async def test_a_node_started_later_hears_the_first_at_once(
    tmp_path: Path, bridge: BridgeProcess, connect: Connect
) -> None:
    """A node alone on Redis publishes nothing; one that starts later still hears every
    emit from its first client on: it is healthy only once the first node has answered
    its hello, and from that answer on the first node publishes again."""
    key = add_world(bridge, "shared")
    gm = Seat(await connect("shared", key=key, user="gm"))  # on node A, alone
    await gm.ok("actor.sync", actor=BROUSSEAU)
    await queue(gm, [1, 1, 0, 0])
    alone = await overcome(gm, 2)
    await gm.card("action.pass", action_id=alone["action_id"], side="actor")

    late = BridgeProcess(tmp_path / "node-late", redis_url=bridge.redis_url)
    late.data_dir.mkdir()
    late.start()
    try:
        # The first thing the late node's client sees is an action on node A.
        watcher = Seat(await connect("shared", key=key, user="gm2", url=late.url))
        await queue(gm, [1, 1, 1, 0])
        card = await overcome(gm, 2)
        heard = await watcher.wait_for(
            "card", lambda d: d["card"]["action_id"] == card["action_id"]
        )
        assert heard[0]["card"]["state"] == card["state"]
        # And the other way: an action on the late node reaches node A's client.
        final = await watcher.card("action.pass", action_id=card["action_id"], side="actor")
        assert final["state"] == "resolved"
        await gm.wait_for(
            "card",
            lambda d: (
                d["card"]["action_id"] == card["action_id"] and d["card"]["state"] == "resolved"
            ),
        )
    finally:
        late.stop()
