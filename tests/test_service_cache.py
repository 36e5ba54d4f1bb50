"""Each bridge process caches its world's parsed state; another writer's commit must show."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from bridge.service import BridgeService, Reply, Session
from bridge.store.base import Snapshot
from bridge.store.redis import RedisStore
from tests.bridge_process import flush_redis
from tests.seats import action_start
from tests.stores import opened

ACTOR = {"id": "hero", "name": "Hero", "owners": ["p"], "fate_points": 3}
START = action_start(actor="hero", rating=1)


@dataclass
class Nodes:
    """Two bridge processes' services on one Redis, each with a GM session on world "w"."""

    stores: list[RedisStore]
    a: BridgeService
    b: BridgeService
    gm_a: Session
    gm_b: Session


@pytest.fixture
async def nodes(redis_url: str) -> AsyncIterator[Nodes]:
    """World "w" with ACTOR synced through node A."""
    flush_redis(redis_url)
    stores = [RedisStore(redis_url), RedisStore(redis_url)]
    for store in stores:
        await store.open()
    try:
        node_a, node_b = (BridgeService(store, dev_dice=True) for store in stores)
        await node_a.add_world("w", "World")
        gm_a = Session("sa", "w", "gm", "gm", bound=True)
        synced = await node_a.handle(gm_a, "actor.sync", {"request_id": "1", "actor": ACTOR})
        assert synced.ack["ok"], synced.ack
        yield Nodes(stores, node_a, node_b, gm_a, Session("sb", "w", "gm", "gm", bound=True))
    finally:
        for store in stores:
            await store.close()


async def test_a_commit_by_another_process_is_seen_despite_the_cache(nodes: Nodes) -> None:
    node_a, node_b, gm_a, gm_b = nodes.a, nodes.b, nodes.gm_a, nodes.gm_b
    # Node B changes the fate points; node A, holding a cached state, must see it.
    changed = {**ACTOR, "fate_points": 1}
    assert (await node_b.handle(gm_b, "actor.sync", {"request_id": "2", "actor": changed})).ack[
        "ok"
    ]
    state = (await node_a.handle(gm_a, "world.state", {"request_id": "3"})).ack["data"]
    assert state["characters"][0]["fate_points"] == 1
    renamed = {**changed, "name": "Hero Again"}
    reply = await node_a.handle(gm_a, "actor.sync", {"request_id": "4", "actor": renamed})
    assert reply.ack["data"]["changed"] is True
    replayed = await node_b.replayed_state("w")
    assert replayed.characters["hero"].name == "Hero Again"
    assert replayed.characters["hero"].fate_points == 1


async def test_retries_and_stale_caches_across_two_processes(nodes: Nodes) -> None:
    # One store round trip per intent: each process trusts its cached state and the
    # commit checks both the request id and the version. A retry on the other process
    # answers as the first time; a stale cache is found out and reloaded, never acted on.
    node_a, node_b, gm_a, gm_b = nodes.a, nodes.b, nodes.gm_a, nodes.gm_b
    queued = await node_b.handle(gm_b, "dev.queue_dice", {"request_id": "q", "rolls": [[1] * 4]})
    assert queued.ack["ok"], queued.ack
    started = await node_a.handle(gm_a, "action.start", {"request_id": "s1", **START})
    assert started.ack["ok"], started.ack
    events = len(await nodes.stores[0].events("w"))
    # R-idempotency: node B decides the retry afresh (a new action would be valid),
    # but the commit finds the answer: the same ack, nothing written, and the queued
    # roll node B drew for it is back in its queue for the next real roll.
    retried = await node_b.handle(gm_b, "action.start", {"request_id": "s1", **START})
    assert retried.ack == started.ack and retried.emissions == []
    assert len(await nodes.stores[0].events("w")) == events
    assert node_b.dice_for("w").pending == 1
    # Node B's retry of a pass that node A answered would be refused on the resolved
    # action; it answers as the first time instead.
    action_id = started.ack["data"]["action_id"]
    passed = await node_a.handle(
        gm_a, "action.pass", {"request_id": "p1", "action_id": action_id, "side": "actor"}
    )
    assert passed.ack["ok"], passed.ack
    again = await node_b.handle(
        gm_b, "action.pass", {"request_id": "p1", "action_id": action_id, "side": "actor"}
    )
    assert again.ack == passed.ack
    # Node B opens an action node A's cache has never seen: node A's pass, decided on
    # its stale cache, would be refused; it is checked, reloaded and done.
    opened = await node_b.handle(gm_b, "action.start", {"request_id": "s2", **START})
    assert opened.ack["ok"], opened.ack
    assert opened.ack["data"]["card"]["actor"]["dice"] == [1, 1, 1, 1]
    assert node_b.dice_for("w").pending == 0
    second = opened.ack["data"]["action_id"]
    closed = await node_a.handle(
        gm_a, "action.pass", {"request_id": "p2", "action_id": second, "side": "actor"}
    )
    assert closed.ack["ok"], closed.ack
    # And node A, stale again, starts one more: its commit conflicts, it reloads.
    await node_b.handle(gm_b, "actor.sync", {"request_id": "2", "actor": ACTOR})
    third = await node_a.handle(gm_a, "action.start", {"request_id": "s3", **START})
    assert third.ack["ok"], third.ack
    verified = await node_b.verify_history("w")
    assert verified.ok, verified.problems
    assert await node_a.latest_state("w") == await node_b.replayed_state("w")


