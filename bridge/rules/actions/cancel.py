"""The GM calls an action off, so no action can ever block a table."""

from __future__ import annotations

from bridge.rules.actions.commands import Principal
from bridge.rules.actions.common import add_effects, find_action, require_gm
from bridge.rules.draft import Draft
from bridge.rules.errors import refused
from bridge.rules.events import Event
from bridge.rules.state import GM, Action, Aspect, Effect, WorldState


def cancel(
    state: WorldState, action_id: str, principal: Principal, reason: str = ""
) -> list[Event]:
    """Close an open action with no outcome, in whatever state it waits.

    Guarantees: the action ends ``cancelled`` and takes no more intents; what was paid for
    its invokes goes back to whoever paid (fate points to the invoker or the GM's budget,
    free invokes to their holder while the aspect exists, used boosts return), and a point
    earned by an invoke against someone else (R4.5) is withdrawn while still pending.
    Effects a resolution already applied (a boost, a consequence) stay, and the card lists
    them. A contest or challenge roll frees its slot so it may be rolled again.
    """
    require_gm(principal)
    draft = Draft(state, "action.cancel")
    action = find_action(draft, action_id)
    if action.closed:
        raise refused("wrong_state", "nothing_to_cancel", "action_id", state=action.state)
    effects = _refund_invokes(draft, action)
    effects.append(Effect(kind="cancelled", text=reason))
    draft.put_action(
        add_effects(action, *effects).model_copy(
            update={"state": "cancelled", "pending_choice": None, "pending_hit": 0}
        )
    )
    # A contest or challenge frees the slot itself: it observes the cancellation
    # (bridge.rules.procedures).
    return draft.events()


def _refund_invokes(draft: Draft, action: Action) -> list[Effect]:
    refunds: list[Effect] = []
    for invoke in action.invokes:
        payer = draft.characters.get(invoke.invoker)
        pays_from_gm = invoke.invoker == GM or payer is None or payer.is_npc
        if invoke.payment == "fate_point":
            if pays_from_gm:
                draft.set_gm_fate_points(draft.gm_fate_points + 1)
            elif payer is not None:
                draft.put_character(payer.model_copy(update={"fate_points": payer.fate_points + 1}))
        else:
            holder = GM if invoke.invoker == GM else invoke.invoker
            aspect = draft.aspects.get(invoke.aspect_id)
            if aspect is not None:
                invokes = dict(aspect.free_invokes)
                invokes[holder] = invokes.get(holder, 0) + 1
                draft.put_aspect(aspect.model_copy(update={"free_invokes": invokes}))
            elif invoke.payment == "boost":
                # R12.6: the boost vanished when used; it comes back with its one invoke.
                draft.put_aspect(
                    Aspect(
                        id=invoke.aspect_id,
                        name=invoke.aspect_name,
                        kind="boost",
                        free_invokes={holder: 1},
                    )
                )
            else:
                continue  # the aspect is gone (a scene ended): nothing to give back on
        refunds.append(
            Effect(
                kind="refund",
                character_id=invoke.invoker,
                aspect_id=invoke.aspect_id,
                count=1,
                text=invoke.aspect_name,
                detail=invoke.payment,
            )
        )
    for effect in action.effects:
        if effect.kind == "fate_point" and effect.detail == "invoked_against":
            _withdraw_pending_point(draft, effect)
    return refunds


def _withdraw_pending_point(draft: Draft, earned: Effect) -> None:
    """R4.5: the point an invoke against a character earned goes with the invoke."""
    character = draft.characters.get(earned.character_id or "")
    if character is None or character.pending_fate_points < 1:
        return
    reasons = list(character.pending_reasons)
    match = next(
        (
            i
            for i, r in enumerate(reasons)
            if r.kind == "invoked_against" and (r.aspect or "") == earned.text
        ),
        None,
    )
    if match is None:
        return
    del reasons[match]
    draft.put_character(
        character.model_copy(
            update={
                "pending_fate_points": character.pending_fate_points - 1,
                "pending_reasons": tuple(reasons),
            }
        )
    )
