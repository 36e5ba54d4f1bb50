"""Ending a scene (R12.1) with consequence recovery timing (R7.5)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from bridge.rules.actions import Principal
from bridge.rules.draft import Draft
from bridge.rules.errors import refused
from bridge.rules.events import Event
from bridge.rules.ruleset import Ruleset
from bridge.rules.state import GM, Aspect, Earning, Scene, WorldState
from bridge.rules.turns import clear_stress, close

MILD = 2


@dataclass(frozen=True)
class SceneEndSummary:
    """What ending the scene changed, for the scene-end card."""

    scene: int
    # (character, consequence name, severity)
    removed: list[tuple[str, str, int]] = field(default_factory=list)
    recovering: list[tuple[str, str, int]] = field(default_factory=list)
    fate_points: dict[str, tuple[int, list[Earning]]] = field(default_factory=dict)
    # Contests, challenges and conflicts the scene's end closed before they finished.
    closed_unfinished: list[str] = field(default_factory=list)
    expired_boosts: list[str] = field(default_factory=list)
    cleared_aspects: list[str] = field(default_factory=list)
    no_longer_overwhelmed: list[str] = field(default_factory=list)
    refreshed: dict[str, tuple[int, int]] = field(default_factory=dict)
    # R13.4: the characters whose stress boxes the scene's end freed.
    stress_cleared: list[str] = field(default_factory=list)


Scope = Literal["scene", "session", "scenario"]
SEVERE = 6


def end_scene(
    state: WorldState,
    principal: Principal,
    keep_aspects: tuple[str, ...] = (),
    scope: Scope = "scene",
    gm_budget: int | None = None,
    ruleset: Ruleset | None = None,
) -> tuple[list[Event], SceneEndSummary]:
    """R12.1: recovery (R7.5), fate point payouts (R4.5, R9.3, R5.5), boosts expire,
    overwhelmed clears, situation aspects go unless the GM keeps them.

    Ending a session or scenario ends its scene first, then (R7.5 Decision) removes
    moderate consequences that began recovering in an earlier session (severe: an
    earlier scenario), and refreshes fate points (R12.2): a new session refills up
    to refresh and keeps extras; a new scenario resets to refresh.
    The GM's budget for the next scene is ``gm_budget``, by default one point per
    player character. R13.4: under a ruleset whose stress clears (at the end of each
    scene, or after the conflict, which a scene's end is too) every box is freed.
    """
    if not principal.is_gm:
        raise refused("forbidden", "gm_only")
    draft = Draft(state, "scene.end")
    scene = state.scene
    summary = SceneEndSummary(scene=scene.number)
    stamp = (scene.number, scene.session, scene.scenario)
    # R5.5 Decision: one entry per excelled discover whose hint stays untaken.
    hints = Counter(scene.hints_open)

    for character in list(draft.characters.values()):
        slots = []
        for slot in character.consequences:
            aspect = draft.aspects.get(slot.aspect_id) if slot.aspect_id is not None else None
            name = aspect.name if aspect is not None else ""
            # R7.5 first: mild consequences already recovering are removed...
            if slot.status == "recovering" and slot.severity <= MILD and slot.aspect_id:
                draft.remove_aspect(slot.aspect_id)
                slot = slot.model_copy(
                    update={"aspect_id": None, "status": "fresh", "recovering_since": None}
                )
                summary.removed.append((character.id, name, slot.severity))
            # ...then whatever was addressed this scene starts recovering.
            elif slot.status == "addressed":
                slot = slot.model_copy(update={"status": "recovering", "recovering_since": stamp})
                summary.recovering.append((character.id, name, slot.severity))
            slots.append(slot)
        reasons = list(character.pending_reasons)
        gained = character.pending_fate_points
        for _ in range(hints[character.id]):
            gained += 1
            reasons.append(Earning(kind="hint_unused"))  # R5.5
        if gained:
            summary.fate_points[character.id] = (gained, reasons)
        if character.overwhelmed:
            summary.no_longer_overwhelmed.append(character.id)
        stress = character.stress
        if ruleset is not None and ruleset.stress_clears and any(t.marked for t in stress):
            stress = clear_stress(stress)
            summary.stress_cleared.append(character.id)
        updated = character.model_copy(
            update={
                "stress": stress,
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

    carried = set(state.carried_boosts)
    for aspect in list(draft.aspects.values()):
        if aspect.kind == "boost" and aspect.id in carried:
            continue  # R11.1: carried out of a challenge into this next scene, once
        if aspect.kind == "boost":
            draft.remove_aspect(aspect.id)
            summary.expired_boosts.append(aspect.name)
        elif aspect.kind == "situation" and aspect.id not in keep_aspects:
            draft.remove_aspect(aspect.id)
            summary.cleared_aspects.append(aspect.name)

    if carried:
        draft.set_carried_boosts(())
    summary.closed_unfinished.extend(_archive(draft))
    if scope != "scene":
        _end_session(draft, summary, scope)
    session = scene.session + (1 if scope != "scene" else 0)
    scenario = scene.scenario + (1 if scope == "scenario" else 0)
    draft.put_scene(Scene(number=scene.number + 1, session=session, scenario=scenario))
    players = sum(1 for c in draft.characters.values() if not c.is_npc)
    draft.set_gm_fate_points(gm_budget if gm_budget is not None else players)
    return draft.events(), summary


def _archive(draft: Draft) -> list[str]:
    """Contests, challenges and conflicts belong to their scene: its end closes them
    (Decision: unfinished ones end without a result). Resolved actions and answered
    compels leave the live state too; their cards and the event log keep the history.
    Returns the names of the procedures closed unfinished."""
    unfinished = [c.name for c in draft.contests.values() if c.state == "open"]
    unfinished += [c.name for c in draft.challenges.values() if c.state == "open"]
    unfinished += [c.name for c in draft.conflicts.values() if c.state == "open"]
    for conflict in list(draft.conflicts.values()):
        if conflict.state == "open" and conflict.conceded:
            close(draft, conflict, None)  # R13.6: concessions are paid when it ends
    for contest_id in list(draft.contests):
        draft.drop_contest(contest_id)
    for challenge_id in list(draft.challenges):
        draft.drop_challenge(challenge_id)
    for conflict_id in list(draft.conflicts):
        draft.drop_conflict(conflict_id)
    for compel in list(draft.compels.values()):
        if compel.state != "offered":
            draft.drop_compel(compel.id)
    for action in list(draft.actions.values()):
        if action.closed or action.purpose != "action":
            draft.drop_action(action.id)
    return unfinished


def _end_session(draft: Draft, summary: SceneEndSummary, scope: Scope) -> None:
    scene = draft.scene
    for character in list(draft.characters.values()):
        slots = []
        for slot in character.consequences:
            since = slot.recovering_since
            done = since is not None and (
                (slot.severity < SEVERE and since[1] < scene.session)
                or (scope == "scenario" and since[2] < scene.scenario)
            )
            if done and slot.aspect_id:
                aspect = draft.aspects.get(slot.aspect_id)
                name = aspect.name if aspect is not None else ""
                draft.remove_aspect(slot.aspect_id)
                summary.removed.append((character.id, name, slot.severity))
                slot = slot.model_copy(
                    update={"aspect_id": None, "status": "fresh", "recovering_since": None}
                )
            slots.append(slot)
        current = draft.characters[character.id]
        if scope == "scenario":
            points = current.refresh
        else:
            points = max(current.fate_points, current.refresh)
        updated = current.model_copy(update={"consequences": tuple(slots), "fate_points": points})
        if updated != current:
            draft.put_character(updated)
        if points != current.fate_points:
            summary.refreshed[character.id] = (current.fate_points, points)


def edit_aspect(
    state: WorldState,
    principal: Principal,
    op: Literal["add", "edit", "remove"],
    *,
    aspect_id: str | None = None,
    name: str | None = None,
    attached_to: str | None = None,
    free_invokes: dict[str, int] | None = None,
) -> list[Event]:
    """The GM manages situation aspects and boosts on the scene panel."""
    if not principal.is_gm:
        raise refused("forbidden", "gm_only")
    draft = Draft(state, f"scene.aspect.{op}")
    holders = {k: v for k, v in (free_invokes or {}).items() if v > 0}
    for holder in holders:
        if holder != GM and holder not in draft.characters:
            raise refused("unknown_actor", "unknown_actor_sync", "free_invokes", id=holder)
    if attached_to is not None and attached_to not in draft.characters:
        raise refused("unknown_actor", "unknown_actor_sync", "attached_to", id=attached_to)
    if op == "add":
        if not name:
            raise refused("invalid", "name_aspect", "name")
        draft.put_aspect(
            Aspect(
                id=draft.new_aspect_id("sit"),
                name=name,
                kind="situation",
                attached_to=attached_to,
                free_invokes=holders,
            )
        )
        return draft.events()
    aspect = draft.aspects.get(aspect_id or "")
    if aspect is None or aspect.kind not in ("situation", "boost"):
        raise refused("not_found", "no_scene_aspect", "aspect_id")
    if op == "remove":
        draft.remove_aspect(aspect.id)
        return draft.events()
    updates: dict[str, object] = {}
    if name:
        updates["name"] = name
    if free_invokes is not None and aspect.kind == "situation":
        updates["free_invokes"] = holders
    draft.put_aspect(aspect.model_copy(update=updates))
    return draft.events()
