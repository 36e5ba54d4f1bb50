"""Intents that move one action along (R2-R10)."""

from __future__ import annotations

from pydantic import BaseModel

from bridge.rules import actions
from bridge.rules.events import Event
from bridge.rules.ruleset import get_ruleset
from bridge.rules.state import WorldState
from bridge.service import cards, protocol
from bridge.service.core import Committed, ServiceCore, Turn
from bridge.service.session import Reply, Session, ok


def action_roll(state: WorldState, intent: protocol.ActionRoll, turn: Turn) -> list[Event]:
    return actions.roll_now(state, intent.action_id, turn.who, turn.dice)


def action_oppose(state: WorldState, intent: protocol.ActionOppose, turn: Turn) -> list[Event]:
    return actions.oppose(
        state,
        intent.action_id,
        intent.skill,
        turn.who,
        turn.dice,
        turn.ruleset,
        None if intent.stunts is None else tuple(intent.stunts),
    )


def action_interpose(
    state: WorldState, intent: protocol.ActionInterpose, turn: Turn
) -> list[Event]:
    return actions.interpose(state, intent.action_id, intent.defender_id, turn.who, turn.ruleset)


def action_invoke(state: WorldState, intent: protocol.ActionInvoke, turn: Turn) -> list[Event]:
    command = actions.InvokeCommand(
        action_id=intent.action_id,
        invoker=intent.invoker,
        aspect_id=intent.aspect_id,
        payment=intent.payment,
        effect=intent.effect,
        side=intent.side,
    )
    return actions.invoke(state, command, turn.who, turn.dice, turn.ruleset)


def action_pass(state: WorldState, intent: protocol.ActionPass, turn: Turn) -> list[Event]:
    return actions.pass_invokes(state, intent.action_id, intent.side, turn.who, turn.ruleset)


def action_choose(state: WorldState, intent: protocol.ActionChoose, turn: Turn) -> list[Event]:
    return actions.choose(
        state,
        intent.action_id,
        intent.choice,
        turn.who,
        aspect_name=intent.aspect_name,
        consequence_name=intent.consequence_name,
    )


def action_cost(state: WorldState, intent: protocol.ActionCost, turn: Turn) -> list[Event]:
    command = actions.CostCommand(
        action_id=intent.action_id,
        kind=intent.kind,
        text=intent.text,
        target_id=intent.target_id,
        aspect_name=intent.aspect_name,
    )
    return actions.apply_cost(state, command, turn.who, turn.ruleset)


def action_concede(state: WorldState, intent: protocol.ActionConcede, turn: Turn) -> list[Event]:
    return actions.concede(state, intent.action_id, intent.character_id, turn.who)


def action_absorb(state: WorldState, intent: protocol.ActionAbsorb, turn: Turn) -> list[Event]:
    command = actions.AbsorbCommand(
        action_id=intent.action_id,
        stress=tuple(actions.StressMark(m.track, tuple(m.boxes)) for m in intent.stress),
        consequences=dict(intent.consequences),
    )
    return actions.absorb(state, command, turn.who)


def action_gift(state: WorldState, intent: protocol.ActionGift, turn: Turn) -> list[Event]:
    return actions.gift_free_invoke(
        state, intent.action_id, intent.aspect_id, intent.holder, turn.who
    )


def action_cancel(state: WorldState, intent: protocol.ActionCancel, turn: Turn) -> list[Event]:
    return actions.cancel(state, intent.action_id, turn.who, intent.reason)


def action_confirm(state: WorldState, intent: protocol.ActionConfirm, turn: Turn) -> list[Event]:
    danger = intent.dangerous
    return actions.confirm(
        state,
        intent.action_id,
        turn.who,
        turn.dice,
        passive_rating=intent.passive_rating,
        dangerous_actor=danger.actor if danger else None,
        dangerous_opposition=danger.opposition if danger else None,
    )


def action_help(state: WorldState, intent: protocol.ActionHelp, turn: Turn) -> list[Event]:
    return actions.answer_help(
        state, intent.action_id, intent.character_id, intent.accept, turn.who, turn.dice
    )


def action_hint(state: WorldState, intent: protocol.ActionHint, turn: Turn) -> list[Event]:
    return actions.take_hint(state, intent.action_id, turn.who)


def action_hint_give(state: WorldState, intent: protocol.ActionHintGive, turn: Turn) -> list[Event]:
    return actions.give_hint(state, intent.action_id, intent.text, turn.who)


def opposing(
    opposition: protocol.PassiveOppositionIn | protocol.ActiveOppositionIn | None,
) -> tuple[int | None, str | None]:
    """An opposition as the rules take it: its passive rating, or its opposer (R2.2)."""
    if isinstance(opposition, protocol.PassiveOppositionIn):
        return opposition.rating, None
    if isinstance(opposition, protocol.ActiveOppositionIn):
        return None, opposition.opposer_id
    return None, None


def action_start(state: WorldState, intent: protocol.ActionStart, turn: Turn) -> list[Event]:
    passive_rating, opposer_id = opposing(intent.opposition)
    recovery = intent.recovery
    command = actions.StartAction(
        type=intent.type,
        actor_id=intent.actor_id,
        skill=intent.skill,
        passive_rating=passive_rating,
        opposer_id=opposer_id,
        target_id=intent.target_id,
        target_aspect_id=intent.target_aspect_id,
        aspect_name=intent.aspect_name,
        situation=intent.situation,
        helpers=tuple(actions.Helper(h.character_id, h.skill) for h in intent.helpers),
        dangerous_actor=intent.dangerous.actor,
        dangerous_opposition=intent.dangerous.opposition,
        recovery_of=(recovery.character_id, recovery.slot_id) if recovery else None,
        allow_repeat=intent.allow_repeat and turn.who.is_gm,
        description=intent.description,
        attack_kind=intent.attack_kind,
        stunts=None if intent.stunts is None else tuple(intent.stunts),
    )
    return actions.start_action(state, command, turn.who, turn.dice, turn.ruleset)


async def action_odds(core: ServiceCore, session: Session, intent: protocol.ActionOdds) -> Reply:
    """A read for the roll dialog: the exact odds before any action exists (no commit)."""
    _snapshot, state = await core.current(session.world_id)
    ruleset = get_ruleset(state.ruleset)
    helpers = tuple(actions.Helper(h.character_id, h.skill) for h in intent.helpers)
    modifier, odds = actions.odds_before_roll(
        state,
        intent.actor_id,
        intent.skill,
        intent.type,
        helpers,
        intent.opposition,
        ruleset,
        None if intent.stunts is None else tuple(intent.stunts),
    )
    return Reply(
        ok(
            {
                "modifier": modifier,
                "opposition": intent.opposition,
                "odds": cards.odds_view(odds),
                "ruleset": ruleset.id,
                "outcomes": cards.outcome_ids(ruleset),
            }
        )
    )


def _give_free_invokes(state: WorldState, intent: protocol.AspectGive, turn: Turn) -> list[Event]:
    return actions.give_free_invokes(
        state, intent.aspect_id, intent.from_id, intent.to_id, intent.count, turn.who
    )


async def aspect_give(core: ServiceCore, session: Session, intent: protocol.AspectGive) -> Reply:
    def answer(done: Committed) -> BaseModel:
        aspect = done.after.aspects[intent.aspect_id]
        return protocol.AspectGiveData(aspect_id=aspect.id, free_invokes=dict(aspect.free_invokes))

    return await core.mutate(session, intent, _give_free_invokes, answer)
