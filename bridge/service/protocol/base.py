"""Shared wire types: the base models, bounded field types, protocol constants."""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    StringConstraints,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

# 3: a commit's emits travel in one ``emits`` frame.
# 4: the sender hears its own commit's emits in its answer (``AckOk.emits``).
# 5: relay mode: the GM's connection carries other users' intents (``relay``).
# 6: R13's intents and views (the three Fate SRD rulesets).
# 7: the wire carries ids and parameters, never sentences: ladder values without words,
#    action and outcome ids without names, refusals with ``params`` (the module words them
#    in its user's language; ``message`` stays the English for HTTP readers).
# 8: an action's answer in an ack that carries the card's emit leaves the card to that
#    emit (``ActionData.card`` null there): the card travels once.
PROTOCOL_VERSION = 8
NAMESPACE = "/fate"
MAX_MESSAGE_BYTES = 64 * 1024

Face = Literal[-1, 0, 1]
# The wire's own names for the rules' (the protocol does not import the rules).
SideName = Literal["actor", "opposition"]
Payment = Literal["fate_point", "free", "boost"]
InvokeEffect = Literal["bonus", "reroll", "hostile"]
DiceRoll = tuple[Face, Face, Face, Face]
# Inbound JSON arrays: strict mode refuses lists for tuples, so bound a list instead.
DiceRollIn = Annotated[list[Face], Field(min_length=4, max_length=4)]

# 128: an unlinked token's character id is its UUID ("Scene.<id>.Token.<id>", 45 characters),
# and a character's aspect ids extend the character id with the sheet's key.
Identifier = Annotated[
    str, StringConstraints(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:\-]+$")
]
RequestId = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:\-]+$")
]

# --- text a player can read (H18) -----------------------------------------
# Every name and text a client sends ends up on everyone's cards, so it must read as what it
# is: no control characters (NUL, ESC and its ANSI sequences, C1), no bidi overrides,
# embeddings or isolates (they reverse or hide what follows), and a name must show something.
# Invisible characters that scripts need stay allowed *inside* text: ZWNJ (Persian), ZWJ
# (emoji sequences), LRM/RLM/ALM (Hebrew, Arabic), variation selectors, tag characters.

CodeRanges = tuple[tuple[int, int], ...]

BIDI_CONTROLS: CodeRanges = ((0x202A, 0x202E), (0x2066, 0x2069))
CONTROL_CHARACTERS: CodeRanges = ((0x0000, 0x001F), (0x007F, 0x009F))
# A name is one line: line and paragraph separators break a card's layout.
LINE_SEPARATORS: CodeRanges = ((0x2028, 0x2029),)
# Multi-line text keeps its tabs and line breaks.
TEXT_LAYOUT = frozenset("\t\n\r")

# Characters that show nothing on their own: every Cc, Cf, Zs, Zl and Zp code point (Unicode
# 14, checked against unicodedata by a test) plus letters and marks that render blank (Hangul
# fillers, braille blank, combining grapheme joiner, variation selectors, Khmer inherent vowels).
INVISIBLE: CodeRanges = (
    (0x0000, 0x0020),
    (0x007F, 0x00A0),
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x115F, 0x1160),
    (0x1680, 0x1680),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x2000, 0x200F),
    (0x2028, 0x202F),
    (0x205F, 0x206F),
    (0x2800, 0x2800),
    (0x3000, 0x3000),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
    (0xE0100, 0xE01EF),
)


def _within(char: str, ranges: CodeRanges) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in ranges)


def is_invisible(char: str) -> bool:
    """True for a character that shows nothing on its own (see ``INVISIBLE``)."""
    return _within(char, INVISIBLE)


def refused_character(char: str, *, multiline: bool) -> bool:
    """True for a character no name (or, with ``multiline``, no text) may contain."""
    if multiline and char in TEXT_LAYOUT:
        return False
    refused = CONTROL_CHARACTERS + BIDI_CONTROLS + (() if multiline else LINE_SEPARATORS)
    return _within(char, refused)


def _spans(ranges: CodeRanges, keep: frozenset[str], *, highest: int) -> list[tuple[int, int]]:
    """The code points of ``ranges`` up to ``highest``, minus ``keep``, as sorted
    inclusive spans with no two adjacent."""
    points = sorted(
        {c for low, high in ranges for c in range(low, min(high, highest) + 1)}
        - {ord(k) for k in keep}
    )
    spans: list[tuple[int, int]] = []
    for code in points:
        if spans and spans[-1][1] == code - 1:
            spans[-1] = (spans[-1][0], code)
        else:
            spans.append((code, code))
    return spans


