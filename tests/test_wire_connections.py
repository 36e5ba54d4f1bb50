"""Connections before any Socket.IO: slow or partial HTTP requests, sockets that never join,
and too many connections from one address (the oldest cut), all with raw sockets against a
real bridge (served in the test's event loop, over real TCP: every wait here is on the loop,
never blocking it)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest

from bridge.service.protocol import NAMESPACE
from tests.bridge_process import add_world
from tests.in_process import InProcessBridge, serving_in_loop
from tests.raw_socket import RawSocket
from tests.seats import gm_auth

# A bridge that times handshakes out after 1 s and allows 4 connections per address.
GUARDED = pytest.mark.bridge_args("--handshake-timeout", "1", "--max-connections-per-address", "4")


async def healthz(bridge: InProcessBridge, timeout: float) -> int:
    """The status of ``GET /healthz`` from a fresh connection."""
    async with httpx.AsyncClient(timeout=timeout) as http:
        return (await http.get(f"{bridge.url}/healthz")).status_code


async def closed_by_peer(reader: asyncio.StreamReader, deadline: float) -> bytes:
    """Everything the bridge sent until it closed the connection (bounded wait)."""

    async def drain() -> bytes:
        received = b""
        while chunk := await reader.read(4096):
            received += chunk
        return received

    try:
        return await asyncio.wait_for(drain(), deadline)
    except ConnectionResetError:
        return b""


@GUARDED
async def test_partial_http_headers_are_timed_out(bridge: InProcessBridge) -> None:
    # Slow loris: headers that never finish, one byte at a time. Each connection is closed.
    conns = [await asyncio.open_connection("127.0.0.1", bridge.port) for _ in range(3)]
    for _reader, writer in conns:
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: bridge\r\nX-Slow: ")
        await writer.drain()

    async def trickle() -> None:
        for _ in range(100):
            for _reader, writer in conns:
                if not writer.is_closing():
                    writer.write(b"a")
            await asyncio.sleep(0.1)

    trickling = asyncio.create_task(trickle())
    try:
        for reader, _writer in conns:
            assert b"200 OK" not in await closed_by_peer(reader, deadline=15)
    finally:
        trickling.cancel()
        for _reader, writer in conns:
            writer.close()
    assert await healthz(bridge, timeout=5) == 200


@GUARDED
async def test_a_connection_that_sends_nothing_is_closed(bridge: InProcessBridge) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", bridge.port)
    try:
        assert await closed_by_peer(reader, deadline=15) == b""
    finally:
        writer.close()


@GUARDED
async def test_a_websocket_that_never_joins_the_namespace_is_closed(
    bridge: InProcessBridge,
) -> None:
    sock = await RawSocket.open(bridge.url)  # answers pings, but never sends CONNECT
    try:
        await asyncio.wait_for(sock.closed.wait(), 15)
    finally:
        await sock.close()


@GUARDED
async def test_strangers_per_address_are_capped_by_cutting_the_oldest(
    bridge: InProcessBridge,
) -> None:
    # The pool of connections not joined is kept at 4; a new one is never refused: the
    # oldest that has sent nothing (else the oldest) makes room (issue 35).
    socks = [await RawSocket.open(bridge.url) for _ in range(4)]
    try:
        assert await healthz(bridge, timeout=5) == 200
        await asyncio.wait_for(socks[0].closed.wait(), 10)
        assert not any(sock.closed.is_set() for sock in socks[2:])
    finally:
        for sock in socks:
            await sock.close()
    # The address connects again as it likes.
    deadline = time.monotonic() + 10
    while True:
        try:
            if await healthz(bridge, timeout=2) == 200:
                break
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "the address stayed refused after closing"
        await asyncio.sleep(0.1)


@pytest.mark.parametrize(
    ("flags", "negotiated"), [((), 0), (("--websocket-compression",), 15)], ids=["off", "on"]
)
async def test_permessage_deflate_is_declined_unless_the_operator_turns_it_on(
    tmp_path: Path, flags: tuple[str, ...], negotiated: int
) -> None:
    # A browser offers permessage-deflate on every websocket; deflating each frame once per
    # receiver is CPU the bridge spends only when asked to. Either way the client plays on.
    async with serving_in_loop(InProcessBridge(tmp_path), *flags) as served:
        key = add_world(served, "table")
        sock = await RawSocket.open(served.url, compress=15)
        try:
            assert sock.ws.compress == negotiated
            joined = await sock.join(gm_auth(("table", key)))
            assert joined.startswith("0" + NAMESPACE), joined
            hello = await sock.call(1, "hello", {"request_id": "h"})
            assert hello["ok"] and hello["data"]["world"] == "table", hello
            # A card large enough that deflate would matter comes through intact.
            actor = {"id": "hero", "name": ("Hero " * 20).strip(), "owners": [], "fate_points": 3}
            synced = await sock.call(2, "actor.sync", {"request_id": "s", "actor": actor})
            assert synced["ok"], synced
            state = await sock.call(3, "world.state", {"request_id": "w"})
            assert state["data"]["characters"][0]["name"] == actor["name"]
        finally:
            await sock.close()
