"""Intents on the scene: aspects, contests, challenges, conflicts, fate points, ends."""

from __future__ import annotations

from pydantic import BaseModel

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
from bridge.service import cards, protocol
from bridge.service.core import IntentGroup, RuleTable, Turn
from bridge.service.session import Reply, Session, handles, ok, request_key
from bridge.store.base import EmitRow, EventRow

RULES = RuleTable()


@RULES.change(protocol.WorldSettingsIn)
def world_settings(state: WorldState, intent: protocol.WorldSettingsIn, turn: Turn) -> list[Event]:
    return change_settings(
        state,
        turn.who,
        trust_player_ratings=intent.trust_player_ratings,
        full_defense=intent.full_defense,
    )


@RULES.change(protocol.SceneAspect)
def scene_aspect(state: WorldState, intent: protocol.SceneAspect, turn: Turn) -> list[Event]:
    return scene_rules.edit_aspect(
        state,
        turn.who,
        intent.op,
        aspect_id=intent.aspect_id,
        name=intent.name,
        attached_to=intent.attached_to,
        free_invokes=intent.free_invokes,
    )


@RULES.change(protocol.ContestStart)
def contest_start(state: WorldState, intent: protocol.ContestStart, turn: Turn) -> list[Event]:
    sides = [contest_rules.SideSpec(s.name, tuple(s.members)) for s in intent.sides]
    return contest_rules.start_contest(
        state,
        intent.name,
        intent.mode,
        intent.skill,
        sides,
        turn.who,
        turn.ruleset,
        passive_rating=intent.passive_rating,
    )


@RULES.act(protocol.ContestRoll)
def contest_roll(state: WorldState, intent: protocol.ContestRoll, turn: Turn) -> list[Event]:
    return contest_rules.contest_roll(
        state, intent.contest_id, intent.side_id, turn.who, turn.dice, turn.ruleset, intent.skill
    )


@RULES.act(protocol.ContestAdvantage)
def contest_advantage(
    state: WorldState, intent: protocol.ContestAdvantage, turn: Turn
) -> list[Event]:
    opposition = intent.opposition
    return contest_rules.contest_advantage(
        state,
        intent.contest_id,
        intent.side_id,
        intent.actor_id,
        intent.skill,
        intent.aspect_name,
        turn.who,
        turn.dice,
        turn.ruleset,
        passive_rating=opposition.rating
        if isinstance(opposition, protocol.PassiveOppositionIn)
        else None,
        opposer_id=opposition.opposer_id
        if isinstance(opposition, protocol.ActiveOppositionIn)
        else None,
        target_id=intent.target_id,
    )


@RULES.change(protocol.ContestTwist)
def contest_twist(state: WorldState, intent: protocol.ContestTwist, turn: Turn) -> list[Event]:
    return contest_rules.name_twist(state, intent.contest_id, intent.name, turn.who)


@RULES.change(protocol.ContestConcede)
def contest_concede(state: WorldState, intent: protocol.ContestConcede, turn: Turn) -> list[Event]:
    return contest_rules.concede_contest(state, intent.contest_id, intent.side_id, turn.who)


@RULES.change(protocol.ChallengeStart)
def challenge_start(state: WorldState, intent: protocol.ChallengeStart, turn: Turn) -> list[Event]:
    tasks = [challenge_rules.TaskSpec(t.name, t.skill, t.rating) for t in intent.tasks]
    return challenge_rules.start_challenge(state, intent.name, tasks, turn.who)


@RULES.act(protocol.ChallengeRoll)
def challenge_roll(state: WorldState, intent: protocol.ChallengeRoll, turn: Turn) -> list[Event]:
    helpers = tuple(actions.Helper(h.character_id, h.skill) for h in intent.helpers)
    return challenge_rules.roll_task(
        state,
        intent.challenge_id,
        intent.task_id,
        intent.actor_id,
        turn.who,
        turn.dice,
        turn.ruleset,
        helpers,
        intent.skill,
    )


