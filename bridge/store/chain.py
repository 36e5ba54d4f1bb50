"""The event log's hash chain: each event carries the hash of the one before."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, Protocol

import orjson

GENESIS_HASH = "0" * 64


# Every digit as "0", so one literal search finds a digit followed by ".", "e" or "E".
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_DIGIT_THEN_FLOAT_MARK = re.compile(rb"0[.eE]")


def _holds_float(encoded: bytes) -> bool:
    """Whether orjson's compact JSON ``encoded`` holds a float (yes, too, when an escaped
    quote hides where its strings end).

    Every float orjson writes has a digit right before its ``.`` or its exponent's ``e``
    (``0.5``, ``1e+20``, ``2.5e-05``; never ``.5``): text with no digit so followed holds
    none, whatever its strings are. That is most event payloads, told in two C passes
    (mapping the digits, then one literal search). Else: outside its strings, compact
    JSON has only brackets, ``:``, ``,``, numbers, ``true``, ``false`` and ``null``: a
    float is the only number with a ``.`` or an exponent, and true and false hold the
    only other ``e``. Splitting at the quotes finds the strings in C, several times
    faster than a regular expression over every byte."""
    if _DIGIT_THEN_FLOAT_MARK.search(encoded.translate(_DIGITS_AS_ZERO)) is None:
        return False
    if b'\\"' in encoded:
        return True
    outside = b"".join(encoded.split(b'"')[::2])
    return (
        b"." in outside
        or b"E" in outside
        or outside.count(b"e") != outside.count(b"true") + outside.count(b"false")
    )


def canonical_json(value: Any) -> str:
    """One byte-exact JSON form: sorted keys, no spaces, UTF-8 kept (the standard
    library's encoder defines it; every hash in every log was taken over this form)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_bytes(value: Any) -> bytes:
    """``canonical_json(value)`` as UTF-8, byte for byte, from orjson where it agrees.

    orjson with sorted keys writes the same bytes for every JSON value without a float
    (sorted by code point, the same escapes, no spaces); what it refuses (integers
    beyond 64 bits, keys that are not strings, lone surrogates) and anything holding a
    float (orjson writes ``2.5e-05`` as ``0.000025``) go to the reference encoder.
    Non-finite floats (``NaN``: not JSON, never in an event's payload, written as
    ``null`` by orjson) are the one difference left; :func:`verify_chain` uses the
    reference, so a stored log holding one is checked exactly as before.
    tests/test_chain.py proves the agreement.
    """
    try:
        fast = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return canonical_json(value).encode("utf-8")
    return _canonical_of_sorted(fast, lambda: value)


def _canonical_of_sorted(fast: bytes, value: Callable[[], Any]) -> bytes:
    """``canonical_bytes`` of ``value()``, given ``fast``: orjson's sorted-keys encoding
    of it, which is the answer unless it holds a float (see :func:`canonical_bytes`)."""
    if _holds_float(fast):
        return canonical_json(value()).encode("utf-8")
    return fast


def _body(prev_hash: str, seq: int, event_type: str, payload: Any, created_at: str) -> Any:
    return {"prev": prev_hash, "seq": seq, "type": event_type, "payload": payload, "at": created_at}


def event_hash(prev_hash: str, seq: int, event_type: str, payload: Any, created_at: str) -> str:
    """SHA-256 over the previous hash and the event's canonical form."""
    return chained(prev_hash, seq, event_type, payload, created_at)[0]


def chained(
    prev_hash: str, seq: int, event_type: str, payload: Any, created_at: str
) -> tuple[str, bytes]:
    """The event's hash, as :func:`event_hash`, and its payload's canonical JSON (a
    JSON text of the payload that a store may keep as it is).

    The hashed body's keys sorted are at, payload, prev, seq, type: its canonical form is
    the payload's with the other four around it, so the payload is encoded once."""
    encoded = canonical_bytes(payload)
    return _hash_around(prev_hash, seq, event_type, encoded, created_at, lambda: payload), encoded


class Record(Protocol):
    """What :func:`chained_record` needs of an event: its dump, and the dump's JSON
    with keys sorted as orjson writes it (``bridge.rules.state.Frozen``)."""

    def model_dump(self, *, mode: Literal["json", "python"] = ...) -> dict[str, Any]: ...

    def sorted_json(self) -> bytes: ...


def chained_record(
    prev_hash: str, seq: int, event_type: str, record: Record, created_at: str
) -> tuple[str, bytes]:
    """:func:`chained` of ``record.model_dump(mode="json")``, the same hash and bytes,
    from the record's own sorted JSON: the dump is built only where that is not the
    canonical form (a float) or orjson refuses the record."""
    try:
        fast = record.sorted_json()
    except TypeError:
        return chained(prev_hash, seq, event_type, record.model_dump(mode="json"), created_at)

    def payload() -> Any:
        return record.model_dump(mode="json")

    encoded = _canonical_of_sorted(fast, payload)
    return _hash_around(prev_hash, seq, event_type, encoded, created_at, payload), encoded


def _hash_around(
    prev_hash: str,
    seq: int,
    event_type: str,
    encoded: bytes,
    created_at: str,
    payload: Callable[[], Any],
) -> str:
    """The event's hash, its payload's canonical JSON being ``encoded`` (``payload()``
    gives the payload itself, for the reference form)."""
    try:
        body = b"".join(
            (
                b'{"at":',
                orjson.dumps(created_at),
                b',"payload":',
                encoded,
                b',"prev":',
                orjson.dumps(prev_hash),
                b',"seq":',
                str(int(seq)).encode("ascii"),
                b',"type":',
                orjson.dumps(event_type),
                b"}",
            )
        )
    except TypeError:  # text orjson refuses (a lone surrogate): the reference form
        body = canonical_bytes(_body(prev_hash, seq, event_type, payload(), created_at))
    return hashlib.sha256(body).hexdigest()


def reference_event_hash(
    prev_hash: str, seq: int, event_type: str, payload: Any, created_at: str
) -> str:
    """:func:`event_hash` through the reference encoder alone, for any payload a stored
    log may hold (verification reads what is on disk, not what the bridge writes)."""
    body = canonical_json(_body(prev_hash, seq, event_type, payload, created_at))
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def verify_chain(rows: Iterable[tuple[int, str, Any, str, str, str]]) -> int | None:
    """Check ``(seq, type, payload, created_at, prev_hash, hash)`` rows in order.

    Returns ``None`` when the chain is intact, else the first bad ``seq``.
    """
    expected_prev = GENESIS_HASH
    expected_seq = 1
    for seq, event_type, payload, created_at, prev_hash, digest in rows:
        if seq != expected_seq or prev_hash != expected_prev:
            return seq
        if reference_event_hash(prev_hash, seq, event_type, payload, created_at) != digest:
            return seq
        expected_prev = digest
        expected_seq += 1
    return None


def disagreeing_anchors(
    hashes: Mapping[int, str], anchors: Iterable[tuple[int, str]]
) -> list[tuple[int, str, str | None]]:
    """The ``(seq, hash)`` anchors (kept outside the bridge) the log's ``hashes`` by seq
    disagree with, oldest first, as ``(seq, anchored hash, log hash or None)``.

    Rewriting any past event and re-hashing the chain changes the hash of every event from
    there on, so every anchor at or after the rewrite disagrees; a truncated log lacks them.
    """
    return sorted(
        (seq, digest, hashes.get(seq)) for seq, digest in set(anchors) if hashes.get(seq) != digest
    )
