from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import socketio

from bridge.protocol import NAMESPACE, PROTOCOL_VERSION
from tests.bridge_process import BridgeProcess, add_world
from tests.seats import BROUSSEAU, GHOUL, MARGOT, Seat


@pytest.fixture
def bridge(tmp_path: Path) -> Iterator[BridgeProcess]:
    """A real bridge process with --dev-dice, on its own data folder and port."""
    process = BridgeProcess(tmp_path).start()
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture
def world(bridge: BridgeProcess) -> tuple[str, str]:
    """A registered world: (id, GM key)."""
    return "table", add_world(bridge.data_dir, "table")


Connect = Callable[..., Awaitable[socketio.AsyncClient]]


@pytest.fixture
async def connect(bridge: BridgeProcess) -> AsyncIterator[Connect]:
    """Open real Socket.IO clients; every one is disconnected at the end."""
    clients: list[socketio.AsyncClient] = []

    async def _connect(
        world: str,
        *,
        role: str = "gm",
        user: str = "gmUser0000000001",
        key: str | None = None,
        protocol: int = PROTOCOL_VERSION,
        auth: dict[str, Any] | None = None,
    ) -> socketio.AsyncClient:
        client = socketio.AsyncClient(reconnection=False)
        client.received = []  # type: ignore[attr-defined]

        @client.on("*", namespace=NAMESPACE)  # type: ignore[misc]
        async def _any(event: str, data: Any) -> None:
            client.received.append((event, data))  # type: ignore[attr-defined]

        handshake = (
            auth
            if auth is not None
            else {
                "world": world,
                "role": role,
                "user": user,
                "protocol": protocol,
                **({"key": key} if key is not None else {}),
            }
        )
        clients.append(client)
        await client.connect(
            bridge.url,
            namespaces=[NAMESPACE],
            transports=["websocket"],
            auth=handshake,
            wait_timeout=10,
        )
        return client

    yield _connect
    for client in clients:
        if client.connected:
            await client.disconnect()


@pytest.fixture
async def table(connect: Connect, world: tuple[str, str]) -> dict[str, Seat]:
    """A GM with three synced actors and two bound players (paul, anna)."""
    gm = Seat(await connect(world[0], key=world[1], user="gm"))
    for actor in (BROUSSEAU, MARGOT, GHOUL):
        await gm.ok("actor.sync", actor=actor)
    await gm.ok("fate.gm_budget", fate_points=2)
    seats = {"gm": gm}
    for user in ("paul", "anna"):
        seat = Seat(await connect(world[0], role="player", user=user))
        hello = await seat.ok("hello")
        assert hello["bound"] is False
        # What the player's module does (flag on its own User) and the GM's module reports:
        bound = await gm.ok("user.bind", user_id=user, nonce=hello["bind_nonce"])
        assert bound == {"user_id": user, "bound": True}
        seats[user] = seat
    return seats
