"""Ending a scene (R12.1) with consequence recovery timing (R7.5)."""

from __future__ import annotations

from dataclasses import dataclass, field

from bridge.rules.actions import Principal
from bridge.rules.consequences import severity_name
from bridge.rules.draft import Draft
from bridge.rules.errors import RuleViolation
from bridge.rules.events import Event
from bridge.rules.state import Scene, WorldState

MILD = 2


@dataclass(frozen=True)
class SceneEndSummary:
    """What ending the scene changed, for the scene-end card."""

    scene: int
    removed: list[tuple[str, str]] = field(default_factory=list)
    recovering: list[tuple[str, str]] = field(default_factory=list)
    fate_points: dict[str, tuple[int, list[str]]] = field(default_factory=dict)
    expired_boosts: list[str] = field(default_factory=list)
    cleared_aspects: list[str] = field(default_factory=list)
    no_longer_overwhelmed: list[str] = field(default_factory=list)


def end_scene(
    state: WorldState, principal: Principal, keep_aspects: tuple[str, ...] = ()
) -> tuple[list[Event], SceneEndSummary]:
    """R12.1: recovery (R7.5), fate point payouts (R4.5, R9.3, R5.5), boosts expire,
    overwhelmed clears, situation aspects go unless the GM keeps them."""
    if not principal.is_gm:
        raise RuleViolation("forbidden", "Only the GM may end the scene.")
    draft = Draft(state, "scene.end")
    scene = state.scene
    summary = SceneEndSummary(scene=scene.number)
    stamp = (scene.number, scene.session, scene.scenario)
    hints = set(scene.hints_open)

    for character in list(draft.characters.values()):
        slots = []
        for slot in character.consequences:
            name = draft.aspects[slot.aspect_id].name if slot.aspect_id in draft.aspects else ""
            # R7.5 first: mild consequences already recovering are removed...
            if slot.status == "recovering" and slot.severity <= MILD and slot.aspect_id:
                draft.remove_aspect(slot.aspect_id)
                slot = slot.model_copy(
                    update={"aspect_id": None, "status": "fresh", "recovering_since": None}
                )
                summary.removed.append((character.id, name))
            # ...then whatever was addressed this scene starts recovering.
            elif slot.status == "addressed":
                slot = slot.model_copy(update={"status": "recovering", "recovering_since": stamp})
                summary.recovering.append((character.id, f"{severity_name(slot.severity)}: {name}"))
            slots.append(slot)
        reasons = list(character.pending_reasons)
        gained = character.pending_fate_points
        if character.id in hints:
            gained += 1
            reasons.append("hint not taken")  # R5.5
        if gained:
            summary.fate_points[character.id] = (gained, reasons)
        if character.overwhelmed:
            summary.no_longer_overwhelmed.append(character.id)
        updated = character.model_copy(
            update={
                "consequences": tuple(slots),
                "fate_points": character.fate_points + gained,
                "pending_fate_points": 0,
                "pending_reasons": (),
                "overwhelmed": False,
                "overwhelmed_by": None,
            }
        )
        if updated != character:
            draft.put_character(updated)

    for aspect in list(draft.aspects.values()):
        if aspect.kind == "boost":
            draft.remove_aspect(aspect.id)
            summary.expired_boosts.append(aspect.name)
        elif aspect.kind == "situation" and aspect.id not in keep_aspects:
            draft.remove_aspect(aspect.id)
            summary.cleared_aspects.append(aspect.name)

    draft.put_scene(Scene(number=scene.number + 1, session=scene.session, scenario=scene.scenario))
    return draft.events(), summary
