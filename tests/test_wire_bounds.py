"""The wire bounded and fair before anything is decoded (issue 35): what waits to be sent
to a client that does not read, what a client may send a second, pongs required, the
strangers of one address, one relayed player's flood, a rejoin's bucket, and Engine.IO's
``maxPayload`` to the byte. Each test is a hole an outsider found, reproduced."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import socket
import struct
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bridge.service import BridgeService, Session
from bridge.service.protocol import NAMESPACE
from bridge.store.sqlite import SQLiteStore
from bridge.transport.engineio_ws import JOINED_BACKLOG_BYTES, JOINED_PACE, UNJOINED_PACE
from bridge.transport.port import IntentPort
from bridge.transport.ratelimit import InboundBudget
from tests.bridge_process import Bridge, add_world
from tests.conftest import Connect
from tests.in_process import InProcessBridge
from tests.raw_socket import RawSocket
from tests.seats import Seat, gm_auth
from tests.socket_stub import WS, serving, until, websocket
from tests.stores import opened


def masked(payload: bytes, opcode: int = 0x1) -> bytes:
    """One client websocket frame (FIN, masked, as RFC 6455 requires of a client)."""
    head = bytes([0x80 | opcode])
    size = len(payload)
    if size < 126:
        head += bytes([0x80 | size])
    elif size < 1 << 16:
        head += bytes([0x80 | 126]) + struct.pack("!H", size)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", size)
    mask = os.urandom(4)
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload[:64]))
    if size > 64:
        # Masking a large payload byte by byte is slow in Python: XOR it as one integer.
        rest = payload[64:]
        key = (mask[64 % 4 :] + mask[: 64 % 4]) * (len(rest) // 4 + 1)
        xored = int.from_bytes(rest, "big") ^ int.from_bytes(key[: len(rest)], "big")
        body += xored.to_bytes(len(rest), "big")
    return head + mask + body


async def never_reading_websocket(
    port: int,
) -> tuple[socket.socket, asyncio.StreamReader, asyncio.StreamWriter]:
    """A websocket to the bridge from a socket with a tiny receive window, upgraded by hand;
    the caller never reads what the bridge sends (the kernel's buffers fill, then the
    bridge's)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    reader, writer = await asyncio.open_connection(sock=sock)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET {WS} HTTP/1.1\r\nHost: bridge\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock, reader, writer


async def cut_within(reader: asyncio.StreamReader, seconds: float) -> bytes:
    """Everything the bridge sent until it closed or cut the connection (bounded wait:
    a connection still open after ``seconds`` raises TimeoutError)."""
    received = b""

    async def drain() -> None:
        nonlocal received
        while chunk := await reader.read(65536):
            received += chunk

    with contextlib.suppress(ConnectionResetError, BrokenPipeError):
        await asyncio.wait_for(drain(), seconds)
    return received


# --- what waits to be sent ---------------------------------------------------------------


async def test_a_socket_that_never_reads_is_cut_and_nothing_it_sent_comes_back(
    bridge: Bridge,
) -> None:
    # Issue 35, hole 1: CONNECTs to a 256 KiB namespace from a socket that never reads;
    # each refusal echoed the namespace, and the backlog grew without bound.
    namespace = "/" + "n" * (256 * 1024)
    sock, reader, writer = await never_reading_websocket(bridge.port)
    try:
        for _ in range(16):
            writer.write(masked(f"40{namespace},".encode()))
            try:
                await asyncio.wait_for(writer.drain(), 2)
            except (TimeoutError, ConnectionError):
                break  # the bridge stopped reading us (paced) or cut us: either holds
        # Read only now: the connection is cut within the join timeout and a few seconds
        # (it was still open 50 s later), and no refusal repeats what it sent.
        received = await cut_within(reader, 30)
    finally:
        writer.close()
        sock.close()
    assert b"n" * 64 not in received, "a refusal echoed the attacker's namespace"


async def test_a_backlog_past_the_budget_cuts_the_session_and_frees_it() -> None:
    # A joined client that never reads is sent more than its budget: cut, backlog dropped.
    async with serving(ping_interval=5, ping_timeout=5) as (service, url):
        server = service.server
        assert server is not None
        sock, _reader, writer = await never_reading_websocket(int(url.rsplit(":", 1)[1]))
        try:
            writer.write(masked(f"40{NAMESPACE},{{}}".encode()))
            await until(lambda: bool(service.joined))
            count = 2 * JOINED_BACKLOG_BYTES // 50_000
            request = json.dumps(["hello", {"request_id": f"flood {count} 50000"}])
            writer.write(masked(f"42{NAMESPACE},1{request}".encode()))
            await writer.drain()
            await until(lambda: bool(service.left), 10)
            assert service.left == service.joined, "the session was not cut"
            await until(lambda: not server.live, 10)
            assert not server.live, "the connection outlived its session"
        finally:
            writer.close()
            sock.close()


async def test_a_slow_reader_within_the_budget_is_not_cut() -> None:
    async with websocket(ping_interval=5, ping_timeout=5) as (service, ws):
        await ws.receive_str(timeout=5)
        await ws.send_str(f"40{NAMESPACE},{{}}")
        await ws.receive_str(timeout=5)
        count = JOINED_BACKLOG_BYTES // 2 // 50_000
        await ws.send_str(
            f"42{NAMESPACE},1" + json.dumps(["hello", {"request_id": f"flood {count} 50000"}])
        )
        await asyncio.sleep(0.5)  # read nothing meanwhile
        got = 0
        while got < count + 1:
            frame = await ws.receive_str(timeout=10)
            if frame != "2":
                got += 1
        assert not service.left


# --- what a client may send --------------------------------------------------------------


async def test_a_connect_flood_is_answered_a_few_times_then_cut() -> None:
    # Issue 35, hole 2: every CONNECT to another namespace was decoded and answered.
    async with websocket() as (_service, ws):
        await ws.receive_str(timeout=5)
        for _ in range(200):
            await ws.send_str("40/other,")
        answers = 0
        while True:
            message = await ws.receive(timeout=10)
            if message.type is not aiohttp.WSMsgType.TEXT:
                break
            answers += message.data == '44/other,"Unable to connect"'
        assert answers <= 10, f"{answers} CONNECT refusals answered"


async def test_a_stranger_past_its_small_inbound_budget_is_cut_before_anything_is_decoded() -> None:
    # Issue 35's flood leftover: a connection that joined nothing may send a CONNECT, a
    # pong and little else a second; past that it is cut, not read more slowly (a flood of
    # them stalled other worlds), and what it sent past the budget is never decoded. A
    # joined one may send the same and far more.
    closed = (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR)
    async with serving(join_timeout=60) as (service, url), aiohttp.ClientSession() as http:
        async with http.ws_connect(url + WS) as member:
            await member.receive_str(timeout=5)
            await member.send_str(f"40{NAMESPACE},{{}}")
            await member.receive_str(timeout=5)
            for _ in range(50):
                await member.send_str("3")
            await member.send_str(f'42{NAMESPACE},1["hello",{{"x":"{"y" * 100_000}"}}]')
            assert (await member.receive_str(timeout=5)).startswith(f"43{NAMESPACE},1[")
        async with http.ws_connect(url + WS) as stranger:
            await stranger.receive_str(timeout=5)
            with contextlib.suppress(ConnectionError):
                for _ in range(50):  # pongs: frames a stranger may send, but not so many
                    await stranger.send_str("3")
            message = await stranger.receive(timeout=10)
            assert message.type in closed, message
        async with http.ws_connect(url + WS) as stranger:
            await stranger.receive_str(timeout=5)
            # One CONNECT past a stranger's bytes: cut unread, so never answered.
            await stranger.send_str("40/" + "n" * 100_000 + ",")
            message = await stranger.receive(timeout=10)
            assert message.type in closed, message
    assert len(service.joined) == 1


async def test_a_client_that_sends_but_never_answers_pings_is_cut() -> None:
    # Issue 35, hole 5: any frame counted as a sign of life; only a pong does now.
    async with websocket(ping_interval=0.3, ping_timeout=0.3) as (service, ws):
        await ws.receive_str(timeout=5)
        await ws.send_str(f"40{NAMESPACE},{{}}")

        async def chatter() -> None:
            while not ws.closed:
                await ws.send_str(f'42{NAMESPACE},["hello",{{}}]')
                await asyncio.sleep(0.05)

        talking = asyncio.create_task(chatter())
        try:
            while True:  # read (never answering a ping) until the server cuts us
                message = await ws.receive(timeout=10)
                if message.type is not aiohttp.WSMsgType.TEXT:
                    break
        finally:
            talking.cancel()
        await until(lambda: bool(service.left))
        assert service.left == service.joined


async def test_max_payload_is_exact() -> None:
    # Issue 35, hole 4: the open packet's maxPayload, to the byte.
    async with (
        serving(max_payload=10_000) as (_service, url),
        aiohttp.ClientSession() as http,
    ):
        async with http.ws_connect(url + WS) as ws:
            opened = json.loads((await ws.receive_str(timeout=5))[1:])
            limit = opened["maxPayload"]
            await ws.send_str(f"40{NAMESPACE},{{}}")
            await ws.receive_str(timeout=5)
            head = f"42{NAMESPACE},1" + '["hello",{"request_id":"'
            tail = '"}]'
            exact = head + "x" * (limit - len(head) - len(tail)) + tail
            assert len(exact.encode()) == limit
            await ws.send_str(exact)
            answer = await ws.receive_str(timeout=5)
            assert answer.startswith(f"43{NAMESPACE},1["), answer
        async with http.ws_connect(url + WS) as ws:
            await ws.receive_str(timeout=5)
            await ws.send_str(f"40{NAMESPACE},{{}}")
            await ws.receive_str(timeout=5)
            await ws.send_str(exact + " ")
            message = await ws.receive(timeout=5)
            assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)


