"""Real HTTP endpoints in the test process that record what the bridge sends them: the
webhook receiver (POSTs to /hook) and a listener that takes any request on any path."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from aiohttp import web


@dataclass
class Receiver:
    """A real HTTP endpoint in the test process that records what webhooks send."""

    url: str
    got: list[tuple[dict[str, str], bytes]] = field(default_factory=list)

    async def wait(self, count: int, tries: int = 300) -> list[tuple[dict[str, str], bytes]]:
        for _ in range(tries):
            if len(self.got) >= count:
                return self.got
            await asyncio.sleep(0.05)
        raise AssertionError(f"the endpoint got {len(self.got)} requests, not {count}")


async def start_on_loopback(runner: web.AppRunner) -> int:
    """Serve ``runner`` (set up) on a loopback port the kernel picks as it binds, and return
    the port: no other test, worker or client can take it between the pick and the bind."""
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    host_port: tuple[str, int] = runner.addresses[0]
    return host_port[1]


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    found = Receiver("")

    async def hook(request: web.Request) -> web.Response:
        found.got.append((dict(request.headers), await request.read()))
        return web.Response(status=204)

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    found.url = f"http://127.0.0.1:{await start_on_loopback(runner)}/hook"
    try:
        yield found
    finally:
        await runner.cleanup()


@dataclass
class Listener:
    """A loopback HTTP endpoint that records every request, whatever its method and path,
    as (method, path and query, headers); it answers 404 under ``/missing``, a redirect
    to ``redirect_to`` under ``/moved`` and 204 elsewhere."""

    port: int = 0  # once it listens
    got: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    redirect_to: str = ""

    def url(self, path: str = "/hook", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


@contextlib.asynccontextmanager
async def listening() -> AsyncIterator[Listener]:
    """A :class:`Listener` on a loopback port for the ``async with`` block."""
    found = Listener()

    async def anything(request: web.Request) -> web.StreamResponse:
        found.got.append((request.method, request.path_qs, dict(request.headers)))
        await request.read()
        if request.path.startswith("/missing"):
            return web.Response(status=404)
        if request.path.startswith("/moved"):
            return web.Response(status=302, headers={"Location": found.redirect_to})
        return web.Response(status=204)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", anything)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        found.port = await start_on_loopback(runner)
        yield found
    finally:
        await runner.cleanup()


@pytest.fixture
async def listener() -> AsyncIterator[Listener]:
    async with listening() as found:
        yield found


@pytest.fixture
async def second_listener() -> AsyncIterator[Listener]:
    """Another listener, on a port of its own (somewhere a redirect points, say)."""
    async with listening() as found:
        yield found