class CountedLoads(RedisStore):
    """A Redis store that counts its loads and can hold each one, after its read, until
    ``gate`` is set: a load under way for as long as a test needs."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.loads = 0
        self.gate = asyncio.Event()
        self.gate.set()

    async def hold_next_load(self) -> None:
        """Hold loads from now on, and return once one has read the world (held)."""
        self.gate.clear()
        began = self.loads
        while self.loads == began:
            await asyncio.sleep(0.001)

    async def load(self, world_id: str) -> Snapshot | None:
        self.loads += 1
        snapshot = await super().load(world_id)
        await self.gate.wait()
        return snapshot


@pytest.fixture
async def node_c(nodes: Nodes, redis_url: str) -> AsyncIterator[tuple[BridgeService, CountedLoads]]:
    """A third process on the same Redis that has not loaded world "w" yet."""
    async with opened(CountedLoads(redis_url)) as store:
        yield BridgeService(store, dev_dice=True), store


def _fate_points(reply: Reply) -> int:
    assert reply.ack["ok"], reply.ack
    points: int = reply.ack["data"]["characters"][0]["fate_points"]
    return points


async def test_reads_while_a_world_loads_share_that_load(
    node_c: tuple[BridgeService, CountedLoads],
) -> None:
    # After a restart every client's hello asks for the world at once: one load serves them.
    node, store = node_c
    sessions = [Session(f"s{i}", "w", f"u{i}", "gm", bound=True) for i in range(8)]
    replies = await asyncio.gather(
        *(node.handle(s, "hello", {"request_id": f"h{i}"}) for i, s in enumerate(sessions)),
        node.handle(sessions[0], "world.state", {"request_id": "r"}),
    )
    assert store.loads == 1
    assert all(r.ack["ok"] for r in replies), [r.ack for r in replies]
    assert {r.ack["data"]["world"] for r in replies[:-1]} == {"w"}
    assert _fate_points(replies[-1]) == 3
    # Loaded once, then cached: the next read loads nothing.
    assert _fate_points(await node.handle(sessions[1], "world.state", {"request_id": "r2"})) == 3
    assert store.loads == 1


async def test_a_read_that_joins_a_load_begun_before_a_commit_sees_the_commit(
    nodes: Nodes, node_c: tuple[BridgeService, CountedLoads]
) -> None:
    node, store = node_c
    gm_c = Session("sc", "w", "gm", "gm", bound=True)
    holding = asyncio.create_task(store.hold_next_load())
    early = asyncio.create_task(node.handle(gm_c, "world.state", {"request_id": "r1"}))
    await holding
    # Another process commits after the shared load has read the world.
    changed = {**ACTOR, "fate_points": 1}
    synced = await nodes.b.handle(nodes.gm_b, "actor.sync", {"request_id": "2", "actor": changed})
    assert synced.ack["ok"], synced.ack
    late = asyncio.create_task(node.handle(gm_c, "world.state", {"request_id": "r2"}))
    await asyncio.sleep(0.01)
    store.gate.set()
    # The read that began before the commit may answer as of before it; the later one not.
    assert _fate_points(await early) in (1, 3)
    assert _fate_points(await late) == 1
    assert store.loads == 2


async def test_a_waiter_cancelled_leaves_the_shared_load_to_the_others(
    node_c: tuple[BridgeService, CountedLoads],
) -> None:
    node, store = node_c
    gm_c = Session("sc", "w", "gm", "gm", bound=True)
    holding = asyncio.create_task(store.hold_next_load())
    gone = asyncio.create_task(node.handle(gm_c, "world.state", {"request_id": "r1"}))
    stays = asyncio.create_task(node.handle(gm_c, "world.state", {"request_id": "r2"}))
    await holding
    await asyncio.sleep(0.01)
    gone.cancel()
    store.gate.set()
    assert _fate_points(await stays) == 3
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert store.loads == 1


async def test_a_failed_load_answers_every_waiter_and_is_not_kept(
    node_c: tuple[BridgeService, CountedLoads],
) -> None:
    node, store = node_c
    lost = Session("sx", "nowhere", "gm", "gm", bound=True)
    replies = await asyncio.gather(
        *(node.handle(lost, "world.state", {"request_id": f"r{i}"}) for i in range(4))
    )
    assert [r.ack["error"]["code"] for r in replies] == ["not_found"] * 4
    assert store.loads == 1
    again = await node.handle(lost, "world.state", {"request_id": "r9"})
    assert again.ack["error"]["code"] == "not_found"
    assert store.loads == 2
