"""The wire floods (issue 35; part ``wire_flood``): another world's GM while strangers and
a keyed GM flood the bridge, one address's lockout, a relayed player's flood, a socket
that never reads, and how long a stop takes.

Two worlds on one bridge (SQLite, the default per-address cap: the floods come from
loopback, as the probe does): ``quiet``, whose GM plays passive overcomes at
``PROBE_RATE`` actions a second (the history flood's probe, :func:`bench.history_flood.
probe`), and ``flooded``. The probe runs alone (idle), then during each flood, run by a
child process on the load cores (``python -m bench.wire_flood KIND URL KEY SECONDS``,
printing one JSON line of what it did), the probe on the bridge's core (see
:func:`floods`: each row also has the bridge's own view, its CPU and event-loop lag):

- ``connect``: ``FLOODERS`` websockets that never join send CONNECTs to another
  namespace (a 1 KiB name) as fast as they can, each reopened when cut;
- ``prejoin``: the same sending events before joining (each cut at its first: a
  connection that joined nothing may send CONNECTs only), each reopened when cut;
- ``gm_events``: ``flooded``'s GM sends ``hello`` as fast as the socket takes it, far past
  its rate limit, reading the refusals;
- ``churn``: ``CHURNERS`` idle TCP connections from one address, each reopened as soon as
  it is closed; the probe's GM connects anyway, and the run counts how many of its
  joins and ``/healthz`` requests got through (the lockout).

Then, each on a fresh bridge: the never-reading socket (the bridge's memory while
``NEVER_READERS`` sockets with a 4 KiB receive window send CONNECTs to a 256 KiB
namespace, and whether they were still open ``HELD_SECONDS`` later); the relay starvation
(a GM's connection relays ``paul`` at ~1,000/s and ``anna`` at 10/s: anna's refusals);
and the stop (SIGTERM and SIGINT with a client joined: seconds until the process ended).

``BENCH_BRIDGE_ROOT`` runs the bridge from another checkout (for a before/after table).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from bench.history_flood import auth, outcome, probe
from bench.load import Conn
from bench.proc import (
    CORES,
    LOAD_CORES,
    SERVER_CORE,
    Server,
    busy_share,
    core_busy_ticks,
    cpu_seconds,
    pin,
    pinned_here,
    rss_bytes,
)
from bench.seed import seed_worlds
from bridge.service.protocol import NAMESPACE
from bridge.store.sqlite import SQLiteStore
from tests.bridge_process import PROJECT_ROOT, free_port

FLOODERS = 4
CHURNERS = 40
NEVER_READERS = 4
HELD_SECONDS = 10.0
TCP_ESTABLISHED = 1  # tcpi_state in Linux's struct tcp_info
# An answer the probe's GM waited this long for counts as this long (and as failed).
PROBE_TIMEOUT = 10.0
KINDS = ("connect", "prejoin", "gm_events", "churn")
WS_PATH = "/socket.io/?EIO=4&transport=websocket"


def bridge_root() -> Path:
    return Path(os.environ.get("BENCH_BRIDGE_ROOT") or PROJECT_ROOT)


def server(folder: Path, *, metrics: bool = False) -> Server:
    """The bridge with the default per-address cap (the bench's other parts lift it), and
    ``/metrics`` when asked (the floods read the bridge's own counts there)."""
    args = ["-m", "bench.serve", "--data-dir", str(folder), "serve", "--host", "127.0.0.1"]
    args += ["--port", "{port}", "--no-default-world"] + (["--metrics"] if metrics else [])
    tag = free_port()
    return Server(
        args,
        "/healthz",
        cwd=bridge_root(),
        lag_file=folder / f"lag-{tag}.json",
        stats_file=folder / f"gc-{tag}.json",
    )


async def seed(folder: Path) -> dict[str, str]:
    store = SQLiteStore(folder / "bridge.sqlite3")
    await store.open()
    try:
        keys = await seed_worlds(store, ["quiet"])
        keys.update(await seed_worlds(store, ["flooded"], owners=["paul", "anna"]))
        return keys
    finally:
        await store.close()


def summary(latencies: list[float]) -> dict[str, float | None]:
    ordered = sorted(latencies)
    if not ordered:
        return {"p50_ms": None, "p99_ms": None}

    def at(share: float) -> float:
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000

    return {"p50_ms": round(at(0.5), 1), "p99_ms": round(at(0.99), 1), "n": len(ordered)}


def floods(folder: Path, seconds: float) -> dict[str, Any]:
    """The GM probe idle and during each flood, on one bridge.

    With two cores or more, the flooding child runs on the load cores and the probe (this
    process) on the bridge's core, which the bridge leaves mostly idle: a flooder that
    saturates the core the probe runs on measures the machine, not the bridge (a probe
    sharing the flooder's cores saw p99 4.9x idle while the bridge was 4% busy). Each row
    also has the bridge's own view: its CPU, the flooder's, each core's busy share (other
    tenants of the machine show there), and what the wire refused by reason (/metrics)."""
    keys = asyncio.run(seed(folder))
    bridge = server(folder, metrics=True).start()
    separate = len(CORES) > 1
    probe_cores = set(SERVER_CORE) if separate else set(CORES)
    rows: dict[str, Any] = {
        "cores": {
            "bridge": sorted(SERVER_CORE),
            "probe": sorted(probe_cores),
            "flood": sorted(LOAD_CORES),
            "separate": separate,
        }
    }
    try:
        with pinned_here(probe_cores):
            _probe_floods(bridge, keys, seconds, rows)
    finally:
        bridge.stop()
    return rows


def _probe_floods(
    bridge: Server, keys: dict[str, str], seconds: float, rows: dict[str, Any]
) -> None:
    window = Window(bridge)
    idle = asyncio.run(guarded_probe(bridge.url, keys["quiet"], seconds, "idle"))
    rows["idle"] = {**summary(idle["latencies"]), **window.end(), "probe": idle["other"]}
    for kind in KINDS:
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.wire_flood",
                kind,
                bridge.url,
                keys["flooded"],
                str(seconds + 2),
            ],
            cwd=PROJECT_ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        pin(child.pid, LOAD_CORES)
        time.sleep(1.0)
        window = Window(bridge, child.pid)
        probed = asyncio.run(guarded_probe(bridge.url, keys["quiet"], seconds, kind))
        seen = window.end()
        assert child.stdout is not None
        flood = json.loads(child.stdout.readline() or "{}")
        child.wait(timeout=60)
        rows[kind] = {
            **summary(probed["latencies"]),
            **seen,
            "probe": probed["other"],
            "flood": flood,
        }
        time.sleep(2.0)  # the bridge cuts what is left of the flood


class Window:
    """What the bridge and the machine did while a probe ran: :meth:`end` gives the
    bridge's CPU share of one core (``server_busy``), the flooder's (``flood_busy``), each
    core's busy share whoever used it (``core_busy``), how late the bridge's event loop ran
    its timers (``loop_lag``: the bridge's own view of its latency), the wire's refusals and the
    service's handshake refusals by reason counted by the bridge in the window."""

    def __init__(self, bridge: Server, flooder: int | None = None) -> None:
        self.bridge = bridge
        self.flooder = flooder
        self.began = time.monotonic()
        self.began_wall = time.time()
        self.server_cpu = cpu_seconds(bridge.pid)
        self.flood_cpu = cpu_seconds(flooder) if flooder is not None else 0.0
        self.cores = {core: core_busy_ticks({core}) for core in CORES}
        self.refusals = refusal_counts(bridge.url)

    def end(self) -> dict[str, Any]:
        took = time.monotonic() - self.began
        ended_wall = time.time()
        seen: dict[str, Any] = {
            "server_busy": round((cpu_seconds(self.bridge.pid) - self.server_cpu) / took, 3)
        }
        if self.flooder is not None:
            with contextlib.suppress(OSError):  # the flooder ended with the window
                flood_cpu = cpu_seconds(self.flooder) - self.flood_cpu
                seen["flood_busy"] = round(flood_cpu / took, 3)
        seen["core_busy"] = {
            core: busy_share(before, core_busy_ticks({core})) for core, before in self.cores.items()
        }
        time.sleep(0.6)  # the lag samples are written twice a second
        samples = self.bridge.loop_lags(self.began_wall, ended_wall)
        lags = summary(samples)
        # The probe's p99 is about its worst answer or two: beside it, the loop's worst.
        seen["loop_lag"] = {
            "p50_ms": lags["p50_ms"],
            "p99_ms": lags["p99_ms"],
            "max_ms": round(max(samples) * 1000, 1) if samples else None,
        }
        # The bridge's collections in the window: a long one shows in the loop's lag.
        pauses = self.bridge.gc_pauses(self.began_wall, ended_wall)
        seen["gc"] = {
            "count": len(pauses),
            "max_ms": round(max(p[2] for p in pauses) * 1000, 1) if pauses else None,
            "full": sum(1 for p in pauses if p[1] == 2),
        }
        before, after = self.refusals, refusal_counts(self.bridge.url)
        # None: a scrape did not get through (the churn holds the address's strangers).
        seen["refused"] = (
            {
                reason: int(count - before.get(reason, 0))
                for reason, count in sorted(after.items())
                if count > before.get(reason, 0)
            }
            if after is not None and before is not None
            else None
        )
        return seen


def refusal_counts(url: str) -> dict[str, float] | None:
    """The bridge's refusals so far by reason, from its /metrics: ``wire:REASON`` (the
    transport's) and ``handshake:REASON`` (the service's); None when the scrape failed."""
    try:
        with urllib.request.urlopen(url + "/metrics", timeout=5) as answer:
            text = answer.read().decode()
    except OSError:
        return None
    counts: dict[str, float] = {}
    families = {
        "fate_bridge_wire_refusals": "wire",
        "fate_bridge_handshake_refusals": "handshake",
    }
    for family in text_string_to_metric_families(text):
        prefix = families.get(family.name)
        if prefix is None:
            continue
        for sample in family.samples:
            if sample.name.endswith("_total"):
                counts[f"{prefix}:{sample.labels['reason']}"] = sample.value
    return counts


async def guarded_probe(url: str, key: str, seconds: float, kind: str) -> dict[str, Any]:
    """The probe; during the churn also the lockout: fresh GM joins and ``/healthz``.
    ``other`` has the probe's own event loop's lag (``loop_lag``, as the bridge's): a late
    answer the probe's loop was late for is the probe's, not the bridge's."""
    other: dict[str, Any] = {}
    results: list[Any] = []
    lags: list[float] = []
    loop = asyncio.get_running_loop()

    async def sample_lag() -> None:
        while True:
            due = loop.time() + 0.01
            await asyncio.sleep(0.01)
            lags.append(loop.time() - due)

    async def lockout() -> None:
        tries = joined = healthy = 0
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=3)) as session:
            for _ in range(20):
                tries += 1
                gm = Conn(echo=False)
                try:
                    await gm.open(session, url, auth("quiet", "gm2", key))
                    joined += 1
                    await gm.close()
                except Exception:
                    pass
                try:
                    async with session.get(url + "/healthz") as got:
                        healthy += got.status == 200
                except Exception:
                    pass
                await asyncio.sleep(seconds / 20)
        other.update(tries=tries, joined=joined, healthz_ok=healthy)

    tasks = [probe_catching(url, key, seconds, results)]
    if kind == "churn":
        tasks.append(lockout())
    sampling = asyncio.create_task(sample_lag())
    await asyncio.gather(*tasks)
    sampling.cancel()
    lag = summary(lags)
    other["loop_lag"] = {
        "p99_ms": lag["p99_ms"],
        "max_ms": round(max(lags) * 1000, 1) if lags else None,
    }
    latencies: list[float] = results[0] if results else []
    if not latencies:
        other["probe_failed"] = True
    if len(results) > 1 and results[1]:
        other["failed"] = results[1]
    return {"latencies": latencies, "other": other}


