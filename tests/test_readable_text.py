# ruff: noqa: RUF001  (real Arabic and Hebrew letters are the point of these tests)
"""Names and text a player can read (H18): the protocol's base types, both sides.

Refused: control characters (C0, C1, NUL, ESC), bidi overrides, embeddings and isolates, names
that show nothing. Kept intact: every script, ZWNJ and ZWJ inside text, combining marks (NFC).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError
from pydantic_core import PydanticCustomError

from bridge.cli.schemas import build_schemas
from bridge.service.protocol import Name, Text, shown
from bridge.service.protocol.base import (
    BIDI_CONTROLS,
    CONTROL_CHARACTERS,
    INVISIBLE,
    LINE_SEPARATORS,
    is_invisible,
    readable,
    refused_character,
    text_pattern,
)

NAMES: TypeAdapter[str] = TypeAdapter(Name, config={"strict": True})
TEXTS: TypeAdapter[str] = TypeAdapter(Text, config={"strict": True})
NAME_PATTERN = re.compile(text_pattern(multiline=False, required=True))
TEXT_PATTERN = re.compile(text_pattern(multiline=True, required=False))

# Every legitimate script stays exactly as sent (in NFC).
LEGITIMATE = [
    "Skeptical Ghost Hunter",
    "ظل الذئب",  # Arabic
    "שומר הסף",  # Hebrew
    "می\u200cخواهم",  # Persian with a ZWNJ inside the word
    "👩\u200d👩\u200d👧 Family",  # emoji ZWJ sequence
    "🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",  # flag tag sequence
    "Ça\u0301",  # a combining mark on a letter
    "ǅemal the Brave",
    "日本語の名前",
    "नमस्ते",  # Devanagari with a virama
    "\u200fשלום\u200f",  # Hebrew with right-to-left marks (marks, not overrides)
    "Ỏ̷̢z̴",  # stacked combining marks
    "❤\ufe0f",  # an emoji with its variation selector
]

# (name, why it is refused)
BAD_NAMES = [
    ("", "empty"),
    (" ", "only a space"),
    ("\u3000\u00a0\t", "only whitespace (tab refused)"),
    ("\u200b\u200b", "only zero-width spaces"),
    ("\u200c\u200d", "only ZWNJ and ZWJ"),
    ("\ufeff", "only a BOM"),
    ("\u3164", "only a Hangul filler"),
    ("\u2800\u2800", "only braille blanks"),
    ("\U000e0041\U000e0042", "only tag characters"),
    ("\u202e", "only a bidi override"),
    ("\u202eKcatta", "starts with a right-to-left override"),
    ("Good\u202aname", "a left-to-right embedding inside"),
    ("\u2066Isolated\u2069", "bidi isolates"),
    ("Null\x00byte", "NUL"),
    ("\x1b[31mRed\x1b[0m", "ANSI escape"),
    ("Bell\x07", "BEL"),
    ("Next\x85line", "C1 next line"),
    ("Two\nlines", "a newline in a name"),
    ("Line\u2028break", "a line separator in a name"),
    ("Del\x7f", "DEL"),
]


def refused_code(adapter: TypeAdapter[str], value: Any) -> str:
    with pytest.raises(ValidationError) as caught:
        adapter.validate_python(value)
    code: str = caught.value.errors()[0]["type"]
    return code


@pytest.mark.parametrize("name", LEGITIMATE)
def test_legitimate_scripts_are_kept_intact(name: str) -> None:
    # H18: nothing a real script needs is stripped or refused; only NFC is applied.
    assert NAMES.validate_python(name) == unicodedata.normalize("NFC", name)
    assert NAME_PATTERN.fullmatch(name)


def test_names_are_normalized_to_nfc() -> None:
    # H18: "é" sent decomposed and composed is one name (a skill key, an aspect).
    decomposed = "Cafe\u0301 Noir"
    assert NAMES.validate_python(decomposed) == "Café Noir"
    assert NAMES.validate_python("Café Noir") == "Café Noir"


@pytest.mark.parametrize(("name", "why"), BAD_NAMES)
def test_unreadable_names_are_refused(name: str, why: str) -> None:
    # H18: each of these renders reversed, invisible or as terminal escapes on a card.
    code = refused_code(NAMES, name)
    assert code in {"unreadable_text", "invisible_text", "string_too_short"}, (why, code)
    # The schema refuses it too, except what only the bridge can see (astral invisibles).
    assert not NAME_PATTERN.fullmatch(name) or _needs_the_bridge(name), why


def test_text_keeps_line_breaks_but_refuses_controls_and_overrides() -> None:
    # H18: free text is multi-line prose; it may be empty, never invisible or garbled.
    assert TEXTS.validate_python("") == ""
    assert TEXTS.validate_python("First line\n\tsecond line") == "First line\n\tsecond line"
    assert refused_code(TEXTS, "\u200b") == "invisible_text"
    assert refused_code(TEXTS, "Cost\x1b[2J") == "unreadable_text"
    assert refused_code(TEXTS, "Pay \u202edlog") == "unreadable_text"
    assert refused_code(TEXTS, "Nul\x00") == "unreadable_text"


def test_normalizing_cannot_lengthen_a_name_past_its_bound() -> None:
    # H18: NFC can expand (U+FB2C becomes three code points); the bound holds afterwards.
    assert refused_code(NAMES, "\ufb2c" * 50) == "string_too_long"


def test_every_control_format_and_space_character_counts_as_invisible() -> None:
    # H18: the invisible set covers every Cc, Cf, Zs, Zl and Zp code point Python knows.
    missing = [
        f"U+{code:04X}"
        for code in range(0x110000)
        if unicodedata.category(chr(code)) in {"Cc", "Cf", "Zs", "Zl", "Zp"}
        and not is_invisible(chr(code))
    ]
    assert missing == []


def test_the_schema_pattern_agrees_with_the_bridge_on_every_bmp_character() -> None:
    # H18: what the schema says (for the module's ajv) is what the bridge does, per character.
    for code in range(0x10000):
        if 0xD800 <= code <= 0xDFFF:
            continue  # lone surrogates never reach a validator (not valid UTF-8)
        char = chr(code)
        for adapter, pattern, single in ((NAMES, NAME_PATTERN, char), (TEXTS, TEXT_PATTERN, char)):
            try:
                adapter.validate_python(single)
                accepted = True
            except ValidationError:
                accepted = False
            assert accepted == bool(pattern.fullmatch(single)), f"U+{code:04X}"


@given(st.text(max_size=60))
@example("\u202e")
@example("a\u0301\u200d")
@example("\U000e0020")
def test_every_accepted_name_is_nfc_readable_and_matches_the_schema(value: str) -> None:
    # H18: anything accepted is NFC, free of refused characters, shows something, and would
    # pass the schema the module checks against; normalizing again changes nothing.
    try:
        name = NAMES.validate_python(value)
    except ValidationError:
        assert not NAME_PATTERN.fullmatch(value) or _needs_the_bridge(value)
        return
    assert name == unicodedata.normalize("NFC", value)
    assert not any(refused_character(c, multiline=False) for c in name)
    assert not all(is_invisible(c) for c in name)
    assert NAME_PATTERN.fullmatch(value)
    assert NAMES.validate_python(name) == name


def _needs_the_bridge(value: str) -> bool:
    """What the schema pattern cannot say: astral invisibles only, or too long after NFC."""
    normalized = unicodedata.normalize("NFC", value)
    astral_blank = all(is_invisible(c) or ord(c) > 0xFFFF for c in value)
    return astral_blank or len(normalized) > 120 or len(value) > 120


@given(
    st.lists(st.sampled_from(LEGITIMATE), min_size=1, max_size=3).map(" ".join),
    st.sampled_from([c for low, high in BIDI_CONTROLS for c in map(chr, range(low, high + 1))]),
    st.integers(min_value=0, max_value=200),
)
def test_a_bidi_control_anywhere_in_a_real_name_is_refused(
    name: str, control: str, at: int
) -> None:
    # H18: however legitimate the rest, one override, embedding or isolate refuses it.
    at %= len(name) + 1
    assert refused_code(NAMES, name[:at] + control + name[at:]) == "unreadable_text"


def test_refusals_echo_unreadable_keys_harmlessly() -> None:
    # H18: an error's field path never carries the override it refuses.
    assert shown("\u202eX\u200b") == "<U+202E>X<U+200B>"


def test_schemas_carry_the_pattern_on_names_and_dict_keys() -> None:
    # H18: JSON Schema says what it can (a pattern) on values and on dict keys (propertyNames).
    actor = build_schemas()["defs/ActorData.json"]["properties"]
    assert actor["name"]["pattern"] == NAME_PATTERN.pattern
    assert actor["skills"]["propertyNames"]["pattern"] == NAME_PATTERN.pattern
    assert "patternProperties" not in actor["skills"]


def _reference_readable(value: str, *, multiline: bool, max_length: int) -> str:
    """What ``readable`` guaranteed when it looked at each character in turn: the first
    refused character (by ``refused_character``), else all invisible, else too long."""
    value = unicodedata.normalize("NFC", value)
    for char in value:
        if refused_character(char, multiline=multiline):
            raise ValueError("unreadable_text", f"{ord(char):04X}")
    if value and all(is_invisible(char) for char in value):
        raise ValueError("invisible_text")
    if len(value) > max_length:
        raise ValueError("string_too_long")
    return value


# Every edge of every range readable looks at, with its neighbours, and some plain text.
_EDGES = sorted(
    {
        chr(code)
        for low, high in (*CONTROL_CHARACTERS, *BIDI_CONTROLS, *LINE_SEPARATORS, *INVISIBLE)
        for code in (low - 1, low, high, high + 1)
        if 0 <= code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF
    }
    | set("\t\n\r-]^\\aZ ")
)


@given(
    st.text(st.one_of(st.sampled_from(_EDGES), st.characters()), max_size=30),
    st.booleans(),
    st.integers(min_value=1, max_value=40),
)
@example("a\x00\u202e", False, 40)
@example("\u202ea\x00", True, 40)
@example("\t\n", True, 40)
@example("\u2028x", True, 40)
@example("\U000e0020\U000e0041", False, 40)
def test_readable_scans_as_the_character_loop_did(
    value: str, multiline: bool, max_length: int
) -> None:
    # H18: the regex scans refuse exactly what the per-character checks refuse, naming the
    # same first refused character, and keep exactly what they keep.
    try:
        expected: tuple[str, ...] = (
            _reference_readable(value, multiline=multiline, max_length=max_length),
        )
    except ValueError as exc:
        expected = exc.args
    try:
        got: tuple[str, ...] = (readable(value, multiline=multiline, max_length=max_length),)
    except PydanticCustomError as exc:
        context = exc.context or {}
        got = (exc.type, context["code"]) if "code" in context else (exc.type,)
    assert got == expected