@RULES.act(protocol.ChallengeAdvantage)
def challenge_advantage(
    state: WorldState, intent: protocol.ChallengeAdvantage, turn: Turn
) -> list[Event]:
    return challenge_rules.try_advantage(
        state,
        intent.challenge_id,
        intent.actor_id,
        intent.skill,
        intent.aspect_name,
        intent.rating,
        turn.who,
        turn.dice,
        turn.ruleset,
    )


@RULES.change(protocol.ChallengeCarry)
def challenge_carry(state: WorldState, intent: protocol.ChallengeCarry, turn: Turn) -> list[Event]:
    return challenge_rules.carry_boosts(state, intent.challenge_id, intent.carry, turn.who)


def _zones(zones: list[protocol.ZoneIn]) -> list[Zone]:
    """A conflict's map as the rules take it."""
    return [Zone(name=z.name, adjacent=tuple(z.adjacent)) for z in zones]


@RULES.change(protocol.ConflictStart)
def conflict_start(state: WorldState, intent: protocol.ConflictStart, turn: Turn) -> list[Event]:
    sides = [conflict_rules.ConflictSideSpec(s.name, tuple(s.members)) for s in intent.sides]
    return conflict_rules.start_conflict(
        state,
        intent.name,
        intent.kind,
        sides,
        turn.who,
        turn.ruleset,
        zones=_zones(intent.zones),
        positions=dict(intent.positions),
        order_skill=intent.order_skill,
        group_npcs=intent.group_npcs,
        tie_break=tuple(intent.tie_break),
        first_id=intent.first_id,
    )


@RULES.change(protocol.ConflictOrder)
def conflict_order(state: WorldState, intent: protocol.ConflictOrder, turn: Turn) -> list[Event]:
    return conflict_rules.reorder(state, intent.conflict_id, tuple(intent.order), turn.who)


@RULES.change(protocol.ConflictNext)
def conflict_next(state: WorldState, intent: protocol.ConflictNext, turn: Turn) -> list[Event]:
    return conflict_rules.next_turn(state, intent.conflict_id, turn.who, intent.next_id)


@RULES.change(protocol.ConflictFullDefense)
def conflict_full_defense(
    state: WorldState, intent: protocol.ConflictFullDefense, turn: Turn
) -> list[Event]:
    return conflict_rules.full_defense(
        state, intent.conflict_id, intent.character_id, turn.who, turn.ruleset
    )


@RULES.change(protocol.ConflictConcede)
def conflict_concede(
    state: WorldState, intent: protocol.ConflictConcede, turn: Turn
) -> list[Event]:
    return conflict_rules.concede(state, intent.conflict_id, intent.character_id, turn.who)


@RULES.change(protocol.ConflictMove)
def conflict_move(state: WorldState, intent: protocol.ConflictMove, turn: Turn) -> list[Event]:
    return conflict_rules.move(
        state, intent.conflict_id, intent.character_id, intent.zone, turn.who, force=intent.force
    )


@RULES.change(protocol.ConflictZones)
def conflict_zones(state: WorldState, intent: protocol.ConflictZones, turn: Turn) -> list[Event]:
    return conflict_rules.redraw_zones(
        state, intent.conflict_id, _zones(intent.zones), dict(intent.positions), turn.who
    )


@RULES.change(protocol.ConflictEnd)
def conflict_end(state: WorldState, intent: protocol.ConflictEnd, turn: Turn) -> list[Event]:
    return conflict_rules.end_conflict(state, intent.conflict_id, turn.who)


@RULES.change(protocol.FateCompel)
def fate_compel(state: WorldState, intent: protocol.FateCompel, turn: Turn) -> list[Event]:
    return fate_rules.offer_compel(
        state, intent.character_id, intent.text, turn.who, intent.aspect_id
    )


@RULES.change(protocol.FateCompelAnswer)
def fate_compel_answer(
    state: WorldState, intent: protocol.FateCompelAnswer, turn: Turn
) -> list[Event]:
    return fate_rules.answer_compel(state, intent.compel_id, intent.accept, turn.who)


class SceneIntents(IntentGroup):
    """Intents on the scene: aspects, contests, challenges, conflicts, fate points, ends."""

    rules = RULES

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
                rules=cards.rules_info(get_ruleset(state.ruleset), state),
            )

        return await self.core.mutate(session, request_key(intent), decide, answer)

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
