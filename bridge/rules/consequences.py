"""Consequences and roll-up (R7), stress (R5.10), overwhelm (R8)."""

from __future__ import annotations

from dataclasses import dataclass

from bridge.rules.draft import Draft
from bridge.rules.state import (
    Aspect,
    Character,
    ConsequenceSlot,
    Effect,
    HarmKind,
    StressRuleName,
)
from bridge.rules.turns import end_if_decided, note_consequence

SEVERITY_NAMES = {2: "mild", 4: "moderate", 6: "severe"}


def severity_name(severity: int) -> str:
    return SEVERITY_NAMES.get(severity, f"{severity}-shift")


def roll_up_slot(
    character: Character, severity: int, harm: HarmKind | None = None
) -> ConsequenceSlot | None:
    """R7.2: the lowest empty slot whose severity is at least ``severity`` and that takes
    this harm (R13.3: an extra mild slot only its own kind; None, a cost, none), else None."""
    fitting = [
        s for s in character.consequences if s.empty and s.severity >= severity and s.takes(harm)
    ]
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
    end_if_decided(draft, character_id)  # R13.6: at once, not at the next turn
    return Effect(kind="overwhelmed", character_id=character_id, cause=caused_by)


def place_consequence(
    draft: Draft,
    character_id: str,
    severity: int,
    name: str,
    *,
    caused_by: str | None,
    free_invokes: dict[str, int] | None = None,
    slot_id: str | None = None,
) -> Placement:
    """R7.2 as one step: fill the rolled-up slot (``slot_id``: that empty slot, as an
    absorb chose it) with a new consequence aspect, or overwhelm the character when no
    slot fits. Never drops or duplicates one.
    """
    character = draft.character(character_id)
    if slot_id is not None:
        slot = next((s for s in character.consequences if s.id == slot_id and s.empty), None)
    else:
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
    if draft.conflicts:
        note_consequence(draft, character_id)
    effect = Effect(
        kind="consequence",
        character_id=character_id,
        aspect_id=aspect.id,
        count=filled.severity,
        text=name,
        detail=severity_name(filled.severity),
    )
    return Placement(filled, aspect, (effect,))


def absorb_capacity(character: Character, harm: HarmKind, rule: StressRuleName = "") -> int:
    """How many shifts of a hit of ``harm`` the character could still absorb (R5.10,
    R13.2): the boxes the per-hit ``rule`` lets one hit mark on the tracks of that kind
    ("one_box": the best free box; "ones": every free one-shift box, or one bigger box;
    "": every free box), plus its empty consequences that take that harm (R13.3)."""
    free = [b.value for t in character.stress if t.absorbs(harm) for b in t.boxes if not b.marked]
    if rule == "one_box":
        boxes = max(free, default=0)
    elif rule == "ones":
        boxes = max(sum(v for v in free if v == 1), max(free, default=0))
    else:
        boxes = sum(free)
    return boxes + sum(s.severity for s in character.consequences if s.empty and s.takes(harm))
