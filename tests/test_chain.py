"""The hash chain's canonical form: the fast encoder writes the reference's bytes.

Every hash in every log written so far was taken over the standard library's canonical
JSON (``bridge.store.chain.canonical_json``); the bridge now hashes new events through
orjson (``canonical_bytes``). These tests prove the two agree byte for byte on every JSON
value and on every event the rules emit, and that a chain written the old way verifies.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.rules.dice import QueuedDice, SecureDice
from bridge.rules.engine import apply_all
from bridge.rules.errors import RuleViolation
from bridge.rules.events import EVENT_ADAPTER, CountersPut, Event
from bridge.rules.procedures import settle
from bridge.store import chain
from bridge.store.chain import (
    GENESIS_HASH,
    canonical_bytes,
    canonical_json,
    event_hash,
    reference_event_hash,
    verify_chain,
)
from tests.fuzzing import examples
from tests.test_rules_properties import Roll4, Turn, initial, play_turn, rolls, run, turns


def old_event_hash(prev: str, seq: int, event_type: str, payload: Any, at: str) -> str:
    """The chain's hash exactly as every earlier bridge computed it."""
    body = json.dumps(
        {"prev": prev, "seq": seq, "type": event_type, "payload": payload, "at": at},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


# Any JSON value: every code point a str can hold but lone surrogates (which no UTF-8
# text holds), integers of any size, floats of every magnitude, and text that looks
# like JSON (quotes, escapes, numbers) to try the float guard.
magnitudes = st.builds(
    lambda mantissa, exponent: mantissa * 10.0**exponent,
    st.floats(-10, 10, allow_nan=False),
    st.integers(-30, 30),
)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(-(2**64), 2**64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | magnitudes
    | st.text()
    | st.text(alphabet=':,[]{}"\\.eE-+0123456789\x00\x1f\x7f\u2028é😀'),
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(
            st.text() | st.sampled_from(["a", "é", "😀", "\uffff", "A", ""]), inner, max_size=5
        )
    ),
    max_leaves=30,
)


@settings(max_examples=examples(500))
@given(json_values)
def test_the_fast_canonical_form_is_the_reference_byte_for_byte(value: Any) -> None:
    assert canonical_bytes(value) == canonical_json(value).encode("utf-8")


def test_the_known_disagreements_go_to_the_reference() -> None:
    # Where orjson writes other bytes or refuses, the reference encoder answers.
    for value in (
        1e-7,
        [2.5e-5],
        {"x": 1e16},
        [0.1, -0.0, 1.0],
        2**70,
        -(2**64),
        {1: "int key"},
        {"a": 1e-9, "é": "x"},
        {"at": "12:30:05.1", "x": [1, 2.0]},
        {"k": [3, -4.5e100]},
    ):
        assert canonical_bytes(value) == canonical_json(value).encode("utf-8")


def played_events(turns_list: list[Turn], faces_list: list[Roll4]) -> list[Event]:
    """Every event arbitrary play emits, as its payload would be stored."""
    state = initial()
    dice = QueuedDice(fallback=SecureDice(), rolls=faces_list)
    emitted = []
    for turn in turns_list:
        for command in play_turn(turn):
            try:
                events = settle(state, run(state, command, dice))
            except RuleViolation:
                continue
            state = apply_all(state, events)
            emitted += events
    return emitted


@settings(max_examples=examples(60))
@given(st.lists(turns, min_size=1, max_size=6), st.lists(rolls, min_size=60, max_size=60))
def test_every_played_event_hashes_as_the_old_chain_did(
    turns_list: list[Turn], faces_list: list[Roll4]
) -> None:
    # The property over event payloads, and the old chain: written with the old hash,
    # verified by today's verify_chain, and extended by today's event_hash identically.
    rows, prev = [], GENESIS_HASH
    for seq, domain_event in enumerate(played_events(turns_list, faces_list), start=1):
        payload = domain_event.model_dump(mode="json")
        at = f"2026-01-01T00:00:{seq:09.6f}+00:00"
        assert canonical_bytes(payload) == canonical_json(payload).encode("utf-8")
        digest = old_event_hash(prev, seq, domain_event.type, payload, at)
        assert event_hash(prev, seq, domain_event.type, payload, at) == digest
        # The bridge hashes the record itself, from its own sorted JSON: the same.
        assert chain.chained_record(prev, seq, domain_event.type, domain_event, at) == (
            digest,
            canonical_json(payload).encode("utf-8"),
        )
        rows.append((seq, domain_event.type, payload, at, prev, digest))
        prev = digest
    assert verify_chain(rows) is None


def test_event_bodies_take_the_fast_path() -> None:
    # The agreement above holds whichever way a value goes; this checks that events (with
    # their time stamps, "12:30:05.1" inside a string) need no reference encoding: orjson's
    # sorted bytes are already the canonical form, the float guard lets them through, and
    # the record's own sorted JSON is what the chain keeps and hashes, as the old chain did.
    events = played_events(
        [("b", "overcome", 2, False, False, [], "fail", "wrinkle", False, None)],
        [(1, 0, 0, -1)] * 60,
    )
    assert events
    for seq, domain_event in enumerate(events, start=1):
        payload = domain_event.model_dump(mode="json")
        fast = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)
        at = "2026-01-01T12:30:05.123456+00:00"
        assert fast == canonical_json(payload).encode("utf-8")
        assert not chain._holds_float(fast)
        assert canonical_bytes(payload) == fast
        digest, encoded = chain.chained_record(
            GENESIS_HASH, seq, domain_event.type, domain_event, at
        )
        assert encoded == domain_event.sorted_json() == fast
        assert digest == old_event_hash(GENESIS_HASH, seq, domain_event.type, payload, at)
        assert event_hash(GENESIS_HASH, seq, domain_event.type, payload, at) == digest


