"""The bridge's own Engine.IO v4 / Socket.IO v5 server (bridge.transport.engineio_ws and
socketio_server) frame by frame, over a raw websocket on a free port: the HTTP refusals
and their bodies (Engine.IO's JSON strings), the open packet, pings and pongs, close packets both
ways, and the Socket.IO answers a client reads (CONNECT, CONNECT_ERROR's two shapes, a
second CONNECT, DISCONNECT, events with and without an ack id, a client's ACK, a packet
before joining), and what
the websocket part of Engine.IO v4 / Socket.IO v5 leaves to the server: packets only
long-polling sends, a long-polling request's answer, binary attachments refused, and the
close a stopping server sends. With tests/test_socketio_packets.py (the packet codec) and
tests/test_wire_bounds.py (pongs required, ``maxPayload`` to the byte) this is the wire's
contract."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from bridge.service.protocol import NAMESPACE
from bridge.transport.engineio_ws import Silence
from tests.socket_stub import EchoService, serving, until


@pytest.fixture
async def served() -> AsyncIterator[tuple[EchoService, str]]:
    async with serving(ping_interval=0.3, ping_timeout=0.3) as pair:
        yield pair


WS = "/socket.io/?EIO=4&transport=websocket"


async def frame(ws: aiohttp.ClientWebSocketResponse, *, pong: bool = True) -> str:
    """The next frame other than a ping (answered with a pong unless ``pong`` is False)."""
    while True:
        got = await ws.receive_str(timeout=5)
        if got != "2":
            return got
        if pong:
            await ws.send_str("3")


async def opened(ws: aiohttp.ClientWebSocketResponse) -> dict[str, Any]:
    first = await ws.receive_str(timeout=5)
    assert first.startswith("0{"), first
    handshake: dict[str, Any] = json.loads(first[1:])
    return handshake


async def join(ws: aiohttp.ClientWebSocketResponse, auth: str = "{}") -> str:
    await ws.send_str(f"40{NAMESPACE},{auth}")
    return await frame(ws)


# --- Engine.IO ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "headers", "body"),
    [
        (
            "?transport=websocket",
            {},
            "The client is using an unsupported version of the Socket.IO or Engine.IO protocols",
        ),
        (
            "?EIO=3&transport=websocket",
            {},
            "The client is using an unsupported version of the Socket.IO or Engine.IO protocols",
        ),
        ("?EIO=4&transport=websocket", {}, "Invalid websocket upgrade"),
        ("?EIO=4&transport=websocket&sid=abc", {}, "Invalid session abc"),
    ],
)
async def test_what_opens_no_websocket_gets_engineios_refusal(
    served: tuple[EchoService, str], query: str, headers: dict[str, str], body: str
) -> None:
    _service, url = served
    async with aiohttp.ClientSession() as http, http.get(url + "/socket.io/" + query) as got:
        assert got.status == 400
        assert await got.text() == json.dumps(body)


@pytest.mark.parametrize("query", ["?EIO=4&transport=polling", "?EIO=4", "?EIO=4&t=Pa1"])
async def test_a_long_polling_request_is_told_to_use_websockets(
    served: tuple[EchoService, str], query: str
) -> None:
    # A default socket.io-client starts with long-polling: its 400 says what to set.
    _service, url = served
    async with aiohttp.ClientSession() as http, http.get(url + "/socket.io/" + query) as got:
        assert got.status == 400
        assert got.content_type == "application/json"
        body = await got.json()
        assert body["transports"] == ["websocket"]
        assert 'transports: ["websocket"]' in body["message"]


async def test_a_page_from_an_origin_not_allowed_is_refused() -> None:
    async with (
        serving(cors_origins=["https://table.example"]) as (_service, url),
        aiohttp.ClientSession() as http,
    ):
        async with http.get(
            url + "/socket.io/?EIO=4&transport=polling",
            headers={"Origin": "https://elsewhere.example"},
        ) as got:
            assert got.status == 400
            assert await got.text() == '"https://elsewhere.example is not an accepted origin."'
        async with http.ws_connect(url + WS, headers={"Origin": "https://table.example"}) as ws:
            await opened(ws)


async def test_the_open_packet_says_what_engineio_said() -> None:
    async with (
        serving(max_payload=1234) as (_service, url),
        aiohttp.ClientSession() as http,
        http.ws_connect(url + WS) as ws,
    ):
        handshake = await opened(ws)
    sid = handshake.pop("sid")
    assert isinstance(sid, str) and len(sid) == 20
    assert handshake == {
        "upgrades": [],
        "pingTimeout": 20000,
        "pingInterval": 25000,
        "maxPayload": 1234,
    }


async def test_the_next_ping_waits_for_the_pong(served: tuple[EchoService, str]) -> None:
    _service, url = served
    async with aiohttp.ClientSession() as http, http.ws_connect(url + WS) as ws:
        handshake = await opened(ws)
        assert (handshake["pingInterval"], handshake["pingTimeout"]) == (300, 300)
        started = time.monotonic()
        assert await ws.receive_str(timeout=5) == "2"
        assert time.monotonic() - started >= 0.25
        await asyncio.sleep(0.2)  # answered late, within the timeout
        await ws.send_str("3")
        answered = time.monotonic()
        assert await ws.receive_str(timeout=5) == "2"
        assert time.monotonic() - answered >= 0.25
        await ws.send_str("3")
        assert not ws.closed


async def test_silence_keeps_one_timer_per_quiet_spell() -> None:
    # Heard every 20 ms for 0.5 s, a 0.15 s limit never expires, and the timer is set
    # again only when it fires (about once per limit), never per message.
    expired: list[float] = []
    silence = Silence(0.15, lambda: expired.append(time.monotonic()))
    timers = [silence.timer]
    for _ in range(25):
        await asyncio.sleep(0.02)
        silence.heard()
        if silence.timer is not timers[-1]:
            timers.append(silence.timer)
    assert not expired
    assert len(timers) <= 6, "a timer per quiet spell, not one per message"
    started = time.monotonic()
    while not expired and time.monotonic() - started < 2:
        await asyncio.sleep(0.01)
    assert len(expired) == 1 and silence.timer is None
    assert expired[0] - started >= 0.1
    await asyncio.sleep(0.3)
    assert len(expired) == 1
    silence.cancel()


async def test_a_client_close_packet_ends_the_session(served: tuple[EchoService, str]) -> None:
    service, url = served
    async with aiohttp.ClientSession() as http, http.ws_connect(url + WS) as ws:
        await opened(ws)
        assert (await join(ws)).startswith(f"40{NAMESPACE},")
        await ws.send_str("1")
        message = await ws.receive(timeout=5)
        assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
    await until(lambda: bool(service.left))
    assert service.left == service.joined


async def test_the_server_says_close_before_it_closes() -> None:
    # A websocket that joins nothing in time is closed by the server: Engine.IO's close
    # packet first, then the websocket's close.
    async with (
        serving(join_timeout=0.2) as (_service, url),
        aiohttp.ClientSession() as http,
        http.ws_connect(url + WS) as ws,
    ):
        await opened(ws)
        assert await ws.receive_str(timeout=5) == "1"
        message = await ws.receive(timeout=5)
        assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)


# --- Socket.IO ---------------------------------------------------------------------------


async def test_connect_answers_and_refusals_have_the_specifications_shapes(
    served: tuple[EchoService, str],
) -> None:
    service, url = served
    async with aiohttp.ClientSession() as http, http.ws_connect(url + WS) as ws:
        await opened(ws)
        await ws.send_str("40")
        assert await frame(ws) == '44{"message":"Invalid namespace"}'
        await ws.send_str("40/other,{}")
        assert await frame(ws) == '44/other,{"message":"Invalid namespace"}'
        refused = await join(ws, '{"refuse":true}')
        assert refused.startswith(f"44{NAMESPACE},"), refused
        error = json.loads(refused.split(",", 1)[1])
        assert error["message"] == "refused"
        assert (error["data"]["reason"], error["data"]["message"]) == (
            "unknown_world",
            "No such world.",
        )
        answer = await join(ws)
        assert answer.startswith(f"40{NAMESPACE},"), answer
        sid = json.loads(answer.split(",", 1)[1])["sid"]
        assert service.joined == [sid]
        # A second CONNECT changes nothing: the socket keeps its sid.
        assert await join(ws) == f'44{NAMESPACE},{{"message":"Invalid namespace"}}'
        assert service.joined == [sid] and not service.left


async def test_events_acks_and_disconnect(served: tuple[EchoService, str]) -> None:
    service, url = served
    async with aiohttp.ClientSession() as http, http.ws_connect(url + WS) as ws:
        await opened(ws)
        await join(ws)
        await ws.send_str(f'42{NAMESPACE},["hello",{{"n":1}}]')  # no ack id: no ack
        await ws.send_str(f'43{NAMESPACE},5["ignored"]')  # a client's ACK: ignored
        await ws.send_str(f'42{NAMESPACE},7["hello",{{"n":2}}]')
        assert await frame(ws) == f'43{NAMESPACE},7[{{"ok":true,"data":{{"n":2}}}}]'
        # Binary packets are not part of the protocol: answered as malformed.
        await ws.send_str(f'451-{NAMESPACE},8["hello",{{"_placeholder":true,"num":0}}]')
        malformed = [await frame(ws), await frame(ws)]
        assert malformed[0].startswith(f'42{NAMESPACE},["notice"'), malformed
        assert malformed[1].startswith(f'43{NAMESPACE},8[{{"ok":false'), malformed
        # DISCONNECT leaves /fate; the websocket stays and may join again, as a new sid.
        await ws.send_str(f"41{NAMESPACE},")
        await until(lambda: bool(service.left))
        assert service.left == service.joined
        again = await join(ws)
        assert again.startswith(f"40{NAMESPACE},") and len(service.joined) == 2
        assert service.joined[1] != service.joined[0]
        await ws.send_str(f'42{NAMESPACE},10["hello",{{}}]')
        assert (await frame(ws)).startswith(f"43{NAMESPACE},10[")


@pytest.mark.parametrize(
    "message",
    [
        f'42{NAMESPACE},["hello",{{}}]',
        f'42{NAMESPACE},1["hello",{{}}]',
        f"43{NAMESPACE},1[]",
        f"44{NAMESPACE},{{}}",
        '42["hello"]',
        "4x",
        "4",
        b"\x01\x02",
    ],
)
@pytest.mark.parametrize("after_leaving", [False, True])
async def test_a_packet_other_than_connect_before_joining_ends_the_connection(
    served: tuple[EchoService, str], message: str | bytes, after_leaving: bool
) -> None:
    # Socket.IO v5: a server closes a connection whose first packet is not a CONNECT; one
    # that left the namespace is where it began. Nothing is answered. (A DISCONNECT there
    # changes nothing: leaving twice is no fault.)
    service, url = served
    async with aiohttp.ClientSession() as http, http.ws_connect(url + WS) as ws:
        await opened(ws)
        if after_leaving:
            await join(ws)
            await ws.send_str(f"41{NAMESPACE},")
            await until(lambda: bool(service.left))
        if isinstance(message, bytes):
            await ws.send_bytes(message)
        else:
            await ws.send_str(message)
        got = await ws.receive(timeout=5)
        assert got.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED), got
    assert len(service.joined) == int(after_leaving)


@pytest.mark.parametrize("packet", ["0", "2", "2probe", "5", "6"])
async def test_packets_only_a_long_polling_client_sends_end_the_session(
    served: tuple[EchoService, str], packet: str
) -> None:
    # Engine.IO v4 over a websocket: the client answers pings ("3"), sends messages ("4")
    # and closes ("1"); open, ping, upgrade and noop come only with long-polling.
    service, url = served
    async with aiohttp.ClientSession() as http, http.ws_connect(url + WS) as ws:
        await opened(ws)
        assert (await join(ws)).startswith(f"40{NAMESPACE},")
        await ws.send_str(packet)
        message = await ws.receive(timeout=5)
        assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED), message
    await until(lambda: bool(service.left))
    assert service.left == service.joined


async def test_an_event_with_several_arguments_gets_one_error_ack(
    served: tuple[EchoService, str],
) -> None:
    # Socket.IO v5 lets an event carry any number of arguments; the bridge's intents are
    # [name, one object], and anything else is answered, never dropped.
    _service, url = served
    async with aiohttp.ClientSession() as http, http.ws_connect(url + WS) as ws:
        await opened(ws)
        await join(ws)
        await ws.send_str(f'42{NAMESPACE},3["hello",{{}},{{}}]')
        answer = await frame(ws)
        assert answer.startswith(f"43{NAMESPACE},3["), answer


async def test_a_stopping_server_finishes_what_runs_and_closes_with_service_restart() -> None:
    # The stop's close (issue 35): no Engine.IO close packet ("1": python-socketio's client
    # would not reconnect), the websocket's close with 1012; intents sent from then on
    # are answered "send it again", never run; those running finish and are answered.
    async with (
        serving(ping_interval=5, ping_timeout=5) as (service, url),
        aiohttp.ClientSession() as http,
        http.ws_connect(url + WS) as ws,
    ):
        server = service.server
        assert server is not None
        await opened(ws)
        await join(ws)
        await ws.send_str(f'42{NAMESPACE},4["hello",{{}}]')
        stopping = asyncio.create_task(server.stop(grace=4))
        got = []
        while True:
            message = await ws.receive(timeout=5)
            if message.type is not aiohttp.WSMsgType.TEXT:
                break
            got.append(message.data)
        await stopping
        assert message.type is aiohttp.WSMsgType.CLOSE and message.data == 1012, message
        assert "1" not in got
        # An event read before the close is answered: run (read before the stop) or
        # refused; one the server had not read yet is not (the client sends it again).
        assert len(got) <= 1, got
        for answer in got:
            assert answer.startswith(f"43{NAMESPACE},4["), got
            ack = json.loads(answer.split(",", 1)[1][1:])[0]
            assert ack["ok"] or ack["error"]["params"] == {"reason": "restarting"}, ack
