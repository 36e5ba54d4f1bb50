"""Presence over the real socket: who counts as there when the bridge picks a card's writer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.store.redis import RedisStore
from tests.bridge_process import BridgeProcess, add_world
from tests.conftest import Connect
from tests.seats import BROUSSEAU, Seat, queue, start_action
from tests.stores import opened

GM_WRITER = "gm"  # the card emits' writer when the acting user's client is not there


async def start_paul_action(gm: Seat, paul: Seat) -> str:
    await queue(gm, [0, 0, 0, 0])
    card = await start_action(paul, rating=1)
    first = await gm.wait_for("card", lambda e: e["card"]["action_id"] == card["action_id"])
    assert first[0]["writer"] == "paul"  # paul is there: his own client writes his card
    action_id: str = card["action_id"]
    return action_id


async def writer_after_pass(gm: Seat, action_id: str) -> str:
    await gm.ok("action.pass", action_id=action_id, side="actor")
    emits = await gm.wait_for(
        "card", lambda e: e["card"]["action_id"] == action_id and e["op"] == "update"
    )
    writer: str = emits[-1]["writer"]
    return writer


@pytest.mark.both_stores
async def test_an_unbound_socket_claiming_a_name_does_not_make_that_user_present(
    connect: Connect, table: dict[str, Seat], world: tuple[str, str]
) -> None:
    # Cards go to the acting user's client only while it is really there; a socket that
    # merely says it is paul (never vouched for by the GM's client) does not count.
    gm, paul = table["gm"], table["paul"]
    action_id = await start_paul_action(gm, paul)
    await paul.client.disconnect()
    impostor = Seat(await connect(world[0], role="player", user="paul"))
    assert (await impostor.ok("hello"))["bound"] is False
    assert await writer_after_pass(gm, action_id) == GM_WRITER


@pytest.fixture
def node_b(tmp_path: Path, bridge: BridgeProcess) -> Iterator[BridgeProcess]:
    """A second bridge on the same Redis whose presence claims expire after 2 s."""
    other = BridgeProcess(tmp_path / "node-b", redis_url=bridge.redis_url)
    other.data_dir.mkdir()
    other.start("--presence-ttl", "2")
    try:
        yield other
    finally:
        other.stop()


async def presence(redis_url: str, world_id: str, user_id: str) -> bool:
    async with opened(RedisStore(redis_url)) as store:
        return await store.is_present(world_id, user_id)


@pytest.mark.process
@pytest.mark.redis_only
async def test_a_node_killed_by_sigkill_stops_counting_its_users(
    bridge: BridgeProcess, node_b: BridgeProcess, connect: Connect
) -> None:
    assert bridge.redis_url is not None and node_b.process is not None
    key = add_world(bridge, "shared")
    gm = Seat(await connect("shared", key=key, user="gm"))  # node A
    await gm.ok("actor.sync", actor=BROUSSEAU)
    # R2.1 Decision: this table trusts Paul's rating, so his card is his own to write at once.
    await gm.ok("world.settings", trust_player_ratings=True)
    paul = Seat(await connect("shared", role="player", user="paul", url=node_b.url))
    hello = await paul.ok("hello")
    assert not await presence(bridge.redis_url, "shared", "paul")  # not yet vouched for
    await gm.ok("user.bind", user_id="paul", nonce=hello["bind_nonce"])
    await paul.wait_for("notice")
    # Vouched for on node A; node B learns it on paul's next intent (the module's world.sync).
    await paul.ok("world.sync", since=0)
    assert await presence(bridge.redis_url, "shared", "paul")
    helper = Seat(await connect("shared", key=key, user="gm2", url=node_b.url))
    assert (await helper.ok("hello"))["role"] == "gm"
    action_id = await start_paul_action(gm, paul)

    node_b.process.kill()  # SIGKILL: no clean shutdown, no disconnect handlers
    node_b.process.wait()
    # The claims expire after node B's ttl (2 s); poll with a bounded deadline.
    deadline = time.monotonic() + 30
    while await presence(bridge.redis_url, "shared", "paul") or await presence(
        bridge.redis_url, "shared", "gm2"
    ):
        assert time.monotonic() < deadline, "node B's users still count as present"
        await asyncio.sleep(0.2)
    assert await presence(bridge.redis_url, "shared", "gm")  # node A's own user still counts
    assert await writer_after_pass(gm, action_id) == GM_WRITER
