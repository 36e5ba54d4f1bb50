"""The wire's limits on a message's JSON: how deep it nests and how long it encodes.

The JSON itself is :mod:`bridge.store.codec`'s.
"""

from __future__ import annotations

from typing import Any

from bridge.store.codec import TooDeep, dumps_bytes

# How deep a message may nest lists and objects, the message itself level one. No message
# of the protocol comes near it (a relayed actor.sync's aspect is level five).
MAX_NESTING = 32
_CONTAINERS = (dict, list, tuple)


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
    """The length of ``value`` as compact JSON (what
    :func:`~bridge.store.codec.dumps_bytes` writes), for a size check against ``max_bytes``.

    Raises :class:`~bridge.store.codec.TooDeep` when it nests more than ``max_depth``
    levels (never ``RecursionError``), and ``TypeError``/``ValueError`` when it is not
    JSON. A value over ``max_bytes`` is not walked for its depth: its size alone refuses it."""
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
