"""Resolving a finished roll by action type (R5, R7.4, R8, R9.2, R12.6)."""

from __future__ import annotations

from bridge.rules.actions.common import (
    FAILURE,
    SUCCESS,
    add_effects,
    add_free_invokes,
    new_boost,
    place_situation_aspect,
    situation_key,
)
from bridge.rules.consequences import absorb_capacity, overwhelm
from bridge.rules.draft import Draft
from bridge.rules.outcome import outcome_for, shifts
from bridge.rules.ruleset import Ruleset
from bridge.rules.state import (
    GM,
    Action,
    CostSeverity,
    Effect,
    Side,
)


def resolve(
    draft: Draft, action: Action, ruleset: Ruleset, passing: dict[str, Side] | None = None
) -> None:
    """R3.2: the roll's outcome, once both sides are done invoking (R4.4), and what it
    does by action type. ``passing``: the side whose pass ended the invoke phase, by
    name, set in the same copy of the action as the outcome (a pass changes no total)."""
    shift_count = shifts(action.actor.roll.total, action.opposition.roll.total)
    outcome = outcome_for(shift_count, ruleset)
    if passing:
        action = action.model_copy(update={**passing, "shifts": shift_count, "outcome": outcome})
    else:
        action = action.model_copy(update={"shifts": shift_count, "outcome": outcome})
    leader = action.actor.leader or ""
    effects: list[Effect] = []

    # R5.7: the opposer excels when it beats the actor by the excel threshold.
    if action.opposition_kind == "active" and shift_count <= -ruleset.excel_threshold:
        opposer = draft.character(action.opposition.leader or "")
        effects.append(new_boost(draft, opposer.id, f"{opposer.name}'s upper hand", action.id))
    # R9.2: a side that fumbles a dangerous action is overwhelmed.
    if action.opposition.dangerous and action.opposition.leader and shift_count > 0:
        effects.append(overwhelm(draft, action.opposition.leader, caused_by=leader))
    if action.actor.dangerous and outcome == "fumble":
        for member in action.actor.members:
            effects.append(overwhelm(draft, member, caused_by=action.opposition.leader or GM))
        finish(draft, add_effects(action, *effects, FAILURE), succeeded=False)
        return
    if effects:
        action = add_effects(action, *effects)

    if action.purpose == "contest_roll":
        # R11.2: a contest roll is only a total; the exchange decides what it means
        # (the contest observes the resolution: bridge.rules.procedures).
        finish(draft, action, succeeded=None)
        return

    if action.type == "create_advantage":
        _resolve_create_advantage(draft, action)
    elif action.type == "attack":
        _resolve_attack(draft, action)
    elif outcome == "fumble":
        _ask(draft, action, "fail_or_cost", "serious")
    elif outcome == "tie" and action.type == "take_advantage":
        succeed(draft, action, fresh=True)
    elif outcome == "tie":
        _ask(draft, action, "fail_or_cost", "minor")
    else:
        # ``action`` is this resolution's own copy (nothing else holds it yet).
        succeed(draft, action, fresh=True)


def _ask(draft: Draft, action: Action, choice: str, severity: CostSeverity | None) -> None:
    draft.put_action(
        action.model_copy(
            update={"state": "choosing", "pending_choice": choice, "cost_severity": severity}
        )
    )


def _resolve_create_advantage(draft: Draft, action: Action) -> None:
    """R5.2 and R5.4."""
    leader = draft.character(action.actor.leader or "")
    name = action.aspect_name or "Advantage"
    if action.outcome == "fumble":
        _ask(draft, action, "advantage_fumble", "serious")
    elif action.outcome == "tie":
        effect = new_boost(draft, leader.id, name, action.id)
        finish(draft, add_effects(action, effect), succeeded=True)
    elif action.outcome == "succeed":
        succeed(draft, action)
    elif action.target_id is not None:
        _ask(draft, action, "leave_mark", None)
    else:
        succeed(draft, action)


def _resolve_attack(draft: Draft, action: Action) -> None:
    """R5.9: fail no hit; tie a boost; succeed a hit of the shifts; excel a choice."""
    leader = draft.character(action.actor.leader or "")
    if action.outcome == "fumble":
        finish(draft, add_effects(action, FAILURE), succeeded=False)
    elif action.outcome == "tie":
        effect = new_boost(draft, leader.id, f"{leader.name}'s opening", action.id)
        finish(draft, add_effects(action, effect), succeeded=False)
    elif action.outcome == "excel":
        _ask(draft, action, "attack_style", None)
    else:
        start_hit(draft, action, action.shifts or 0)


def start_hit(draft: Draft, action: Action, hit: int) -> None:
    """R5.10: the target absorbs the whole hit, or is taken out."""
    target = draft.characters.get(action.target_id or "")
    if target is None:
        # Declaring refuses an attack without a target; an older log may still hold one.
        finish(draft, add_effects(action, _vanished(action, "target")), succeeded=False)
        return
    effect = Effect(kind="hit", character_id=target.id, count=hit)
    action = add_effects(action, effect)
    if absorb_capacity(target, action.attack_kind or "physical", action.stress_rule) < hit:
        out = overwhelm(draft, target.id, caused_by=action.actor.leader)
        finish(draft, add_effects(action, out), succeeded=True)
        return
    draft.put_action(
        action.model_copy(update={"state": "absorbing", "pending_hit": hit, "pending_choice": None})
    )


