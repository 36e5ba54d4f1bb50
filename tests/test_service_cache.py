"""Each bridge process caches its world's parsed state; another writer's commit must show."""

from __future__ import annotations

from bench.proc import flush_redis
from bridge.service import BridgeService, Session
from bridge.store.redis import RedisStore


async def test_a_commit_by_another_process_is_seen_despite_the_cache(redis_url: str) -> None:
    flush_redis(redis_url)
    stores = [RedisStore(redis_url), RedisStore(redis_url)]
    for store in stores:
        await store.open()
    try:
        node_a, node_b = (BridgeService(store, dev_dice=True) for store in stores)
        await node_a.add_world("w", "World")
        gm_a = Session("sa", "w", "gm", "gm", bound=True)
        gm_b = Session("sb", "w", "gm", "gm", bound=True)
        actor = {"id": "hero", "name": "Hero", "owners": ["p"], "fate_points": 3}
        assert (await node_a.handle(gm_a, "actor.sync", {"request_id": "1", "actor": actor})).ack[
            "ok"
        ]
        # Node B changes the fate points; node A, holding a cached state, must see it.
        changed = {**actor, "fate_points": 1}
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
    finally:
        for store in stores:
            await store.close()
