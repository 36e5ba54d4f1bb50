"""The invoke phase (R4): invoking and passing until both sides are done."""

from __future__ import annotations

from bridge.rules.actions.commands import InvokeCommand, Principal
from bridge.rules.actions.common import (
    add_effects,
    find_action,
    find_character,
    other_side,
    pending_fate_point,
    require_active,
    require_control,
    require_gm,
    side_of,
    with_side,
)
from bridge.rules.actions.resolution import resolve
from bridge.rules.dice import DiceSource
from bridge.rules.draft import Draft
from bridge.rules.errors import refused
from bridge.rules.events import Event
from bridge.rules.ruleset import Ruleset
from bridge.rules.state import (
    GM,
    Action,
    Earning,
    Invoke,
    SideName,
    WorldState,
)


def _invoking_side(
    draft: Draft, action: Action, command: InvokeCommand, principal: Principal
) -> SideName:
    if command.invoker == GM:
        require_gm(principal)
        if command.side is not None:
            return command.side
        if action.opposition_kind == "passive":
            return "opposition"
        raise refused("invalid", "gm_side_required", "side")
    invoker = find_character(draft, command.invoker, "invoker")
    require_control(principal, invoker, "invoker")
    require_active(invoker, "invoke", "invoker")
    own: SideName | None = None
    if invoker.id in action.actor.members:
        own = "actor"
    elif invoker.id in action.opposition.members:
        own = "opposition"
    if own is not None:
        if command.side not in (None, own):
            raise refused("against_own_side", "invoke_other_side", "side", name=invoker.name)
        return own
    return _ally_side(draft, action, command, principal, invoker.name)


def _ally_side(
    draft: Draft, action: Action, command: InvokeCommand, principal: Principal, name: str
) -> SideName:
    """R13.10: a character not taking part invokes for the side its player names: one
    with a character on it, and not against a character of that player's own."""
    if command.side is None:
        raise refused("side_required", "ally_side_required", "side", name=name)
    helped = side_of(action, command.side)
    if not helped.members:
        raise refused("no_ally_on_side", "no_ally_on_side", "side")
    if not principal.is_gm:
        against = side_of(action, other_side(command.side)).members
        if any(principal.user_id in draft.character(c).owners for c in against):
            raise refused("against_own_side", "invoke_against_own", "side")
    return command.side


