"""What the bridge says to readers outside Foundry (HTTP API, webhooks), worded from the
module's own language files: one home for each sentence, ``foundry-module/lang/<lang>.json``
(packaged with the bridge, see :mod:`bridge.transport.module_package`).

Keys and placeholders follow Foundry's ``game.i18n``: nested objects address a key by its
dotted path, ``{name}`` placeholders are filled from named parameters, and a key no file
has reads as itself (a language lacking a key falls back to English)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from bridge.service.module_files import MODULE_DIR

DEFAULT_LANGUAGE = "en"
PREFIX = "FATEBRIDGE."
_PLACEHOLDER = re.compile(r"\{([^}]+)\}")


def _flatten(tree: dict[str, Any], prefix: str = "") -> dict[str, str]:
    flat: dict[str, str] = {}
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{path}."))
        else:
            flat[path] = str(value)
    return flat


@cache
def strings(
    language: str = DEFAULT_LANGUAGE, lang_dir: Path = MODULE_DIR / "lang"
) -> dict[str, str]:
    """Every key of a language file by its dotted path; English's for a language the module
    does not ship."""
    path = lang_dir / f"{language}.json"
    if not path.is_file():
        path = lang_dir / f"{DEFAULT_LANGUAGE}.json"
    return _flatten(json.loads(path.read_text("utf-8")))


def placeholders(sentence: str) -> set[str]:
    """The ``{name}`` placeholders a sentence fills."""
    return set(_PLACEHOLDER.findall(sentence))


def say(
    key: str, params: Mapping[str, object] | None = None, language: str = DEFAULT_LANGUAGE
) -> str:
    """The sentence at ``key`` (``FATEBRIDGE.`` may be left off) with its placeholders
    filled; a placeholder without a parameter stays as written, a missing key reads as the
    key (Foundry's ``game.i18n.format``)."""
    full = key if key.startswith(PREFIX) else f"{PREFIX}{key}"
    sentence = strings(language).get(full) or strings(DEFAULT_LANGUAGE).get(full)
    if sentence is None:
        return full
    values = params or {}
    return _PLACEHOLDER.sub(
        lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), sentence
    )


def known(key: str, language: str = DEFAULT_LANGUAGE) -> bool:
    """True when the language files have ``key``."""
    full = key if key.startswith(PREFIX) else f"{PREFIX}{key}"
    return full in strings(language) or full in strings(DEFAULT_LANGUAGE)


def signed(value: int) -> str:
    """A number with its sign, a true minus (U+2212) as the module writes it."""
    return f"+{value}" if value > 0 else f"\u2212{-value}" if value < 0 else "0"


def ladder(value: int, language: str = DEFAULT_LANGUAGE) -> str:
    """A ladder value in words and number, ``Great (+4)``; the number alone beyond the
    named ladder (R1.3)."""
    if not known(f"Ladder.{value}", language):
        return signed(value)
    word = say(f"Ladder.{value}", language=language)
    return say("Ladder.Entry", {"word": word, "value": signed(value)}, language)


def action_name(action_type: str, language: str = DEFAULT_LANGUAGE) -> str:
    """An action's name (R2)."""
    return say(f"Action.{action_type}", language=language)


def outcome_name(ruleset: str, outcome: str, language: str = DEFAULT_LANGUAGE) -> str:
    """An outcome's name as the ruleset calls it (R3.1): Unwritten's own, else Fate's."""
    family = "unwritten" if ruleset == "unwritten" else "fate"
    return say(f"Outcome.{family}.{outcome}", language=language)


def worded_params(
    params: Mapping[str, object], language: str = DEFAULT_LANGUAGE
) -> dict[str, object]:
    """A refusal's parameters as its sentence shows them: an action's ``state`` in words
    (``Card.State.<state>``) and an ``action`` type by its name (``Action.<type>``), as the
    module does; the others as they are."""
    worded = dict(params)
    state = params.get("state")
    if isinstance(state, str) and known(f"Card.State.{state}", language):
        worded["state"] = say(f"Card.State.{state}", language=language)
    action = params.get("action")
    if isinstance(action, str) and known(f"Action.{action}", language):
        worded["action"] = action_name(action, language)
    return worded
