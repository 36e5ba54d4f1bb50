"""Intents that move one action along (R2-R10)."""

from __future__ import annotations

from pydantic import BaseModel

from bridge import cards, protocol
from bridge.rules import actions
from bridge.rules.dice import DiceSource
from bridge.rules.events import Event
from bridge.rules.ruleset import Ruleset, get_ruleset
from bridge.rules.state import WorldState
from bridge.service.core import IntentGroup
from bridge.service.session import Reply, Session, handles, ok, request_key
from bridge.store.base import EmitRow, EventRow


class ActionIntents(IntentGroup):
    """Intents that move one action along (R2-R10)."""

    @handles(protocol.ActionStart)
    async def _action_start(self, session: Session, intent: protocol.ActionStart) -> Reply:
        opposition = intent.opposition
        recovery = intent.recovery
        command = actions.StartAction(
            type=intent.type,
            actor_id=intent.actor_id,
            skill=intent.skill,
            passive_rating=opposition.rating
            if isinstance(opposition, protocol.PassiveOppositionIn)
            else None,
            opposer_id=opposition.opposer_id
            if isinstance(opposition, protocol.ActiveOppositionIn)
            else None,
            target_id=intent.target_id,
            target_aspect_id=intent.target_aspect_id,
            aspect_name=intent.aspect_name,
            situation=intent.situation,
            helpers=tuple(actions.Helper(h.character_id, h.skill) for h in intent.helpers),
            dangerous_actor=intent.dangerous.actor,
            dangerous_opposition=intent.dangerous.opposition,
            recovery_of=(recovery.character_id, recovery.slot_id) if recovery else None,
            allow_repeat=intent.allow_repeat and session.role == "gm",
            description=intent.description,
            attack_kind=intent.attack_kind,
            stunts=None if intent.stunts is None else tuple(intent.stunts),
        )
        return await self.act(
            session,
            intent,
            lambda state, ruleset, dice, who: actions.start_action(
                state, command, who, dice, ruleset
            ),
        )

    @handles(protocol.ActionOdds)
    async def _action_odds(self, session: Session, intent: protocol.ActionOdds) -> Reply:
        """A read for the roll dialog: the exact odds before any action exists (no commit)."""
        _snapshot, state = await self.core.current(session.world_id)
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
                    "outcomes": cards.outcome_labels(ruleset),
                }
            )
        )

    @handles(protocol.ActionRoll)
    async def _action_roll(self, session: Session, intent: protocol.ActionRoll) -> Reply:
        return await self.act(
            session,
            intent,
            lambda state, _r, dice, who: actions.roll_now(state, intent.action_id, who, dice),
        )

    @handles(protocol.ActionOppose)
    async def _action_oppose(self, session: Session, intent: protocol.ActionOppose) -> Reply:
        return await self.act(
            session,
            intent,
            lambda state, ruleset, dice, who: actions.oppose(
                state,
                intent.action_id,
                intent.skill,
                who,
                dice,
                ruleset,
                None if intent.stunts is None else tuple(intent.stunts),
            ),
        )

    @handles(protocol.ActionInvoke)
    async def _action_invoke(self, session: Session, intent: protocol.ActionInvoke) -> Reply:
        command = actions.InvokeCommand(
            action_id=intent.action_id,
            invoker=intent.invoker,
            aspect_id=intent.aspect_id,
            payment=intent.payment,
            effect=intent.effect,
            side=intent.side,
        )
        return await self.act(
            session,
            intent,
            lambda state, ruleset, dice, who: actions.invoke(state, command, who, dice, ruleset),
        )

    @handles(protocol.ActionPass)
    async def _action_pass(self, session: Session, intent: protocol.ActionPass) -> Reply:
        return await self.act(
            session,
            intent,
            lambda state, ruleset, _d, who: actions.pass_invokes(
                state, intent.action_id, intent.side, who, ruleset
            ),
        )

    @handles(protocol.ActionChoose)
    async def _action_choose(self, session: Session, intent: protocol.ActionChoose) -> Reply:
        return await self.act(
            session,
            intent,
            lambda state, _r, _d, who: actions.choose(
                state,
                intent.action_id,
                intent.choice,
                who,
                aspect_name=intent.aspect_name,
                consequence_name=intent.consequence_name,
            ),
        )

    @handles(protocol.ActionCost)
    async def _action_cost(self, session: Session, intent: protocol.ActionCost) -> Reply:
        command = actions.CostCommand(
            action_id=intent.action_id,
            kind=intent.kind,
            text=intent.text,
            target_id=intent.target_id,
            aspect_name=intent.aspect_name,
        )
        return await self.act(
            session,
            intent,
            lambda state, ruleset, _d, who: actions.apply_cost(state, command, who, ruleset),
        )

    @handles(protocol.ActionConcede)
    async def _action_concede(self, session: Session, intent: protocol.ActionConcede) -> Reply:
        return await self.act(
            session,
            intent,
            lambda state, _r, _d, who: actions.concede(
                state, intent.action_id, intent.character_id, who
            ),
        )

    @handles(protocol.ActionAbsorb)
    async def _action_absorb(self, session: Session, intent: protocol.ActionAbsorb) -> Reply:
        command = actions.AbsorbCommand(
            action_id=intent.action_id,
            stress=tuple(actions.StressMark(m.track, tuple(m.boxes)) for m in intent.stress),
            consequences=dict(intent.consequences),
        )
        return await self.act(
            session, intent, lambda state, _r, _d, who: actions.absorb(state, command, who)
        )

    @handles(protocol.ActionGift)
    async def _action_gift(self, session: Session, intent: protocol.ActionGift) -> Reply:
        return await self.act(
            session,
            intent,
            lambda state, _r, _d, who: actions.gift_free_invoke(
                state, intent.action_id, intent.aspect_id, intent.holder, who
            ),
        )

    @handles(protocol.ActionCancel)
    async def _action_cancel(self, session: Session, intent: protocol.ActionCancel) -> Reply:
        return await self.act(
            session,
            intent,
            lambda state, _r, _d, who: actions.cancel(state, intent.action_id, who, intent.reason),
        )

    @handles(protocol.ActionConfirm)
    async def _action_confirm(self, session: Session, intent: protocol.ActionConfirm) -> Reply:
        danger = intent.dangerous
        return await self.act(
            session,
            intent,
            lambda state, _r, dice, who: actions.confirm(
                state,
                intent.action_id,
                who,
                dice,
                passive_rating=intent.passive_rating,
                dangerous_actor=danger.actor if danger else None,
                dangerous_opposition=danger.opposition if danger else None,
            ),
        )

    @handles(protocol.ActionHelp)
    async def _action_help(self, session: Session, intent: protocol.ActionHelp) -> Reply:
        return await self.act(
            session,
            intent,
            lambda state, _r, dice, who: actions.answer_help(
                state, intent.action_id, intent.character_id, intent.accept, who, dice
            ),
        )

    @handles(protocol.ActionHint)
    async def _action_hint(self, session: Session, intent: protocol.ActionHint) -> Reply:
        return await self.act(
            session,
            intent,
            lambda state, _r, _d, who: actions.take_hint(state, intent.action_id, who),
        )

    @handles(protocol.ActionHintGive)
    async def _action_hint_give(self, session: Session, intent: protocol.ActionHintGive) -> Reply:
        return await self.act(
            session,
            intent,
            lambda state, _r, _d, who: actions.give_hint(state, intent.action_id, intent.text, who),
        )

    @handles(protocol.AspectGive)
    async def _aspect_give(self, session: Session, intent: protocol.AspectGive) -> Reply:
        principal = session.principal

        def decide(state: WorldState, ruleset: Ruleset, dice: DiceSource) -> list[Event]:
            return actions.give_free_invokes(
                state, intent.aspect_id, intent.from_id, intent.to_id, intent.count, principal
            )

        def answer(state: WorldState, _rows: list[EventRow], _e: list[EmitRow]) -> BaseModel:
            aspect = state.aspects[intent.aspect_id]
            return protocol.AspectGiveData(
                aspect_id=aspect.id, free_invokes=dict(aspect.free_invokes)
            )

        return await self.core.mutate(session, request_key(intent), decide, answer)
