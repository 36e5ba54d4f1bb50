"""The bridge's websocket sessions (bridge.transport.socket on the bridge's own Engine.IO /
Socket.IO server) against a real port, with a client speaking
Engine.IO 4 / Socket.IO 5 by hand and a stand-in service that echoes: answers and emits in
order both ways (a slow reader's backlog too), pings answered keep a connection, silence
past Engine.IO's timeout cuts it, a frame over the size limit ends it, either side's close
ends the session, and Engine.IO junk ends a connection with one log line."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator

import aiohttp
import pytest

from bridge.service.protocol import NAMESPACE
from tests.socket_stub import EchoService, serving, until

PING_INTERVAL = 0.3
PING_TIMEOUT = 0.3
LIMIT = 1000_000


Served = tuple[EchoService, str]


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    async with serving(
        ping_interval=PING_INTERVAL, ping_timeout=PING_TIMEOUT, max_payload=LIMIT
    ) as (service, url):
        yield service, f"{url}/socket.io/?EIO=4&transport=websocket"


async def joined(ws: aiohttp.ClientWebSocketResponse) -> None:
    """Read Engine.IO's open packet, join /fate and read the answer."""
    opened = await ws.receive_str(timeout=5)
    assert opened.startswith("0{"), opened
    await ws.send_str(f"40{NAMESPACE},{{}}")
    answer = await ws.receive_str(timeout=5)
    assert answer.startswith(f"40{NAMESPACE},"), answer


def call(ack_id: int, request_id: str) -> str:
    return f"42{NAMESPACE},{ack_id}" + json.dumps(["hello", {"request_id": request_id}])


async def test_answers_come_back_in_order_and_answered_pings_keep_the_connection(
    served: Served,
) -> None:
    service, url = served
    async with aiohttp.ClientSession() as http, http.ws_connect(url) as ws:
        await joined(ws)
        for n in range(20):
            await ws.send_str(call(n + 1, f"m{n}"))
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
        answers = [json.loads(frame.split(",", 1)[1].lstrip("0123456789")) for frame in got]
        assert [a[0]["data"]["request_id"] for a in answers] == [f"m{n}" for n in range(20)]
        assert pings >= 2 and not ws.closed
        assert service.joined and not service.left


async def test_a_slow_readers_backlog_arrives_whole_and_in_order(served: Served) -> None:
    # 100 frames of 50 kB at once fill the socket's buffer: the rest queue behind it
    # (5 MB: within a joined session's backlog budget, see test_wire_bounds).
    service, url = served
    async with aiohttp.ClientSession() as http, http.ws_connect(url) as ws:
        await joined(ws)
        await ws.send_str(call(1, "flood 100 50000"))
        await asyncio.sleep(0.5)  # read nothing meanwhile
        await ws.send_str(call(2, "after"))
        got: list[str] = []
        while len(got) < 102:
            frame = await ws.receive_str(timeout=10)
            if frame == "2":
                await ws.send_str("3")
            else:
                got.append(frame)
    emitted = [json.loads(frame.split(",", 1)[1]) for frame in got[:100]]
    assert [(e[0], e[1]["n"], len(e[1]["x"])) for e in emitted] == [
        ("echo", n, 50000) for n in range(100)
    ]
    assert got[100].startswith(f"43{NAMESPACE},1[") and got[101].startswith(f"43{NAMESPACE},2[")
    await until(lambda: bool(service.left))
    assert len(service.left) == 1


async def test_silence_past_engineios_timeout_cuts_the_connection(served: Served) -> None:
    service, url = served
    async with aiohttp.ClientSession() as http, http.ws_connect(url) as ws:
        await joined(ws)
        # Never answer a ping: the server hears nothing and cuts the connection (a
        # connection still open after 5 s raises TimeoutError here).
        heard: list[str] = []
        while not ws.closed:
            message = await ws.receive(timeout=5)
            if message.type in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSE):
                break
            heard.append(message.data)
    assert heard == ["2"], "cut after a ping went unanswered, never before"
    await until(lambda: bool(service.left))
    assert service.left == service.joined


