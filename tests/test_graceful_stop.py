"""A bridge stopped by SIGTERM or SIGINT (issue 35): it stops accepting, finishes the
intents in flight, closes every websocket as a restarting server does (clients reconnect
by themselves: python-socketio's and socket.io-client's), and exits within 10 s; a bridge
stopped mid-load and started again has stored every intent it acked, and every client is
back."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
import socketio

from bridge.service.protocol import NAMESPACE
from tests.bridge_process import PROJECT_ROOT, BridgeProcess
from tests.seats import gm_auth

pytestmark = pytest.mark.process

# The process's own bound (issue 35: SIGINT with a client connected took 44 s).
EXIT_SECONDS = 10


class Client:
    """A python-socketio client that reconnects by itself, as an ordinary one does, and
    keeps what happened to it: why it was disconnected, how often it connected."""

    def __init__(self, world: tuple[str, str], user: str) -> None:
        self.client = socketio.AsyncClient(reconnection=True, reconnection_delay=0.2)
        self.reasons: list[str] = []
        self.connects = 0
        self.auth = gm_auth(world, user)

        async def connected() -> None:
            self.connects += 1

        async def disconnected(reason: Any = None) -> None:
            self.reasons.append(str(reason))

        self.client.on("connect", connected, namespace=NAMESPACE)
        self.client.on("disconnect", disconnected, namespace=NAMESPACE)

    async def open(self, url: str) -> Client:
        await self.client.connect(
            url, namespaces=[NAMESPACE], transports=["websocket"], auth=self.auth
        )
        return self

    async def call(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        ack: dict[str, Any] = await self.client.call(event, payload, namespace=NAMESPACE, timeout=5)
        return ack


async def exited(process: subprocess.Popen[str]) -> int:
    """The process's exit code, once it has ended (bounded wait: EXIT_SECONDS)."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, lambda: process.wait(timeout=EXIT_SECONDS))


async def until(condition: Any, seconds: float = 20.0) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition() and loop.time() < deadline:
        await asyncio.sleep(0.05)
    return bool(condition())


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_a_bridge_stopped_mid_load_keeps_every_acked_intent_and_its_clients_come_back(
    bridge: BridgeProcess, world: tuple[str, str], signum: signal.Signals
) -> None:
    clients = [await Client(world, f"gm{n}").open(bridge.url) for n in range(3)]
    acked: list[str] = []
    stop = asyncio.Event()

    async def load(client: Client, lane: int) -> None:
        n = 0
        while not stop.is_set():
            name = f"Aspect {lane}-{n}"
            n += 1
            try:
                ack = await client.call(
                    "scene.aspect", {"request_id": f"a{lane}-{n}", "op": "add", "name": name}
                )
            except Exception:  # the connection went mid-call: not acked
                await asyncio.sleep(0.05)
                continue
            if ack.get("ok"):
                acked.append(name)

    loads = [asyncio.create_task(load(c, lane)) for lane, c in enumerate(clients)]
    try:
        assert await until(lambda: len(acked) >= 20), "the load never got going"
        assert bridge.process is not None
        bridge.process.send_signal(signum)
        assert await exited(bridge.process) == 0
        # Every client saw the server go, as a transport closing (so it reconnects).
        assert await until(lambda: all(c.reasons for c in clients), 5)
        assert await until(lambda: all(c.client.connected is False for c in clients), 5)
        stop.set()
        await asyncio.gather(*loads)
        bridge.start()
        assert await until(lambda: all(c.connects >= 2 for c in clients)), [
            (c.connects, c.reasons) for c in clients
        ]
        state = await clients[0].call("scene.read", {"request_id": "read"})
        reasons = [list(c.reasons) for c in clients]
    finally:
        stop.set()
        await asyncio.gather(*loads, return_exceptions=True)
        for c in clients:
            await c.client.disconnect()
    assert state["ok"], state
    stored = {aspect["name"] for aspect in state["data"]["aspects"]}
    assert set(acked) <= stored, sorted(set(acked) - stored)[:5]
    log = bridge.log_text()
    assert "Traceback" not in log, log[-2000:]
    # python-engineio's name for a websocket the server closed without a close packet:
    # the one reason after which python-socketio's client reconnects by itself.
    assert reasons == [["transport error"]] * len(clients), reasons


NODE_CLIENT = """
import { io } from "socket.io-client";
const [url, auth] = [process.argv[2], JSON.parse(process.argv[3])];
const socket = io(url + "/fate", { transports: ["websocket"], auth, reconnectionDelay: 200,
  reconnectionDelayMax: 500 });
let connects = 0;
socket.on("connect", () => { connects += 1; console.log(JSON.stringify({ connects }));
  if (connects === 2) { socket.close(); } });
socket.on("disconnect", (reason) => console.log(JSON.stringify({ disconnect: reason })));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
async def test_a_socketio_client_for_node_reconnects_by_itself_after_sigterm(
    bridge: BridgeProcess, world: tuple[str, str], tmp_path: Path
) -> None:
    script = PROJECT_ROOT / "node_modules" / f".reconnect-{tmp_path.name}.mjs"
    script.write_text(NODE_CLIENT)
    auth = gm_auth(world)
    node = await asyncio.create_subprocess_exec(
        "node",
        str(script),
        bridge.url,
        json.dumps(auth),
        stdout=asyncio.subprocess.PIPE,
        cwd=PROJECT_ROOT,
    )
    assert node.stdout is not None
    lines: list[dict[str, Any]] = []

    async def line() -> dict[str, Any]:
        assert node.stdout is not None
        raw = await asyncio.wait_for(node.stdout.readline(), 20)
        assert raw, f"node ended; it said {lines}"
        lines.append(json.loads(raw))
        return lines[-1]

    try:
        assert await line() == {"connects": 1}
        assert bridge.process is not None
        bridge.process.send_signal(signal.SIGTERM)
        assert await exited(bridge.process) == 0
        said = await line()
        bridge.start()
        assert await line() == {"connects": 2}
        await asyncio.wait_for(node.wait(), 10)
    finally:
        if node.returncode is None:
            node.kill()
        script.unlink()
    assert said == {"disconnect": "transport close"}, lines
