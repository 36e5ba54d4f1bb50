"""The bridge's Engine.IO websocket session (bridge.websocket_session) against a real
engineio server on a real port, with a client speaking Engine.IO 4 by hand: packets in
order both ways (sent straight out, or queued behind a slow reader's backlog), pings
answered keep a connection, silence past Engine.IO's timeout cuts it, a frame over the
size limit ends it, and either side's close ends it cleanly. Every test runs on the
bridge's engineio server (sends go through a Lane) and on engineio's own (they queue)."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import engineio
import pytest
from aiohttp import web

from bridge.websocket_session import BridgeEngineIO, BridgeWebSocket, Silence

PING_INTERVAL = 0.3
PING_TIMEOUT = 0.3
LIMIT = 1000


class EchoServer:
    """engineio with the bridge's websocket: every message comes back twice, in order;
    ``flood N SIZE`` is answered by N messages of SIZE characters at once."""

    def __init__(self, server_class: type[engineio.AsyncServer]) -> None:
        self.eio = server_class(
            async_mode="aiohttp",
            transports=["websocket"],
            ping_interval=PING_INTERVAL,
            ping_timeout=PING_TIMEOUT,
            max_http_buffer_size=LIMIT,
        )
        self.eio._async = {
            **self.eio._async,
            "websocket": functools.partial(BridgeWebSocket, compress=False),
        }
        self.connected: list[str] = []
        self.gone: dict[str, str] = {}
        self.eio.on("connect", self.connect)
        self.eio.on("message", self.message)
        self.eio.on("disconnect", self.disconnect)

    async def connect(self, sid: str, _environ: Any) -> None:
        self.connected.append(sid)

    async def message(self, sid: str, data: Any) -> None:
        if data.startswith("flood "):
            count, size = (int(n) for n in data.split()[1:])
            for n in range(count):
                await self.eio.send(sid, f"{n}:" + "x" * size)
            return
        await self.eio.send(sid, data)
        await self.eio.send(sid, f"again:{data}")

    async def disconnect(self, sid: str, reason: Any) -> None:
        self.gone[sid] = str(reason)


async def until(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    """Wait (bounded) for the server's side of a close to catch up with the client's."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)


@pytest.fixture(params=[BridgeEngineIO, engineio.AsyncServer])
async def served(request: pytest.FixtureRequest) -> AsyncIterator[tuple[EchoServer, str]]:
    server = EchoServer(request.param)
    app = web.Application()
    server.eio.attach(app)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield server, f"http://127.0.0.1:{port}/engine.io/?EIO=4&transport=websocket"
    finally:
        await runner.cleanup()


async def test_messages_come_back_in_order_and_answered_pings_keep_the_connection(
    served: tuple[EchoServer, str],
) -> None:
    server, url = served
    async with aiohttp.ClientSession() as http, http.ws_connect(url) as ws:
        opened = await ws.receive_str(timeout=5)
        assert opened.startswith("0{")
        for n in range(20):
            await ws.send_str(f"4m{n}")
        got: list[str] = []
        pings = 0
        deadline = time.monotonic() + 3 * (PING_INTERVAL + PING_TIMEOUT)
        while time.monotonic() < deadline:
            try:
                frame = await ws.receive_str(timeout=deadline - time.monotonic())
            except TimeoutError:
                break
            if frame == "2":  # the server's ping: answered, the connection stays
                pings += 1
                await ws.send_str("3")
            else:
                got.append(frame)
        assert got == [f"4{p}m{n}" for n in range(20) for p in ("", "again:")]
        assert pings >= 2 and not ws.closed
        assert server.connected and not server.gone


async def test_a_slow_readers_backlog_arrives_whole_and_in_order(
    served: tuple[EchoServer, str],
) -> None:
    # 400 frames of 100 kB at once fill the socket's buffer: the rest queue behind it.
    server, url = served
    async with aiohttp.ClientSession() as http, http.ws_connect(url) as ws:
        await ws.receive_str(timeout=5)
        await ws.send_str("4flood 400 100000")
        await asyncio.sleep(0.5)  # read nothing meanwhile
        await ws.send_str("4after")
        got: list[str] = []
        while len(got) < 402:
            frame = await ws.receive_str(timeout=10)
            if frame == "2":
                await ws.send_str("3")
            else:
                got.append(frame[:20])
    assert got == [f"4{n}:" + "x" * (20 - len(f"4{n}:")) for n in range(400)] + [
        "4after",
        "4again:after",
    ]
    await until(lambda: bool(server.gone))
    assert len(server.gone) == 1
    if isinstance(server.eio, BridgeEngineIO):
        assert server.eio.lanes == {}, "a closed session leaves no lane behind"


async def test_silence_past_engineios_timeout_cuts_the_connection(
    served: tuple[EchoServer, str],
) -> None:
    server, url = served
    async with aiohttp.ClientSession() as http, http.ws_connect(url) as ws:
        await ws.receive_str(timeout=5)
        # Never answer a ping: the server hears nothing and cuts the connection (a
        # connection still open after 5 s raises TimeoutError here).
        heard: list[str] = []
        while not ws.closed:
            message = await ws.receive(timeout=5)
            if message.type in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                break
            heard.append(message.data)
    assert heard == ["2"], "cut after a ping went unanswered, never before"
    await until(lambda: bool(server.gone))
    assert list(server.gone.values()) == [str(server.eio.reason.TRANSPORT_CLOSE)]


async def test_a_frame_over_the_limit_or_a_client_close_ends_the_session(
    served: tuple[EchoServer, str],
) -> None:
    server, url = served
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(url) as ws:
            await ws.receive_str(timeout=5)
            await ws.send_str("4" + "x" * (LIMIT + 1))
            message = await ws.receive(timeout=5)
            assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
        async with http.ws_connect(url) as ws:
            await ws.receive_str(timeout=5)
        await until(lambda: len(server.gone) == 2)
    assert len(server.gone) == 2 and len(server.connected) == 2


async def test_silence_sets_one_timer_for_a_quiet_spell_however_often_it_hears() -> None:
    expired: list[float] = []
    silence = Silence(0.2, lambda: expired.append(time.monotonic()))
    began = time.monotonic()
    for _ in range(5):
        await asyncio.sleep(0.1)
        silence.heard()
    await asyncio.sleep(0.35)
    assert len(expired) == 1
    # It expired a quiet spell after the last thing heard, not after the start.
    assert expired[0] - began >= 0.5 + 0.2 - 0.02
    silence.cancel()
    cancelled = Silence(0.05, lambda: expired.append(0.0))
    cancelled.cancel()
    await asyncio.sleep(0.1)
    assert len(expired) == 1