async def probe_catching(url: str, key: str, seconds: float, into: list[Any]) -> None:
    try:
        probed = await probe(url, key, seconds, PROBE_TIMEOUT)
        into.append(probed["latencies"])
        into.append(probed["failed"])
    except Exception as exc:  # the GM could not even connect: the lockout
        into.append([])
        print(f"probe failed: {exc!r}", file=sys.stderr)


# --- the floods (the child process) ------------------------------------------------------


async def flood(kind: str, url: str, key: str, seconds: float) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    counts = {"sent": 0, "answers": 0, "opened": 0, "cut": 0}
    if kind == "churn":
        await asyncio.gather(*(churn(url, end, counts) for _ in range(CHURNERS)))
    elif kind == "gm_events":
        await gm_events(url, key, end, counts)
    else:
        frame = "40/" + "n" * 1024 + "," if kind == "connect" else f'42{NAMESPACE},["hello",{{}}]'
        await asyncio.gather(*(stranger(url, frame, end, counts) for _ in range(FLOODERS)))
    return counts


async def stranger(url: str, frame: str, end: float, counts: dict[str, int]) -> None:
    """A websocket that never joins, sending ``frame`` as fast as it is taken; reopened
    when cut, until ``end``."""
    loop = asyncio.get_running_loop()
    async with aiohttp.ClientSession() as session:
        while loop.time() < end:
            try:
                ws = await session.ws_connect(url.replace("http", "ws") + WS_PATH)
            except Exception:
                await asyncio.sleep(0.05)
                continue
            counts["opened"] += 1

            async def read(ws: aiohttp.ClientWebSocketResponse = ws) -> None:
                async for message in ws:
                    if message.type is aiohttp.WSMsgType.TEXT:
                        counts["answers"] += 1

            reader = asyncio.create_task(read())
            try:
                while loop.time() < end and not ws.closed:
                    await ws.send_str(frame)
                    counts["sent"] += 1
                    if counts["sent"] % 50 == 0:
                        await asyncio.sleep(0)
            except Exception:
                pass
            counts["cut"] += 1
            reader.cancel()
            await ws.close()


