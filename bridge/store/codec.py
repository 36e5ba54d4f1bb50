"""The JSON the bridge writes and reads: orjson, with the json module's interface.

``dumps`` returns ``str`` and ``loads`` takes ``str`` or bytes, both accepting and
ignoring the json module's keywords, so this module can stand where ``json`` is expected.
The output is compact JSON. The hash chain keeps its own canonical form
(:mod:`bridge.store.chain`).
"""

from __future__ import annotations

import json
from typing import Any

import orjson


class TooDeep(ValueError):
    """A value nests lists and objects deeper than allowed, or than can be read."""


def dumps_bytes(value: Any) -> bytes:
    """Compact JSON as UTF-8 bytes.

    What orjson refuses (integers beyond 64 bits, non-string keys) goes through the
    standard library, so every value the json module encodes is encoded."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def dumps(value: Any, **_kwargs: Any) -> str:
    """Compact JSON text; keywords (``separators=...``) are accepted and ignored."""
    return dumps_bytes(value).decode("utf-8")


def loads(text: str | bytes | bytearray, **_kwargs: Any) -> Any:
    """Parse JSON text or bytes; keywords are accepted and ignored.

    Input orjson refuses but the standard library reads (integers beyond 64 bits, NaN)
    is read by the latter, so such a message still reaches validation and gets a clear
    error. Text nested too deep to read raises :class:`TooDeep` (a ``ValueError``),
    never ``RecursionError``."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(text)
    except RecursionError:
        # Nested past what orjson reads (1024 levels): refused as any undecodable text is.
        raise TooDeep("nested too deep to decode") from None
