"""One load generator of relayed players: ``python -m bench.relay_load``.

The same contract as bench/load.py (a JSON plan on stdin's first line, ``ready``, the start
time as the next line, one JSON line of results, its connections closed on one more line),
for players in relay mode: each player is a python-socketio client of the fake Foundry
server (bench/foundry.py) as its user, and reaches the bridge only through the active GM's
client (bench/relay_host.py), as the module's ``RelayConnection`` does: it asks for the
host's status (``relay.ask``) and waits for ``relay.host`` connected, sends each intent as
``relay.request`` on the module's channel, and takes as its answer the ``relay.answer``
that the host (the sender Foundry stamped, never a field) addresses to its user with its
request id.

Open loop, as bench/load.py's ``action`` mode: the k-th passive overcome (action.start,
then action.pass on the action it opened) is due at ``start + offset + k / rate``, sent by
player ``k % players``; the action's latency runs from that due time to the answer of its
pass, each intent's from its send to its answer.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import socketio

from bench.load import CallFailed, start_payload
from bench.relay_host import CHANNEL, sender_of
from bridge.service.protocol import PROTOCOL_VERSION

READY_TIMEOUT = 30.0


class Player:
    """One Foundry user's client, its intents relayed by the host's client."""

    def __init__(self, user: str, host: str) -> None:
        self.user = user
        self.host = host
        self.client = socketio.AsyncClient(reconnection=False)
        self.client.on(CHANNEL, self.receive)
        self.pending: dict[str, asyncio.Future[object]] = {}
        self.host_ready = asyncio.Event()
        self.emits = 0
        self.ready_seconds: float | None = None

    async def open(self, url: str) -> None:
        await self.client.connect(url, auth={"userId": self.user}, transports=["websocket"])
        began = time.perf_counter()
        await self.client.emit(CHANNEL, {"t": "relay.ask"})
        await asyncio.wait_for(self.host_ready.wait(), READY_TIMEOUT)
        self.ready_seconds = time.perf_counter() - began

    async def receive(self, *args: Any) -> None:
        message = args[0] if args else None
        # Only the host speaks for the bridge: a player cannot forge answers or emits.
        if not isinstance(message, dict) or sender_of(args) != self.host:
            return
        kind = message.get("t")
        if kind == "relay.host":
            if message.get("state") == "connected" and message.get("protocol") == PROTOCOL_VERSION:
                self.host_ready.set()
        elif kind == "relay.emits" and isinstance(message.get("emits"), list):
            self.emits += 1
        elif kind == "relay.answer" and message.get("to") == self.user:
            future = self.pending.pop(str(message.get("id")), None)
            if future is not None and not future.done():
                future.set_result(message.get("ack"))

    async def call(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        self.pending[payload["request_id"]] = future
        await self.client.emit(CHANNEL, {"t": "relay.request", "event": event, "payload": payload})
        ack = await future
        if not isinstance(ack, dict) or not ack.get("ok"):
            raise CallFailed(json.dumps(ack)[:200])
        return ack

    async def close(self) -> None:
        await self.client.disconnect()


async def passive_overcome(player: Player, tag: str, intent_latencies: list[float]) -> None:
    """action.start then action.pass on the action it opened, each relayed."""
    began = time.perf_counter()
    started = await player.call("action.start", start_payload(f"s{tag}", "hero"))
    intent_latencies.append(time.perf_counter() - began)
    began = time.perf_counter()
    await player.call(
        "action.pass",
        {"request_id": f"p{tag}", "action_id": started["data"]["action_id"], "side": "actor"},
    )
    intent_latencies.append(time.perf_counter() - began)


async def run(plan: dict[str, Any]) -> dict[str, Any]:
    players = [Player(user, plan["host"]) for user in plan["players"]]
    await asyncio.gather(*(p.open(plan["url"]) for p in players))
    print("ready", flush=True)
    loop = asyncio.get_running_loop()
    start_wall = float(await loop.run_in_executor(None, sys.stdin.readline))
    start = loop.time() + (start_wall - time.time())
    results: dict[str, Any] = {
        "sent": 0,
        "done": 0,
        "errors": 0,
        "error_samples": [],
        "latencies": [],
        "intent_latencies": [],
    }
    tag = f"r{plan['worker']}-{int(start_wall * 1000) % 10_000_000}"

    async def one(player: Player, k: int, due: float) -> None:
        try:
            await passive_overcome(player, f"{tag}-{k}", results["intent_latencies"])
            results["latencies"].append(loop.time() - due)
            results["done"] += 1
        except Exception as exc:  # every failure is counted and shown, none stops the run
            results["errors"] += 1
            if len(results["error_samples"]) < 5:
                results["error_samples"].append(f"{type(exc).__name__}: {exc}"[:300])

    rate: float = plan["rate"]
    offset: float = plan.get("offset", 0.0)
    tasks: list[asyncio.Task[None]] = []
    for k in range(int(plan["duration"] * rate)):
        due = start + offset + k / rate
        delay = due - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        results["sent"] += 1
        tasks.append(asyncio.create_task(one(players[k % len(players)], k, due)))
    if tasks:
        _done, pending = await asyncio.wait(tasks, timeout=plan.get("grace", 10.0))
        for task in pending:
            task.cancel()
        results["errors"] += len(pending)
        if pending:
            results["error_samples"].append(f"{len(pending)} unanswered after the grace")
    results["emits"] = sum(p.emits for p in players)
    # Set-up, as bench/load.py's hellos: from asking for the host's status to hearing it.
    results["hello_latencies"] = [p.ready_seconds for p in players if p.ready_seconds is not None]
    results["end_wall"] = time.time()
    print(json.dumps(results), flush=True)
    await loop.run_in_executor(None, sys.stdin.readline)
    for player in players:
        await player.close()
    return results


def main() -> None:
    asyncio.run(run(json.loads(sys.stdin.readline())))


if __name__ == "__main__":
    main()
