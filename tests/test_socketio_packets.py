"""The wire's Socket.IO v5 packet codec (bridge.transport.packets) against the protocol's
specification: its examples byte for byte, round trips of every packet type with namespaces,
ack ids and binary attachments, and malformed messages refused with a reason and what of the
head could be read; then the wire's refusal of them over a real socket. With
tests/test_engineio_protocol.py this is the wire's contract. The bridge runs no Socket.IO
library: nothing under bridge/ imports one."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.service.protocol import NAMESPACE
from bridge.transport.packets import (
    MAX_ACK_ID,
    MalformedPacket,
    Packet,
    PacketType,
    decode,
    encode,
    encode_binary,
    with_attachments,
)
from tests.socket_stub import EchoService, serving

T = PacketType
BRIDGE = Path(__file__).resolve().parent.parent / "bridge"

# The specification's "Packet encoding" examples: each packet and its encoding.
SPEC_EXAMPLES: list[tuple[Packet, str]] = [
    (Packet(T.CONNECT), "0"),
    (
        Packet(T.CONNECT, "/admin", {"sid": "oSO0OpakMV_3jnilAAAA"}),
        '0/admin,{"sid":"oSO0OpakMV_3jnilAAAA"}',
    ),
    (Packet(T.CONNECT_ERROR, data={"message": "Not authorized"}), '4{"message":"Not authorized"}'),
    (Packet(T.EVENT, data=["foo"]), '2["foo"]'),
    (Packet(T.EVENT, "/admin", ["bar"]), '2/admin,["bar"]'),
    (Packet(T.EVENT, data=["foo"], id=12), '212["foo"]'),
    (Packet(T.ACK, "/admin", ["bar"], 13), '3/admin,13["bar"]'),
    (Packet(T.DISCONNECT), "1"),
    (Packet(T.DISCONNECT, "/admin"), "1/admin,"),
    (
        Packet(T.BINARY_EVENT, data=["baz", {"_placeholder": True, "num": 0}], attachments=1),
        '51-["baz",{"_placeholder":true,"num":0}]',
    ),
    (
        Packet(
            T.BINARY_EVENT,
            "/admin",
            ["baz", {"_placeholder": True, "num": 0}, {"_placeholder": True, "num": 1}],
            attachments=2,
        ),
        '52-/admin,["baz",{"_placeholder":true,"num":0},{"_placeholder":true,"num":1}]',
    ),
    (
        Packet(T.BINARY_ACK, data=["bar", {"_placeholder": True, "num": 0}], id=15, attachments=1),
        '61-15["bar",{"_placeholder":true,"num":0}]',
    ),
    # The sample session's frames (without Engine.IO's "4").
    (Packet(T.CONNECT, "/admin"), "0/admin,"),
    (
        Packet(T.CONNECT, "/admin", {"sid": "-G5j-67EZFp-q59rADQM"}),
        '0/admin,{"sid":"-G5j-67EZFp-q59rADQM"}',
    ),
    (Packet(T.EVENT, "/admin", ["tellme"], 1), '2/admin,1["tellme"]'),
    (
        Packet(T.BINARY_ACK, "/admin", [{"_placeholder": True, "num": 0}], 1, 1),
        '61-/admin,1[{"_placeholder":true,"num":0}]',
    ),
]


@pytest.mark.parametrize(("packet", "encoded"), SPEC_EXAMPLES)
def test_the_specifications_examples_encode_and_decode_exactly(
    packet: Packet, encoded: str
) -> None:
    assert encode(packet) == encoded
    assert decode(encoded) == packet


def test_the_specifications_binary_examples_carry_their_attachments() -> None:
    text, attachments = encode_binary(Packet(T.EVENT, data=["baz", b"\x01\x02\x03\x04"]))
    assert (text, attachments) == (
        '51-["baz",{"_placeholder":true,"num":0}]',
        [b"\x01\x02\x03\x04"],
    )
    text, attachments = encode_binary(Packet(T.EVENT, "/admin", ["baz", b"\x01\x02", b"\x03\x04"]))
    assert text == '52-/admin,["baz",{"_placeholder":true,"num":0},{"_placeholder":true,"num":1}]'
    assert attachments == [b"\x01\x02", b"\x03\x04"]
    assert with_attachments(decode(text), attachments).data == ["baz", b"\x01\x02", b"\x03\x04"]
    text, attachments = encode_binary(Packet(T.ACK, data=["bar", b"\x01\x02\x03\x04"], id=15))
    assert text == '61-15["bar",{"_placeholder":true,"num":0}]'


# --- round trips ---------------------------------------------------------------------------

NAMESPACES = st.one_of(
    st.just("/"),
    st.text(st.characters(exclude_characters=",", codec="utf-8"), max_size=12).map(
        lambda name: "/" + name
    ),
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
ACK_IDS = st.integers(0, MAX_ACK_ID)


def packets() -> st.SearchStrategy[Packet]:
    objects = st.dictionaries(st.text(max_size=5), JSON, max_size=3)
    events = st.lists(JSON, min_size=1, max_size=4)
    return st.one_of(
        st.builds(Packet, st.just(T.CONNECT), NAMESPACES, st.none() | objects),
        st.builds(Packet, st.just(T.DISCONNECT), NAMESPACES),
        st.builds(Packet, st.just(T.EVENT), NAMESPACES, events, st.none() | ACK_IDS),
        st.builds(Packet, st.just(T.ACK), NAMESPACES, st.lists(JSON, max_size=3), ACK_IDS),
        st.builds(Packet, st.just(T.CONNECT_ERROR), NAMESPACES, objects),
    )


@given(packets())
def test_every_packet_type_survives_a_round_trip(packet: Packet) -> None:
    assert decode(encode(packet)) == packet


@given(
    st.sampled_from([T.EVENT, T.ACK]),
    NAMESPACES,
    ACK_IDS,
    st.lists(st.binary(max_size=6), min_size=1, max_size=4),
)
def test_binary_packets_survive_a_round_trip_with_their_attachments(
    kind: PacketType, namespace: str, ack_id: int, blobs: list[bytes]
) -> None:
    data: list[Any] = ["x", {"blobs": blobs}, 7]
    text, attachments = encode_binary(Packet(kind, namespace, data, ack_id))
    decoded = decode(text)
    assert decoded.type == (T.BINARY_EVENT if kind == T.EVENT else T.BINARY_ACK)
    assert (decoded.namespace, decoded.id, decoded.attachments) == (namespace, ack_id, len(blobs))
    assert with_attachments(decoded, attachments).data == data


# --- malformed messages --------------------------------------------------------------------

# (message, the namespace and ack id the refusal says were read, a word of its reason)
MALFORMED: list[tuple[str, str, int | None, str]] = [
    ("", "/", None, "type"),
    ("x", "/", None, "type"),
    ("7", "/", None, "0-6"),
    ("9/fate,14[]", "/", None, "0-6"),
    ("0[1]", "/", None, "object"),
    ('0/fate,"auth"', "/fate", None, "object"),
    ("0/fate,5{}", "/fate", None, "no ack id"),
    ("1/fate,{}", "/fate", None, "no payload"),
    ("2", "/", None, "non-empty array"),
    ("2/fate,3[]", "/fate", 3, "non-empty array"),
    ('2/fate,3{"a":1}', "/fate", 3, "non-empty array"),
    ('2/fate,3"hello"', "/fate", 3, "non-empty array"),
    ("3/fate,[]", "/fate", None, "ack id"),
    ("3/fate,4{}", "/fate", None, "array"),
    ('4/fate,"no"', "/fate", None, "object"),
    ("4/fate,", "/fate", None, "object"),
    ('21-/fate,3["x"]', "/fate", 3, "only binary"),
    ('5/fate,3["x"]', "/fate", 3, "counts"),
    ('511-/fate,3["x"]', "/fate", 3, "more than 10"),
    ('61-/fate,3["x"', "/fate", None, "not JSON"),
    (f'2/fate,{"1" * 101}["x"]', "/fate", None, "ack id past"),
    (f'2/fate,{MAX_ACK_ID + 1}["x"]', "/fate", None, "ack id past"),
    ('2/fate,9["hello",{"request_id":', "/fate", 9, "not JSON"),
    ('2/fate,9["hello"] trailing', "/fate", 9, "not JSON"),
    ("2/fate,9" + "[" * 5000 + "]" * 5000, "/fate", 9, "not JSON"),
]


@pytest.mark.parametrize(("message", "namespace", "ack_id", "reason"), MALFORMED)
def test_malformed_messages_are_refused_with_a_reason_and_the_head_read(
    message: str, namespace: str, ack_id: int | None, reason: str
) -> None:
    with pytest.raises(MalformedPacket) as refused:
        decode(message)
    assert (refused.value.namespace, refused.value.id) == (namespace, ack_id)
    assert reason in refused.value.reason, refused.value.reason


@given(st.text(max_size=40))
def test_decode_answers_any_text_with_a_packet_or_a_refusal(text: str) -> None:
    try:
        packet = decode(text)
    except MalformedPacket:
        return
    encoded = encode(packet)  # what it read, it can write, and read again the same
    assert encode(decode(encoded)) == encoded


def test_attachments_must_be_the_ones_announced() -> None:
    packet = decode('51-/fate,2["x",{"_placeholder":true,"num":0}]')
    with pytest.raises(MalformedPacket, match="1 attachments announced, 2 received"):
        with_attachments(packet, [b"a", b"b"])
    wrong = decode('51-/fate,2["x",{"_placeholder":true,"num":3}]')
    with pytest.raises(MalformedPacket, match="names no attachment"):
        with_attachments(wrong, [b"a"])


@pytest.mark.parametrize(
    "packet",
    [
        Packet(T.EVENT, data=[]),
        Packet(T.EVENT, data="hello"),
        Packet(T.ACK, data=[]),
        Packet(T.DISCONNECT, data={}),
        Packet(T.CONNECT, data=[1]),
        Packet(T.CONNECT_ERROR, data="Unable to connect"),
        Packet(T.EVENT, "admin", ["x"]),
        Packet(T.EVENT, "/a,b", ["x"]),
        Packet(T.EVENT, data=["x"], id=-1),
        Packet(T.EVENT, data=["x"], attachments=1),
    ],
)
def test_the_encoder_refuses_what_the_specification_does_not_allow(packet: Packet) -> None:
    with pytest.raises(ValueError):
        encode(packet)


# --- the wire's refusal, over a real socket -------------------------------------------------


@pytest.mark.parametrize(("message", "namespace", "ack_id", "reason"), MALFORMED)
async def test_a_joined_client_is_answered_what_the_wire_refused(
    message: str, namespace: str, ack_id: int | None, reason: str
) -> None:
    # The bridge answers rather than closes: a notice naming the fault, and the error ack
    # when the message carried an ack id on /fate; the connection goes on.
    async with (
        serving() as (service, url),
        aiohttp.ClientSession() as http,
        http.ws_connect(url + "/socket.io/?EIO=4&transport=websocket") as ws,
    ):
        await ws.receive_str(timeout=5)
        await ws.send_str(f"40{NAMESPACE},{{}}")
        assert (await ws.receive_str(timeout=5)).startswith(f"40{NAMESPACE},")
        await ws.send_str("4" + message)
        notice = await ws.receive_str(timeout=5)
        assert notice.startswith(f'42{NAMESPACE},["notice"'), notice
        assert reason in json.loads(notice[len(f"42{NAMESPACE},") :])[1]["message"]
        if namespace == NAMESPACE and ack_id is not None:
            ack = await ws.receive_str(timeout=5)
            assert ack.startswith(f"43{NAMESPACE},{ack_id}["), ack
            assert json.loads(ack[len(f"43{NAMESPACE},{ack_id}") :])[0]["ok"] is False
        await ws.send_str(f'42{NAMESPACE},99["hello",{{}}]')
        assert (await ws.receive_str(timeout=5)).startswith(f"43{NAMESPACE},99[")
        assert len(service.joined) == 1 and not service.left
    assert isinstance(service, EchoService)


def test_nothing_under_bridge_imports_a_socketio_library() -> None:
    libraries = {"socketio", "engineio"}
    found = []
    for path in sorted(BRIDGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            found += [f"{path}: {name}" for name in names if name.split(".")[0] in libraries]
    assert not found, found
