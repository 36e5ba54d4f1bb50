"""A player's action waiting in ``confirming``: the GM confirms its numbers (R2.1, R9.1),
helpers and the owners of characters it touches answer (R10.1, DESIGN Reach and
trust), and the actor's side says roll."""

from __future__ import annotations

from collections.abc import Sequence

from bridge.rules.actions.commands import Principal
from bridge.rules.actions.common import (
    add_effects,
    find_action,
    find_character,
    may_control,
    require_active,
    require_control,
    require_gm,
)
from bridge.rules.actions.declare import (
    advance_to_dice,
    any_invited,
    compose_actor_side,
    proceed,
)
from bridge.rules.dice import DiceSource
from bridge.rules.draft import Draft
from bridge.rules.errors import refused
from bridge.rules.events import Event
from bridge.rules.state import (
    Action,
    Consent,
    Effect,
    ParticipantStatus,
    WorldState,
)


def _asked(consents: Sequence[Consent]) -> list[str]:
    """The characters whose owners have not answered yet (DESIGN Reach and trust)."""
    return [c.character_id for c in consents if c.status == "asked"]


def roll_now(
    state: WorldState, action_id: str, principal: Principal, dice: DiceSource
) -> list[Event]:
    """Leave the concession window: the actor's side (or the GM) says roll."""
    draft = Draft(state, "action.roll")
    action = find_action(draft, action_id, "declared", "confirming")
    require_actor_side(draft, action, principal)
    if action.state == "confirming":
        # R10.1 Decision: rolling does not wait for helpers; the unanswered are dropped.
        if action.proposal is not None:
            raise refused("awaiting_gm", "gm_not_confirmed", "action_id")
        waiting = _asked(action.consents)
        if waiting:
            # Consent to harm (DESIGN Reach and trust): never rolled past; the GM may
            # cancel an action nobody answers.
            names = ", ".join(draft.characters[c].name for c in waiting if c in draft.characters)
            raise refused("awaiting_consent", "waits_for_consent", "action_id", names=names)
        participants = tuple(
            p.model_copy(update={"status": "dropped"}) if p.status == "invited" else p
            for p in action.participants
        )
        proceed(draft, action.model_copy(update={"participants": participants}), dice)
        return draft.events()
    advance_to_dice(draft, action, dice)
    return draft.events()


def require_actor_side(draft: Draft, action: Action, principal: Principal) -> None:
    """The GM, or a user who controls someone on the acting side."""
    members = [draft.characters.get(m) for m in action.actor.members]
    if not any(m is not None and may_control(principal, m) for m in members):
        raise refused("forbidden", "act_for_acting_side", "action_id")


def confirm(
    state: WorldState,
    action_id: str,
    principal: Principal,
    dice: DiceSource,
    *,
    passive_rating: int | None = None,
    dangerous_actor: bool | None = None,
    dangerous_opposition: bool | None = None,
) -> list[Event]:
    """R2.1, R9.1 Decision: the GM confirms a player's opposition rating and danger,
    or changes them; what is left out stays as proposed. The action then waits only
    for helpers still invited (R10.1), if any."""
    draft = Draft(state, "action.confirm")
    require_gm(principal)
    action = find_action(draft, action_id, "confirming")
    if action.proposal is None:
        raise refused("wrong_state", "nothing_to_confirm", "action_id")
    opposition = action.opposition
    if passive_rating is not None:
        if action.opposition_kind != "passive":
            raise refused("invalid", "has_opposer_not_rating", "passive_rating")
        roll = opposition.roll.model_copy(update={"passive_rating": passive_rating})
        opposition = opposition.model_copy(update={"roll": roll})
    if dangerous_opposition is not None:
        opposition = opposition.model_copy(update={"dangerous": dangerous_opposition})
    actor = action.actor
    if dangerous_actor is not None:
        actor = actor.model_copy(update={"dangerous": dangerous_actor})
    action = action.model_copy(update={"actor": actor, "opposition": opposition, "proposal": None})
    _proceed_when_answered(draft, action, dice)
    return draft.events()


def answer_help(
    state: WorldState,
    action_id: str,
    character_id: str,
    accept: bool,
    principal: Principal,
    dice: DiceSource,
) -> list[Event]:
    """A character's owner (or the GM) answers for it on a player's action waiting in
    ``confirming``. R10.1 Decision: a helper the player named joins only when accepted; a
    declined helper stays out. Consent to harm (DESIGN Reach and trust): a character the
    action would touch (its target, its opposer, an aspect on it) that the player does not
    own: accepted, the action may go on; declined, the action is called off, with the
    card saying so. When nobody is left to answer and the GM has confirmed, the action
    goes on."""
    draft = Draft(state, "action.help")
    action = find_action(draft, action_id, "confirming")
    invited = next(
        (
            p
            for p in action.participants
            if p.character_id == character_id and p.status == "invited"
        ),
        None,
    )
    asked = next(
        (c for c in action.consents if c.character_id == character_id and c.status == "asked"),
        None,
    )
    if invited is None and asked is None:
        raise refused("not_found", "not_asked_to_consent", "character_id")
    character = find_character(draft, character_id, "character_id")
    require_control(principal, character, "character_id")
    if invited is not None:
        if accept:
            require_active(character, "help", "character_id")
        status: ParticipantStatus = "joined" if accept else "declined"
        participants = tuple(
            p.model_copy(update={"status": status}) if p is invited else p
            for p in action.participants
        )
        actor = compose_actor_side(
            draft,
            participants,
            action.type,
            dangerous=action.actor.dangerous,
            stunts=action.actor.roll.stunts,
        )
        action = action.model_copy(update={"participants": participants, "actor": actor})
    if asked is not None:
        consents = tuple(
            c.model_copy(update={"status": "accepted" if accept else "declined"})
            if c is asked
            else c
            for c in action.consents
        )
        action = action.model_copy(update={"consents": consents})
        if not accept:
            _called_off(draft, action, asked)
            return draft.events()
    _proceed_when_answered(draft, action, dice)
    return draft.events()


def _called_off(draft: Draft, action: Action, declined: Consent) -> None:
    """Consent to harm: a decline calls the action off before any dice (nothing was rolled
    or paid yet); helpers still unanswered are dropped. A contest or challenge frees its
    slot itself (bridge.rules.procedures observes the cancellation)."""
    participants = tuple(
        p.model_copy(update={"status": "dropped"}) if p.status == "invited" else p
        for p in action.participants
    )
    character = draft.characters.get(declined.character_id)
    name = character.name if character is not None else declined.character_id
    effect = Effect(
        kind="declined",
        character_id=declined.character_id,
        # In words for readers without the card's own (a webhook, the log).
        text=f"Declined for {name} ({' and '.join(declined.parts)}): the action is called off",
        detail=declined.parts[0],
    )
    draft.put_action(
        add_effects(action, effect).model_copy(
            update={"state": "cancelled", "participants": participants}
        )
    )


def _proceed_when_answered(draft: Draft, action: Action, dice: DiceSource) -> None:
    if (
        action.proposal is None
        and not any_invited(action.participants)
        and not _asked(action.consents)
    ):
        proceed(draft, action, dice)
    else:
        draft.put_action(action)