# --- one address -------------------------------------------------------------------------


# A bridge that times handshakes out after 2 s and allows 4 connections per address.
FOUR_PER_ADDRESS = pytest.mark.bridge_args(
    "--handshake-timeout", "2", "--max-connections-per-address", "4"
)


@FOUR_PER_ADDRESS
async def test_idle_connections_reopened_never_lock_a_gm_out_and_log_a_few_lines(
    bridge: InProcessBridge,
) -> None:
    # Issue 35, hole 3: idle connections reopened as soon as closed kept the address's cap
    # full; the GM's websocket and the HTTP API failed 40/40, with a log line each.
    key = add_world(bridge, "w1")
    stop = asyncio.Event()
    opened = 0

    async def idle_forever() -> None:
        nonlocal opened
        while not stop.is_set():
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", bridge.port)
            except OSError:
                continue
            opened += 1
            try:
                await reader.read(1)  # until the bridge cuts it
            except ConnectionError:
                pass
            finally:
                writer.close()

    idlers = [asyncio.create_task(idle_forever()) for _ in range(10)]
    try:
        await until(lambda: opened >= 40, 10)
        auth = gm_auth(("w1", key))
        for _ in range(5):
            sock = await RawSocket.open(bridge.url)
            try:
                answer = await sock.join(auth)
                assert answer.startswith(f"0{NAMESPACE},"), answer
            finally:
                await sock.close()
            async with aiohttp.ClientSession() as http, http.get(f"{bridge.url}/healthz") as got:
                assert got.status == 200
    finally:
        stop.set()
        for idler in idlers:
            idler.cancel()
        await asyncio.gather(*idlers, return_exceptions=True)
    lines = [line for line in bridge.log_text().splitlines() if "connections not joined" in line]
    assert opened >= 40 and 1 <= len(lines) <= 10, (opened, len(lines))


