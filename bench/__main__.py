"""Latency of a resolved action through the real bridge, as a ratio to a baseline.

Machines here are noisy, so absolute times mean little: each figure is set
against a baseline measured in the same run on the same connection — a
``hello`` round trip (transport, validation, ack, one store read) — and the
ratio is what to compare between versions.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import socketio

from bridge.protocol import NAMESPACE, PROTOCOL_VERSION
from tests.bridge_process import BridgeProcess, add_world


async def _timed(n: int, step: Callable[[int], Awaitable[Any]], pause: float) -> list[float]:
    """Time each step alone; the pause between steps keeps under the rate limit."""
    samples: list[float] = []
    for i in range(n):
        start = time.perf_counter()
        await step(i)
        samples.append(time.perf_counter() - start)
        await asyncio.sleep(pause)
    return samples


def _summary(name: str, samples: list[float], baseline: float) -> str:
    median = statistics.median(samples)
    p95 = statistics.quantiles(samples, n=20)[-1]
    return (
        f"{name:<28} median {median * 1000:7.2f} ms  p95 {p95 * 1000:7.2f} ms  "
        f"x{median / baseline:5.2f} baseline"
    )


async def run(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        key = add_world(data, "bench")
        bridge = BridgeProcess(data, dev_dice=False).start()
        try:
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

            async def call(event: str, payload: dict[str, Any]) -> None:
                ack = await client.call(event, payload, namespace=NAMESPACE, timeout=10)
                if not ack["ok"]:
                    raise RuntimeError(ack)

            actor = {"id": "hero", "name": "Hero", "skills": {"Athletics": 3}}
            await call("actor.sync", {"request_id": "sync", "actor": actor})
            # Stay under the bridge's per-connection rate limit (20/s sustained).
            pace = 1 / 18

            async def hello(i: int) -> None:
                await call("hello", {"request_id": f"h{i}"})

            async def overcome(i: int) -> None:
                await call(
                    "action.start",
                    {
                        "request_id": f"a{i}",
                        "type": "overcome",
                        "actor_id": "hero",
                        "skill": "Athletics",
                        "opposition": {"kind": "passive", "rating": 2},
                    },
                )

            baseline_samples = await _timed(n, hello, pace)
            action_samples = await _timed(n, overcome, pace)
            baseline = statistics.median(baseline_samples)
            print(f"Fate Bridge bench, {n} requests each, one GM connection")
            print(_summary("hello (baseline)", baseline_samples, baseline))
            print(_summary("action.start overcome", action_samples, baseline))
            await client.disconnect()
        finally:
            bridge.stop()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("-n", type=int, default=200, help="requests per measurement")
    asyncio.run(run(parser.parse_args().n))


main()
