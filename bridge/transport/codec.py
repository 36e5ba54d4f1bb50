"""One fast JSON codec (orjson) for the store and for python-socketio's ``json=``.

python-socketio calls ``dumps(obj, **kwargs)`` and expects ``str``, and
``loads(text, **kwargs)``; orjson returns bytes and takes no such keywords, hence
these thin wrappers. orjson's output is compact JSON, which is all Socket.IO needs.
The hash chain keeps its own canonical form (:mod:`bridge.store.chain`).
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps_bytes(value: Any) -> bytes:
    """Compact JSON as UTF-8 bytes (what the stores write).

    What orjson refuses (integers beyond 64 bits, non-string keys) goes through the
    standard library, so nothing that encoded before fails now."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


# How deep a message may nest lists and objects, the message itself level one. No message
# of the protocol comes near it (a relayed actor.sync's aspect is level five).
MAX_NESTING = 32
_CONTAINERS = (dict, list, tuple)


class TooDeep(ValueError):
    """A value nests lists and objects deeper than allowed."""


def nests_deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists and dicts more than ``limit`` levels deep (the value
    itself is level one). Goes level by level, so no depth can exhaust Python's stack."""
    level = [value] if isinstance(value, _CONTAINERS) else []
    for _ in range(limit):
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, _CONTAINERS)
        ]
    return bool(level)


def encoded_size(value: Any, max_depth: int, max_bytes: int) -> int:
    """The length of ``value`` as compact JSON (what :func:`dumps_bytes` writes), for a
    size check against ``max_bytes``.

    Raises :class:`TooDeep` when it nests more than ``max_depth`` levels (never
    ``RecursionError``), and ``TypeError``/``ValueError`` when it is not JSON. A value
    over ``max_bytes`` is not walked for its depth: its size alone refuses it."""
    try:
        encoded = dumps_bytes(value)
    except RecursionError:
        raise TooDeep(f"nested deeper than {max_depth} levels") from None
    # Nesting past the limit takes more brackets than the limit: only a value with that
    # many needs the walk.
    if (
        len(encoded) <= max_bytes
        and encoded.count(b"[") + encoded.count(b"{") > max_depth
        and nests_deeper_than(value, max_depth)
    ):
        raise TooDeep(f"nested deeper than {max_depth} levels")
    return len(encoded)


def dumps(value: Any, **_kwargs: Any) -> str:
    """Compact JSON text; keywords (``separators=...``) are accepted and ignored."""
    return dumps_bytes(value).decode("utf-8")


def loads(text: str | bytes | bytearray, **_kwargs: Any) -> Any:
    """Parse JSON text or bytes; keywords are accepted and ignored.

    Input orjson refuses but the standard library reads (integers beyond 64 bits,
    NaN) is read as before, so such a message still reaches validation and gets a
    clear error rather than failing in the transport. Text nested too deep to read
    raises :class:`TooDeep` (a ``ValueError``), never ``RecursionError``."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(text)
    except RecursionError:
        # Nested past what orjson reads (1024 levels): refused as any undecodable text is.
        raise TooDeep("nested too deep to decode") from None