def invoke(
    state: WorldState,
    command: InvokeCommand,
    principal: Principal,
    dice: DiceSource,
    ruleset: Ruleset,
) -> list[Event]:
    """R4.1-R4.6: +2, a reroll or (Fate Condensed) a hostile -2, paid exactly once."""
    draft = Draft(state, "action.invoke")
    action = find_action(draft, command.action_id, "invoking")
    side_name = _invoking_side(draft, action, command, principal)
    side = side_of(action, side_name)
    aspect = draft.aspects.get(command.aspect_id)
    if aspect is None:
        raise refused("not_found", "no_such_aspect", "aspect_id")

    opponent = side_of(action, other_side(side_name))
    if command.effect == "hostile":
        if not ruleset.hostile_invokes:
            raise refused("not_in_ruleset", "no_hostile_invokes", "effect", ruleset=ruleset.title)
        if aspect.attached_to is None or aspect.attached_to not in opponent.members:
            raise refused("invalid", "hostile_needs_opponent_aspect", "aspect_id")
    if command.effect == "reroll" and side.roll.dice is None:
        raise refused("invalid", "passive_no_reroll", "effect")

    # The payer: a character, or the GM's budget for the GM and for NPCs (R4.2).
    holder = command.invoker
    pays_from_gm = holder == GM or draft.character(holder).is_npc

    if command.payment == "fate_point":
        if aspect.id in side.fate_point_aspects:
            raise refused(
                "already_invoked", "already_invoked_aspect", "aspect_id", aspect=aspect.name
            )
        if pays_from_gm:
            if draft.gm_fate_points < 1:
                raise refused("no_fate_points", "gm_budget_empty", "payment")
            draft.set_gm_fate_points(draft.gm_fate_points - 1)
        else:
            payer = draft.character(holder)
            if payer.fate_points < 1:
                raise refused("no_fate_points", "no_points_left", "payment", name=payer.name)
            draft.put_character(payer.model_copy(update={"fate_points": payer.fate_points - 1}))
        side = side.model_copy(update={"fate_point_aspects": (*side.fate_point_aspects, aspect.id)})
        # R4.5: invoking someone else's aspect pays them at the end of the scene.
        owner_id = aspect.attached_to
        if owner_id and owner_id != holder and owner_id not in side.members:
            point = pending_fate_point(
                draft, owner_id, Earning(kind="invoked_against", aspect=aspect.name)
            )
            if point:
                action = add_effects(action, point)
    else:
        key = GM if pays_from_gm and holder == GM else holder
        held = aspect.free_invokes.get(key, 0)
        if command.payment == "boost" and aspect.kind != "boost":
            raise refused("invalid", "not_a_boost", "payment", aspect=aspect.name)
        if held < 1:
            raise refused("no_free_invokes", "no_free_invoke_on", "payment", aspect=aspect.name)
        remaining = {**aspect.free_invokes, key: held - 1}
        remaining = {k: v for k, v in remaining.items() if v > 0}
        if aspect.kind == "boost" and not remaining:
            draft.remove_aspect(aspect.id)  # R12.6: a boost vanishes when used
        else:
            draft.put_aspect(aspect.model_copy(update={"free_invokes": remaining}))

    new_dice = None
    replaced = side.roll.dice if command.effect == "reroll" else None
    if command.effect == "bonus":
        side = side.model_copy(
            update={
                "roll": side.roll.model_copy(update={"invoke_bonus": side.roll.invoke_bonus + 2})
            }
        )
    elif command.effect == "reroll":
        new_dice = dice.roll()
        side = side.model_copy(update={"roll": side.roll.model_copy(update={"dice": new_dice})})
    else:
        opponent = opponent.model_copy(
            update={
                "roll": opponent.roll.model_copy(
                    update={"invoke_bonus": opponent.roll.invoke_bonus - 2}
                )
            }
        )
    record = Invoke(
        side=side_name,
        invoker=command.invoker,
        aspect_id=aspect.id,
        aspect_name=aspect.name,
        payment=command.payment,
        effect=command.effect,
        dice=new_dice,
        replaced=replaced,
    )
    # R4.4: any invoke reopens the exchange for both sides. Passive opposition has no
    # one to answer, so it stays passed (the GM may still invoke while the phase is open).
    passive = action.opposition_kind == "passive"
    own_passed = passive and side_name == "opposition"
    other_passed = passive and side_name == "actor" and opponent.passed
    action = with_side(action, side_name, side.model_copy(update={"passed": own_passed}))
    action = with_side(
        action, other_side(side_name), opponent.model_copy(update={"passed": other_passed})
    )
    draft.put_action(action.model_copy(update={"invokes": (*action.invokes, record)}))
    return draft.events()


def pass_invokes(
    state: WorldState, action_id: str, side_name: SideName, principal: Principal, ruleset: Ruleset
) -> list[Event]:
    """R4.4: when both sides have passed, the outcome is final and resolved (R3.2)."""
    draft = Draft(state, "action.pass")
    action = find_action(draft, action_id, "invoking")
    side = side_of(action, side_name)
    if side.leader is None:
        require_gm(principal)
    else:
        require_control(principal, draft.character(side.leader), "side")
    passed = side.model_copy(update={"passed": True})
    if side_of(action, other_side(side_name)).passed:
        # The outcome's copy of the action takes the pass along (one copy, not two).
        resolve(draft, action, ruleset, passing={side_name: passed})
    else:
        draft.put_action(with_side(action, side_name, passed))
    return draft.events()
