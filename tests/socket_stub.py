"""The bridge's websocket server (:class:`bridge.transport.FateSocket`) on a free loopback
port in front of a stand-in service: for the tests that speak Engine.IO / Socket.IO frame
by frame, where the rules behind the socket are not the subject."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, cast

import aiohttp
from aiohttp import web

from bridge.service import BridgeService, ConnectRefused, Reply, Session
from bridge.service.protocol import ConnectRefusal
from bridge.service.session import Emission
from bridge.transport.fan_out import RoomFanOut
from bridge.transport.socket import FateSocket


class EchoService:
    """Stands in for BridgeService. Everyone joins as a GM of world ``w`` unless its auth
    says ``{"refuse": true}``; every intent is answered with its payload, and a payload
    ``{"request_id": "flood N SIZE"}`` also emits N frames of SIZE characters to the
    sender's world room first."""

    def __init__(self) -> None:
        self.joined: list[str] = []
        self.left: list[str] = []
        # The server in front of it (set by ``serving``), for what only it knows.
        self.server: FateSocket | None = None

    async def authenticate(self, sid: str, auth: object) -> Session:
        if isinstance(auth, dict) and auth.get("refuse"):
            raise ConnectRefused(ConnectRefusal(reason="unknown_world", message="No such world."))
        return Session(sid, "w", "gm", "gm", bound=True)

    async def connected(self, session: Session) -> None:
        self.joined.append(session.sid)

    async def disconnect(self, session: Session) -> None:
        self.left.append(session.sid)

    async def handle(self, session: Session, _event: str, payload: Any) -> Reply:
        request_id = str(payload.get("request_id", "")) if isinstance(payload, dict) else ""
        emissions = []
        if request_id.startswith("flood "):
            count, size = (int(n) for n in request_id.split()[1:])
            emissions = [
                Emission("echo", {"n": n, "x": "x" * size}, session.room) for n in range(count)
            ]
        return Reply({"ok": True, "data": payload}, emissions)


@contextlib.asynccontextmanager
async def serving(**options: Any) -> AsyncIterator[tuple[EchoService, str]]:
    """A FateSocket with ``options`` (a 5 s join timeout unless given) in front of an
    :class:`EchoService`, on a free port; yields the service and ``http://127.0.0.1:PORT``.
    The server is cleaned up when the block ends."""
    service = EchoService()
    socket = FateSocket(
        cast(BridgeService, service),
        RoomFanOut(),
        join_timeout=options.pop("join_timeout", 5.0),
        bind_timeout=30.0,
        **options,
    )
    service.server = socket
    app = web.Application()
    socket.attach(app)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield service, f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


# Engine.IO 4's websocket endpoint, as a browser's client opens it.
WS = "/socket.io/?EIO=4&transport=websocket"


@contextlib.asynccontextmanager
async def websocket(
    **options: Any,
) -> AsyncIterator[tuple[EchoService, aiohttp.ClientWebSocketResponse]]:
    """A websocket opened on :func:`serving`'s server with ``options``: the stand-in
    service and the client's end, Engine.IO's open packet not read yet. Both are closed
    when the block ends."""
    async with (
        serving(**options) as (service, url),
        aiohttp.ClientSession() as http,
        http.ws_connect(url + WS) as ws,
    ):
        yield service, ws


async def until(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    """Wait (bounded) for ``condition``: the server's side of a close catching up with the
    client's, say. Returns either way; the caller asserts."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