async def gm_events(url: str, key: str, end: float, counts: dict[str, int]) -> None:
    loop = asyncio.get_running_loop()
    async with aiohttp.ClientSession() as session:
        while loop.time() < end:
            gm = Conn(echo=False)
            try:
                await gm.open(session, url, auth("flooded", "gm", key))
            except Exception:
                await asyncio.sleep(0.2)
                continue
            counts["opened"] += 1
            assert gm.ws is not None
            try:
                n = 0
                while loop.time() < end and not gm.ws.closed:
                    n += 1
                    body = json.dumps(["hello", {"request_id": f"f{n}"}])
                    await gm.ws.send_str(f"42{NAMESPACE},{n + 1000}{body}")
                    counts["sent"] += 1
                    if n % 50 == 0:
                        await asyncio.sleep(0)
            except Exception:
                pass
            counts["cut"] += 1
            await gm.close()


async def churn(url: str, end: float, counts: dict[str, int]) -> None:
    loop = asyncio.get_running_loop()
    host, port = url.removeprefix("http://").split(":")
    while loop.time() < end:
        try:
            reader, writer = await asyncio.open_connection(host, int(port))
        except OSError:
            await asyncio.sleep(0.01)
            continue
        counts["opened"] += 1
        with contextlib.suppress(TimeoutError, ConnectionError):
            await asyncio.wait_for(reader.read(1), max(0.01, end - loop.time()))
        writer.close()