def succeed(draft: Draft, action: Action, *, at_cost: bool = False, fresh: bool = False) -> None:
    """Apply what success gives, by action type (R5.1-R5.5, R7.4). ``fresh``: ``action``
    is a copy only the caller holds, which the resolved action may then be built in."""
    leader = draft.character(action.actor.leader or "")
    effects: list[Effect] = []
    excel = action.outcome == "excel" and not at_cost
    if action.type == "overcome":
        if excel:
            effects.append(new_boost(draft, leader.id, f"{leader.name}'s momentum", action.id))
        if action.situation:
            scene = draft.scene
            key = situation_key(leader.id, action.situation)
            if key not in scene.overcome:
                draft.put_scene(scene.model_copy(update={"overcome": (*scene.overcome, key)}))
        if action.recovery_slot_id:
            effects.append(_mark_addressed(draft, action, action.recovery_slot_id))
    elif action.type == "create_advantage":
        free = 2 if excel else 1
        effects.append(
            place_situation_aspect(
                draft,
                action.aspect_name or "Advantage",
                attached_to=action.target_id,
                holder=leader.id,
                free=free,
                action_id=action.id,
            )
        )
        _clear_exhaustion(draft, leader.id, action.situation)
    elif action.type == "take_advantage":
        free = 2 if excel else 1
        target_aspect_id = action.target_aspect_id
        if target_aspect_id is not None and target_aspect_id in draft.aspects:
            effects.append(add_free_invokes(draft, target_aspect_id, leader.id, free))
        else:
            # The aspect went away while the action was open (a scene end, the GM).
            effects.append(_vanished(action, "aspect"))
    elif action.type == "discover":
        questions = 1 if at_cost or (action.shifts or 0) < 1 else action.shifts or 0
        effects.append(Effect(kind="questions", character_id=leader.id, count=questions))
        if excel:
            # R5.5: the hint is on offer until the actor takes it (action.hint).
            effects.append(Effect(kind="hint", character_id=leader.id, detail="offered"))
            action = action.model_copy(update={"hint": "offered"})
            scene = draft.scene
            draft.put_scene(scene.model_copy(update={"hints_open": (*scene.hints_open, leader.id)}))
        _exhaust(draft, leader.id, action.situation)
    effects.append(SUCCESS)
    # Not finish(..., *effects, succeeded=...): the effects go as one tuple, not unpacked.
    _resolved(draft, action, tuple(effects), True, fresh=fresh)


def finish(draft: Draft, action: Action, *effects: Effect, succeeded: bool | None) -> None:
    """The action resolved, with ``effects`` added to its own (one copy for both)."""
    _resolved(draft, action, effects, succeeded)


def _resolved(
    draft: Draft,
    action: Action,
    effects: tuple[Effect, ...],
    succeeded: bool | None,
    *,
    fresh: bool = False,
) -> None:
    """:func:`finish`, its effects given as one tuple. ``fresh``: ``action`` is a copy
    nobody else has seen, so the resolved action is finished in it rather than in one
    more copy of forty fields (as ``Draft._after`` finishes its fresh state)."""
    update = {
        "state": "resolved",
        "succeeded": succeeded,
        "pending_choice": None,
        "effects": action.effects + effects,
    }
    if fresh:
        action.__dict__.update(update)
        draft.put_action(action)
    else:
        draft.put_action(action.model_copy(update=update))


def _exhaust(draft: Draft, character_id: str, situation: str | None) -> None:
    """R5.6: a discover roll takes all there is from the situation as it is."""
    if not situation:
        return
    key = situation_key(character_id, situation)
    scene = draft.scene
    if key not in scene.exhausted:
        draft.put_scene(scene.model_copy(update={"exhausted": (*scene.exhausted, key)}))


def _clear_exhaustion(draft: Draft, character_id: str, situation: str | None) -> None:
    """R5.6: creating an advantage on the situation changes it."""
    if not situation:
        return
    key = situation_key(character_id, situation)
    scene = draft.scene
    if key in scene.exhausted:
        draft.put_scene(
            scene.model_copy(update={"exhausted": tuple(k for k in scene.exhausted if k != key)})
        )


def _vanished(action: Action, what: str) -> Effect:
    """What the action was about no longer exists: said on the card, never a crash."""
    return Effect(kind="vanished", text=action.aspect_name or "", detail=what)


def _mark_addressed(draft: Draft, action: Action, recovery_slot_id: str) -> Effect:
    """R7.4: success marks the consequence addressed (if it is still there to treat)."""
    patient_id, slot_id = recovery_slot_id.split("|", 1)
    patient = draft.characters.get(patient_id)
    current = next((s for s in patient.consequences if s.id == slot_id), None) if patient else None
    if patient is None or current is None or current.empty or current.status != "fresh":
        return _vanished(action, "consequence")
    slots = tuple(
        s.model_copy(update={"status": "addressed"}) if s.id == slot_id else s
        for s in patient.consequences
    )
    draft.put_character(patient.model_copy(update={"consequences": slots}))
    slot = next(s for s in slots if s.id == slot_id)
    aspect = draft.aspects.get(slot.aspect_id) if slot.aspect_id is not None else None
    name = aspect.name if aspect is not None else ""
    return Effect(
        kind="consequence",
        character_id=patient_id,
        aspect_id=slot.aspect_id,
        count=slot.severity,
        text=name,
        detail="addressed",
    )