# --- budgets a rejoin keeps ---------------------------------------------------------------


async def test_leaving_and_joining_again_does_not_refill_the_bucket(
    bridge: Bridge, world: tuple[str, str]
) -> None:
    sock = await RawSocket.open(bridge.url)
    try:
        assert (await sock.join(gm_auth(world))).startswith(f"0{NAMESPACE},")
        for n in range(60):
            await sock.send(f"2{NAMESPACE},{n}" + json.dumps(["hello", {"request_id": f"h{n}"}]))
        codes = [(await sock.wait_ack(n))[0] for n in range(60)]
        assert any(not ack["ok"] for ack in codes), "the burst was never limited"
        await sock.send(f"1{NAMESPACE},")
        since = len(sock.frames)
        await sock.send(f"0{NAMESPACE},{json.dumps(gm_auth(world))}")
        await sock.wait_frame(lambda f: f.startswith(f"0{NAMESPACE},"), since=since)
        # A fresh bucket would pass all 30 (a burst is 40); the kept one is nearly empty.
        for n in range(100, 130):
            await sock.send(f"2{NAMESPACE},{n}" + json.dumps(["hello", {"request_id": f"a{n}"}]))
        again = [(await sock.wait_ack(n))[0] for n in range(100, 130)]
        refused = [ack for ack in again if not ack["ok"]]
        assert refused and {ack["error"]["code"] for ack in refused} == {"rate_limited"}
    finally:
        await sock.close()


# --- relay -------------------------------------------------------------------------------