def test_no_event_field_holds_a_float() -> None:
    # The one difference orjson keeps (a non-finite float) cannot reach a hash the
    # bridge writes: no event's schema admits a non-integer number.
    def numbers(node: Any) -> list[Any]:
        if isinstance(node, dict):
            found = [node] if node.get("type") == "number" else []
            return found + [n for v in node.values() for n in numbers(v)]
        if isinstance(node, list):
            return [n for v in node for n in numbers(v)]
        return []

    assert numbers(EVENT_ADAPTER.json_schema()) == []


def test_a_stored_non_finite_float_is_verified_as_before() -> None:
    # Verification reads what is on disk; a log holding NaN (a hand-edited one: the
    # store's reader accepts it) hashes there exactly as the old bridge hashed it.
    payload = {"n": float("nan"), "m": float("inf")}
    digest = old_event_hash(GENESIS_HASH, 1, "test", payload, "t")
    assert reference_event_hash(GENESIS_HASH, 1, "test", payload, "t") == digest
    assert verify_chain([(1, "test", payload, "t", GENESIS_HASH, digest)]) is None


def test_text_that_looks_like_numbers_takes_the_fast_path() -> None:
    # Dots and exponents inside strings (names, time stamps, prose) are not floats, and
    # true/false hold the only other "e" outside strings: the float guard lets these through,
    # and orjson's sorted bytes, the answer, are the reference's.
    for value in (
        {"at": "2026-01-01T12:30:05.123456+00:00", "n": 3, "ok": True, "no": False},
        ["1.5", "2e10", "E", {"x.y": [None, -4, "3.0e-2"]}],
        {"name": "Zird the Arcane's momentum", "free": {"gm": 1}},
    ):
        fast = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        assert not chain._holds_float(fast)
        assert canonical_bytes(value) == fast
        assert fast == json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode("utf-8")


@settings(max_examples=examples(500))
@given(json_values)
def test_a_float_is_always_seen(value: Any) -> None:
    # The guard may say yes without a float (an escaped quote), never no with one.
    def floats_in(v: Any) -> bool:
        if isinstance(v, float):
            return True
        if isinstance(v, list):
            return any(floats_in(x) for x in v)
        if isinstance(v, dict):
            return any(floats_in(x) for x in v.values())
        return False

    try:
        encoded = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return  # refused: the reference encoder answers
    if floats_in(value):
        assert chain._holds_float(encoded)


@settings(max_examples=examples(500))
@given(json_values, st.text(), st.text(), st.integers(1, 2**62))
def test_the_chained_body_is_the_reference_form(
    payload: Any, created_at: str, event_type: str, seq: int
) -> None:
    # The body put together around the payload's canonical form hashes as the reference
    # encoder's whole body does, and the payload text kept is the canonical one.
    digest, encoded = chain.chained(GENESIS_HASH, seq, event_type, payload, created_at)
    assert digest == old_event_hash(GENESIS_HASH, seq, event_type, payload, created_at)
    assert encoded == canonical_json(payload).encode("utf-8")
    assert json.loads(encoded) == json.loads(canonical_json(payload))


def test_every_form_of_float_is_seen_and_plain_payloads_need_no_split() -> None:
    # The digit-then-mark guard: each way orjson writes a float puts a digit right
    # before "." or "e"; digits elsewhere (ids, counts, hashes without such a pair) pass.
    for number in (0.5, -0.0, 1.0, 1e20, 1e-07, 2.5e-05, 5e-324, 1.7976931348623157e308, 123.25):
        assert chain._holds_float(orjson.dumps({"a": [1, {"b": number}], "c": "x"}))
    plain = {"type": "action.put", "id": "a12", "seq": 3, "hero.hc": [1, -2], "ok": True}
    assert (
        chain._DIGIT_THEN_FLOAT_MARK.search(orjson.dumps(plain).translate(chain._DIGITS_AS_ZERO))
        is None
    )
    assert not chain._holds_float(orjson.dumps(plain))
    # A digit then "." or "e" inside a string only sends the text on to the exact check.
    assert not chain._holds_float(orjson.dumps({"name": "v1.2 and 3e5", "n": 4}))


class FloatRecord:
    """A stand-in record holding a float, which no event holds: orjson writes it its own way."""

    def model_dump(self, *, mode: str = "python") -> dict[str, Any]:
        return {"ratio": 2.5e-05, "name": "x"}

    def sorted_json(self) -> bytes:
        return orjson.dumps(self.model_dump(), option=orjson.OPT_SORT_KEYS)


def test_a_record_the_fast_form_cannot_hold_is_hashed_from_its_dump() -> None:
    # chained_record gives chained's hash and text whatever the record holds: a float goes
    # to the reference encoder, and so does a number orjson refuses (beyond 64 bits).
    for record, payload in (
        (FloatRecord(), FloatRecord().model_dump()),
        (CountersPut(reason="x", gm_fate_points=2**70, action_count=1, aspect_count=1), None),
    ):
        dumped = payload if payload is not None else record.model_dump(mode="json")
        expected = chain.chained(GENESIS_HASH, 1, "t", dumped, "at")
        assert chain.chained_record(GENESIS_HASH, 1, "t", record, "at") == expected
        assert expected[1] == canonical_json(dumped).encode("utf-8")