def _regex_class(ranges: CodeRanges, *, keep: frozenset[str] = frozenset()) -> str:
    """A negated-class body for the BMP part of ``ranges`` minus ``keep`` (portable escapes:
    ECMA-262 with or without the ``u`` flag, Rust's and Python's regex)."""
    spans = _spans(ranges, keep, highest=0xFFFF)
    return "".join(
        f"\\u{low:04x}" if low == high else f"\\u{low:04x}-\\u{high:04x}" for low, high in spans
    )


def text_pattern(*, multiline: bool, required: bool) -> str:
    """The JSON Schema ``pattern`` for readable text: what a regex can say of ``readable``.

    It refuses the refused characters and, when ``required``, text with nothing visible in
    the Basic Multilingual Plane; NFC and the astral invisible characters are the bridge's
    check alone."""
    keep = TEXT_LAYOUT if multiline else frozenset()
    refused_ranges = CONTROL_CHARACTERS + BIDI_CONTROLS + (() if multiline else LINE_SEPARATORS)
    refused = _regex_class(refused_ranges, keep=keep)
    blank = _regex_class(refused_ranges + INVISIBLE)
    visible = f"[^{refused}]*[^{blank}][^{refused}]*"
    return f"^{visible}$" if required else f"^(?:{visible})?$"


def _char_class(ranges: CodeRanges, *, keep: frozenset[str] = frozenset(), negated: bool) -> str:
    """A Python regex character class of ``ranges`` minus ``keep`` (every code point
    escaped, astral ones too, so no character is special inside it)."""
    spans = _spans(ranges, keep, highest=0x10FFFF)
    body = "".join(f"\\U{low:08x}-\\U{high:08x}" for low, high in spans)
    return f"[{'^' if negated else ''}{body}]"


# What ``readable`` looks for, as one regular-expression scan each rather than a range
# search per character (every action.start checks its text). The first match of
# _REFUSED[multiline] is the first character ``refused_character`` refuses; _VISIBLE finds
# a character exactly when not every character ``is_invisible``. tests/test_readable_text.py
# proves both against those functions.
_REFUSED: dict[bool, re.Pattern[str]] = {
    multiline: re.compile(
        _char_class(
            CONTROL_CHARACTERS + BIDI_CONTROLS + (() if multiline else LINE_SEPARATORS),
            keep=TEXT_LAYOUT if multiline else frozenset(),
            negated=False,
        )
    )
    for multiline in (False, True)
}
_VISIBLE = re.compile(_char_class(INVISIBLE, negated=True))


def readable(value: str, *, multiline: bool, max_length: int) -> str:
    """``value`` in Unicode NFC, guaranteed free of refused characters and, unless empty,
    showing at least one visible character; at most ``max_length`` characters once normalized.

    Raises a ``PydanticCustomError`` (an ``invalid`` ack naming the field) otherwise: for a
    refused character, the first one in the text."""
    value = unicodedata.normalize("NFC", value)
    refused = _REFUSED[multiline].search(value)
    if refused is not None:
        char = refused.group()
        raise PydanticCustomError(
            "unreadable_text",
            "contains U+{code} ({kind}), which would garble the text on everyone's cards",
            {"code": f"{ord(char):04X}", "kind": _kind(char)},
        )
    if value and _VISIBLE.search(value) is None:
        raise PydanticCustomError(
            "invisible_text", "is empty once invisible characters and spaces are removed"
        )
    if len(value) > max_length:
        raise PydanticCustomError(
            "string_too_long",
            "should have at most {max_length} characters once normalized",
            {"max_length": max_length},
        )
    return value


def shown(value: str) -> str:
    """``value`` safe to echo back (an error's field path): every refused or invisible
    character written as ``<U+XXXX>``, so a refusal never garbles the message it is in."""
    return "".join(
        f"<U+{ord(c):04X}>" if is_invisible(c) or refused_character(c, multiline=False) else c
        for c in value
    )


def _kind(char: str) -> str:
    if _within(char, BIDI_CONTROLS):
        return "a bidi override, embedding or isolate"
    if _within(char, LINE_SEPARATORS):
        return "a line separator"
    return "a control character"


class Readable:
    """Metadata for a ``str`` field: the bridge keeps it ``readable`` and its JSON Schema
    carries the ``text_pattern`` (what a regex can express of the same check)."""

    def __init__(self, *, multiline: bool, required: bool, max_length: int) -> None:
        self.multiline = multiline
        self.required = required
        self.max_length = max_length

    def check(self, value: str) -> str:
        return readable(value, multiline=self.multiline, max_length=self.max_length)

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self.check, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema: dict[str, Any] = handler(schema)
        json_schema["pattern"] = text_pattern(multiline=self.multiline, required=self.required)
        return json_schema


