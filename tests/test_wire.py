"""Hostile frames over the real socket: reserved event names, odd names, unbounded numbers,
frames the Socket.IO decoder cannot parse (DESIGN "Trust": no message crashes a handler)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, get_args

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bridge.service.protocol import EVENT_OF, INTENTS, NAMESPACE, ErrorCode
from tests.bridge_process import Bridge
from tests.fuzzing import examples
from tests.raw_socket import RawSocket
from tests.seats import Seat, gm_auth, player_auth

OpenRaw = Callable[..., Awaitable[RawSocket]]


@pytest.fixture
async def raw(bridge: Bridge) -> AsyncIterator[OpenRaw]:
    """Raw websockets joined to ``/fate`` with the given handshake; closed at the end."""
    opened: list[RawSocket] = []

    async def _open(auth: dict[str, Any]) -> RawSocket:
        sock = await RawSocket.open(bridge.url)
        opened.append(sock)
        joined = await sock.join(auth)
        assert joined.startswith("0" + NAMESPACE), joined
        return sock

    yield _open
    for sock in opened:
        await sock.close()


async def test_a_client_sent_connect_event_never_reaches_the_connect_handler(
    raw: OpenRaw, world: tuple[str, str]
) -> None:
    # DESIGN Trust: who a socket is comes from its handshake alone. `connect` and `disconnect`
    # sent as events are not intents: refused like any unknown event, identity unchanged.
    paul = await raw(player_auth(world, "paul"))
    first = await paul.call(1, "hello", {"request_id": "h1"})
    assert first["ok"] and first["data"]["user"] == "paul", first
    as_gm = gm_auth(world, "mallory")
    for n, name in enumerate(["connect", "disconnect"], start=2):
        ack = await paul.call(n, name, {})
        assert ack["ok"] is False and ack["error"]["code"] == "unknown_event", ack
    # The exact frame from the report: an event named connect carrying a GM handshake.
    await paul.send(f'2{NAMESPACE},4["connect",{{}},{json.dumps(as_gm)}]')
    assert (await paul.wait_ack(4))[0]["error"]["code"] == "unknown_event"
    again = await paul.call(5, "hello", {"request_id": "h2"})
    assert again["data"]["user"] == "paul" and again["data"]["role"] == "player", again
    # The same nonce: no new one was minted (nor presence counted) for the fake connects.
    assert again["data"]["bind_nonce"] == first["data"]["bind_nonce"]
    forbidden = await paul.call(6, "actor.sync", {"request_id": "s", "actor": {}})
    assert forbidden["error"]["code"] in {"unbound", "invalid"}, forbidden


async def test_reserved_event_names_go_through_the_rate_limiter(
    raw: OpenRaw, world: tuple[str, str]
) -> None:
    paul = await raw(player_auth(world, "paul"))
    frames = [
        f'2{NAMESPACE},{n}["connect",{{}},{json.dumps(player_auth(world, f"u{n}"))}]'
        for n in range(1, 121)
    ]
    for frame in frames:
        await paul.send(frame)
    acks = [(await paul.wait_ack(n))[0] for n in range(1, 121)]
    codes = [a["error"]["code"] for a in acks]
    assert set(codes) == {"unknown_event", "rate_limited"}, set(codes)
    assert codes.count("rate_limited") >= 60


WEIRD_NAMES: list[tuple[Any, str]] = [
    (["hello"], "unknown_event"),
    ({"event": "hello"}, "unknown_event"),
    (7, "unknown_event"),
    (None, "unknown_event"),
    (True, "unknown_event"),
    ("", "unknown_event"),
    ("connect_error", "unknown_event"),
    ("__init__", "unknown_event"),
    ("on_hello", "unknown_event"),
]


@pytest.mark.parametrize(("name", "code"), WEIRD_NAMES)
async def test_event_names_that_are_not_intents_get_an_error_ack(
    raw: OpenRaw, world: tuple[str, str], name: Any, code: str
) -> None:
    sock = await raw(gm_auth(world))
    ack = await sock.call(1, name, {"request_id": "x"})
    assert ack["ok"] is False and ack["error"]["code"] == code, ack
    assert (await sock.call(2, "hello", {"request_id": "still"}))["ok"] is True


@pytest.mark.parametrize(
    "body",
    [
        "[]",
        '"hello"',
        "{}",
        "true",
        "",
        '["hello"]',
        '["hello",{"request_id":"a"},{"x":1}]',
        '["hello",NaN]',
        '["world.sync",{"request_id":"a","since":Infinity}]',
    ],
)
async def test_event_frames_of_the_wrong_shape_get_an_error_ack(
    raw: OpenRaw, world: tuple[str, str], body: str
) -> None:
    sock = await raw(gm_auth(world))
    await sock.send(f"2{NAMESPACE},1{body}")
    ack = (await sock.wait_ack(1))[0]
    assert ack["ok"] is False and ack["error"]["code"] in {"invalid", "unknown_event"}, ack
    assert (await sock.call(2, "hello", {"request_id": "still"}))["ok"] is True


@pytest.mark.parametrize(
    ("event", "payload", "field"),
    [
        ("world.sync", {"request_id": "s", "since": 2**63}, "since"),
        ("world.sync", {"request_id": "s", "since": 10**90}, "since"),
        ("world.sync", {"request_id": "s", "since": -(2**63) - 1}, "since"),
        ("world.sync", {"request_id": "s", "since": 2**53}, "since"),
    ],
)
async def test_every_integer_is_bounded(
    raw: OpenRaw, world: tuple[str, str], event: str, payload: Any, field: str
) -> None:
    sock = await raw(gm_auth(world))
    ack = await sock.call(1, event, payload)
    assert ack["ok"] is False and ack["error"]["code"] == "invalid", ack
    assert ack["error"]["field"] == field
    largest = await sock.call(2, "world.sync", {"request_id": "t", "since": 2**53 - 1})
    assert largest["ok"] is True, largest


DEEP = "[" * 1200 + "]" * 1200
MALFORMED = [
    # (frame, the ack id the bridge can still read from it, or None)
    (f'2{NAMESPACE},7["hello",{{"request_id":"d","x":{DEEP}}}]', 7),
    (f'2{NAMESPACE},{"1" * 101}["hello",{{"request_id":"i"}}]', None),
    (f'2{NAMESPACE},9["hello",{{"request_id":', 9),
    (f'2{NAMESPACE},11["hello",{{"request_id":"n","x":{"9" * 5000}}}]', 11),
    (f'51-{NAMESPACE},13["hello",{{"_placeholder":true,"num":0}}]', 13),
    (f"4{NAMESPACE},{{}}", None),
    (f"9{NAMESPACE},14[]", None),
    ("x", None),
]


@pytest.mark.parametrize(("frame", "ack_id"), MALFORMED)
async def test_frames_the_decoder_cannot_parse_get_a_notice_and_one_log_line(
    bridge: Bridge, raw: OpenRaw, world: tuple[str, str], frame: str, ack_id: int | None
) -> None:
    sock = await raw(gm_auth(world))
    await sock.send(frame)
    notice = await sock.wait_event("notice")
    assert notice["level"] == "error" and notice["code"] == "malformed_frame", notice
    assert notice["message"]
    if ack_id is not None:
        ack = (await sock.wait_ack(ack_id))[0]
        assert ack["ok"] is False and ack["error"]["code"] == "invalid", ack
    assert (await sock.call(2, "hello", {"request_id": "after"}))["ok"] is True
    log = bridge.log_text()
    assert "Traceback" not in log, log
    assert len([line for line in log.splitlines() if "malformed frame" in line]) == 1, log


async def test_malformed_frames_are_counted_per_connection(
    bridge: Bridge, raw: OpenRaw, world: tuple[str, str]
) -> None:
    sock = await raw(gm_auth(world))
    other = await raw(gm_auth(world, "gm2"))
    for n in range(3):
        await sock.send(f'2{NAMESPACE},{n + 1}["hello",{{')
        await sock.wait_ack(n + 1)
    await other.send(f'2{NAMESPACE},1["hello",{{')
    await other.wait_ack(1)
    log = [line for line in bridge.log_text().splitlines() if "malformed frame" in line]
    assert [line.split("malformed frame ")[1].split()[0] for line in log] == [
        "#1",
        "#2",
        "#3",
        "#1",
    ], log


async def test_a_second_namespace_connect_on_one_socket_changes_nothing(
    raw: OpenRaw, world: tuple[str, str]
) -> None:
    paul = await raw(player_auth(world, "paul"))
    first = await paul.call(1, "hello", {"request_id": "h1"})
    await paul.send(f"0{NAMESPACE},{json.dumps(gm_auth(world, 'mallory'))}")
    await asyncio.sleep(0)  # nothing to wait for: the answer below must not have changed
    again = await paul.call(2, "hello", {"request_id": "h2"})
    assert again["ok"], again
    assert (again["data"]["user"], again["data"]["role"]) == ("paul", "player")
    assert again["data"]["bind_nonce"] == first["data"]["bind_nonce"]


# --- fuzzing every intent over the socket ------------------------------------------------

KNOWN_CODES = set(get_args(ErrorCode)) - {"internal"}


def test_every_event_has_a_model_of_its_own() -> None:
    # An answer is kept under its event and request id (service.session.request_key).
    assert sorted(EVENT_OF.values()) == sorted(INTENTS)


IDS = ["brousseau", "margot", "ghoul", "paul", "gm", "a1", "a2", "c1", "x1", "brousseau.hc", "mild"]
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.sampled_from(IDS)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)


SKILLS = ["Athletics", "Notice", "Lore", "Fight", "Will"]


def from_schema(schema: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> Any:
    """Values shaped by one JSON Schema node: mostly valid, at times any JSON (bounded)."""
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[1]]
    for union in ("anyOf", "oneOf"):
        if union in schema:
            return st.one_of([from_schema(s, defs, depth) for s in schema[union]])
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "integer":
        low, high = schema.get("minimum", -50), schema.get("maximum", 50)
        return st.integers(max(low, -50) - 1, min(high, 50) + 1)
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        names = st.sampled_from(IDS + SKILLS)
        return st.one_of(names, names, names, st.text(max_size=12))
    if kind == "null":
        return st.none()
    if depth > 3:
        return SCALARS
    if kind == "array":
        items = from_schema(schema.get("items", {}), defs, depth + 1)
        return st.lists(items, max_size=min(schema.get("maxItems", 4), 4))
    if kind == "object" and "properties" in schema:
        props = {k: from_schema(v, defs, depth + 1) for k, v in schema["properties"].items()}
        required = {k: props.pop(k) for k in schema.get("required", []) if k in props}
        return st.fixed_dictionaries(required, optional=props)
    if kind == "object":
        extra = schema.get("additionalProperties")
        # ``true`` (any value, as a relay's payload) is any JSON.
        values = from_schema(extra if isinstance(extra, dict) else {}, defs, depth + 1)
        return st.dictionaries(st.sampled_from(IDS + SKILLS), values, max_size=3)
    return JSON


def intent_payloads(event: str) -> Any:
    schema = INTENTS[event].model_json_schema()
    shaped = from_schema(schema, schema.get("$defs", {}))
    return st.one_of(shaped, shaped, shaped, JSON)


PAYLOADS = {event: intent_payloads(event) for event in INTENTS}
# A relay envelope mostly carries another intent shaped like its own model.
PAYLOADS["relay"] = st.one_of(
    PAYLOADS["relay"],
    st.sampled_from(sorted(INTENTS)).flatmap(
        lambda inner: st.fixed_dictionaries(
            {"user": st.sampled_from(["paul", "anna", "gm"]), "event": st.just(inner)},
            optional={"payload": PAYLOADS[inner]},
        )
    ),
)


@st.composite
def frames(draw: st.DrawFn) -> tuple[str, Any, Any]:
    """A seat, an event name (mostly real) and a payload (mostly shaped like its model)."""
    seat = draw(st.sampled_from(["gm", "gm", "paul", "anna"]))
    odd_name = draw(st.integers(0, 9)) == 0
    event: Any = (
        draw(st.sampled_from(["connect", "disconnect"]) | JSON)
        if odd_name
        else draw(st.sampled_from(sorted(INTENTS)))
    )
    if not isinstance(event, str) or event not in PAYLOADS:
        return seat, event, draw(JSON)
    payload = draw(PAYLOADS[event])
    if isinstance(payload, dict) and draw(st.integers(0, 9)) > 0:
        payload["request_id"] = f"f{draw(st.integers(0, 10**9))}"
    return seat, event, payload


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(frame=frames())
# Found by `make fuzz`: the rules' refusals of an undo carried codes the wire did not list.
@example(frame=("gm", "history.undo", {"request_id": "brousseau"}))
@example(frame=("gm", "history.undo", {"request_id": "u1", "back_to": 10**6}))
@example(frame=("gm", "relay", {"user": "paul", "event": "relay", "payload": {"user": "paul"}}))
@example(frame=("paul", "relay", {"user": "anna", "event": "hello", "payload": {}}))
async def test_no_input_reaches_a_handler_crash(
    table: dict[str, Seat], frame: tuple[str, Any, Any]
) -> None:
    # DESIGN Trust: whatever a client sends, it gets an ok ack or an error ack with a known
    # code, never `internal`, and the bridge keeps serving.
    seat, event, payload = frame
    client = table[seat].client
    for _ in range(50):
        ack = await client.call(event, payload, namespace=NAMESPACE, timeout=10)
        if ack.get("error", {}).get("code") != "rate_limited":
            break
        await asyncio.sleep(0.1)  # let the bucket refill: the fuzzer wants the handlers
    assert isinstance(ack, dict) and isinstance(ack.get("ok"), bool), ack
    if not ack["ok"]:
        assert ack["error"]["code"] in KNOWN_CODES, (event, payload, ack)


def is_join_answer(frame: str) -> bool:
    return frame.startswith(("0" + NAMESPACE, "4" + NAMESPACE))


async def test_leaving_and_joining_again_on_one_websocket_is_rate_limited(
    raw: OpenRaw, world: tuple[str, str]
) -> None:
    # Each join is a fresh handshake with a fresh rate bucket: joins themselves are limited
    # (and a socket that goes on while refused, a stranger again, is cut by its budget).
    sock = await raw(player_auth(world, "bob"))
    answers = []
    for n in range(12):
        before = len(sock.frames)
        try:
            await sock.send(f"1{NAMESPACE},")
            await sock.send(f"0{NAMESPACE},{json.dumps(player_auth(world, f'bob{n}'))}")
            answers.append(await sock.wait_frame(is_join_answer, since=before))
        except (AssertionError, ConnectionError):
            assert sock.closed.is_set()
            break
    refused = [a for a in answers if a.startswith("4" + NAMESPACE)]
    assert refused and all("rate_limited" in a for a in refused), answers
