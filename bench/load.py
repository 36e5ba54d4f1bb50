"""One load-generator process: many thin Socket.IO connections, sends on a fixed schedule.

Run as ``python -m bench.load`` with a JSON plan on stdin's first line. It connects, prints
``ready``, reads the start time (wall clock) as the next line, then sends open-loop: the k-th
send is due at ``start + offset + k / rate`` whether or not earlier ones have been answered,
and its latency is measured from that due time (so a stalled server shows as latency, not as
a slower load). It prints one JSON line of results, and closes its connections once it
reads one more line (or stdin closes).

The client speaks Engine.IO 4 / Socket.IO 5 directly over an aiohttp websocket: a full
python-socketio client per connection would cost the generator more than the server.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from itertools import count
from typing import Any

import aiohttp

NS = "/fate"
EVENT_PREFIX = f"42{NS},"
ACK_PREFIX = f"43{NS},"


class CallFailed(Exception):
    pass


class Conn:
    """One websocket; ``call`` sends an event with an ack id and returns the raw ack text."""

    def __init__(self, echo: bool) -> None:
        self.echo = echo
        self.ids = count(1)
        self.pending: dict[int, asyncio.Future[str]] = {}
        self.emits = 0
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.reader: asyncio.Task[None] | None = None
        self.hello_seconds: float | None = None

    async def open(self, session: aiohttp.ClientSession, url: str, auth: dict[str, Any]) -> None:
        base = url.replace("http://", "ws://")
        if self.echo:
            self.ws = await session.ws_connect(base + "/echo", max_msg_size=0)
        else:
            # A bridge client offers permessage-deflate, as every browser does (rungs 0
            # and 1, the baselines, run as they always have: uncompressed).
            self.ws = await session.ws_connect(
                base + "/socket.io/?EIO=4&transport=websocket",
                max_msg_size=0,
                compress=15 if auth.get("world") else 0,
            )
            opened = await self.ws.receive_str()
            if not opened.startswith("0"):
                raise CallFailed(f"no engine.io open: {opened[:80]}")
            await self.ws.send_str(f"40{NS}," + json.dumps(auth))
            while True:
                reply = await self.ws.receive_str()
                if reply == "2":
                    await self.ws.send_str("3")
                    continue
                if reply.startswith(f"40{NS},"):
                    break
                raise CallFailed(f"connect refused: {reply[:200]}")
        self.reader = asyncio.create_task(self._read())
        if auth.get("world"):
            # As the module does on every connect: the hello is where the bridge loads a
            # world it has not cached, so that load is set-up, not the first action's.
            began = time.perf_counter()
            _ok(await self.call("hello", {"request_id": "hello", "module_version": "bench"}))
            self.hello_seconds = time.perf_counter() - began

    async def _read(self) -> None:
        assert self.ws is not None
        async for message in self.ws:
            if message.type != aiohttp.WSMsgType.TEXT:
                break
            data: str = message.data
            if data == "2":
                await self.ws.send_str("3")
            elif data.startswith(ACK_PREFIX) or (self.echo and data.startswith(EVENT_PREFIX)):
                rest = data[len(ACK_PREFIX) :]
                cut = rest.index("[")
                future = self.pending.pop(int(rest[:cut]), None)
                if future is not None and not future.done():
                    future.set_result(rest[cut:])
            elif data.startswith(EVENT_PREFIX):
                self.emits += 1
        for future in self.pending.values():
            if not future.done():
                future.set_exception(CallFailed("connection closed"))

    async def call(self, event: str, payload: dict[str, Any]) -> str:
        assert self.ws is not None
        ident = next(self.ids)
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.pending[ident] = future
        await self.ws.send_str(f"{EVENT_PREFIX}{ident}" + json.dumps([event, payload]))
        return await future

    async def close(self) -> None:
        if self.reader is not None:
            self.reader.cancel()
        if self.ws is not None:
            await self.ws.close()


def start_payload(request_id: str, actor: str) -> dict[str, Any]:
    return {
        "request_id": request_id,
        "type": "overcome",
        "actor_id": actor,
        "skill": "Athletics",
        "opposition": {"kind": "passive", "rating": -2},
    }


def _ok(raw: str) -> dict[str, Any]:
    ack = json.loads(raw)[0]
    if not isinstance(ack, dict):  # rung 0 echoes the frame: ["echo", {...}]
        return {}
    if not ack.get("ok", True) and "error" in ack:
        raise CallFailed(json.dumps(ack["error"])[:200])
    return ack


async def passive_overcome(conn: Conn, tag: str, intent_latencies: list[float]) -> None:
    """action.start then action.pass on the action it opened: one resolved action."""
    began = time.perf_counter()
    started = _ok(await conn.call("action.start", start_payload(f"s{tag}", "hero")))
    intent_latencies.append(time.perf_counter() - began)
    action_id = started["data"]["action_id"]
    began = time.perf_counter()
    _ok(
        await conn.call(
            "action.pass", {"request_id": f"p{tag}", "action_id": action_id, "side": "actor"}
        )
    )
    intent_latencies.append(time.perf_counter() - began)


async def wire_echo(conn: Conn, tag: str) -> None:
    """A frame the bridge's wire reads in full (decode, session, rate token, shape) and
    answers with an error ack, with no intent behind it: the bridge's own cost per
    message on top of python-socketio's."""
    ack = json.loads(await conn.call("echo", start_payload(tag, "hero")))[0]
    if not isinstance(ack, dict) or ack.get("error", {}).get("code") != "unknown_event":
        raise CallFailed(f"expected an unknown_event ack, got {json.dumps(ack)[:200]}")