async def relayed(gm: Seat, user: str, n: int) -> dict[str, Any]:
    envelope = {"user": user, "event": "hello", "payload": {"request_id": f"{user}{n}"}}
    ack: dict[str, Any] = await gm.client.call("relay", envelope, namespace=NAMESPACE, timeout=30)
    return ack


async def test_one_relayed_player_flooding_never_starves_another(
    connect: Connect, world: tuple[str, str]
) -> None:
    # Issue 35, hole 4: every relayed frame spent from the GM connection's shared 200/s
    # before the sender's own 20/s: one player's flood refused another's 31/40.
    gm = Seat(await connect(world[0], key=world[1], user="theGM"))
    done = asyncio.Event()
    paul: list[dict[str, Any]] = []

    async def flood(lane: int) -> None:
        n = 0
        while not done.is_set():
            paul.append(await relayed(gm, "paul", lane * 100_000 + n))
            n += 1

    flooding = [asyncio.create_task(flood(lane)) for lane in range(40)]
    try:
        await until(lambda: len(paul) > 400, 30)
        anna = []
        for n in range(20):
            anna.append(await relayed(gm, "anna", n))
            await asyncio.sleep(0.05)
    finally:
        done.set()
        await asyncio.gather(*flooding)
    refused = [ack for ack in anna if not ack["ok"]]
    assert not refused, f"{len(refused)}/20 of anna's refused: {refused[:1]}"
    assert any(not ack["ok"] for ack in paul), "paul was never limited"


async def test_relay_leave_frees_the_users_read_turn_and_coming_back_refills_nothing(
    tmp_path: Path,
) -> None:
    # Issue 35, hole 4: 5,000 leave cycles left 5,000 read-turn locks; a return refilled.
    async with opened(SQLiteStore(tmp_path / "bridge.sqlite3")) as store:
        service = BridgeService(store, dev_dice=True)
        await service.add_world("w", "World")
        port = IntentPort(service)
        gm = Session("g", "w", "gm", "gm", bound=True)
        port.opened(gm)

        async def relay(user: str, event: str, n: int) -> dict[str, Any]:
            body = {"user": user, "event": event, "payload": {"request_id": f"{user}{n}"}}
            ack: dict[str, Any] = (await port.on_frame("g", ["relay", body])).ack
            return ack

        async def leave(user: str) -> None:
            body = {"user": user, "request_id": f"leave-{user}"}
            assert (await port.on_frame("g", ["relay.leave", body])).ack["ok"]

        for n in range(20):
            assert (await relay(f"u{n}", "history.stats", n))["ok"]
            await leave(f"u{n}")
        assert not port.read_turns, "a relayed user's read turn outlived it"
        hellos = [await relay("paul", "hello", n) for n in range(50)]
        assert not hellos[-1]["ok"], "paul's burst was never limited"
        await leave("paul")
        back = await relay("paul", "hello", 99)
        assert back["ok"] is False and back["error"]["code"] == "rate_limited", back
        await port.closed("g")


@FOUR_PER_ADDRESS
async def test_websocket_handshakes_per_address_are_rate_limited_with_a_clear_refusal(
    bridge: InProcessBridge,
) -> None:
    # A handshake flood (each socket cut and reopened) cost the loop a handshake each;
    # past the address's rate it is refused before any websocket opens.
    refused = None
    async with aiohttp.ClientSession() as http:
        for _ in range(300):
            try:
                async with http.ws_connect(bridge.url + WS) as ws:
                    await ws.receive_str(timeout=5)
            except aiohttp.WSServerHandshakeError as exc:
                refused = exc
                break
    assert refused is not None and refused.status == 429, refused


def test_a_connection_that_leaves_in_debt_may_still_send_its_next_connect() -> None:
    # A GM's burst right after joining runs the joined pace into debt; leaving must not
    # turn that debt into a stranger's flood, or the CONNECT that follows cuts the socket.
    budget = InboundBudget(UNJOINED_PACE, now=0.0)
    assert budget.charge(200, now=0.0) == 0  # its first CONNECT
    budget.pace(JOINED_PACE, now=0.0)
    waits = [budget.charge(60, now=0.0) for _ in range(60)]
    assert waits[-1] > 0, "a burst just after joining is read later"
    budget.pace(UNJOINED_PACE, now=0.0, fresh=True)
    assert budget.charge(60, now=0.0) == 0  # DISCONNECT
    assert budget.charge(200, now=0.0) == 0  # CONNECT again
    # The stranger's pace itself is unchanged: past its burst it is over budget.
    assert any(budget.charge(60, now=0.0) > 0 for _ in range(int(UNJOINED_PACE.frame_burst)))
