"""Compressed text for the stores: the log's rows and the snapshots, as zlib streams.

A packed value is bytes: one format byte, then a zlib stream of the UTF-8 text. Text
stored before packing existed stays a ``str`` and reads back as it is, so a store holds
either and :func:`unpack` gives the same text for both; what a hash was taken over (each
event's payload text) comes back byte for byte.

Formats (never change one; add a number):
  1  the log's rows, with :data:`~bridge.store.log_dictionary.LOG_DICTIONARY_V1` as zlib's
     preset dictionary
  2  anything else (snapshots), plain zlib

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
# zlib's default: the best size for these rows at a fraction of level 9's time.
LEVEL = 6
# A snapshot (one per world, rewritten every dozen actions or so): zlib's fastest level, a
# fifth of level 6's time on a 130 KB state for a third more bytes (about 4.8 KB to 3.6 KB).
SNAPSHOT_LEVEL = 1

# A row's compressor: a 16 KiB window holds the whole preset dictionary and any row, and
# a smaller state than zlib's default (memLevel 8, 32 KiB window) makes the copy each row
# starts from a fifth of the cost, for the same size (inflate reads any window up to 32 KiB,
# so rows packed either way read alike).
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
    else:
        raise ValueError(f"packed value of unknown format {kind}")
    return raw.decode("utf-8")