# A one-line name (aspect, skill, character, zone...): NFC, readable, never blank.
Name = Annotated[
    str,
    StringConstraints(min_length=1, max_length=120),
    Readable(multiline=False, required=True, max_length=120),
]
# Free text (descriptions, costs): NFC, readable, line breaks kept; empty or showing something.
Text = Annotated[
    str,
    StringConstraints(max_length=2000),
    Readable(multiline=True, required=False, max_length=2000),
]
Rating = Annotated[int, Field(ge=-10, le=20)]
# The largest integer JavaScript holds exactly (and far below SQLite's 64-bit limit).
MAX_SAFE_INTEGER = 2**53 - 1
# A position in a world's emit or event log.
Seq = Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER)]
ActionTypeName = Literal["overcome", "create_advantage", "take_advantage", "discover", "attack"]
# R11.3, R5.10: what kind of harm an attack or conflict deals, and what a stress track takes.
HarmKindName = Literal["physical", "mental"]
StressKindName = Literal["physical", "mental", "any", "other"]


class Inbound(BaseModel):
    """A message from a client: strict types, no unknown fields."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Outbound(BaseModel):
    """A message from the bridge."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Intent(Inbound):
    """A message a client sends as one event: the one place an intent is declared.

    A subclass names its event and the model of its answer's data as class keywords
    (``class ActionRoll(ActionRef, event="action.roll", result=ActionData)``); ``result``
    None: it answers with another intent's result (a relay envelope). What answers it and
    its policy are its row in ``bridge.service.intent_table``. A subclass without
    ``event`` is a shared base (ActionRef)."""

    # Dunder names: a field of a subclass may be called "event" (the relay envelope's).
    __event__: ClassVar[str]
    # An Outbound model or a view (a TypedDict of bridge.service.protocol): a type form.
    __result__: ClassVar[Any]

    def __init_subclass__(
        cls,
        *,
        event: str | None = None,
        result: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        if event is None:
            return
        if event in INTENT_REGISTRY:
            raise TypeError(f"intent {event!r} is declared twice")
        cls.__event__, cls.__result__ = event, result
        INTENT_REGISTRY[event] = cls


INTENT_REGISTRY: dict[str, type[Intent]] = {}
"""Every intent by event, in declaration order (filled as bridge.service.protocol.intents loads)."""


# --- handshake -------------------------------------------------------------


class Auth(Inbound):
    """The Socket.IO handshake ``auth`` object."""

    world: Identifier
    role: Literal["gm", "player"]
    user: Identifier
    protocol: Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER)]
    key: Annotated[str, StringConstraints(max_length=200)] | None = None


class ConnectRefusal(Outbound):
    """``err.data`` of a refused connection; ``reason`` is machine-readable."""

    # "rate_limited": no seat left for the connection's address, or joins too fast.
    reason: Literal[
        "invalid_auth", "unknown_world", "bad_key", "protocol_mismatch", "role", "rate_limited"
    ]
    message: str
    bridge_protocol: int = PROTOCOL_VERSION


# --- the history's anchors outside the bridge -------------------------------

# SHA-256 hex of one event of the hash chain (bridge/store/chain.py).
EventHash = Annotated[
    str, StringConstraints(min_length=64, max_length=64, pattern=r"^[0-9a-f]{64}$")
]
# An event's position in a world's log (JSON-safe integer range, so SQLite never overflows).
EventSeq = Annotated[int, Field(ge=1, le=2**53 - 1)]
# A chat log's anchors go to the bridge in pages this size (one message stays well under
# MAX_MESSAGE_BYTES: ~90 bytes an anchor).
ANCHOR_PAGE = 500
HISTORY_ANCHORS_FORMAT = "fate-bridge.history-anchors"


class EventAnchor(Inbound):
    """One event's seq and hash as a chat message kept it in its flags."""

    seq: EventSeq
    hash: EventHash


class HistoryAnchors(Inbound):
    """The file the module exports from Foundry's chat log (``world verify --chat-log``):
    every bridge card's anchor, one per message, oldest first."""

    format: Literal["fate-bridge.history-anchors"]
    version: Literal[1]
    world: Identifier
    exported_at: Annotated[str, StringConstraints(max_length=40)] | None = None
    anchors: Annotated[list[EventAnchor], Field(max_length=1_000_000)]
