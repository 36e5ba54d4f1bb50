"""Strangers on the wire (issue 26): sockets that never join, players nobody vouches for,
and Engine.IO packets no client sends, each against a real bridge over raw websockets
(served in the test's process; a bridge process where the test reads its log or starts it
with a short bind timeout), beside a GM of a world who must go on being answered."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time

import httpx
import pytest

from bridge.service.protocol import NAMESPACE
from tests.bridge_process import Bridge
from tests.conftest import Connect
from tests.raw_socket import RawSocket
from tests.seats import Seat, gm_auth, player_auth


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


def new_lines(bridge: Bridge, before: int) -> list[str]:
    return bridge.log_text().splitlines()[before:]


# An Engine.IO packet type outside 0-6 (the attacker's `9`), a packet that is no packet (not
# a digit, empty), and packets a websocket client never sends (open, ping, noop).
@pytest.mark.parametrize("packet", ["9", "9garbage", "x", "", "0", "2", "6"])
async def test_an_engineio_packet_no_client_sends_closes_the_connection_with_one_log_line(
    bridge: Bridge, world: tuple[str, str], connect: Connect, packet: str
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


# --- seats: sockets that never join, players nobody binds ---------------------------------


def joined(answer: str) -> bool:
    return answer.startswith("0" + NAMESPACE)


async def test_thirty_two_unbound_players_never_lock_the_gm_out_of_the_socket_or_the_api(
    bridge: Bridge, world: tuple[str, str]
) -> None:
    # The attacker's run: from the GM's own address (a reverse proxy's, say), 32 sockets join
    # as players and are never bound. Before, all 32 held the per-address cap (32) for good:
    # the GM's socket was refused and the HTTP API answered 429.
    socks: list[RawSocket] = []
    answers: list[str] = []
    try:
        for n in range(32):
            sock = await RawSocket.open(bridge.url)
            socks.append(sock)
            answers.append(await sock.join(player_auth(world, f"stranger{n}")))
        admitted = [s for s, a in zip(socks, answers, strict=True) if joined(a)]
        refused = [s for s, a in zip(socks, answers, strict=True) if not joined(a)]
        # Unbound players have a small cap of their own; past it the join is refused with a
        # reason the module retries on and a message that says why, and the socket closed.
        assert 1 <= len(admitted) <= 8, answers
        for answer in answers:
            if not joined(answer):
                assert "rate_limited" in answer and "confirmed" in answer, answer
        for sock in refused:
            await asyncio.wait_for(sock.closed.wait(), 10)

        gm = await RawSocket.open(bridge.url)
        socks.append(gm)
        assert joined(await gm.join(gm_auth(world))), gm.frames
        hello = await gm.call(1, "hello", {"request_id": "h"})
        assert hello["ok"] and hello["data"]["role"] == "gm", hello
        async with httpx.AsyncClient(base_url=bridge.url) as api:
            state = await api.get(
                f"/api/v1/worlds/{world[0]}/state",
                headers={"Authorization": f"Bearer {world[1]}"},
            )
        assert state.status_code == 200, state.text
        # The GM binds one of them (what its module does on the player's flag): a bound player
        # is the GM's guest and leaves the unbound players' count, so another may join.
        nonce = (await admitted[0].call(1, "hello", {"request_id": "n"}))["data"]["bind_nonce"]
        bound = await gm.call(
            2, "user.bind", {"request_id": "b", "user_id": "stranger0", "nonce": nonce}
        )
        assert bound["ok"] and bound["data"]["bound"], bound
        late = await RawSocket.open(bridge.url)
        socks.append(late)
        assert joined(await late.join(player_auth(world, "latecomer"))), late.frames
    finally:
        for sock in socks:
            await sock.close()


@pytest.mark.bridge_args("--bind-timeout", "1")
async def test_an_unbound_player_is_closed_with_a_notice_once_its_bind_time_is_up(
    bridge: Bridge, world: tuple[str, str]
) -> None:
    gm = await RawSocket.open(bridge.url)
    paul = await RawSocket.open(bridge.url)
    mallory = await RawSocket.open(bridge.url)
    try:
        assert joined(await gm.join(gm_auth(world)))
        assert joined(await paul.join(player_auth(world, "paul")))
        assert joined(await mallory.join(player_auth(world, "mallory")))
        nonce = (await paul.call(1, "hello", {"request_id": "h"}))["data"]["bind_nonce"]
        bound = await gm.call(
            1, "user.bind", {"request_id": "b", "user_id": "paul", "nonce": nonce}
        )
        assert bound["data"]["bound"], bound
        # Nobody vouches for mallory: told why, then closed.
        notice = await mallory.wait_event("notice", deadline=10)
        assert notice["code"] == "bind_timeout" and notice["level"] == "error", notice
        assert "1" in notice["message"] and "GM" in notice["message"], notice
        await asyncio.wait_for(mallory.closed.wait(), 10)
        # The bound player and the GM stay.
        await asyncio.sleep(1.5)
        assert (await paul.call(2, "hello", {"request_id": "h2"}))["data"]["bound"] is True
        assert (await gm.call(2, "hello", {"request_id": "h2"}))["ok"]
    finally:
        for sock in (gm, paul, mallory):
            await sock.close()


async def test_a_socket_that_only_fails_to_join_is_closed_after_the_handshake_timeout(
    bridge: Bridge, world: tuple[str, str]
) -> None:
    # Before, the first join attempt cancelled the timer, refused or not: a socket sending a
    # wrong key now and then stayed open for good. The default timeout is 5 s.
    sock = await RawSocket.open(bridge.url)
    opened = time.monotonic()
    try:

        async def keep_failing() -> None:
            while not sock.closed.is_set():
                with contextlib.suppress(Exception):
                    await sock.send(
                        f"0{NAMESPACE},{json.dumps({**gm_auth(world), 'key': 'wrong'})}"
                    )
                await asyncio.sleep(0.5)

        failing = asyncio.create_task(keep_failing())
        try:
            await asyncio.wait_for(sock.closed.wait(), 15)
        finally:
            failing.cancel()
        assert time.monotonic() - opened < 9, "closed, but later than the default 5 s timeout"
        assert any("bad_key" in frame for frame in sock.frames), sock.frames
    finally:
        await sock.close()