async def test_a_frame_over_the_limit_or_a_client_close_ends_the_session(served: Served) -> None:
    service, url = served
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(url) as ws:
            await joined(ws)
            await ws.send_str("4" + "x" * (LIMIT + 1))
            message = await ws.receive(timeout=5)
            assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
        async with http.ws_connect(url) as ws:
            await joined(ws)
        await until(lambda: len(service.left) == 2)
    assert sorted(service.left) == sorted(service.joined) and len(service.joined) == 2


@pytest.mark.parametrize("packet", ["9", "8x", "x", ""])
async def test_engineio_junk_ends_the_connection_with_one_log_line(
    served: Served, caplog: pytest.LogCaptureFixture, packet: str
) -> None:
    # A packet no websocket client sends, or a frame that is no packet (python-engineio
    # logged a traceback for each): one line for the connection, which is closed, and its
    # session gone.
    service, url = served
    caplog.set_level(logging.INFO)
    async with aiohttp.ClientSession() as http, http.ws_connect(url) as ws:
        await joined(ws)
        for _ in range(200):
            if ws.closed:
                break
            try:
                await ws.send_str(packet)
            except Exception:  # closed mid-flood
                break
        while not ws.closed:
            message = await ws.receive(timeout=5)
            if message.type in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSE):
                break
    await until(lambda: bool(service.left))
    assert service.left == service.joined
    lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert "closed connection" in lines[0].getMessage() and lines[0].exc_info is None


# Engine.IO messages whose JSON is no packet, events whose data is no non-empty list,
# packets a client never sends, a binary event, an ack id of 100 digits, a frame nested past
# the decoder, packets for a namespace never joined: none reaches a handler as an
# exception, and the connection goes on.
ODD_FRAMES = [
    "4null",
    "4false",
    "4true",
    "4[]",
    "4{}",
    '4{"a":1}',
    "41",
    '4"2/fate,"',
    f"42{NAMESPACE},1",
    f"42{NAMESPACE},1null",
    f'42{NAMESPACE},1{{"a":1}}',
    f'42{NAMESPACE},1"hello"',
    f"42{NAMESPACE},1[]",
    f"42{NAMESPACE},1[1]",
    f'42{NAMESPACE},1["connect",{{}}]',
    f'42{NAMESPACE},1["fate.client-frame",{{}}]',
    f'42{NAMESPACE},1["fate.malformed-frame","x","/fate"]',
    f'451-{NAMESPACE},1["hello",{{"_placeholder":true,"num":0}}]',
    f"44{NAMESPACE},{{}}",
    f'42{NAMESPACE},{"9" * 100}["hello",{{}}]',
    f'42{NAMESPACE},1["hello",{"[" * 5000}]',
    f'42{NAMESPACE},1["hello",{{"request_id":1e999999}}]',
    '42/other,1["hello",{}]',
    "40/fate,[1]",
    '43/fate,7["x"]',
]


@pytest.mark.parametrize("frame", ODD_FRAMES)
async def test_odd_frames_are_answered_without_a_traceback(
    served: Served, caplog: pytest.LogCaptureFixture, frame: str
) -> None:
    service, url = served
    caplog.set_level(logging.INFO)
    async with aiohttp.ClientSession() as http, http.ws_connect(url) as ws:
        await joined(ws)
        await ws.send_str(frame)
        await ws.send_str(call(2, "after"))
        while True:
            got = await ws.receive_str(timeout=5)
            if got.startswith(f"43{NAMESPACE},2["):
                break
        assert json.loads(got[len(f"43{NAMESPACE},2") :])[0]["ok"], got
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]
    assert service.joined[:1] == service.joined


async def test_a_binary_frame_gets_a_notice_and_the_connection_goes_on(served: Served) -> None:
    _service, url = served
    async with aiohttp.ClientSession() as http, http.ws_connect(url) as ws:
        await joined(ws)
        await ws.send_bytes(b"\x00\x01")
        notice = await ws.receive_str(timeout=5)
        assert notice.startswith(f'42{NAMESPACE},["notice"') and "binary" in notice, notice
        await ws.send_str(call(2, "after"))
        assert (await ws.receive_str(timeout=5)).startswith(f"43{NAMESPACE},2[")
