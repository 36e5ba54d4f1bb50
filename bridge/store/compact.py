"""Compressed text for the stores: the log's rows and the snapshots, as zlib streams.

A packed value is bytes: one format byte, then a deflate stream of the UTF-8 text. Text
stored before packing existed stays a ``str`` and reads back as it is, so a store holds
either and :func:`unpack` gives the same text for both; what a hash was taken over (each
event's payload text) comes back byte for byte.

Formats (never change one; add a number):
  1  a log row (a commit's events, or its emits), a zlib stream with
     :data:`~bridge.store.log_dictionary.LOG_DICTIONARY_V1` as its preset dictionary
  2  anything else (snapshots), plain zlib
  3  a commit's events and emits together (:func:`pack_commit`): one raw deflate stream
     (no header, no checksum) of the events' text, a newline, the emits' text, with the
     same preset dictionary. Compact JSON holds no raw newline, so the first one parts them.

Redis keeps strings its clients read as text: there a packed value is
:func:`pack_text`'s, a marker character then the bytes in Ascii85 (a quarter longer),
and :func:`unpack_text` reads it or the plain JSON stored before.
"""

from __future__ import annotations

import base64
import zlib

from bridge.store.log_dictionary import LOG_DICTIONARY_V1

ROW = 1
PLAIN = 2
COMMIT = 3
# zlib's default: the best size for these rows at a fraction of level 9's time.
LEVEL = 6
# A snapshot (one per world, large, rewritten now and then): zlib's fastest level, a
# fraction of the default level's time for somewhat more bytes.
SNAPSHOT_LEVEL = 1

# A row's compressor (the Redis store's items): a 16 KiB window holds the whole preset
# dictionary and any row, and a state smaller than zlib's default makes the copy each row
# starts from cheaper, for the same size (inflate reads any window up to 32 KiB, so rows
# packed either way read alike).
ROW_WINDOW_BITS = 14
ROW_MEMORY_LEVEL = 6
# Loading a preset dictionary costs more than compressing a small row: each row starts
# from a copy of a compressor that has it loaded already.
_row_compressor = zlib.compressobj(
    LEVEL, zlib.DEFLATED, ROW_WINDOW_BITS, ROW_MEMORY_LEVEL, zdict=LOG_DICTIONARY_V1
)


def pack_row(text: str) -> bytes:
    """A log row (a commit's events or emits, JSON) as stored: format 1."""
    compressor = _row_compressor.copy()
    return bytes((ROW,)) + compressor.compress(text.encode("utf-8")) + compressor.flush()


# A commit's compressor: zlib's level 3 (its fastest matching, which finds the long runs a
# commit shares with the dictionary as well as the lazier levels) and a small state, since
# each commit starts from a copy of it; the window holds the whole dictionary.
COMMIT_LEVEL = 3
COMMIT_WINDOW_BITS = 14
COMMIT_MEMORY_LEVEL = 4
_commit_compressor = zlib.compressobj(
    COMMIT_LEVEL,
    zlib.DEFLATED,
    -COMMIT_WINDOW_BITS,
    COMMIT_MEMORY_LEVEL,
    zdict=LOG_DICTIONARY_V1,
)


def pack_commit(events: str, emits: str) -> bytes:
    """A commit's events and emits (JSON texts, neither holding a raw newline) as stored
    together: format 3."""
    compressor = _commit_compressor.copy()
    body = compressor.compress(events.encode("utf-8"))
    body += compressor.compress(b"\n" + emits.encode("utf-8"))
    return bytes((COMMIT,)) + body + compressor.flush()


def unpack_commit(events: str | bytes, emits: str | bytes) -> tuple[str, str]:
    """A commit row's events and emits texts: from format 3 in ``events`` (``emits`` is
    then empty), or each from its own value in any other format. Raises ``ValueError``
    for a value that does not read whole."""
    if isinstance(events, bytes) and events[:1] == bytes((COMMIT,)):
        decompressor = zlib.decompressobj(-zlib.MAX_WBITS, zdict=LOG_DICTIONARY_V1)
        try:
            raw = decompressor.decompress(events[1:]) + decompressor.flush()
        except zlib.error as exc:
            raise ValueError(f"a packed commit does not read: {exc}") from None
        events_text, newline, emits_text = raw.partition(b"\n")
        if not newline or not decompressor.eof:
            raise ValueError("a packed commit is cut short")
        return events_text.decode("utf-8"), emits_text.decode("utf-8")
    return unpack(events), unpack(emits)


def commit_events(events: str | bytes) -> str:
    """A commit row's events text, whatever its format (see :func:`unpack_commit`)."""
    if isinstance(events, bytes) and events[:1] == bytes((COMMIT,)):
        return unpack_commit(events, b"")[0]
    return unpack(events)


def commit_emits(events: str | bytes, emits: str | bytes) -> str:
    """A commit row's emits text, whatever its format (see :func:`unpack_commit`)."""
    if isinstance(events, bytes) and events[:1] == bytes((COMMIT,)):
        return unpack_commit(events, emits)[1]
    return unpack(emits)


def pack(text: str) -> bytes:
    """Any other text as stored: format 2."""
    return bytes((PLAIN,)) + zlib.compress(text.encode("utf-8"), SNAPSHOT_LEVEL)


# Starts a packed value kept as text: no JSON document starts with it.
TEXT_MARK = "~"


def pack_text(text: str, *, row: bool = True) -> str:
    """A log item (``row``) or any other text packed, as text (see the module's docstring)."""
    packed = pack_row(text) if row else pack(text)
    return TEXT_MARK + base64.a85encode(packed).decode("ascii")


def unpack_text(value: str) -> str:
    """The text of a value :func:`pack_text` packed, or of plain JSON stored as it was."""
    if not value.startswith(TEXT_MARK):
        return value
    return unpack(base64.a85decode(value[len(TEXT_MARK) :]))


def unpack(value: str | bytes) -> str:
    """The text of a stored value, packed (bytes) or written before packing (str).
    Raises ``ValueError`` for bytes in no known format."""
    if isinstance(value, str):
        return value
    if not value:
        raise ValueError("an empty packed value")
    kind, body = value[0], value[1:]
    if kind == ROW:
        decompressor = zlib.decompressobj(zdict=LOG_DICTIONARY_V1)
        raw = decompressor.decompress(body) + decompressor.flush()
    elif kind == PLAIN:
        raw = zlib.decompress(body)
    elif kind == COMMIT:
        raise ValueError("a commit's events and emits are read with unpack_commit")
    else:
        raise ValueError(f"packed value of unknown format {kind}")
    return raw.decode("utf-8")