async def run(plan: dict[str, Any]) -> dict[str, Any]:
    mode: str = plan["mode"]
    echo = mode == "ws_echo"
    connector = aiohttp.TCPConnector(limit=0)
    session = aiohttp.ClientSession(connector=connector)
    conns: list[Conn] = []
    senders: list[Conn] = []
    specs: list[dict[str, Any]] = plan["connections"]
    semaphore = asyncio.Semaphore(20)

    async def connect(spec: dict[str, Any]) -> None:
        conn = Conn(echo)
        async with semaphore:
            await conn.open(session, plan["url"], spec.get("auth", {}))
        conns.append(conn)
        if spec.get("sender"):
            senders.append(conn)

    await asyncio.gather(*(connect(s) for s in specs))
    hellos = [c.hello_seconds for c in conns if c.hello_seconds is not None]
    print("ready", flush=True)
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    start_wall = float(line)
    loop = asyncio.get_running_loop()
    # Map the shared wall-clock start onto this loop's monotonic clock.
    start = loop.time() + (start_wall - time.time())
    results: dict[str, Any] = {
        "sent": 0,
        "done": 0,
        "errors": 0,
        "error_samples": [],
        "latencies": [],
        "intent_latencies": [],
    }
    latencies: list[float] = results["latencies"]
    intent_latencies: list[float] = results["intent_latencies"]
    duration: float = plan["duration"]
    tag = f"{plan['worker']}-{int(start_wall * 1000) % 10_000_000}"

    async def one(conn: Conn, k: int, due: float) -> None:
        try:
            if mode in ("action", "closed_action"):
                await passive_overcome(conn, f"{tag}-{k}", intent_latencies)
            elif mode == "wire_echo":
                await wire_echo(conn, f"w{tag}-{k}")
            else:
                _ok(await conn.call("echo", start_payload(f"e{tag}-{k}", "hero")))
            latencies.append(loop.time() - due)
            results["done"] += 1
        except Exception as exc:  # every failure is counted and shown, none stops the run
            results["errors"] += 1
            if len(results["error_samples"]) < 5:
                results["error_samples"].append(f"{type(exc).__name__}: {exc}"[:300])

    tasks: list[asyncio.Task[None]] = []
    if mode == "idle":
        await asyncio.sleep(duration)
    elif mode == "closed_action":
        # Saturation: each sender runs actions back to back, paced under the rate limit.
        async def closed(conn: Conn, index: int) -> None:
            k = 0
            await asyncio.sleep(max(0.0, start - loop.time()) + index * 0.003)
            while loop.time() < start + duration:
                due = loop.time()
                k += 1
                results["sent"] += 1
                await one(conn, index * 1_000_000 + k, due)
                await asyncio.sleep(max(0.0, due + plan.get("pace", 0.125) - loop.time()))

        await asyncio.gather(*(closed(c, i) for i, c in enumerate(senders)))
    else:
        rate: float = plan["rate"]
        offset: float = plan.get("offset", 0.0)
        total = int(duration * rate)
        for k in range(total):
            due = start + offset + k / rate
            delay = due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            results["sent"] += 1
            tasks.append(asyncio.create_task(one(senders[k % len(senders)], k, due)))
        if tasks:
            _done, pending = await asyncio.wait(tasks, timeout=plan.get("grace", 10.0))
            for task in pending:
                task.cancel()
            results["errors"] += len(pending)
            if pending:
                results["error_samples"].append(f"{len(pending)} unanswered after the grace")
    results["emits"] = sum(c.emits for c in conns)
    results["hello_latencies"] = hellos
    results["end_wall"] = time.time()
    print(json.dumps(results), flush=True)
    # The connections stay open until every generator has reported (the parent's next
    # line): one generator's disconnects never land in another's measured window.
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    for conn in conns:
        await conn.close()
    await session.close()
    return results


def main() -> None:
    plan = json.loads(sys.stdin.readline())
    asyncio.run(run(plan))


if __name__ == "__main__":
    main()