# --- the socket that never reads, relay starvation, stopping ----------------------------


def never_reading(folder: Path) -> dict[str, Any]:
    """The bridge's memory while never-reading sockets send CONNECTs to a 256 KiB namespace,
    and whether they were still open ``HELD_SECONDS`` later."""
    asyncio.run(seed(folder))
    bridge = server(folder).start()
    try:
        return asyncio.run(_never_reading(bridge))
    finally:
        bridge.stop()


async def _never_reading(bridge: Server) -> dict[str, Any]:
    before = rss_bytes(bridge.pid)
    frame = masked_text(("40/" + "n" * (256 * 1024) + ",").encode())
    socks = []
    loop = asyncio.get_running_loop()
    for _ in range(NEVER_READERS):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        await loop.sock_connect(sock, ("127.0.0.1", bridge.port))
        await loop.sock_sendall(
            sock,
            (
                f"GET {WS_PATH} HTTP/1.1\r\nHost: b\r\nUpgrade: websocket\r\n"
                "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode(),
        )
        socks.append(sock)
    peak = before

    async def send_all(sock: socket.socket) -> None:
        for _ in range(40):
            try:
                await asyncio.wait_for(loop.sock_sendall(sock, frame), 1.0)
            except (TimeoutError, OSError):
                return

    sending = asyncio.gather(*(send_all(s) for s in socks))
    began = loop.time()
    while loop.time() - began < 3.0:
        await asyncio.sleep(0.1)
        peak = max(peak, rss_bytes(bridge.pid))
    sending.cancel()
    await asyncio.sleep(HELD_SECONDS)
    still_open = sum(is_open(sock) for sock in socks)
    for sock in socks:
        sock.close()
    return {
        "sockets": NEVER_READERS,
        "rss_before_mb": round(before / 2**20, 1),
        "rss_peak_mb": round(peak / 2**20, 1),
        "still_open_after_s": HELD_SECONDS,
        "still_open": still_open,
        "rss_after_mb": round(rss_bytes(bridge.pid) / 2**20, 1),
    }


def is_open(sock: socket.socket) -> bool:
    """Whether the bridge still holds the connection, read without reading what it sent
    (which would let a close waiting for the client to read complete): the socket's TCP
    state is still ESTABLISHED (no FIN, no reset from the bridge)."""
    if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
        return False
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] == TCP_ESTABLISHED


