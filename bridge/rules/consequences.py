"""Consequences and roll-up (R7), stress (R5.10), overwhelm (R8)."""

from __future__ import annotations

from dataclasses import dataclass

from bridge.rules.draft import Draft
from bridge.rules.state import Aspect, Character, ConsequenceSlot, Effect, HarmKind

SEVERITY_NAMES = {2: "mild", 4: "moderate", 6: "severe"}


def severity_name(severity: int) -> str:
    return SEVERITY_NAMES.get(severity, f"{severity}-shift")


def roll_up_slot(character: Character, severity: int) -> ConsequenceSlot | None:
    """R7.2: the lowest empty slot whose severity is at least ``severity``, else None."""
    fitting = [s for s in character.consequences if s.empty and s.severity >= severity]
    return min(fitting, key=lambda s: s.severity) if fitting else None


@dataclass(frozen=True)
class Placement:
    slot: ConsequenceSlot | None
    aspect: Aspect | None
    effects: tuple[Effect, ...]


def overwhelm(draft: Draft, character_id: str, caused_by: str | None) -> Effect:
    """R8.1: out of the scene until it ends; the card says who describes it."""
    character = draft.character(character_id)
    draft.put_character(
        character.model_copy(update={"overwhelmed": True, "overwhelmed_by": caused_by})
    )
    return Effect(kind="overwhelmed", character_id=character_id, cause=caused_by)


def place_consequence(
    draft: Draft,
    character_id: str,
    severity: int,
    name: str,
    *,
    caused_by: str | None,
    free_invokes: dict[str, int] | None = None,
) -> Placement:
    """R7.2 as one step: fill the rolled-up slot with a new consequence aspect,
    or overwhelm the character when no slot fits. Never drops or duplicates one.
    """
    character = draft.character(character_id)
    slot = roll_up_slot(character, severity)
    if slot is None:
        return Placement(None, None, (overwhelm(draft, character_id, caused_by),))
    aspect = draft.put_aspect(
        Aspect(
            id=draft.new_aspect_id("csq"),
            name=name,
            kind="consequence",
            attached_to=character_id,
            free_invokes={k: v for k, v in (free_invokes or {}).items() if v > 0},
        )
    )
    filled = slot.model_copy(
        update={"aspect_id": aspect.id, "status": "fresh", "recovering_since": None}
    )
    slots = tuple(filled if s.id == slot.id else s for s in character.consequences)
    draft.put_character(character.model_copy(update={"consequences": slots}))
    effect = Effect(
        kind="consequence",
        character_id=character_id,
        aspect_id=aspect.id,
        count=filled.severity,
        text=name,
        detail=severity_name(filled.severity),
    )
    return Placement(filled, aspect, (effect,))


def absorb_capacity(character: Character, harm: HarmKind) -> int:
    """How many shifts of a hit of ``harm`` the character could still absorb (R5.10):
    the free boxes' values on the tracks of that kind, plus its empty consequences."""
    boxes = sum(t.free_shifts for t in character.stress if t.absorbs(harm))
    return boxes + sum(s.severity for s in character.consequences if s.empty)
