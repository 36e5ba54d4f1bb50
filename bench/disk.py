"""Bytes on disk per resolved action (issue 35): passive overcomes driven through the
service's own intents (``action.start`` then ``action.pass``, as a GM's client sends
them), every commit as the bridge writes it (its answer, its emits, its history rows and
the snapshots the service decides to take), then the store's size measured.

SQLite: the database file once the write-ahead log is checkpointed into it (what a
backup copies), and each table's share (SQLite's ``dbstat``). Redis: the server's
``used_memory`` growth, and the size of the RDB file ``SAVE`` writes.
"""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.load import start_payload
from bench.seed import seed_worlds
from bridge.service import BridgeService, Session
from bridge.store.base import Store
from bridge.store.sqlite import SQLiteStore


async def resolve(store: Store, world_id: str, count: int, first: int = 0) -> None:
    """``count`` passive overcomes in ``world_id``, each two intents through the service
    (request ids numbered from ``first``)."""
    service = BridgeService(store)
    gm = Session("disk", world_id, "gm", "gm", bound=True)
    for n in range(first, first + count):
        started = await service.handle(gm, "action.start", start_payload(f"s{n}", "hero"))
        if not started.ack["ok"]:
            raise RuntimeError(started.ack)
        action_id = started.ack["data"]["action_id"]
        passed = await service.handle(
            gm, "action.pass", {"request_id": f"p{n}", "action_id": action_id, "side": "actor"}
        )
        if not passed.ack["ok"]:
            raise RuntimeError(passed.ack)


def table_bytes(path: Path) -> dict[str, int]:
    """Each table's and index's pages, in bytes (dbstat), largest first."""
    db = sqlite3.connect(path)
    try:
        rows = db.execute(
            "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
    except sqlite3.OperationalError:  # SQLite built without dbstat
        rows = []
    finally:
        db.close()
    return {name: int(size) for name, size in rows}


async def sqlite_per_action(folder: Path, actions: int) -> dict[str, Any]:
    path = folder / "disk.sqlite3"
    store = SQLiteStore(path)
    await store.open()
    began = time.monotonic()
    try:
        await seed_worlds(store, ["w"])
        empty = path.stat().st_size
        await resolve(store, "w", actions)
    finally:
        await store.close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    size = path.stat().st_size
    return {
        "actions": actions,
        "db_bytes": size,
        "bytes_per_action": (size - empty) / actions,
        "tables": table_bytes(path),
        "seconds": time.monotonic() - began,
    }


async def redis_per_action(redis_url: str, actions: int) -> dict[str, Any]:
    from redis.asyncio import Redis

    from bridge.store.redis import RedisStore

    client = Redis.from_url(redis_url)
    await client.flushdb()
    store = RedisStore(redis_url)
    await store.open()
    try:
        await seed_worlds(store, ["w"])
        before = (await client.info("memory"))["used_memory"]
        await resolve(store, "w", actions)
        after = (await client.info("memory"))["used_memory"]
        keys = [key async for key in client.scan_iter("*")]
        usage = {k.decode(): int(await client.memory_usage(k) or 0) for k in keys}
    finally:
        await store.close()
        await client.aclose()
    return {
        "actions": actions,
        "used_memory_bytes_per_action": (after - before) / actions,
        "keys_bytes": sum(usage.values()),
        "keys_bytes_per_action": sum(usage.values()) / actions,
        "largest_keys": dict(sorted(usage.items(), key=lambda kv: -kv[1])[:6]),
    }


def disk(actions: int, redis_url: str | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        result: dict[str, Any] = {"sqlite": asyncio.run(sqlite_per_action(Path(tmp), actions))}
    if redis_url is not None:
        result["redis"] = asyncio.run(redis_per_action(redis_url, actions))
    return result


def print_disk(result: dict[str, Any]) -> None:
    lite = result["sqlite"]
    tables = ", ".join(f"{name} {size / 1e6:.2f} MB" for name, size in lite["tables"].items())
    print(
        f"disk per resolved action at {lite['actions']:,} actions: SQLite "
        f"{lite['bytes_per_action'] / 1024:.2f} KiB ({lite['db_bytes'] / 1e6:.2f} MB; {tables})"
    )
    redis = result.get("redis")
    if redis is not None:
        print(
            f"  Redis: {redis['keys_bytes_per_action'] / 1024:.2f} KiB per action in its keys "
            f"(used_memory {redis['used_memory_bytes_per_action'] / 1024:.2f} KiB)"
        )


if __name__ == "__main__":
    import sys

    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    print_disk(disk(count, sys.argv[2] if len(sys.argv) > 2 else None))