def masked_text(payload: bytes) -> bytes:
    """A client's text frame with an all-zero mask (valid, and no masking cost)."""
    size = len(payload)
    head = b"\x81" + bytes([0x80 | 127]) + size.to_bytes(8, "big")
    return head + b"\0\0\0\0" + payload


def relay_starvation(folder: Path, seconds: float) -> dict[str, Any]:
    keys = asyncio.run(seed(folder))
    bridge = server(folder).start()
    try:
        return asyncio.run(_relay_starvation(bridge.url, keys["flooded"], seconds))
    finally:
        bridge.stop()


async def _relay_starvation(url: str, key: str, seconds: float) -> dict[str, Any]:
    async with aiohttp.ClientSession() as session:
        gm = Conn(echo=False)
        await gm.open(session, url, auth("flooded", "gm", key))
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        paul: dict[str, int] = {}

        async def relayed(user: str, n: int) -> str:
            envelope = {"user": user, "event": "hello", "payload": {"request_id": f"{user}{n}"}}
            return outcome(await gm.call("relay", envelope))

        async def flood(lane: int) -> None:
            n = 0
            while loop.time() < end:
                n += 1
                got = await relayed("paul", lane * 1_000_000 + n)
                paul[got] = paul.get(got, 0) + 1

        flooding = [asyncio.create_task(flood(lane)) for lane in range(100)]
        anna: dict[str, int] = {}
        await asyncio.sleep(0.5)
        for n in range(int((seconds - 1) * 10)):
            got = await relayed("anna", n)
            anna[got] = anna.get(got, 0) + 1
            await asyncio.sleep(0.1)
        await asyncio.gather(*flooding)
        await gm.close()
    sent = sum(paul.values())
    return {"paul_per_second": round(sent / seconds), "paul": paul, "anna": anna}


def stop_times(folder: Path) -> dict[str, Any]:
    """Seconds from the signal to the process's end, with one client joined."""
    keys = asyncio.run(seed(folder))
    times: dict[str, Any] = {}
    for name, signum in (("SIGTERM", signal.SIGTERM), ("SIGINT", signal.SIGINT)):
        bridge = server(folder)
        bridge.port = free_port()
        bridge.start()
        process = bridge.process
        assert process is not None
        times[name] = asyncio.run(_stop_time(bridge.url, keys["quiet"], process, signum))
        bridge.stop()
    return times


async def _stop_time(
    url: str, key: str, process: subprocess.Popen[bytes], signum: signal.Signals
) -> dict[str, Any]:
    async with aiohttp.ClientSession() as session:
        gm = Conn(echo=False)
        await gm.open(session, url, auth("quiet", "gm", key))
        assert gm.ws is not None
        began = time.monotonic()
        process.send_signal(signum)
        loop = asyncio.get_running_loop()
        try:
            code = await loop.run_in_executor(None, lambda: process.wait(timeout=60))
        except subprocess.TimeoutExpired:
            code = None
            process.kill()
        took = time.monotonic() - began
        if gm.reader is not None:
            await asyncio.wait({gm.reader}, timeout=5)
        # The websocket close code the client got (None: the connection just dropped).
        close_code = gm.ws.close_code
    return {"seconds": round(took, 2), "exit_code": code, "websocket_close_code": close_code}


def run(root: Path, seconds: float) -> dict[str, Any]:
    def fresh(name: str) -> Path:
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    return {
        "bridge_root": str(bridge_root()),
        "floods": floods(fresh("floods"), seconds),
        "never_reading": never_reading(fresh("never_reading")),
        "relay": relay_starvation(fresh("relay"), seconds),
        "stop": stop_times(fresh("stop")),
    }


if __name__ == "__main__":
    kind, target, gm_key, how_long = sys.argv[1:5]
    result = asyncio.run(flood(kind, target, gm_key, float(how_long)))
    print(json.dumps(result), flush=True)
