"""A commit persists what changed; the world survives a killed process between snapshots.

DESIGN "State and scale": each commit appends its events, emits and answer; a snapshot
of the whole state is written only when the events after the last one have grown to a
share of its size (bridge.service.commit.snapshot_due) or at a scene's end, and the latest
state is the snapshot plus the events after it, replayed by the reducer.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from bridge.service import BridgeService, Session
from bridge.service.commit import SNAPSHOT_MIN_TAIL, SNAPSHOT_TAIL_SHARE
from bridge.store import codec
from bridge.store.base import CommitBatch, Snapshot, Store
from bridge.store.chain import verify_chain
from bridge.store.redis import RedisStore
from bridge.store.sqlite import SQLiteStore
from tests.bridge_process import BridgeProcess
from tests.conftest import Connect
from tests.in_process import run_cli
from tests.seats import BROUSSEAU, Seat, action_start, queue
from tests.service_seat import ServiceSeat
from tests.stores import opened, store_of_kind

pytestmark = pytest.mark.both_stores


def open_store(bridge: BridgeProcess) -> Store:
    if bridge.redis_url:
        return RedisStore(bridge.redis_url)
    return SQLiteStore(bridge.data_dir / "bridge.sqlite3")


async def stored(bridge: BridgeProcess, world_id: str) -> tuple[Snapshot, list[Any]]:
    async with opened(open_store(bridge)) as store:
        snapshot = await store.load(world_id)
        assert snapshot is not None
        rows = await store.events(world_id)
    return snapshot, [(r.seq, r.type, r.payload, r.created_at, r.prev_hash, r.hash) for r in rows]


def tail_size(snapshot: Snapshot) -> int:
    """The size the snapshot cadence counts: the JSON of the tail's payloads."""
    return sum(len(codec.dumps(row.payload)) for row in snapshot.tail)


def start(request_id: str) -> dict[str, Any]:
    """Brousseau's overcome against Average (+1), under ``request_id``."""
    return action_start(rating=1, request_id=request_id)


@pytest.mark.process
async def test_an_acked_intent_survives_sigkill_between_the_event_append_and_the_next_snapshot(
    bridge: BridgeProcess, connect: Connect, world: tuple[str, str], gm: Seat
) -> None:
    await queue(gm, [1, 1, 0, 0], [0, 0, 0, -1])
    first = await gm.ok("action.start", **start("first"))
    await gm.ok("action.pass", action_id=first["action_id"], side="actor")
    acked = await gm.send("action.start", **start("acked"))
    assert acked["ok"], acked
    # SIGKILL: no shutdown code runs; only what the commit made durable is left.
    assert bridge.process is not None
    bridge.process.kill()
    bridge.process.wait()
    bridge.process = None

    snapshot, rows = await stored(bridge, world[0])
    # The acked intent's events are in the log, after the saved snapshot: exactly the
    # window between an append and the next snapshot.
    assert snapshot.state_seq < snapshot.last_event_seq == rows[-1][0]
    assert tail_size(snapshot) < SNAPSHOT_MIN_TAIL
    assert snapshot.tail and snapshot.tail[-1].seq == snapshot.last_event_seq
    assert verify_chain(rows) is None

    bridge.start()
    gm = Seat(await connect(world[0], key=world[1]))
    # The same request id answers as before (the answer was committed with the events);
    # the commit's emits, which the first answer carried, are world.sync's to replay.
    first_answer = {key: value for key, value in acked.items() if key != "emits"}
    assert acked["emits"]
    assert await gm.send("action.start", **start("acked")) == first_answer
    synced = await gm.ok("world.sync", since=0)
    assert acked["emits"][-1] in synced["emits"]
    # The state rebuilt from snapshot + tail has the action, ready to move on.
    passed = await gm.ok("action.pass", action_id=acked["data"]["action_id"], side="actor")
    assert passed["card"]["state"] == "resolved"
    verified = run_cli(bridge, "world", "verify", world[0])
    assert verified.stdout.startswith("OK:"), verified.stdout


async def test_snapshots_when_the_tail_outgrows_its_share_and_at_scene_end(
    tmp_path: Path, store_kind: str, request: pytest.FixtureRequest
) -> None:
    # The service's own path on a real store, in process (hundreds of intents).
    async with opened(store_of_kind(store_kind, tmp_path, request)) as store:
        service = BridgeService(store, dev_dice=True)
        await service.add_world("w", "World")
        ok = ServiceSeat(service, Session("s", "w", "gm", "gm", bound=True)).ok
        await ok("actor.sync", actor={**BROUSSEAU, "fate_points": 0})
        snapshot = await store.load("w")
        assert snapshot is not None and snapshot.state_seq == 0
        snapshots = 0
        while snapshots < 2:
            started = await ok("action.start", **action_start(rating=1))
            await ok("action.pass", action_id=started["action_id"], side="actor")
            loaded = await store.load("w")
            assert loaded is not None
            snapshots += loaded.state_seq != snapshot.state_seq
            snapshot = loaded
            # A commit whose tail would reach the share writes a snapshot instead, so
            # what is left to replay stays below it, however long the scene runs.
            limit = max(SNAPSHOT_MIN_TAIL, SNAPSHOT_TAIL_SHARE * snapshot.state_size)
            assert tail_size(snapshot) < limit
            assert snapshot.state_size == len(codec.dumps(snapshot.state))
        assert snapshot.state_seq > 0
        assert await service.latest_state("w") == await service.replayed_state("w")
        await ok("scene.end")
        ended = await store.load("w")
        assert ended is not None
        assert ended.tail == () and ended.state_seq == ended.last_event_seq
        assert await service.latest_state("w") == await service.replayed_state("w")
        at_snapshot = await service.replayed_state("w", upto=ended.state_seq)
        assert at_snapshot.model_dump(mode="json") == ended.state


@pytest.mark.process
async def test_world_verify_catches_a_snapshot_that_disagrees_with_the_log(
    bridge: BridgeProcess, world: tuple[str, str], gm: Seat
) -> None:
    await gm.ok("scene.end")  # writes a snapshot
    bridge.stop()
    async with opened(open_store(bridge)) as store:
        snapshot = await store.load(world[0])
        assert snapshot is not None and snapshot.state_seq > 0
        forged = {**snapshot.state, "gm_fate_points": 99}
        await store.commit(
            CommitBatch(world_id=world[0], expected_version=snapshot.version, snapshot=forged)
        )
    with pytest.raises(subprocess.CalledProcessError) as failed:
        run_cli(bridge, "world", "verify", world[0])
    assert "saved snapshot" in failed.value.stderr
