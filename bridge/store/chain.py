"""The event log's hash chain: each event carries the hash of the one before."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

GENESIS_HASH = "0" * 64


def canonical_json(value: Any) -> str:
    """One byte-exact JSON form: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def event_hash(prev_hash: str, seq: int, event_type: str, payload: Any, created_at: str) -> str:
    """SHA-256 over the previous hash and the event's canonical form."""
    body = canonical_json(
        {"prev": prev_hash, "seq": seq, "type": event_type, "payload": payload, "at": created_at}
    )
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
        if event_hash(prev_hash, seq, event_type, payload, created_at) != digest:
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
