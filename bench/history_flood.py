"""The history flood (issue 26; part ``history_flood``): another world's GM while one
player floods history reads.

Two worlds on one bridge (SQLite): ``flooded``, with ``FLOOD_RESOLVED`` passive overcomes
already in its log (about 2,100 events, the attacker's size), whose players own its hero;
and ``quiet``, whose GM plays passive overcomes (action.start + action.pass) at
``PROBE_RATE`` actions a second, open loop, each intent's latency taken from its due time.
The GM plays first alone (quiet), then while ``FLOODERS`` bound player connections of
``flooded`` each send at the per-connection rate limit (20 a second), in turn a history
read that matches nothing, ``history.stats`` and a full page (50 entries) (flooded).

The flood runs in a child process on the load cores (``python -m bench.history_flood``,
its JSON plan on stdin's first line: it connects and binds its players, prints ``ready``,
floods once it reads a line, and prints one JSON line of what its requests got); the GM's
probe runs in the bench's own process, the bridge on the server core.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

from bench.load import Conn, start_payload
from bench.proc import LOAD_CORES, bridge_server, cpu_seconds, pin
from bench.seed import resolve_passive, seed_worlds
from bridge.rules.dice import SecureDice
from bridge.service.commit import rebuild, state_json
from bridge.service.history_index import index_rows
from bridge.service.protocol import PROTOCOL_VERSION
from bridge.store.base import CommitBatch, EventRow, Store
from bridge.store.chain import chained_record
from bridge.store.sqlite import SQLiteStore
from tests.bridge_process import PROJECT_ROOT

FLOOD_RESOLVED = 420  # five events each: 2,100 events in the flooded world's log
FLOODERS = 6
FLOOD_RATE = 20.0  # per connection: the bridge's per-connection message rate
PROBE_RATE = 5.0  # the quiet world's GM: actions a second (two intents each)
WARMUP_SECONDS = 1.0
# What each flooding connection sends, in turn.
FLOOD_READS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("history.read", {"character": "nobody"}),
    ("history.stats", {}),
    ("history.read", {"limit": 50}),
)


def auth(world: str, user: str, key: str | None = None) -> dict[str, Any]:
    role = {"role": "gm", "key": key} if key else {"role": "player"}
    return {"world": world, "user": user, "protocol": PROTOCOL_VERSION, **role}


def outcome(raw: str) -> str:
    """An ack's outcome: "ok" or its error code."""
    ack = json.loads(raw)[0]
    return "ok" if ack.get("ok") else str(ack.get("error", {}).get("code"))


async def seed(folder: Path) -> dict[str, str]:
    store = SQLiteStore(folder / "bridge.sqlite3")
    await store.open()
    try:
        players = [f"p{i}" for i in range(FLOODERS)]
        keys = await seed_worlds(store, ["flooded"], owners=players)
        await play(store, "flooded", FLOOD_RESOLVED)
        keys.update(await seed_worlds(store, ["quiet"]))
        return keys
    finally:
        await store.close()


async def play(store: Store, world_id: str, resolutions: int) -> None:
    """Passive overcomes appended as play leaves them: a commit per resolution (so the log's
    rows are a table's, not one commit of thousands of events), the state saved at the end."""
    snapshot = await store.load(world_id)
    assert snapshot is not None
    state, dice = rebuild(snapshot), SecureDice()
    prev, seq, version = snapshot.last_event_hash, snapshot.last_event_seq, snapshot.version
    for n in range(resolutions):
        state, events = resolve_passive(state, dice)
        now = f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}.{n:06d}+00:00"
        rows: list[EventRow] = []
        for event in events:
            seq += 1
            digest, canonical = chained_record(prev, seq, event.type, event, now)
            rows.append(EventRow.of_encoded(seq, event.type, canonical.decode(), now, prev, digest))
            prev = digest
        last = n == resolutions - 1
        batch = CommitBatch(
            world_id=world_id,
            expected_version=version,
            snapshot=state_json(state) if last else None,
            events=rows,
            created_at=now,
            history=index_rows(rows, events),
        )
        version = await store.commit(batch)


async def probe(url: str, key: str, seconds: float, timeout: float | None = None) -> dict[str, Any]:
    """The quiet world's GM: passive overcomes at PROBE_RATE for ``seconds``; each intent's
    latency (action.start from its due time, action.pass from when the start's answer
    came) and the answers that were not ok (an answer not back within ``timeout``
    seconds counts as "timeout", its latency as ``timeout``)."""
    latencies: list[float] = []
    failed: dict[str, int] = {}
    async with aiohttp.ClientSession() as session:
        gm = Conn(echo=False)
        await gm.open(session, url, auth("quiet", "gm", key))
        loop = asyncio.get_running_loop()
        start = loop.time() + 0.1
        tasks = []

        async def call(event: str, payload: dict[str, Any]) -> str:
            try:
                return await asyncio.wait_for(gm.call(event, payload), timeout)
            except TimeoutError:
                return '[{"ok": false, "error": {"code": "timeout"}}]'

        async def one(n: int, due: float) -> None:
            await asyncio.sleep(max(0.0, due - loop.time()))
            raw = await call("action.start", start_payload(f"s{n}", "hero"))
            latencies.append(loop.time() - due)
            got = outcome(raw)
            if got == "ok":
                action_id = json.loads(raw)[0]["data"]["action_id"]
                sent = loop.time()
                raw = await call(
                    "action.pass", {"request_id": f"p{n}", "action_id": action_id, "side": "actor"}
                )
                latencies.append(loop.time() - sent)
                got = outcome(raw)
            if got != "ok":
                failed[got] = failed.get(got, 0) + 1

        for n in range(int(seconds * PROBE_RATE)):
            tasks.append(asyncio.create_task(one(n, start + n / PROBE_RATE)))
        await asyncio.gather(*tasks)
        await gm.close()
    return {"latencies": latencies, "failed": failed}


