"""TCP connections before HTTP: at most so many open connections per remote address.

aiohttp has no such limit; this wraps each connection's protocol, so a connection over
the cap is answered with a plain HTTP refusal and closed before aiohttp sees a byte.
(Partial requests are timed out by aiohttp's keepalive timer, which starts when the
connection opens: see ``serve`` in :mod:`bridge.cli`.)
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("bridge.connections")

DEFAULT_PER_ADDRESS = 32


def refusal(limit: int) -> bytes:
    body = (
        f"Too many connections from your address (the bridge allows {limit}); "
        "close some and try again.\n"
    ).encode()
    head = (
        "HTTP/1.1 429 Too Many Requests\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    return head + body


class AddressGate:
    """Counts open connections per remote address; ``limit`` 0 means no cap."""

    def __init__(self, limit: int = DEFAULT_PER_ADDRESS) -> None:
        self.limit = limit
        self.open: dict[str, int] = {}

    def admit(self, address: str) -> bool:
        count = self.open.get(address, 0)
        if self.limit and count >= self.limit:
            return False
        self.open[address] = count + 1
        return True

    def release(self, address: str) -> None:
        count = self.open.get(address, 0) - 1
        if count > 0:
            self.open[address] = count
        else:
            self.open.pop(address, None)

    def factory(self, inner: Callable[[], asyncio.Protocol]) -> Callable[[], asyncio.Protocol]:
        """A protocol factory for ``loop.create_server`` that gates ``inner``'s protocols."""
        return lambda: _GatedProtocol(inner(), self)


class _GatedProtocol(asyncio.Protocol):
    """Forwards everything to the wrapped protocol once the gate admitted the connection."""

    def __init__(self, inner: asyncio.Protocol, gate: AddressGate) -> None:
        self.inner = inner
        self.gate = gate
        self.address: str | None = None

    def connection_made(self, transport: Any) -> None:
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else "unknown"
        if not self.gate.admit(address):
            log.warning("refused a connection from %s: over %d open", address, self.gate.limit)
            transport.write(refusal(self.gate.limit))
            transport.close()
            return
        self.address = address
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.address is not None:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self.address is not None else None

    def connection_lost(self, exc: Exception | None) -> None:
        if self.address is not None:
            self.gate.release(self.address)
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.address is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.address is not None:
            self.inner.resume_writing()


async def listen(
    protocol_factory: Callable[[], asyncio.Protocol],
    host: str,
    port: int,
    gate: AddressGate,
    *,
    start_serving: bool = True,
) -> asyncio.Server:
    """Listen on ``host:port`` with every connection passing ``gate`` first. With
    ``start_serving`` false the port is bound (so taken) but connections wait in the
    backlog until ``Server.start_serving()``."""
    loop = asyncio.get_running_loop()
    return await loop.create_server(
        gate.factory(protocol_factory), host, port, backlog=128, start_serving=start_serving
    )
