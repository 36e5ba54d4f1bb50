"""Malformed input gets one answer, over the real wire: a message nested far too deep
(socket and HTTP), a query number that is a digit only to Unicode, and a valid body that
arrives in several TCP segments (DESIGN "Reach and trust": bad input gets a clear error
and changes nothing; no message crashes a handler)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from bridge.service.protocol import NAMESPACE
from bridge.transport.codec import MAX_NESTING
from tests.bridge_process import Bridge
from tests.conftest import API, Connect, bearer
from tests.raw_socket import RawSocket
from tests.seats import gm_auth


def nested(depth: int) -> Any:
    """A list inside a list ... ``depth`` levels deep, built without recursion."""
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def nested_text(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.fixture
def deep_recursion() -> Iterator[None]:
    """Room for the python-socketio client (stdlib json) to encode a very deep message:
    the test's own side, not the bridge's, which runs in its own process."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(max(before, 20_000))
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


def assert_no_traceback(bridge: Bridge) -> None:
    text = bridge.log_text()
    assert "Traceback" not in text and "RecursionError" not in text, text[-3000:]


async def test_a_socket_message_nested_a_thousand_deep_gets_one_invalid_ack_and_no_traceback(
    bridge: Bridge, world: tuple[str, str], connect: Connect, deep_recursion: None
) -> None:
    gm = await connect(world[0], key=world[1], user="gm")
    for depth in (1_000, 300, MAX_NESTING + 1):
        ack = await gm.call("actor.sync", {"actor": nested(depth)}, namespace=NAMESPACE, timeout=10)
        assert ack["ok"] is False and ack["error"]["code"] == "invalid", (depth, ack)
        assert f"deeper than {MAX_NESTING}" in ack["error"]["message"], ack
    # Inside a relay envelope the same: the whole frame counts.
    relayed = await gm.call(
        "relay",
        {"user": "paul", "event": "world.state", "payload": {"request_id": "x", "n": nested(900)}},
        namespace=NAMESPACE,
        timeout=10,
    )
    assert relayed["error"]["code"] == "invalid", relayed
    # The connection plays on: one answer per message, and the next message is served.
    state = await gm.call("world.state", {"request_id": "after"}, namespace=NAMESPACE, timeout=10)
    assert state["ok"] is True, state
    assert_no_traceback(bridge)


async def test_a_socket_frame_nested_past_the_decoder_closes_nothing_but_itself(
    bridge: Bridge, world: tuple[str, str]
) -> None:
    # Deeper than any JSON decoder takes: the frame cannot be read, so it gets no ack (its
    # ack id is unreadable with it); the connection and the bridge go on, without a traceback.
    raw = await RawSocket.open(bridge.url)
    try:
        joined = await raw.join(gm_auth(world))
        assert joined.startswith("0" + NAMESPACE), joined
        await raw.send(f'2{NAMESPACE},1["actor.sync",{{"actor":{nested_text(5_000)}}}]')
        state = await raw.call(2, "world.state", {"request_id": "after"})
        assert state["ok"] is True, state
    finally:
        await raw.close()
    assert_no_traceback(bridge)


def test_an_http_body_nested_two_thousand_deep_is_refused_with_400_not_500(
    bridge: Bridge, world: tuple[str, str]
) -> None:
    base = f"{bridge.url}{API}/{world[0]}"
    for depth in (2_000, 1_000, 300, MAX_NESTING + 1):
        for path in ("/actions", "/webhooks", "/scene/end"):
            answer = httpx.post(
                f"{base}{path}", content=nested_text(depth).encode(), headers=bearer(world[1])
            )
            assert answer.status_code == 400, (depth, path, answer.text)
            body = answer.json()
            assert body["ok"] is False and body["error"]["code"] == "invalid", body
            assert f"deeper than {MAX_NESTING}" in body["error"]["message"], body
    assert_no_traceback(bridge)


def test_a_limit_of_superscript_two_or_other_unicode_digits_is_422_naming_limit(
    bridge: Bridge, world: tuple[str, str]
) -> None:
    base = f"{bridge.url}{API}/{world[0]}"
    # "²".isdigit() is true and int("²") raises; int() reads U+0661 (Arabic-Indic one) as 1.
    for value in ("\u00b2", "\u0661", "\uff11", "\u00b9\u00b2", "1\u00b2", " 1", "+1", "1_0"):
        for path, field in (("/history", "limit"), ("/webhooks", "limit"), ("/history", "before")):
            answer = httpx.get(f"{base}{path}", params={field: value}, headers=bearer(world[1]))
            assert answer.status_code == 422, (path, field, value, answer.text)
            assert answer.json()["error"]["code"] == "invalid"
            assert answer.json()["error"]["field"] == field, (path, value, answer.json())
    assert_no_traceback(bridge)


async def _send_in_parts(port: int, parts: list[bytes], pause: float) -> tuple[int, Any]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for n, part in enumerate(parts):
            if n:
                await asyncio.sleep(pause)
            writer.write(part)
            await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        status = int(head.split(b" ", 2)[1])
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        return status, json.loads(await asyncio.wait_for(reader.readexactly(length), 10))
    finally:
        writer.close()
        await writer.wait_closed()


async def test_a_body_sent_in_three_tcp_writes_with_pauses_is_read_whole(
    bridge: Bridge, world: tuple[str, str]
) -> None:
    body = json.dumps({"request_id": "split-body-1"}).encode()
    head = (
        f"POST {API}/{world[0]}/scene/end HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{bridge.port}\r\n"
        f"Authorization: Bearer {world[1]}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    third = len(body) // 3
    parts = [head + body[:third], body[third : 2 * third], body[2 * third :]]
    status, answer = await _send_in_parts(bridge.port, parts, pause=0.3)
    assert status == 200, answer
    assert answer["ended_scene"] == 1
    # Chunked, in three writes too.
    chunked_head = head.replace(
        f"Content-Length: {len(body)}\r\n".encode(), b"Transfer-Encoding: chunked\r\n"
    )
    again = json.dumps({"request_id": "split-body-2"}).encode()
    chunks = [b"%x\r\n%s\r\n" % (len(piece), piece) for piece in (again[:5], again[5:])]
    status, answer = await _send_in_parts(
        bridge.port, [chunked_head + chunks[0], chunks[1], b"0\r\n\r\n"], pause=0.3
    )
    assert status == 200, answer
    assert answer["ended_scene"] == 2
