"""``make bench``: the ladder from the bare transport to a full action, and the scale runs.

Every figure is server CPU per request (from /proc/PID/stat, the server pinned to one core)
and latency from each request's scheduled time, under open-loop load from separate
processes with many connections (so the per-connection rate limit is never what is
measured). The machine is shared and noisy: compare the ratios to rung 1 and the medians.

Rungs (each a fresh server), all at the action rungs' message rate (two intents per action)
from as many sending connections, except 1h: per-message CPU falls as the rate rises (each
wake of the event loop serves more messages), so only costs measured at one rate compare:
  0  aiohttp websocket echo, the same frames as rung 1
  1  python-socketio ack echo (the bridge's transport with nothing behind it)
  1h the same at 10x the message rate (2,000/s: where every baseline ran until round 7)
  1b the bridge's own server answering a frame that names no intent (its wire's cost)
  1c python-socketio acking each message and sending it to the sender's room, by its own
     room emit: the frames an intent of rung 2 sends (its ack, and its emits to the room)
  1d the same with 10 clients in each room: the frames of rung 4
  2  passive overcome (action.start + action.pass) on SQLite, one client per world
  3  the same on Redis
  4  SQLite, 10 clients in each world's room
Then: the relay hop (issue 24; ``relay``): a player's passive overcomes through a fake
Foundry server and the GM's client (bench/foundry.py, bench/relay_host.py,
bench/relay_load.py) beside the direct path, both at 10 actions/s at once on one bridge,
with each path's p50/p90/p99, their ratio, where a relayed intent's time goes, and the fake
Foundry server's and the relay host's CPU per relayed action; the growth curve (0 / 500 /
2,000 resolved actions in one scene), bytes on disk per resolved action at 2,000 (issue 35;
``disk``, bench/disk.py: SQLite and Redis), the 100-world run (1,000 clients, 200 actions/s)
and the same at 100-300 actions/s on one bridge with every GC pause listed per rate (issue
35; ``scale_rates``), memory per idle client, the rules engine alone (in-process: µs per
resolution on a fresh world and on one with 2,000 resolved actions), the aggregate rate of 1
and 2 bridge processes on one Redis, and the history flood (issue 26; ``history_flood``,
bench/history_flood.py): another world's GM's latency, quiet and while six players of one
world send history reads at the rate limit (the target: p99 within 2x of quiet), and the
wire floods (issue 35; ``wire_flood``, bench/wire_flood.py): that GM idle and during a
CONNECT flood from sockets that never join, events sent before joining, a keyed GM's flood
past its rate limit and one address's idle-connection churn (with how many of a GM's joins
and ``/healthz`` requests got through), the bridge's memory under sockets that never read,
one relayed player's flood against another's messages, and the seconds SIGTERM and SIGINT
take to end the bridge with a client joined (``BENCH_BRIDGE_ROOT`` runs that part's bridge
from another checkout, for a before/after table). JSON goes to bench/results/ (git-ignored;
a file per run, named by its start, with each part's duration; the figures worth keeping are
the README's bench table); ``--profile`` adds py-spy's top entries for rungs 1b-4 and the
100-world run when py-spy is installed. GC figures are the
server's own collections in the run's window: ``gc_max_pause_ms`` is wall time (it includes
waiting for a core on a busy machine), ``gc_max_pause_cpu_ms`` the CPU the collection used.
The ladder's "loop" column is the share of the server's CPU spent on its event loop's thread
(the rest ran on the SQLite store's worker thread and executors).

Each bridge connection says hello once connected, as the module does; a world the bridge
has not cached is loaded there. That is set-up, outside the measured window: the growth
curve prints it apart (the first hello's latency and the server's CPU while connecting).
A bridge connection also offers permessage-deflate, as every browser does (the bridge
declines it unless ``serve --websocket-compression``); the echo baselines do not.

Each run also reports the host's steal (the share of the cores' time a hypervisor gave
to other machines) on the server's core and on the load generators': latency measured
under steal is the host's. The 100-world run is tried again, up to 3 times, while over 1%
of the server's core is stolen. ``--only instructions`` (not in the default run) counts
instructions per action and per resolution with callgrind (bench/instructions.py): the
figure to compare two versions by on this noisy machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench import disk as disk_use
from bench import history_flood as flooding
from bench import instructions as counting
from bench import wire_flood
from bench.proc import (
    CORES,
    LOAD_CORES,
    Server,
    bridge_server,
    core_ticks,
    cpu_seconds,
    main_thread_cpu_seconds,
    pin,
    redis_pid,
    redis_server,
    rss_bytes,
    steal_share,
)
from bench.seed import seed_worlds, time_engine
from bench.spy import Spy, py_spy
from bridge.service.protocol import PROTOCOL_VERSION
from bridge.store.base import Store
from bridge.store.redis import RedisStore
from bridge.store.sqlite import SQLiteStore
from tests.bridge_process import PROJECT_ROOT, flush_redis

DB_NAME = "bridge.sqlite3"
# Measurements stay out of the product: each run's JSON goes here (git-ignored); the figures
# worth keeping are the README's bench table.
RESULTS_DIR = PROJECT_ROOT / "bench" / "results"


@dataclass(frozen=True)
class Profile:
    """How long and how hard each part runs."""

    reps: int
    rung_seconds: float
    # Rung 1h's message rate: 10x the others' (every baseline ran at it until round 7).
    echo_rate: float
    action_rate: float
    growth: tuple[int, ...]
    growth_rate: float
    scale_seconds: float
    # The 100-world run is tried again while the host steals from it (see scale).
    scale_attempts: int
    idle_clients: int
    engine_resolutions: int
    aggregate_seconds: float
    # The instructions part (callgrind): each shape's counted run, and the rules alone.
    instruction_seconds: float = 30.0
    instruction_resolutions: int = 1000
    # The paired part: turns of rung 1 and rung 2, each this long.
    pairs: int = 8
    pair_seconds: float = 4.0
    # The relay part: seconds of load on both paths at once, after a short warm-up.
    relay_seconds: float = 25.0
    # The history flood: seconds of each phase (quiet, then flooded).
    flood_seconds: float = 10.0


FULL = Profile(3, 8.0, 2000, 100, (0, 500, 2000), 10, 30.0, 3, 500, 5000, 10.0)
QUICK = Profile(
    1,
    2.0,
    2000,
    100,
    (0, 500, 2000),
    10,
    8.0,
    1,
    200,
    2000,
    3.0,
    instruction_seconds=10.0,
    instruction_resolutions=300,
    pairs=4,
    pair_seconds=2.0,
    relay_seconds=8.0,
    flood_seconds=5.0,
)
# A latency run during which the hypervisor took more than this share of the server's core
# measured the host more than the bridge (p99 at 200 actions/s on this 2-core machine, 24
# runs: 24-40 ms under 1% of steal, 38-123 ms at 1-5%, 0.2-2.7 s from 7% up).
STEAL_TOLERATED = 0.01


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def latency_summary(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": percentile(values, 0.50) * 1000,
        "p90_ms": percentile(values, 0.90) * 1000,
        "p99_ms": percentile(values, 0.99) * 1000,
        "max_ms": (max(values) if values else float("nan")) * 1000,
    }


def gm_auth(world: str, key: str, user: str) -> dict[str, Any]:
    return {"world": world, "role": "gm", "user": user, "key": key, "protocol": PROTOCOL_VERSION}


# Set by --profile: a folder for py-spy's recordings of the runs that profile.
PROFILE_DIR: list[Path] = []


def run_load(
    servers: list[Server],
    plans: list[dict[str, Any]],
    duration: float,
    profile_as: str | None = None,
    on_ready: Callable[[], None] = lambda: None,
    on_done: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """Start one generator per plan, start them together, and collect what they saw and
    the servers' CPU over the run (drain included). With ``--profile``, a run named by
    ``profile_as`` also records the first server's profile (py-spy) over the run.
    ``on_ready`` runs once every generator has connected, just before the start;
    ``on_done`` once every generator has reported, before they disconnect.

    A plan's ``generator`` names the module that runs it (bench.load unless given; any
    other keeps its contract, as bench.relay_load does); plans that name a ``group`` are
    also summed by group (``groups``: each one's counts and latencies)."""
    workers = []
    setup_before = [cpu_seconds(s.pid) for s in servers]
    for index, plan in enumerate(plans):
        worker = subprocess.Popen(
            [sys.executable, "-m", plan.get("generator", "bench.load")],
            cwd=PROJECT_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        pin(worker.pid, LOAD_CORES)
        assert worker.stdin is not None and worker.stdout is not None
        worker.stdin.write(json.dumps({**plan, "worker": index, "duration": duration}) + "\n")
        worker.stdin.flush()
        workers.append(worker)
    for worker in workers:
        assert worker.stdout is not None
        line = worker.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"load generator failed to connect: {line!r}")
    # Connecting and each connection's hello (where a world is first loaded) are set-up.
    setup_cpu = sum(cpu_seconds(s.pid) for s in servers) - sum(setup_before)
    on_ready()
    start = time.time() + 0.5
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.write(f"{start}\n")
        worker.stdin.flush()
    time.sleep(max(0.0, start - time.time()))
    cpu_before = [cpu_seconds(s.pid) for s in servers]
    loop_before = [main_thread_cpu_seconds(s.pid) for s in servers]
    server_cores = set().union(*(s.cores for s in servers))
    ticks_before = (core_ticks(server_cores), core_ticks(LOAD_CORES))
    spy = None
    if profile_as and PROFILE_DIR:
        spy = Spy(servers[0].pid, duration, PROFILE_DIR[0] / f"{profile_as}.txt")
    results = []
    for worker in workers:
        assert worker.stdout is not None
        results.append(json.loads(worker.stdout.readline()))
    end = time.time()
    cpu_after = [cpu_seconds(s.pid) for s in servers]
    loop_after = [main_thread_cpu_seconds(s.pid) for s in servers]
    steal = (
        steal_share(ticks_before[0], core_ticks(server_cores)),
        steal_share(ticks_before[1], core_ticks(LOAD_CORES)),
    )
    on_done()
    # Every generator has reported: now they disconnect, outside the measured window.
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.write("close\n")
        worker.stdin.flush()
    for worker in workers:
        worker.wait(timeout=60)
    top = spy.top() if spy is not None else None
    latencies = [x for r in results for x in r["latencies"]]
    intents = [x for r in results for x in r["intent_latencies"]]
    hellos = [x for r in results for x in r["hello_latencies"]]
    pauses = [p for s in servers for p in s.gc_pauses(start, end)]
    done = sum(r["done"] for r in results)
    cpu = sum(cpu_after) - sum(cpu_before)
    loop_cpu = sum(loop_after) - sum(loop_before)
    groups: dict[str, list[dict[str, Any]]] = {}
    for plan, result in zip(plans, results, strict=True):
        if "group" in plan:
            groups.setdefault(plan["group"], []).append(result)
    return {
        **({"groups": {name: group_summary(rs) for name, rs in groups.items()}} if groups else {}),
        "sent": sum(r["sent"] for r in results),
        "done": done,
        "errors": sum(r["errors"] for r in results),
        "error_samples": [e for r in results for e in r["error_samples"]][:5],
        "emits_received": sum(r["emits"] for r in results),
        "seconds": end - start,
        "server_cpu_s": cpu,
        "server_busy": cpu / (end - start) / len(servers),
        "cpu_per_request_us": cpu / done * 1e6 if done else float("nan"),
        # The event loop's thread; the rest ran on the store's worker and executors.
        "loop_cpu_per_request_us": loop_cpu / done * 1e6 if done else float("nan"),
        "latency": latency_summary(latencies),
        "intent_latency": latency_summary(intents),
        "setup_server_cpu_ms": setup_cpu * 1000,
        # A hypervisor that took the cores' turns (steal) shows as latency this code did
        # not cause: a run with a few per cent of it measured the host, not the bridge.
        "steal_server_cores": steal[0],
        "steal_load_cores": steal[1],
        "hello_latency": latency_summary(hellos),
        "gc_total_pause_ms": sum(d for _t, _g, d, _c in pauses) * 1000,
        "gc_total_pause_cpu_ms": sum(c for _t, _g, _d, c in pauses) * 1000,
        "gc_max_pause_ms": max((d for _t, _g, d, _c in pauses), default=0.0) * 1000,
        "gc_max_pause_cpu_ms": max((c for _t, _g, _d, c in pauses), default=0.0) * 1000,
        "gc_gen2_collections": sum(1 for _t, g, _d, _c in pauses if g == 2),
        "gc_pauses": len(pauses),
        "gc_p99_pause_ms": percentile([d for _t, _g, d, _c in pauses], 0.99) * 1000,
        **({"profile": top} if top is not None else {}),
        "gc_max_pause_ms_by_generation": {
            str(gen): max((d for _t, g, d, _c in pauses if g == gen), default=0.0) * 1000
            for gen in (0, 1, 2)
        },
    }


def group_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """What one group of generators saw (the servers' CPU is the whole run's)."""
    return {
        "sent": sum(r["sent"] for r in results),
        "done": sum(r["done"] for r in results),
        "errors": sum(r["errors"] for r in results),
        "error_samples": [e for r in results for e in r["error_samples"]][:5],
        "emits_received": sum(r["emits"] for r in results),
        "latency": latency_summary([x for r in results for x in r["latencies"]]),
        "intent_latency": latency_summary([x for r in results for x in r["intent_latencies"]]),
        "hello_latency": latency_summary([x for r in results for x in r["hello_latencies"]]),
    }


def split(items: list[Any], parts: int) -> list[list[Any]]:
    """Deal items out round-robin, senders and listeners separately so each part sends."""
    senders = [c for c in items if c.get("sender")]
    others = [c for c in items if not c.get("sender")]
    return [senders[i::parts] + others[i::parts] for i in range(parts)]


def open_plans(
    url: str, conns: list[dict[str, Any]], mode: str, rate: float, workers: int = 2
) -> list[dict[str, Any]]:
    """Open-loop plans: the rate shared by the workers, their sends interleaved."""
    return [
        {
            "url": url,
            "mode": mode,
            "connections": part,
            "rate": rate / workers,
            "offset": index / rate,
            "grace": 20.0,
        }
        for index, part in enumerate(split(conns, workers))
    ]


@contextmanager
def bridge(folder: Path, redis_url: str | None = None, **kwargs: Any) -> Iterator[Server]:
    server = bridge_server(folder, redis_url, **kwargs).start()
    try:
        yield server
    finally:
        server.stop()


def open_store(folder: Path, redis_url: str | None) -> Store:
    return RedisStore(redis_url) if redis_url else SQLiteStore(folder / DB_NAME)


async def seed(
    folder: Path,
    redis_url: str | None,
    worlds: list[str],
    resolved: int = 0,
    owners: list[str] | None = None,
) -> dict[str, str]:
    store = open_store(folder, redis_url)
    await store.open()
    try:
        return await seed_worlds(store, worlds, resolved, owners)
    finally:
        await store.close()


def fresh_folder(root: Path, name: str) -> Path:
    folder = root / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder


def action_rung(
    root: Path, name: str, profile: Profile, redis_url: str | None, room_size: int
) -> dict[str, Any]:
    """Passive overcomes at a fixed rate, 5 per second per sending connection (the rate
    limit is 20 messages per second), one world per sender."""
    folder = fresh_folder(root, name)
    if redis_url:
        flush_redis(redis_url)
    worlds = [f"w{i}" for i in range(senders(profile))]
    keys = asyncio.run(seed(folder, redis_url, worlds))
    conns = [
        {"auth": gm_auth(w, keys[w], f"gm{j}"), "sender": j == 0}
        for w in worlds
        for j in range(room_size)
    ]
    with bridge(folder, redis_url) as server:
        # redis-server's own CPU is not the bridge's: shown beside it, not in the ratio.
        store_pid = redis_pid(redis_url) if redis_url else None
        store_before = cpu_seconds(store_pid) if store_pid else 0.0
        result = run_load(
            [server],
            open_plans(server.url, conns, "action", profile.action_rate),
            profile.rung_seconds,
            profile_as=name,
        )
        if store_pid and result["done"]:
            used = cpu_seconds(store_pid) - store_before
            result["redis_cpu_per_request_us"] = used / result["done"] * 1e6
    result["per_message_us"] = result["cpu_per_request_us"] / 2
    return result


def message_rate(profile: Profile) -> float:
    """The messages per second of the action rungs (two intents per action), at which the
    baselines run too: per-message CPU falls as the rate rises (each wake of the event
    loop serves more messages), so only costs measured at one rate compare."""
    return 2 * profile.action_rate


def senders(profile: Profile) -> int:
    """Sending connections, as in the action rungs: 5 actions per second each (the rate
    limit is 20 messages per second)."""
    return int(profile.action_rate // 5)


def echo_rung(kind: str, profile: Profile, rate: float) -> dict[str, Any]:
    server = Server(["-m", "bench.echo", kind, "{port}"], "/healthz").start()
    try:
        conns = [{"auth": {}, "sender": True} for _ in range(senders(profile))]
        mode = "ws_echo" if kind == "ws" else "sio_echo"
        result = run_load([server], open_plans(server.url, conns, mode, rate), profile.rung_seconds)
    finally:
        server.stop()
    result["per_message_us"] = result["cpu_per_request_us"]
    return result


def room_echo_rung(profile: Profile, room_size: int) -> dict[str, Any]:
    """Rung 2's or 4's shape with no bridge: python-socketio acks each message and, by
    its own room emit, sends the payload to the sender's room of ``room_size``. As many
    rooms and messages per second as those rungs have worlds and intents, each intent
    being one ack and one frame to the room there too."""
    server = Server(["-m", "bench.echo", "sio-room", "{port}"], "/healthz").start()
    try:
        conns = [
            {"auth": {"room": f"w{i}"}, "sender": j == 0}
            for i in range(senders(profile))
            for j in range(room_size)
        ]
        result = run_load(
            [server],
            open_plans(server.url, conns, "sio_echo", message_rate(profile)),
            profile.rung_seconds,
        )
    finally:
        server.stop()
    result["per_message_us"] = result["cpu_per_request_us"]
    return result


def wire_rung(root: Path, profile: Profile) -> dict[str, Any]:
    """The bridge's own server (hardened packet decoder, sessions, rate limiter, acks)
    answering a frame that names no intent: what the bridge adds per message before any
    service work. One connection per world, as in rung 2."""
    folder = fresh_folder(root, "r1b")
    worlds = [f"w{i}" for i in range(senders(profile))]
    keys = asyncio.run(seed(folder, None, worlds))
    conns = [{"auth": gm_auth(w, keys[w], "gm0"), "sender": True} for w in worlds]
    with bridge(folder) as server:
        result = run_load(
            [server],
            open_plans(server.url, conns, "wire_echo", message_rate(profile)),
            profile.rung_seconds,
            profile_as="r1b",
        )
    result["per_message_us"] = result["cpu_per_request_us"]
    return result


RUNGS = (
    "0 aiohttp websocket echo",
    "1 python-socketio ack echo",
    "1h the same at 10x the message rate",
    "1b the bridge's wire, no intent",
    "1c ack echo + a frame to the room (1)",
    "1d ack echo + a frame to a room of 10",
    "2 passive overcome, SQLite",
    "3 passive overcome, Redis",
    "4 SQLite, 10 clients in the room",
)
(
    WS_ECHO,
    SIO_ECHO,
    SIO_ECHO_FAST,
    WIRE,
    ROOM_ECHO,
    ROOM_ECHO_OF_TEN,
    SQLITE,
    REDIS,
    ROOM_OF_TEN,
) = RUNGS


def ladder(root: Path, profile: Profile, redis_url: str | None) -> dict[str, list[dict[str, Any]]]:
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in RUNGS}
    for rep in range(profile.reps):
        print(f"  ladder, repetition {rep + 1}/{profile.reps}", flush=True)
        runs[WS_ECHO].append(echo_rung("ws", profile, message_rate(profile)))
        runs[SIO_ECHO].append(echo_rung("sio", profile, message_rate(profile)))
        runs[SIO_ECHO_FAST].append(echo_rung("sio", profile, profile.echo_rate))
        runs[WIRE].append(wire_rung(root, profile))
        runs[ROOM_ECHO].append(room_echo_rung(profile, 1))
        runs[ROOM_ECHO_OF_TEN].append(room_echo_rung(profile, 10))
        runs[SQLITE].append(action_rung(root, "r2", profile, None, 1))
        if redis_url:
            runs[REDIS].append(action_rung(root, "r3", profile, redis_url, 1))
        runs[ROOM_OF_TEN].append(action_rung(root, "r4", profile, None, 10))
    return runs


def growth(root: Path, profile: Profile) -> list[dict[str, Any]]:
    """CPU per action in one world that already holds n resolved actions in its scene.

    Closed loop (3 connections, each action after the last is answered, at most 8 per
    second each): a slow world is measured as slow, not as a growing queue."""
    out = []
    for resolved in profile.growth:
        folder = fresh_folder(root, f"g{resolved}")
        keys = asyncio.run(seed(folder, None, ["w"], resolved))
        conns = [{"auth": gm_auth("w", keys["w"], f"gm{j}"), "sender": True} for j in range(3)]
        with bridge(folder) as server:
            plans = [
                {"url": server.url, "mode": "closed_action", "connections": conns, "pace": 0.125}
            ]
            result = run_load([server], plans, profile.rung_seconds)
        size = (folder / DB_NAME).stat().st_size
        result.update(resolved=resolved, db_bytes=size)
        print(f"  growth {resolved:>5}: {result['cpu_per_request_us']:9.0f} us/action", flush=True)
        out.append(result)
    return out


def scale(root: Path, profile: Profile) -> dict[str, Any]:
    """1,000 clients in 100 worlds (10 each), 200 actions/s open-loop on one process.

    Run afresh, up to ``profile.scale_attempts`` times, while the host steals more than
    ``STEAL_TOLERATED`` of the server's core; the attempt with the least steal is the
    result, and every attempt's figures are kept beside it (``attempts``)."""
    attempts: list[dict[str, Any]] = []
    for _ in range(profile.scale_attempts):
        attempts.append(scale_once(root, profile))
        if attempts[-1]["steal_server_cores"] <= STEAL_TOLERATED:
            break
    best = min(attempts, key=lambda run: float(run["steal_server_cores"]))
    return {
        **best,
        "attempts": [
            {
                "steal_server_cores": run["steal_server_cores"],
                "steal_load_cores": run["steal_load_cores"],
                "latency": run["latency"],
                "cpu_per_request_us": run["cpu_per_request_us"],
                "errors": run["errors"],
            }
            for run in attempts
        ],
    }


def scale_once(root: Path, profile: Profile) -> dict[str, Any]:
    """One 100-world run on a fresh store and a fresh bridge."""
    folder = fresh_folder(root, "scale")
    worlds = [f"w{i}" for i in range(100)]
    keys = asyncio.run(seed(folder, None, worlds))
    conns = [
        {"auth": gm_auth(w, keys[w], f"gm{j}"), "sender": j == 0} for w in worlds for j in range(10)
    ]
    with bridge(folder) as server:
        result = run_load(
            [server],
            open_plans(server.url, conns, "action", 200.0),
            profile.scale_seconds,
            profile_as="scale",
        )
    return result


# Resolved actions the disk part measures the store's bytes per action at.
DISK_ACTIONS = 2000
# The 100-world ladder's rates (actions/s), each run on the same bridge in turn: up to and
# past where one process saturates on this 2-core machine (about 240/s in round 15).
SCALE_RATES = (100.0, 200.0, 250.0, 300.0)


def scale_rates(root: Path, profile: Profile) -> dict[str, Any]:
    """The 100-world run at each of SCALE_RATES on one bridge, a fresh set of 1,000 clients
    each time (they disconnect between rates, as players come and go): every GC pause per
    rate (count, max, p99), and every pause over the bridge's whole life, set-up and the
    gaps between rates included (``lifetime``), so no collection escapes the count."""
    folder = fresh_folder(root, "scale-rates")
    worlds = [f"w{i}" for i in range(100)]
    keys = asyncio.run(seed(folder, None, worlds))
    conns = [
        {"auth": gm_auth(w, keys[w], f"gm{j}"), "sender": j == 0} for w in worlds for j in range(10)
    ]
    rows = []
    with bridge(folder) as server:
        began = time.time()
        for rate in SCALE_RATES:
            result = run_load(
                [server], open_plans(server.url, conns, "action", rate), profile.scale_seconds
            )
            result["rate"] = rate
            print(f"  {rate:.0f}/s: {scale_pauses(result)}", flush=True)
            rows.append(result)
        pauses = server.gc_pauses(began, time.time() + 1.0)
    walls = [d for _t, _g, d, _c in pauses]
    lifetime = {
        "gc_pauses": len(walls),
        "gc_max_pause_ms": max(walls, default=0.0) * 1000,
        "gc_p99_pause_ms": percentile(walls, 0.99) * 1000,
        "gc_gen2_collections": sum(1 for _t, g, _d, _c in pauses if g == 2),
        "over_50_ms": sum(1 for d in walls if d > 0.05),
    }
    return {"rates": rows, "lifetime": lifetime}


def scale_pauses(run: dict[str, Any]) -> str:
    """A run's GC pauses in one line: count, max and p99 (wall), and its latency."""
    return (
        f"{run['done']} actions, p99 {run['latency']['p99_ms']:.1f} ms, "
        f"{run['gc_pauses']} GC pauses, max {run['gc_max_pause_ms']:.1f} ms "
        f"({run['gc_max_pause_cpu_ms']:.1f} ms CPU), p99 {run['gc_p99_pause_ms']:.1f} ms, "
        f"{run['gc_gen2_collections']} gen-2; busy {run['server_busy'] * 100:.0f}%, {stolen(run)}"
    )


def print_scale_rates(ladder_run: dict[str, Any]) -> None:
    print("100 worlds, 1,000 clients, one bridge, rate by rate:")
    for run in ladder_run["rates"]:
        print(f"  {run['rate']:>4.0f}/s: {scale_pauses(run)}")
    life = ladder_run["lifetime"]
    print(
        f"  the bridge's whole life: {life['gc_pauses']} GC pauses, max "
        f"{life['gc_max_pause_ms']:.1f} ms, p99 {life['gc_p99_pause_ms']:.1f} ms, "
        f"{life['gc_gen2_collections']} gen-2, {life['over_50_ms']} over 50 ms"
    )


def idle_memory(root: Path, profile: Profile) -> dict[str, Any]:
    folder = fresh_folder(root, "idle")
    worlds = [f"w{i}" for i in range(10)]
    keys = asyncio.run(seed(folder, None, worlds))
    with bridge(folder) as server:
        time.sleep(1.0)
        before = rss_bytes(server.pid)
        conns = [
            {"auth": gm_auth(worlds[i % 10], keys[worlds[i % 10]], f"gm{i}")}
            for i in range(profile.idle_clients)
        ]
        plans = [
            {"url": server.url, "mode": "idle", "connections": part} for part in split(conns, 2)
        ]
        # Sample while the clients are connected and idle.
        import threading

        sample: list[int] = []

        def measure() -> None:
            time.sleep(2.0)
            sample.append(rss_bytes(server.pid))

        thread = threading.Thread(target=measure)
        holder: dict[str, Any] = {}

        def go() -> None:
            holder.update(run_load([server], plans, 3.0))

        loader = threading.Thread(target=go)
        loader.start()
        # Wait until the generators are connected and idle (run_load starts them at once).
        time.sleep(0.5)
        thread.start()
        loader.join()
        thread.join()
        after = sample[0] if sample else rss_bytes(server.pid)
    return {
        "clients": profile.idle_clients,
        "rss_before_bytes": before,
        "rss_after_bytes": after,
        "bytes_per_client": (after - before) / profile.idle_clients,
    }


def aggregate(root: Path, profile: Profile, redis_url: str) -> list[dict[str, Any]]:
    """Saturation throughput of 1 and 2 bridge processes sharing one Redis (closed loop:
    each of 100 connections in 100 worlds runs actions back to back, 8 per second at most)."""
    out = []
    for nodes in (1, 2):
        flush_redis(redis_url)
        folder = fresh_folder(root, f"agg{nodes}")
        worlds = [f"w{i}" for i in range(100)]
        keys = asyncio.run(seed(folder, redis_url, worlds))
        servers = [
            bridge_server(fresh_folder(folder, f"n{n}"), redis_url, cores={CORES[n % len(CORES)]})
            for n in range(nodes)
        ]
        for server in servers:
            server.start()
        try:
            conns = [{"auth": gm_auth(w, keys[w], "gm"), "sender": True} for w in worlds]
            plans = [
                {
                    "url": servers[i % nodes].url,
                    "mode": "closed_action",
                    "connections": part,
                    "pace": 0.125,
                }
                for i, part in enumerate(split(conns, 2))
            ]
            result = run_load(servers, plans, profile.aggregate_seconds)
        finally:
            for server in servers:
                server.stop()
        result.update(nodes=nodes, actions_per_second=result["done"] / profile.aggregate_seconds)
        print(
            f"  {nodes} process(es) on Redis: {result['actions_per_second']:.0f} actions/s "
            f"({result['errors']} errors)",
            flush=True,
        )
        out.append(result)
    return out


RESULT_KEYS = {"idle": "idle_memory"}


def paired(root: Path, profile: Profile) -> dict[str, Any]:
    """Rung 2's ratio to rung 1, measured in turns: one echo server and one bridge
    (SQLite, one client per world, as in rungs 1 and 2), both started and warmed once,
    then echo, action, echo, ... for ``pairs`` actions, each turn ``pair_seconds`` long.
    The host's speed drifts over minutes (rung 1 alone moved 25% between repetitions
    of one ladder), so each action turn is compared with the echo turns just before and
    after it; the figure is the median of those ratios, per intent message."""
    echo_server = Server(["-m", "bench.echo", "sio", "{port}"], "/healthz").start()
    folder = fresh_folder(root, "paired")
    worlds = [f"w{i}" for i in range(senders(profile))]
    keys = asyncio.run(seed(folder, None, worlds))
    conns = [{"auth": gm_auth(w, keys[w], "gm0"), "sender": True} for w in worlds]
    echo_conns = [{"auth": {}, "sender": True} for _ in worlds]
    try:
        with bridge(folder) as action_server:
            echo_plans = open_plans(echo_server.url, echo_conns, "sio_echo", message_rate(profile))
            action_plans = open_plans(action_server.url, conns, "action", profile.action_rate)
            run_load([echo_server], echo_plans, 1.0)
            run_load([action_server], action_plans, 1.0)
            echoes: list[float] = []
            actions: list[float] = []
            for _turn in range(profile.pairs):
                echo = run_load([echo_server], echo_plans, profile.pair_seconds)
                echoes.append(echo["cpu_per_request_us"])
                action = run_load([action_server], action_plans, profile.pair_seconds)
                actions.append(action["cpu_per_request_us"] / 2)
            echoes.append(
                run_load([echo_server], echo_plans, profile.pair_seconds)["cpu_per_request_us"]
            )
    finally:
        echo_server.stop()
    ratios = [
        action / ((before + after) / 2)
        for action, before, after in zip(actions, echoes, echoes[1:], strict=False)
    ]
    median, (low, high) = statistics.median(ratios), _quartiles(ratios)
    print(
        f"  rung 2 / rung 1 in turns: {median:.2f} per intent message "
        f"(quartiles {low:.2f}-{high:.2f}, {len(ratios)} turns)",
        flush=True,
    )
    return {
        "echo_per_message_us": echoes,
        "action_per_message_us": actions,
        "ratios": ratios,
        "median_ratio": median,
        "ratio_quartiles": [low, high],
    }


# The relay part: each path's actions per second (issue 24's target: the relayed action's
# p50 within 2x the direct one's at this rate), the Foundry users of its world (the GM whose
# client relays, and the players who own the hero and send), and its warm-up.
RELAY_RATE = 10.0
RELAY_GM = "gm"
RELAY_PLAYERS = ("player1", "player2")
RELAY_WARMUP_SECONDS = 2.0


def relay(root: Path, profile: Profile) -> dict[str, Any]:
    """The relay hop beside the direct path, both at ``RELAY_RATE`` actions/s at once on one
    bridge (so the host's noise falls on both alike), open loop.

    Direct: rung 2's passive overcomes over bench/load.py's connections straight to the
    bridge (one world per sending connection, 5 actions/s each, as in the ladder). Relayed:
    the players of one more world, on the fake Foundry server (bench/foundry.py), each
    intent carried by the GM's client (bench/relay_host.py) on its own bridge connection,
    the players' generator being bench/relay_load.py; the players own the hero, and their
    world trusts its players' ratings, so their overcome is the same two intents (bench/
    seed.py). The fake Foundry server and the relay
    host run on the load generators' cores (in a real table they are other machines); their
    CPU per relayed action is read from /proc over the run, as the bridge's is."""
    folder = fresh_folder(root, "relay")
    direct_worlds = [f"d{i}" for i in range(max(1, round(RELAY_RATE / 5)))]
    keys = asyncio.run(seed(folder, None, direct_worlds))
    relay_key = asyncio.run(seed(folder, None, ["relay"], owners=list(RELAY_PLAYERS)))["relay"]
    conns = [{"auth": gm_auth(w, keys[w], "gm0"), "sender": True} for w in direct_worlds]
    foundry = Server(["-m", "bench.foundry", "{port}"], "/healthz", cores=set(LOAD_CORES))
    with bridge(folder) as server, running(foundry):
        host = start_relay_host(foundry.url, server.url, gm_auth("relay", relay_key, RELAY_GM))
        try:
            plans = [
                *(
                    {**p, "group": "direct"}
                    for p in open_plans(server.url, conns, "action", RELAY_RATE)
                ),
                {
                    "generator": "bench.relay_load",
                    "group": "relayed",
                    "url": foundry.url,
                    "host": RELAY_GM,
                    "players": list(RELAY_PLAYERS),
                    "rate": RELAY_RATE,
                    # Between the direct path's sends, so neither waits on the other's.
                    "offset": 0.5 / RELAY_RATE,
                    "grace": 20.0,
                },
            ]
            run_load([server], plans, RELAY_WARMUP_SECONDS)
            marks: list[tuple[float, float, dict[str, int]]] = []
            timed: list[dict[str, list[float]]] = []

            def mark() -> None:
                stats = httpx.get(foundry.url + "/stats", timeout=5).json()
                marks.append((cpu_seconds(foundry.pid), cpu_seconds(host.pid), stats))
                timed.append(relay_host_stats(host))

            result = run_load([server], plans, profile.relay_seconds, on_ready=mark, on_done=mark)
        finally:
            stop_relay_host(host)
    groups = result.pop("groups")
    direct, relayed = groups["direct"], groups["relayed"]
    (foundry_before, host_before, stats_before), (foundry_after, host_after, stats_after) = marks
    actions = relayed["done"]

    def per_action(value: float) -> float:
        return value / actions if actions else float("nan")

    def ratio(key: str, of: str = "latency") -> float:
        return float(relayed[of][key] / direct[of][key])

    out = {
        "rate_actions_per_second": RELAY_RATE,
        "seconds": profile.relay_seconds,
        "players": len(RELAY_PLAYERS),
        "direct_connections": len(conns),
        "direct": direct,
        "relayed": relayed,
        "ratio_p50": ratio("p50_ms"),
        "ratio_p90": ratio("p90_ms"),
        "ratio_p99": ratio("p99_ms"),
        "intent_ratio_p50": ratio("p50_ms", "intent_latency"),
        # The bridge's CPU is both paths' (one process serves them): per action of either.
        "bridge_cpu_per_action_us": result["cpu_per_request_us"],
        "foundry_cpu_per_action_us": per_action(foundry_after - foundry_before) * 1e6,
        "relay_host_cpu_per_action_us": per_action(host_after - host_before) * 1e6,
        "foundry_forwarded_per_action": per_action(
            stats_after["forwarded"] - stats_before["forwarded"]
        ),
        "foundry_delivered_per_action": per_action(
            stats_after["delivered"] - stats_before["delivered"]
        ),
        # The relay host's own timings of the relayed intents: its call to the bridge, and
        # the request's arrival to its answer's emit; the rest of a relayed intent's latency
        # is the Foundry hops (the player to the host, the host to the player).
        "host_bridge_call": latency_summary(timed[-1]["bridge_calls"]),
        "host_handled": latency_summary(timed[-1]["handled"]),
        "steal_server_cores": result["steal_server_cores"],
        "steal_load_cores": result["steal_load_cores"],
        "run": result,
    }
    print(
        f"  direct p50 {direct['latency']['p50_ms']:.1f} ms, relayed p50 "
        f"{relayed['latency']['p50_ms']:.1f} ms: {out['ratio_p50']:.2f}x",
        flush=True,
    )
    return out


def history_flood(root: Path, profile: Profile) -> dict[str, Any]:
    """Another world's GM while one world's players flood history reads (bench/
    history_flood.py): the GM's latency quiet and flooded, and what the flood got."""
    raw = flooding.run(fresh_folder(root, "history_flood"), profile.flood_seconds)
    out = {key: value for key, value in raw.items() if key not in ("quiet", "flooded")}
    for phase in ("quiet", "flooded"):
        out[phase] = {
            "latency": latency_summary(raw[phase]["latencies"]),
            "intents": len(raw[phase]["latencies"]),
            "failed": raw[phase]["failed"],
        }
    out["ratio_p99"] = out["flooded"]["latency"]["p99_ms"] / out["quiet"]["latency"]["p99_ms"]
    out["ratio_p50"] = out["flooded"]["latency"]["p50_ms"] / out["quiet"]["latency"]["p50_ms"]
    print_history_flood(out)
    return out


def wire_floods(root: Path, profile: Profile) -> dict[str, Any]:
    """The wire floods (bench/wire_flood.py), and each flood's p99 against idle's."""
    out = wire_flood.run(fresh_folder(root, "wire_flood"), profile.flood_seconds)
    idle = out["floods"]["idle"]["p99_ms"] or 0.0
    for kind in wire_flood.KINDS:
        row = out["floods"][kind]
        row["ratio_p99"] = row["p99_ms"] / idle if idle and row["p99_ms"] is not None else None
    print_wire_floods(out)
    return out


def print_wire_floods(out: dict[str, Any]) -> None:
    floods = out["floods"]
    idle = floods["idle"]
    cores = floods.get("cores", {})
    print(
        f"wire floods: another world's GM idle p50 {idle['p50_ms']} ms, p99 {idle['p99_ms']} ms"
        f" (bridge on cores {cores.get('bridge')}, probe {cores.get('probe')}, flooder "
        f"{cores.get('flood')}; loop lag {idle.get('loop_lag')}, gc {idle.get('gc')}, cores busy "
        f"{idle.get('core_busy')}; probe {idle.get('probe')})"
    )
    for kind in wire_flood.KINDS:
        row = floods[kind]
        ratio = row.get("ratio_p99")
        shown = f"x{ratio:.2f}" if ratio is not None else "-"
        print(
            f"  {kind:>10}: p50 {row['p50_ms']} ms, p99 {row['p99_ms']} ms ({shown}; target 2)"
            f", server busy {row['server_busy']:.0%}, flooder {row.get('flood_busy', 0):.0%}"
            f", loop lag {row.get('loop_lag')}, gc {row.get('gc')}"
            f", cores busy {row.get('core_busy')}"
            f"; refused {row.get('refused')}"
            f"; flood {row['flood']} {row['probe'] or ''}"
        )
    never = out["never_reading"]
    print(
        f"  {never['sockets']} sockets that never read: RSS {never['rss_before_mb']} -> peak "
        f"{never['rss_peak_mb']} MB, {never['still_open']} still open after "
        f"{never['still_open_after_s']:.0f} s"
    )
    relay = out["relay"]
    print(f"  relay: paul at {relay['paul_per_second']}/s {relay['paul']}, anna {relay['anna']}")
    for name, stop in out["stop"].items():
        print(
            f"  {name}: ended in {stop['seconds']} s (exit {stop['exit_code']}), the client's "
            f"websocket closed with {stop['websocket_close_code']}"
        )


def print_history_flood(out: dict[str, Any]) -> None:
    quiet, flooded = out["quiet"]["latency"], out["flooded"]["latency"]
    answers: dict[str, int] = {}
    for per in out["flood"]["by_read"].values():
        for got, n in per.items():
            answers[got] = answers.get(got, 0) + n
    print(
        f"history flood ({out['flooders']} players of one world at "
        f"{out['flood_rate_per_connection']:.0f} reads/s each, {out['flooded_log_events']:,} "
        f"events in its log): another world's GM p50 {quiet['p50_ms']:.1f} -> "
        f"{flooded['p50_ms']:.1f} ms, p99 {quiet['p99_ms']:.1f} -> {flooded['p99_ms']:.1f} ms "
        f"(x{out['ratio_p99']:.2f}; target 2), max {flooded['max_ms']:.0f} ms, failed "
        f"{sum(out['flooded']['failed'].values())}; server busy "
        f"{out['quiet_server_busy']:.0%} -> {out['flooded_server_busy']:.0%}; the flood's "
        f"answers {answers}, drained {out['flood']['drained_seconds_after']:.1f} s after"
    )


@contextmanager
def running(server: Server) -> Iterator[Server]:
    server.start()
    try:
        yield server
    finally:
        server.stop()


def start_relay_host(
    foundry_url: str, bridge_url: str, auth: dict[str, Any]
) -> subprocess.Popen[str]:
    """The GM's client (bench/relay_host.py), on the load generators' cores; returns once
    it is connected to both servers."""
    host = subprocess.Popen(
        [sys.executable, "-m", "bench.relay_host"],
        cwd=PROJECT_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    pin(host.pid, LOAD_CORES)
    assert host.stdin is not None and host.stdout is not None
    config = {"foundry": foundry_url, "bridge": bridge_url, "auth": auth, "user": RELAY_GM}
    host.stdin.write(json.dumps(config) + "\n")
    host.stdin.flush()
    line = host.stdout.readline()
    if line.strip() != "ready":
        stop_relay_host(host)
        raise RuntimeError(f"relay host failed to connect: {line!r}")
    return host


def relay_host_stats(host: subprocess.Popen[str]) -> dict[str, list[float]]:
    """What the relay host timed since it was last asked (bench/relay_host.py)."""
    assert host.stdin is not None and host.stdout is not None
    host.stdin.write("stats\n")
    host.stdin.flush()
    stats: dict[str, list[float]] = json.loads(host.stdout.readline())
    return stats


def stop_relay_host(host: subprocess.Popen[str]) -> None:
    try:
        if host.stdin is not None:
            host.stdin.write("close\n")
            host.stdin.flush()
        host.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        host.kill()
        host.wait()


def print_relay(r: dict[str, Any]) -> None:
    print(
        f"relay hop: {r['rate_actions_per_second']:.0f} actions/s on each path at once, one "
        f"bridge ({r['direct_connections']} direct connections; {r['players']} players through "
        f"the fake Foundry server and the GM's client)"
    )
    print(
        f"  {'path':<10}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}{'max ms':>9}"
        f"{'intent p50':>12}{'intent p99':>12}{'actions':>9}{'errors':>8}"
    )
    for name in ("direct", "relayed"):
        path = r[name]
        lat, intent = path["latency"], path["intent_latency"]
        print(
            f"  {name:<10}{lat['p50_ms']:>9.1f}{lat['p90_ms']:>9.1f}{lat['p99_ms']:>9.1f}"
            f"{lat['max_ms']:>9.1f}{intent['p50_ms']:>12.1f}{intent['p99_ms']:>12.1f}"
            f"{path['done']:>9}{path['errors']:>8}"
        )
    print(
        f"  relayed / direct: p50 {r['ratio_p50']:.2f}x (target: within 2x), p90 "
        f"{r['ratio_p90']:.2f}x, p99 {r['ratio_p99']:.2f}x; per intent p50 "
        f"{r['intent_ratio_p50']:.2f}x"
    )
    call, handled = r["host_bridge_call"], r["host_handled"]
    print(
        f"  a relayed intent at the relay host: its call to the bridge p50 {call['p50_ms']:.1f} "
        f"ms (p99 {call['p99_ms']:.1f}), arrival to answer p50 {handled['p50_ms']:.1f} ms (p99 "
        f"{handled['p99_ms']:.1f}); the player's p50 {r['relayed']['intent_latency']['p50_ms']:.1f}"
        f" ms (the rest is the Foundry hops)"
    )
    print(
        f"  CPU per relayed action: fake Foundry server {r['foundry_cpu_per_action_us']:.0f} us "
        f"({r['foundry_forwarded_per_action']:.1f} messages forwarded, "
        f"{r['foundry_delivered_per_action']:.1f} delivered), relay host "
        f"{r['relay_host_cpu_per_action_us']:.0f} us; the bridge "
        f"{r['bridge_cpu_per_action_us']:.0f} us per action of either path; {stolen(r)}"
    )
    for sample in (r["direct"]["error_samples"] + r["relayed"]["error_samples"])[:3]:
        print(f"  error: {sample}")


def _quartiles(values: list[float]) -> tuple[float, float]:
    """The first and third quartiles (the values themselves when fewer than four)."""
    if len(values) < 4:
        return min(values), max(values)
    cuts = statistics.quantiles(values, n=4)
    return cuts[0], cuts[2]


def instructions(root: Path, profile: Profile, redis_url: str | None) -> dict[str, Any]:
    """Instructions per action (bench/instructions.py): the live bridge under callgrind,
    all its threads, counted over a closed-loop run after a warm-up, in rung 2's shape
    (one client), rung 4's (one sender and nine listeners in one world) and, when
    ``redis_url`` is given, rung 3's (rung 2 on Redis; redis-server's own work is not
    the bridge's and is not counted, as in the ladder); rung 1's python-socketio ack
    echo per message, counted the same way, for rung 2's ratio in instructions (which
    this machine's noise does not move); then the rules alone per resolution."""
    if not counting.available():
        print("  valgrind is not installed (apt-get install valgrind): skipped", flush=True)
        return {"skipped": "valgrind is not installed"}
    shapes: dict[str, dict[str, Any]] = {}
    # (shape's key, clients in the world, store): SQLite unless a Redis URL is given.
    runs: list[tuple[str, int, str | None]] = [("1", 1, None), ("10", 10, None)]
    if redis_url is not None:
        runs.append((REDIS_SHAPE, 1, redis_url))
    for shape, room, store_url in runs:
        folder = fresh_folder(root, f"instructions-{shape}")
        if store_url:
            flush_redis(store_url)
        keys = asyncio.run(seed(folder, store_url, ["w"]))
        conns = [{"auth": gm_auth("w", keys["w"], f"gm{j}"), "sender": j == 0} for j in range(room)]
        out = folder / "bridge.callgrind"
        with bridge(
            folder, store_url, wrapper=counting.callgrind(out), start_timeout=600.0
        ) as server:
            plans = [{"url": server.url, "mode": "closed_action", "connections": conns}]
            counted = _counted(server, plans, out, profile)
        shapes[shape] = {
            "clients": room,
            "store": "redis" if store_url else "sqlite",
            "actions": counted["done"],
            "errors": counted["errors"],
            "instructions_per_action": counted["per_request"],
            "raw_instructions_per_action": counted["raw"],
            "idle_instructions_per_second": counted["idle_instructions_per_second"],
        }
        print(
            f"  {room:>2} client(s), {shapes[shape]['store']}: "
            f"{shapes[shape]['instructions_per_action']:,.0f}",
            flush=True,
        )
    folder = fresh_folder(root, "instructions-echo")
    out = folder / "echo.callgrind"
    echo_server = Server(
        ["-m", "bench.echo", "sio", "{port}"],
        "/healthz",
        wrapper=counting.callgrind(out),
        start_timeout=600.0,
    ).start()
    try:
        conns = [{"auth": {}, "sender": True} for _ in range(senders(profile))]
        # Open loop at a rate the echo keeps up with under valgrind (it has no closed mode).
        plans = open_plans(echo_server.url, conns, "sio_echo", ECHO_COUNTED_RATE)
        echo = _counted(echo_server, plans, out, profile)
    finally:
        echo_server.stop()
    print(f"  rung 1 echo: {echo['per_request']:,.0f} per message", flush=True)
    return {"bridge": shapes, "echo": echo, "engine": engine_instructions(root, profile)}


def engine_instructions(root: Path, profile: Profile) -> dict[str, Any]:
    """Instructions per resolution of the rules alone (bench/instructions.py) on each of
    ``ENGINE_HISTORY``'s worlds; the top level is the fresh world's."""
    by_history = {
        str(resolved): counting.engine_instructions(
            profile.instruction_resolutions, root, resolved=resolved
        )
        for resolved in ENGINE_HISTORY
    }
    return {**by_history[str(ENGINE_HISTORY[0])], "by_history": by_history}


# The key of rung 3's shape (rung 2 on Redis) among the counted shapes.
REDIS_SHAPE = "1-redis"
# Messages per second for the echo counted under callgrind (which runs it ~50x slower).
ECHO_COUNTED_RATE = 20.0


def _counted(
    server: Server, plans: list[dict[str, Any]], out: Path, profile: Profile
) -> dict[str, Any]:
    """A server under callgrind, run with ``plans`` after a warm-up: requests done and
    errors, and instructions per request (``per_request``), less what it runs by the
    clock, not per request (the bridge's checkpointer passes, timers), counted while it
    is idle after the run: under valgrind a request takes a machine-dependent time, and
    that work grows with it (``raw``: before it is taken out)."""
    run_load([server], plans, profile.instruction_seconds / 3)  # warm-up
    window = counting.Window(server.pid, out)
    counted = run_load(
        [server], plans, profile.instruction_seconds, on_ready=window.open, on_done=window.close
    )
    quiet = counting.Window(server.pid, out, first_dump=2)
    quiet.open()
    time.sleep(profile.instruction_seconds / 3)
    quiet.close()
    done = int(counted["done"])
    idle_per_second = quiet.instructions / quiet.seconds
    net = window.instructions - idle_per_second * window.seconds
    return {
        "done": done,
        "errors": counted["errors"],
        "per_request": net / done if done else float("nan"),
        "raw": window.instructions / done if done else float("nan"),
        "idle_instructions_per_second": idle_per_second,
    }


def print_instructions(counts: dict[str, Any]) -> None:
    if "skipped" in counts:
        print(f"instructions: skipped ({counts['skipped']})")
        return
    for shape in counts["bridge"].values():
        print(
            f"instructions per action, the live bridge, {shape['clients']} client(s) in the "
            f"world, {shape['store']}: "
            f"{shape['instructions_per_action'] / 1e6:.2f} M "
            f"({shape['actions']} actions, {shape['errors']} errors; "
            f"{shape['raw_instructions_per_action'] / 1e6:.2f} M before the clock's own work, "
            f"{shape['idle_instructions_per_second'] / 1e6:.1f} M/s, is taken out)"
        )
    echo = counts.get("echo")
    if echo is not None:
        single = counts["bridge"]["1"]["instructions_per_action"]
        # Rung 2's ratio is per intent message: an action is two.
        print(
            f"instructions per message, rung 1's python-socketio ack echo: "
            f"{echo['per_request'] / 1e3:,.0f} k ({echo['done']} messages, {echo['errors']} "
            f"errors); rung 2's per intent message {single / 2 / 1e3:,.0f} k = "
            f"{single / 2 / echo['per_request']:.2f}x rung 1"
        )
    on_redis = counts["bridge"].get(REDIS_SHAPE)
    if on_redis is not None:
        sqlite = counts["bridge"]["1"]["instructions_per_action"]
        print(
            f"instructions per action, Redis / SQLite: "
            f"{on_redis['instructions_per_action'] / sqlite:.2f} (redis-server's own not counted)"
        )
    print_engine_instructions(counts["engine"])


def print_engine_instructions(engine_count: dict[str, Any]) -> None:
    counted = engine_count.get("by_history") or {"0": engine_count}
    shown = ", ".join(
        f"{row['instructions_per_resolution'] / 1e3:.1f} k at {int(resolved):,} resolved"
        for resolved, row in counted.items()
    )
    print(f"instructions per resolution, the rules alone: {shown}")


ENGINE_REPEATS = 7
# The rules alone are timed and counted on a fresh world and on one with this much history
# (passive overcomes already resolved in its scene): the cost per resolution should not
# depend on it.
ENGINE_HISTORY = (0, 2000)


def engine(profile: Profile) -> dict[str, Any]:
    """The rules alone, in-process, timed ``ENGINE_REPEATS`` times back to back on each
    of ``ENGINE_HISTORY``'s worlds: one timing is a fraction of a second, and this
    machine's speed moves by a third between seconds with no steal reported, so the
    median is the figure and every run is kept. The top-level rate is the fresh world's;
    ``by_history`` gives µs per resolution on each world."""
    by_history: dict[str, dict[str, Any]] = {}
    for resolved in ENGINE_HISTORY:
        timings = [
            time_engine(profile.engine_resolutions, resolved=resolved)
            for _ in range(ENGINE_REPEATS)
        ]
        per_resolution = [t.seconds / t.resolutions * 1e6 for t in timings]
        by_history[str(resolved)] = {
            "resolved": resolved,
            "us_per_resolution": statistics.median(per_resolution),
            "us_per_resolution_runs": per_resolution,
            "per_second_runs": [t.per_second for t in timings],
        }
    fresh = by_history[str(ENGINE_HISTORY[0])]
    rates = fresh["per_second_runs"]
    return {
        "resolutions": profile.engine_resolutions,
        "seconds": statistics.median(1 / rate * profile.engine_resolutions for rate in rates),
        "per_second": statistics.median(rates),
        "per_second_runs": rates,
        "by_history": by_history,
    }


def median_of(runs: list[dict[str, Any]], key: str) -> float:
    values = [r[key] for r in runs]
    return statistics.median(values) if values else float("nan")


def spread(runs: list[dict[str, Any]], key: str) -> str:
    values = [r[key] for r in runs]
    return f"[{min(values):.0f}-{max(values):.0f}]" if len(values) > 1 else ""


def print_table(results: dict[str, Any]) -> None:
    """The ladder as ratios to rung 1, then the other parts; parts not run are skipped."""
    if "ladder" in results:
        print_ladder(results["ladder"])
    if "paired" in results:
        pair = results["paired"]
        low, high = pair["ratio_quartiles"]
        print(
            f"rung 2 / rung 1 measured in turns: {pair['median_ratio']:.2f} per intent message "
            f"(median of {len(pair['ratios'])} turns, quartiles {low:.2f}-{high:.2f}; "
            f"rung 1 {statistics.median(pair['echo_per_message_us']):.0f} us, rung 2 "
            f"{statistics.median(pair['action_per_message_us']):.0f} us per message)"
        )
    if "relay" in results:
        print_relay(results["relay"])
    if "history_flood" in results:
        print_history_flood(results["history_flood"])
    if "wire_flood" in results:
        print_wire_floods(results["wire_flood"])
    if "growth" in results:
        print_growth(results["growth"])
    if "scale" in results:
        print_scale(results["scale"])
        print_scale_attempts(results["scale"])
        print_profile("100-world run", results["scale"])
    if "scale_rates" in results:
        print_scale_rates(results["scale_rates"])
    if "disk" in results:
        disk_use.print_disk(results["disk"])
    for name in (SQLITE, REDIS, ROOM_OF_TEN):
        for run in results.get("ladder", {}).get(name, [])[:1]:
            print_profile(name, run)
    if "idle_memory" in results:
        m = results["idle_memory"]
        print(
            f"memory per idle client: {m['bytes_per_client'] / 1024:.1f} KiB "
            f"({m['clients']} clients)"
        )
    if "engine" in results:
        runs = results["engine"]["per_second_runs"]
        print(
            f"rules engine alone: {results['engine']['per_second']:,.0f} passive overcomes/s "
            f"(median of {len(runs)}, {min(runs):,.0f}-{max(runs):,.0f})"
        )
        for row in results["engine"].get("by_history", {}).values():
            low, high = min(row["us_per_resolution_runs"]), max(row["us_per_resolution_runs"])
            print(
                f"rules engine alone, {row['resolved']:,} resolved before: "
                f"{row['us_per_resolution']:.1f} us per resolution ({low:.1f}-{high:.1f})"
            )
    if "instructions" in results:
        print_instructions(results["instructions"])
    if "engine_instructions" in results:
        print_engine_instructions(results["engine_instructions"])
    for row in results.get("aggregate", []):
        print(
            f"{row['nodes']} bridge process(es) on one Redis: {row['actions_per_second']:.0f} "
            f"actions/s saturated, p99 {row['latency']['p99_ms']:.1f} ms, {row['errors']} errors"
        )


def print_profile(title: str, run: dict[str, Any], entries: int = 8) -> None:
    """The top entries of a run's profile (with --profile), own time first."""
    top = run.get("profile")
    if not top:
        return
    print(f"profile of {title} (share of busy samples; own, then the bridge's inclusive):")
    for (own, own_pct), (incl, incl_pct) in zip(
        top["own_pct"][:entries], top["bridge_inclusive_pct"][:entries], strict=False
    ):
        print(f"  {own_pct:5.1f}% {own[:58]:<58} {incl_pct:5.1f}% {incl[:58]}")


def print_ladder(runs: dict[str, list[dict[str, Any]]]) -> None:
    base = median_of(runs[SIO_ECHO], "per_message_us")
    print()
    print(
        f"{'rung':<36}{'server CPU/request':>24}{'saturation':>12}{'ratio/msg':>10}"
        f"{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'errors':>7}{'loop':>7}{'steal':>7}"
    )
    for name in RUNGS:
        if not runs[name]:
            continue
        cpu = median_of(runs[name], "cpu_per_request_us")
        unit = "/msg" if name[0] in "01" else "/action"
        p50 = statistics.median(r["latency"]["p50_ms"] for r in runs[name])
        p99 = statistics.median(r["latency"]["p99_ms"] for r in runs[name])
        mx = max(r["latency"]["max_ms"] for r in runs[name])
        errors = sum(r["errors"] for r in runs[name])
        cell = f"{cpu:.0f} us{unit} {spread(runs[name], 'cpu_per_request_us')}"
        print(
            f"{name:<36}{cell:>24}{1e6 / cpu:>10.0f}/s"
            f"{median_of(runs[name], 'per_message_us') / base:>10.2f}"
            f"{p50:>9.1f}{p99:>9.1f}{mx:>9.1f}{errors:>7}"
            f"{median_of(runs[name], 'loop_cpu_per_request_us') / cpu:>7.0%}"
            f"{max(r['steal_server_cores'] for r in runs[name]):>7.1%}"
        )
    print(
        "steal: the most the host took of the server's core in one repetition; CPU per "
        f"request is inflated in runs over {STEAL_TOLERATED:.0%}"
    )
    sqlite = median_of(runs[SQLITE], "cpu_per_request_us")
    if runs[REDIS]:
        redis_ratio = median_of(runs[REDIS], "cpu_per_request_us") / sqlite
        store_cpu = [
            r["redis_cpu_per_request_us"] for r in runs[REDIS] if "redis_cpu_per_request_us" in r
        ]
        beside = (
            f" (redis-server itself: {statistics.median(store_cpu):.0f} us/action, not counted)"
            if store_cpu
            else ""
        )
        print(f"Redis / SQLite per action: {redis_ratio:.2f}{beside}")
    if runs[ROOM_ECHO] and runs[ROOM_ECHO_OF_TEN]:
        print(frames_matched_line(runs))


def frames_matched_line(runs: dict[str, list[dict[str, Any]]]) -> str:
    """Rungs 2 and 4 per message against python-socketio sending the same frames with
    nothing behind them (rungs 1c and 1d), and what nine more clients in the room add
    per message in each (rung 4 over 2, rung 1d over 1c)."""

    def per_message(name: str) -> float:
        return median_of(runs[name], "per_message_us")

    bridge_adds = per_message(ROOM_OF_TEN) - per_message(SQLITE)
    framework_adds = per_message(ROOM_ECHO_OF_TEN) - per_message(ROOM_ECHO)
    return (
        f"the same frames with nothing behind them, per message: rung 2 / 1c "
        f"{per_message(SQLITE) / per_message(ROOM_ECHO):.2f}, rung 4 / 1d "
        f"{per_message(ROOM_OF_TEN) / per_message(ROOM_ECHO_OF_TEN):.2f}; 9 more clients "
        f"in the room add {bridge_adds:.0f} us to the bridge, {framework_adds:.0f} us to "
        f"python-socketio's own room emit"
    )


def print_growth(rows: list[dict[str, Any]]) -> None:
    print("growth (one world, one scene):")
    first = rows[0]["cpu_per_request_us"]
    for row in rows:
        print(
            f"  {row['resolved']:>5} resolved: {row['cpu_per_request_us']:9.0f} us/action "
            f"(x{row['cpu_per_request_us'] / first:.2f} of empty), "
            f"p99 {row['latency']['p99_ms']:.1f} ms, db {row['db_bytes'] / 1e6:.1f} MB; "
            f"first load (the first hello) {row['hello_latency']['max_ms']:.0f} ms, "
            f"{row['setup_server_cpu_ms']:.0f} ms server CPU; {stolen(row)}"
        )


def print_scale(s: dict[str, Any]) -> None:
    print(
        f"100 worlds, 1,000 clients, 200 actions/s: p50 {s['latency']['p50_ms']:.1f} ms, "
        f"p99 {s['latency']['p99_ms']:.1f} ms, max {s['latency']['max_ms']:.1f} ms, "
        f"{s['errors']} errors of {s['sent']}, server busy {s['server_busy'] * 100:.0f}%, "
        f"{s['cpu_per_request_us']:.0f} us/action, max GC pause {s['gc_max_pause_ms']:.1f} ms "
        f"wall / {s['gc_max_pause_cpu_ms']:.1f} ms CPU, p99 {s['gc_p99_pause_ms']:.1f} ms "
        f"({s['gc_pauses']} pauses, {s['gc_gen2_collections']} gen-2, "
        f"{s['gc_total_pause_ms']:.0f} ms wall / {s['gc_total_pause_cpu_ms']:.0f} ms CPU in all); "
        f"{stolen(s)}"
    )


def print_scale_attempts(s: dict[str, Any]) -> None:
    attempts = s.get("attempts", [])
    if len(attempts) > 1:
        shown = ", ".join(
            f"steal {a['steal_server_cores'] * 100:.1f}%: p99 {a['latency']['p99_ms']:.0f} ms"
            for a in attempts
        )
        print(f"  attempts while the host stole over {STEAL_TOLERATED:.0%}: {shown}")


def stolen(run: dict[str, Any]) -> str:
    """The run's host steal, server's core / load generators' cores."""
    return (
        f"host steal {run['steal_server_cores'] * 100:.1f}% / "
        f"{run['steal_load_cores'] * 100:.1f}% (server / load cores)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--quick", action="store_true", help="about a minute: one repetition")
    parser.add_argument(
        "--out",
        help="where the JSON goes (default: a file per run in bench/results/, git-ignored, "
        "named by the run's start)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="record the bridge with py-spy during rungs 1b-4 and the 100-world run "
        "(pip install py-spy) and print the top entries",
    )
    parser.add_argument(
        "--only",
        nargs="*",
        help="parts to run (ladder paired relay history_flood wire_flood growth disk scale "
        "scale_rates idle "
        "engine "
        "aggregate; and "
        "instructions, engine_instructions (the rules alone, within instructions), "
        "not run unless named: callgrind's counts, a few minutes, needs valgrind)",
    )
    args = parser.parse_args()
    profile = QUICK if args.quick else FULL
    parts = set(
        args.only
        or [
            "ladder",
            "paired",
            "relay",
            "history_flood",
            "wire_flood",
            "growth",
            "disk",
            "scale",
            "scale_rates",
            "idle",
            "engine",
            "aggregate",
        ]
    )
    results: dict[str, Any] = {
        "profile": profile.__dict__,
        "cores": CORES,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    has_redis = shutil.which("redis-server") is not None
    with (
        tempfile.TemporaryDirectory() as tmp,
        redis_server(Path(tmp), LOAD_CORES) if has_redis else _none() as redis_url,
    ):
        root = Path(tmp)
        if args.profile:
            if py_spy() is None:
                print("--profile: py-spy is not installed (pip install py-spy); no profiles")
            else:
                PROFILE_DIR.append(fresh_folder(root, "profiles"))
        steps: list[tuple[str, str, Callable[[], Any]]] = [
            ("engine", "rules engine alone", lambda: engine(profile)),
            ("ladder", "ladder", lambda: ladder(root, profile, redis_url)),
            ("paired", "rung 2 against rung 1, in turns", lambda: paired(root, profile)),
            ("relay", "the relay hop beside the direct path", lambda: relay(root, profile)),
            (
                "history_flood",
                "another world's GM during a history flood",
                lambda: history_flood(root, profile),
            ),
            (
                "wire_flood",
                "another world's GM during the wire floods; stop times",
                lambda: wire_floods(root, profile),
            ),
            ("growth", "growth curve", lambda: growth(root, profile)),
            (
                "disk",
                "bytes on disk per resolved action",
                lambda: disk_use.disk(DISK_ACTIONS, redis_url),
            ),
            ("scale", "100-world run", lambda: scale(root, profile)),
            ("scale_rates", "100-world run, rate by rate", lambda: scale_rates(root, profile)),
            ("idle", "memory per idle client", lambda: idle_memory(root, profile)),
            (
                "instructions",
                "instructions (callgrind)",
                lambda: instructions(root, profile, redis_url),
            ),
            (
                "engine_instructions",
                "instructions of the rules alone (callgrind)",
                lambda: engine_instructions(root, profile),
            ),
        ]
        if redis_url is not None:
            shared: str = redis_url
            steps.append(
                (
                    "aggregate",
                    "1 and 2 processes on one Redis",
                    lambda: aggregate(root, profile, shared),
                )
            )
        timings: dict[str, float] = results.setdefault("part_seconds", {})
        for part, title, run in steps:
            if part not in parts:
                continue
            print(title, flush=True)
            began = time.monotonic()
            results[RESULT_KEYS.get(part, part)] = run()
            timings[part] = round(time.monotonic() - began, 1)
    out = Path(args.out) if args.out else results_file(results["started"])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    print_table(results)
    shown = ", ".join(f"{part} {seconds:.0f}s" for part, seconds in timings.items())
    print(f"\nwrote {out} ({shown})")


def results_file(started: str) -> Path:
    """A run's own file in the git-ignored results folder, named by its start (UTC)."""
    return RESULTS_DIR / f"{started.replace(':', '').replace('-', '')}.json"


@contextmanager
def _none() -> Iterator[None]:
    yield None


if __name__ == "__main__":
    main()
