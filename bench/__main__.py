"""Latency of resolved actions through the real bridge, as ratios to a baseline.

Machines here are noisy, so absolute times mean little: each figure is set
against a baseline measured in the same run on the same connection — a
``hello`` round trip (transport, validation, ack, one store read) — and the
ratios are what to compare between versions. Each store is measured when it is
available (Redis needs ``redis-server`` on the PATH).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import socketio

from bridge.protocol import NAMESPACE, PROTOCOL_VERSION
from tests.bridge_process import BridgeProcess, add_world, redis_server

# Stay under the bridge's per-connection rate limit (20/s sustained).
PACE = 1 / 18


async def _timed(n: int, step: Callable[[int], Awaitable[Any]]) -> list[float]:
    """Time each step alone; the pause between steps keeps under the rate limit."""
    samples: list[float] = []
    for i in range(n):
        start = time.perf_counter()
        await step(i)
        samples.append(time.perf_counter() - start)
        await asyncio.sleep(PACE)
    return samples


def _summary(name: str, samples: list[float], baseline: float) -> str:
    median = statistics.median(samples)
    p95 = statistics.quantiles(samples, n=20)[-1]
    return (
        f"  {name:<34} median {median * 1000:7.2f} ms  p95 {p95 * 1000:7.2f} ms  "
        f"x{median / baseline:5.2f} baseline"
    )


@contextmanager
def optional_redis(folder: Path) -> Iterator[str | None]:
    """A throwaway redis-server, or None when it isn't installed."""
    if shutil.which("redis-server") is None:
        yield None
        return
    with redis_server(folder) as url:
        yield url


async def measure(label: str, bridge: BridgeProcess, key: str, n: int) -> None:
    client = socketio.AsyncClient(reconnection=False)
    await client.connect(
        bridge.url,
        namespaces=[NAMESPACE],
        transports=["websocket"],
        auth={
            "world": "bench",
            "role": "gm",
            "user": "bench",
            "key": key,
            "protocol": PROTOCOL_VERSION,
        },
    )

    async def call(event: str, payload: dict[str, Any]) -> dict[str, Any]:
        ack: dict[str, Any] = await client.call(event, payload, namespace=NAMESPACE, timeout=10)
        if not ack["ok"]:
            raise RuntimeError(ack)
        return ack

    actor = {
        "id": "hero",
        "name": "Hero",
        "owners": ["player"],
        "skills": {"Athletics": 3},
        "fate_points": 99,
        "aspects": [{"key": "hc", "name": "Bold"}],
    }
    await call("actor.sync", {"request_id": "sync", "actor": actor})

    async def hello(i: int) -> None:
        await call("hello", {"request_id": f"h{i}"})

    async def start(i: int) -> None:
        await call(
            "action.start",
            {
                "request_id": f"s{i}",
                "type": "overcome",
                "actor_id": "hero",
                "skill": "Athletics",
                "opposition": {"kind": "passive", "rating": 2},
            },
        )

    async def invoke(i: int) -> None:
        await call(
            "action.invoke",
            {
                "request_id": f"i{i}",
                "action_id": f"a{i + 1}",
                "invoker": "hero",
                "aspect_id": "hero.hc",
                "payment": "fate_point",
            },
        )

    async def resolve(i: int) -> None:
        await call(
            "action.pass", {"request_id": f"p{i}", "action_id": f"a{i + 1}", "side": "actor"}
        )

    baseline_samples = await _timed(n, hello)
    start_samples = await _timed(n, start)
    invoke_samples = await _timed(n, invoke)
    resolve_samples = await _timed(n, resolve)
    baseline = statistics.median(baseline_samples)
    print(f"{label} ({n} requests each, one GM connection)")
    print(_summary("hello (baseline)", baseline_samples, baseline))
    print(_summary("action.start (roll)", start_samples, baseline))
    print(_summary("action.invoke (fate point, +2)", invoke_samples, baseline))
    print(_summary("action.pass (resolve)", resolve_samples, baseline))
    await client.disconnect()


async def run(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, optional_redis(Path(tmp)) as redis_url:
        stores: list[tuple[str, str | None]] = [("SQLite (embedded)", None)]
        if redis_url:
            stores.append(("Redis (scale-out)", redis_url))
        else:
            print("redis-server not found: measuring SQLite only")
        for index, (label, url) in enumerate(stores):
            data = Path(tmp) / str(index)
            data.mkdir()
            bridge = BridgeProcess(data, dev_dice=False, redis_url=url)
            key = add_world(bridge, "bench")
            bridge.start()
            try:
                await measure(label, bridge, key, n)
            finally:
                bridge.stop()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument(
        "-n",
        type=int,
        default=80,
        help="requests per measurement (at most 99: each invoke "
        "spends one of the hero's fate points)",
    )
    n = parser.parse_args().n
    if not 2 <= n <= 99:
        parser.error("-n must be between 2 and 99")
    asyncio.run(run(n))


main()
