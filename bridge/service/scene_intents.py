"""Intents on the scene: aspects, contests, challenges, conflicts, fate points, ends."""

from __future__ import annotations

from pydantic import BaseModel

from bridge import cards, protocol
from bridge.rules import actions
from bridge.rules import challenge as challenge_rules
from bridge.rules import conflict as conflict_rules
from bridge.rules import contest as contest_rules
from bridge.rules import fate as fate_rules
from bridge.rules import scene as scene_rules
from bridge.rules.dice import DiceSource
from bridge.rules.events import Event
from bridge.rules.ruleset import Ruleset, get_ruleset
from bridge.rules.settings import change_ruleset, change_settings
from bridge.rules.state import WorldState, Zone
from bridge.service.core import IntentGroup
from bridge.service.session import Reply, Session, handles, ok, request_key
from bridge.store.base import EmitRow, EventRow


class SceneIntents(IntentGroup):
    """Intents on the scene: aspects, contests, challenges, conflicts, fate points, ends."""

    @handles(protocol.SceneEnd)
    async def _scene_end(self, session: Session, intent: protocol.SceneEnd) -> Reply:
        principal = session.principal
        summaries: list[scene_rules.SceneEndSummary] = []

        def decide(state: WorldState, ruleset: Ruleset, dice: DiceSource) -> list[Event]:
            events, summary = scene_rules.end_scene(
                state,
                principal,
                tuple(intent.keep_aspects),
                intent.scope,
                intent.gm_budget,
                ruleset,
            )
            summaries[:] = [summary]
            return events

        def answer(state: WorldState, _rows: list[EventRow], _e: list[EmitRow]) -> BaseModel:
            return cards.scene_end(summaries[0], state)

        def scene_card(state: WorldState) -> list[tuple[str, BaseModel]]:
            summary = cards.scene_end(summaries[0], state)
            card = protocol.SceneEndCard(scope=intent.scope, summary=summary)
            return [(f"scene{summary.ended_scene}", card)]

        return await self.core.mutate(
            session, request_key(intent), decide, answer, extra_cards=scene_card
        )

    @handles(protocol.SceneRead)
    async def _scene_read(self, session: Session, intent: protocol.SceneRead) -> Reply:
        _snapshot, state = await self.core.current(session.world_id)
        return Reply(ok(cards.scene_state(state)))

    @handles(protocol.WorldSettingsIn)
    async def _world_settings(self, session: Session, intent: protocol.WorldSettingsIn) -> Reply:
        return await self.change(
            session,
            intent,
            lambda state, _r, _d, who: change_settings(
                state,
                who,
                trust_player_ratings=intent.trust_player_ratings,
                full_defense=intent.full_defense,
            ),
        )

    @handles(protocol.WorldRuleset)
    async def _world_ruleset(self, session: Session, intent: protocol.WorldRuleset) -> Reply:
        """R13.9: the GM chooses the rules; the answer says what they are now."""
        principal = session.principal

        def decide(state: WorldState, _ruleset: Ruleset, _dice: DiceSource) -> list[Event]:
            return change_ruleset(state, principal, intent.ruleset)

        def answer(state: WorldState, rows: list[EventRow], _e: list[EmitRow]) -> BaseModel:
            return protocol.WorldRulesetData(
                ruleset=state.ruleset,
                changed=bool(rows),
                rules=protocol.RulesetInfo.model_validate(
                    cards.rules_info(get_ruleset(state.ruleset), state)
                ),
            )

        return await self.core.mutate(session, request_key(intent), decide, answer)

    @handles(protocol.SceneAspect)
    async def _scene_aspect(self, session: Session, intent: protocol.SceneAspect) -> Reply:
        return await self.change(
            session,
            intent,
            lambda state, _r, _d, who: scene_rules.edit_aspect(
                state,
                who,
                intent.op,
                aspect_id=intent.aspect_id,
                name=intent.name,
                attached_to=intent.attached_to,
                free_invokes=intent.free_invokes,
            ),
        )

    @handles(protocol.ContestStart)
    async def _contest_start(self, session: Session, intent: protocol.ContestStart) -> Reply:
        sides = [contest_rules.SideSpec(s.name, tuple(s.members)) for s in intent.sides]
        return await self.change(
            session,
            intent,
            lambda state, ruleset, _d, who: contest_rules.start_contest(
                state,
                intent.name,
                intent.mode,
                intent.skill,
                sides,
                who,
                ruleset,
                passive_rating=intent.passive_rating,
            ),
        )

    @handles(protocol.ContestRoll)
    async def _contest_roll(self, session: Session, intent: protocol.ContestRoll) -> Reply:
        return await self.act(
            session,
            intent,
            lambda state, ruleset, dice, who: contest_rules.contest_roll(
                state, intent.contest_id, intent.side_id, who, dice, ruleset, intent.skill
            ),
        )

    @handles(protocol.ContestAdvantage)
    async def _contest_advantage(
        self, session: Session, intent: protocol.ContestAdvantage
    ) -> Reply:
        opposition = intent.opposition
        return await self.act(
            session,
            intent,
            lambda state, ruleset, dice, who: contest_rules.contest_advantage(
                state,
                intent.contest_id,
                intent.side_id,
                intent.actor_id,
                intent.skill,
                intent.aspect_name,
                who,
                dice,
                ruleset,
                passive_rating=opposition.rating
                if isinstance(opposition, protocol.PassiveOppositionIn)
                else None,
                opposer_id=opposition.opposer_id
                if isinstance(opposition, protocol.ActiveOppositionIn)
                else None,
                target_id=intent.target_id,
            ),
        )

    @handles(protocol.ContestTwist)
    async def _contest_twist(self, session: Session, intent: protocol.ContestTwist) -> Reply:
        return await self.change(
            session,
            intent,
            lambda state, _r, _d, who: contest_rules.name_twist(
                state, intent.contest_id, intent.name, who
            ),
        )

    @handles(protocol.ContestConcede)
    async def _contest_concede(self, session: Session, intent: protocol.ContestConcede) -> Reply:
        return await self.change(
            session,
            intent,
            lambda state, _r, _d, who: contest_rules.concede_contest(
                state, intent.contest_id, intent.side_id, who
            ),
        )

    @handles(protocol.ChallengeStart)
    async def _challenge_start(self, session: Session, intent: protocol.ChallengeStart) -> Reply:
        tasks = [challenge_rules.TaskSpec(t.name, t.skill, t.rating) for t in intent.tasks]
        return await self.change(
            session,
            intent,
            lambda state, _r, _d, who: challenge_rules.start_challenge(
                state, intent.name, tasks, who
            ),
        )

    @handles(protocol.ChallengeRoll)
    async def _challenge_roll(self, session: Session, intent: protocol.ChallengeRoll) -> Reply:
        helpers = tuple(actions.Helper(h.character_id, h.skill) for h in intent.helpers)
        return await self.act(
            session,
            intent,
            lambda state, ruleset, dice, who: challenge_rules.roll_task(
                state,
                intent.challenge_id,
                intent.task_id,
                intent.actor_id,
                who,
                dice,
                ruleset,
                helpers,
                intent.skill,
            ),
        )

    @handles(protocol.ChallengeAdvantage)
    async def _challenge_advantage(
        self, session: Session, intent: protocol.ChallengeAdvantage
    ) -> Reply:
        return await self.act(
            session,
            intent,
            lambda state, ruleset, dice, who: challenge_rules.try_advantage(
                state,
                intent.challenge_id,
                intent.actor_id,
                intent.skill,
                intent.aspect_name,
                intent.rating,
                who,
                dice,
                ruleset,
            ),
        )

    @handles(protocol.ChallengeCarry)
    async def _challenge_carry(self, session: Session, intent: protocol.ChallengeCarry) -> Reply:
        return await self.change(
            session,
            intent,
            lambda state, _r, _d, who: challenge_rules.carry_boosts(
                state, intent.challenge_id, intent.carry, who
            ),
        )

    @handles(protocol.ConflictStart)
    async def _conflict_start(self, session: Session, intent: protocol.ConflictStart) -> Reply:
        sides = [conflict_rules.ConflictSideSpec(s.name, tuple(s.members)) for s in intent.sides]
        zones = [Zone(name=z.name, adjacent=tuple(z.adjacent)) for z in intent.zones]
        return await self.change(
            session,
            intent,
            lambda state, ruleset, _d, who: conflict_rules.start_conflict(
                state,
                intent.name,
                intent.kind,
                sides,
                who,
                ruleset,
                zones=zones,
                positions=dict(intent.positions),
                order_skill=intent.order_skill,
                group_npcs=intent.group_npcs,
                tie_break=tuple(intent.tie_break),
                first_id=intent.first_id,
            ),
        )

    @handles(protocol.ConflictOrder)
    async def _conflict_order(self, session: Session, intent: protocol.ConflictOrder) -> Reply:
        return await self.change(
            session,
            intent,
            lambda state, _r, _d, who: conflict_rules.reorder(
                state, intent.conflict_id, tuple(intent.order), who
            ),
        )

    @handles(protocol.ConflictNext)
    async def _conflict_next(self, session: Session, intent: protocol.ConflictNext) -> Reply:
        return await self.change(
            session,
            intent,
            lambda state, _r, _d, who: conflict_rules.next_turn(
                state, intent.conflict_id, who, intent.next_id
            ),
        )

    @handles(protocol.ConflictFullDefense)
    async def _conflict_full_defense(
        self, session: Session, intent: protocol.ConflictFullDefense
    ) -> Reply:
        return await self.change(
            session,
            intent,
            lambda state, ruleset, _d, who: conflict_rules.full_defense(
                state, intent.conflict_id, intent.character_id, who, ruleset
            ),
        )

    @handles(protocol.ConflictConcede)
    async def _conflict_concede(self, session: Session, intent: protocol.ConflictConcede) -> Reply:
        return await self.change(
            session,
            intent,
            lambda state, _r, _d, who: conflict_rules.concede(
                state, intent.conflict_id, intent.character_id, who
            ),
        )

    @handles(protocol.ConflictMove)
    async def _conflict_move(self, session: Session, intent: protocol.ConflictMove) -> Reply:
        return await self.change(
            session,
            intent,
            lambda state, _r, _d, who: conflict_rules.move(
                state,
                intent.conflict_id,
                intent.character_id,
                intent.zone,
                who,
                force=intent.force,
            ),
        )

    @handles(protocol.ConflictEnd)
    async def _conflict_end(self, session: Session, intent: protocol.ConflictEnd) -> Reply:
        return await self.change(
            session,
            intent,
            lambda state, _r, _d, who: conflict_rules.end_conflict(state, intent.conflict_id, who),
        )

    @handles(protocol.FateCompel)
    async def _fate_compel(self, session: Session, intent: protocol.FateCompel) -> Reply:
        return await self.change(
            session,
            intent,
            lambda state, _r, _d, who: fate_rules.offer_compel(
                state, intent.character_id, intent.text, who, intent.aspect_id
            ),
        )

    @handles(protocol.FateCompelAnswer)
    async def _fate_compel_answer(
        self, session: Session, intent: protocol.FateCompelAnswer
    ) -> Reply:
        return await self.change(
            session,
            intent,
            lambda state, _r, _d, who: fate_rules.answer_compel(
                state, intent.compel_id, intent.accept, who
            ),
        )

    @handles(protocol.FateSpend)
    async def _fate_spend(self, session: Session, intent: protocol.FateSpend) -> Reply:
        principal = session.principal
        return await self.core.mutate(
            session,
            request_key(intent),
            lambda state, _r, _d: fate_rules.spend(
                state, intent.character_id, intent.purpose, principal
            ),
            lambda state, _rows, _e: cards.world_summary(state),
        )

    @handles(protocol.FateSacrifice)
    async def _fate_sacrifice(self, session: Session, intent: protocol.FateSacrifice) -> Reply:
        principal = session.principal
        return await self.core.mutate(
            session,
            request_key(intent),
            lambda state, ruleset, _d: fate_rules.sacrifice(
                state, intent.character_id, intent.severity, intent.name, principal, ruleset
            ),
            lambda state, _rows, _e: cards.world_summary(state),
        )
