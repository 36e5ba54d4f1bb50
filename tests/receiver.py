"""A real HTTP endpoint in the test process that records what webhooks send it."""

from __future__ import annotations

import asyncio
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
