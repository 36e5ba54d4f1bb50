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


def dumps(value: Any, **_kwargs: Any) -> str:
    """Compact JSON text; keywords (``separators=...``) are accepted and ignored."""
    return dumps_bytes(value).decode("utf-8")


def loads(text: str | bytes | bytearray, **_kwargs: Any) -> Any:
    """Parse JSON text or bytes; keywords are accepted and ignored.

    Input orjson refuses but the standard library reads (integers beyond 64 bits,
    NaN) is read as before, so such a message still reaches validation and gets a
    clear error rather than failing in the transport."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