def run(folder: Path, seconds: float) -> dict[str, Any]:
    """Both phases on a fresh bridge; raw latencies (seconds) for the caller to sum up."""
    keys = asyncio.run(seed(folder))
    server = bridge_server(folder).start()
    flood: subprocess.Popen[str] | None = None
    try:
        before, began = cpu_seconds(server.pid), time.monotonic()
        quiet = asyncio.run(probe(server.url, keys["quiet"], seconds))
        quiet_busy = (cpu_seconds(server.pid) - before) / (time.monotonic() - began)
        plan = {"url": server.url, "key": keys["flooded"], "seconds": seconds + 2 * WARMUP_SECONDS}
        flood = subprocess.Popen(
            [sys.executable, "-m", "bench.history_flood"],
            cwd=PROJECT_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        pin(flood.pid, LOAD_CORES)
        assert flood.stdin is not None and flood.stdout is not None
        flood.stdin.write(json.dumps(plan) + "\n")
        flood.stdin.flush()
        ready = flood.stdout.readline()
        if ready.strip() != "ready":
            raise RuntimeError(f"the flood did not start: {ready!r}")
        flood.stdin.write("go\n")
        flood.stdin.flush()
        time.sleep(WARMUP_SECONDS)
        before, began = cpu_seconds(server.pid), time.monotonic()
        flooded = asyncio.run(probe(server.url, keys["quiet"], seconds))
        flooded_busy = (cpu_seconds(server.pid) - before) / (time.monotonic() - began)
        flood_result = json.loads(flood.stdout.readline())
        flood.wait(timeout=30)
    finally:
        if flood is not None and flood.poll() is None:
            flood.kill()
            flood.wait()
        server.stop()
    return {
        "seconds": seconds,
        "flooders": FLOODERS,
        "flood_rate_per_connection": FLOOD_RATE,
        "probe_actions_per_second": PROBE_RATE,
        "flooded_log_events": FLOOD_RESOLVED * 5,
        "quiet": quiet,
        "flooded": flooded,
        # The bridge's CPU over each phase's wall time (the probe's last answer included).
        "quiet_server_busy": quiet_busy,
        "flooded_server_busy": flooded_busy,
        "flood": flood_result,
    }


async def _flood(plan: dict[str, Any]) -> dict[str, Any]:
    """The child: bind the flooders (as the GM's module does), then send at FLOOD_RATE
    each, open loop, for the plan's seconds; what every request got, by outcome and read."""
    url, key, seconds = plan["url"], plan["key"], float(plan["seconds"])
    async with aiohttp.ClientSession() as session:
        gm = Conn(echo=False)
        await gm.open(session, url, auth("flooded", "gm", key))
        players = []
        for i in range(FLOODERS):
            player = Conn(echo=False)
            await player.open(session, url, auth("flooded", f"p{i}"))
            hello = json.loads(await player.call("hello", {"request_id": "n"}))[0]
            nonce = hello["data"]["bind_nonce"]
            bound = {"request_id": f"b{i}", "user_id": f"p{i}", "nonce": nonce}
            if outcome(await gm.call("user.bind", bound)) != "ok":
                raise RuntimeError("a flooder was not bound")
            players.append(player)
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        counts: dict[str, dict[str, int]] = {}
        answered: list[float] = []
        loop = asyncio.get_running_loop()
        began = loop.time()

        async def send(player: Conn, n: int) -> None:
            event, payload = FLOOD_READS[n % len(FLOOD_READS)]
            name = f"{event} {json.dumps(payload)}"
            sent = loop.time()
            try:
                got = outcome(await player.call(event, {**payload, "request_id": f"f{n}"}))
            except Exception as exc:  # the connection went
                got = type(exc).__name__
            answered.append(loop.time() - sent)
            per = counts.setdefault(name, {})
            per[got] = per.get(got, 0) + 1

        tasks = []
        for n in range(int(seconds * FLOOD_RATE)):
            await asyncio.sleep(max(0.0, began + n / FLOOD_RATE - loop.time()))
            tasks += [asyncio.create_task(send(p, n)) for p in players]
        await asyncio.gather(*tasks)
        drained = loop.time() - began - seconds
        for conn in (gm, *players):
            await conn.close()
    answered.sort()
    return {
        "sent": len(answered),
        "by_read": counts,
        "answer_p50_ms": answered[len(answered) // 2] * 1000 if answered else None,
        "drained_seconds_after": max(0.0, drained),
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(_flood(json.loads(sys.stdin.readline())))), flush=True)
