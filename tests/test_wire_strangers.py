"""Strangers on the wire (issue 26): sockets that never join, players nobody vouches for,
and Engine.IO packets no client sends, each against a real bridge process over raw
websockets, beside a GM of a world who must go on being answered."""

from __future__ import annotations

import asyncio

import pytest

from tests.bridge_process import BridgeProcess
from tests.conftest import Connect
from tests.raw_socket import RawSocket
from tests.seats import Seat


async def flood(sock: RawSocket, packet: str, times: int) -> int:
    """Send one Engine.IO packet ``times`` times as fast as the socket takes them; returns
    how many went out before the bridge closed the connection."""
    sent = 0
    for _ in range(times):
        if sock.closed.is_set() or sock.ws.closed:
            break
        try:
            await sock.ws.send_str(packet)
        except Exception:  # the bridge hung up mid-flood
            break
        sent += 1
    return sent


def new_lines(bridge: BridgeProcess, before: int) -> list[str]:
    return bridge.log_text().splitlines()[before:]


# An Engine.IO packet type outside 0-6 (the attacker's `9`), a packet that is no packet (not
# a digit, empty), and packets a websocket client never sends (open, ping, noop).
@pytest.mark.parametrize("packet", ["9", "9garbage", "x", "", "0", "2", "6"])
async def test_an_engineio_packet_no_client_sends_closes_the_connection_with_one_log_line(
    bridge: BridgeProcess, world: tuple[str, str], connect: Connect, packet: str
) -> None:
    gm = Seat(await connect(world[0], key=world[1]))
    before = len(bridge.log_text().splitlines())
    sock = await RawSocket.open(bridge.url)  # no world, no key: not even a namespace join
    try:
        await flood(sock, packet, 2000)
        await asyncio.wait_for(sock.closed.wait(), 10)
    finally:
        await sock.close()
    # Another world's GM is answered, during and after.
    assert (await gm.ok("hello"))["world"] == world[0]
    await asyncio.sleep(0.2)  # the log line of the close, if it comes late
    lines = new_lines(bridge, before)
    assert len(lines) <= 1, lines[:20]
    assert not any("Traceback" in line for line in lines), lines[:20]
