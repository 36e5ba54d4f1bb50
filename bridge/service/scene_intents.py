"""Intents on the scene: aspects, contests, challenges, conflicts, fate points, ends."""

from __future__ import annotations

from pydantic import BaseModel

from bridge.rules import actions
from bridge.rules import challenge as challenge_rules
from bridge.rules import conflict as conflict_rules
from bridge.rules import contest as contest_rules
from bridge.rules import fate as fate_rules
from bridge.rules import scene as scene_rules
from bridge.rules.events import Event
from bridge.rules.ruleset import get_ruleset
from bridge.rules.settings import change_ruleset, change_settings
from bridge.rules.state import WorldState, Zone
from bridge.service import cards, protocol
from bridge.service.action_intents import opposing
from bridge.service.core import Committed, ServiceCore, Turn
from bridge.service.session import Reply, Session, ok


def world_settings(state: WorldState, intent: protocol.WorldSettingsIn, turn: Turn) -> list[Event]:
    return change_settings(
        state,
        turn.who,
        trust_player_ratings=intent.trust_player_ratings,
        full_defense=intent.full_defense,
    )


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


def contest_roll(state: WorldState, intent: protocol.ContestRoll, turn: Turn) -> list[Event]:
    return contest_rules.contest_roll(
        state, intent.contest_id, intent.side_id, turn.who, turn.dice, turn.ruleset, intent.skill
    )


def contest_advantage(
    state: WorldState, intent: protocol.ContestAdvantage, turn: Turn
) -> list[Event]:
    passive_rating, opposer_id = opposing(intent.opposition)
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
        passive_rating=passive_rating,
        opposer_id=opposer_id,
        target_id=intent.target_id,
    )


def contest_twist(state: WorldState, intent: protocol.ContestTwist, turn: Turn) -> list[Event]:
    return contest_rules.name_twist(state, intent.contest_id, intent.name, turn.who)


def contest_concede(state: WorldState, intent: protocol.ContestConcede, turn: Turn) -> list[Event]:
    return contest_rules.concede_contest(state, intent.contest_id, intent.side_id, turn.who)


def challenge_start(state: WorldState, intent: protocol.ChallengeStart, turn: Turn) -> list[Event]:
    tasks = [challenge_rules.TaskSpec(t.name, t.skill, t.rating) for t in intent.tasks]
    return challenge_rules.start_challenge(state, intent.name, tasks, turn.who)


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


def challenge_carry(state: WorldState, intent: protocol.ChallengeCarry, turn: Turn) -> list[Event]:
    return challenge_rules.carry_boosts(state, intent.challenge_id, intent.carry, turn.who)


def _zones(zones: list[protocol.ZoneIn]) -> list[Zone]:
    """A conflict's map as the rules take it."""
    return [Zone(name=z.name, adjacent=tuple(z.adjacent)) for z in zones]


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


def conflict_order(state: WorldState, intent: protocol.ConflictOrder, turn: Turn) -> list[Event]:
    return conflict_rules.reorder(state, intent.conflict_id, tuple(intent.order), turn.who)


def conflict_next(state: WorldState, intent: protocol.ConflictNext, turn: Turn) -> list[Event]:
    return conflict_rules.next_turn(state, intent.conflict_id, turn.who, intent.next_id)


def conflict_full_defense(
    state: WorldState, intent: protocol.ConflictFullDefense, turn: Turn
) -> list[Event]:
    return conflict_rules.full_defense(
        state, intent.conflict_id, intent.character_id, turn.who, turn.ruleset
    )


def conflict_concede(
    state: WorldState, intent: protocol.ConflictConcede, turn: Turn
) -> list[Event]:
    return conflict_rules.concede(state, intent.conflict_id, intent.character_id, turn.who)


def conflict_move(state: WorldState, intent: protocol.ConflictMove, turn: Turn) -> list[Event]:
    return conflict_rules.move(
        state, intent.conflict_id, intent.character_id, intent.zone, turn.who, force=intent.force
    )


def conflict_zones(state: WorldState, intent: protocol.ConflictZones, turn: Turn) -> list[Event]:
    return conflict_rules.redraw_zones(
        state, intent.conflict_id, _zones(intent.zones), dict(intent.positions), turn.who
    )


def conflict_end(state: WorldState, intent: protocol.ConflictEnd, turn: Turn) -> list[Event]:
    return conflict_rules.end_conflict(state, intent.conflict_id, turn.who)


def fate_compel(state: WorldState, intent: protocol.FateCompel, turn: Turn) -> list[Event]:
    return fate_rules.offer_compel(
        state, intent.character_id, intent.text, turn.who, intent.aspect_id
    )


def fate_compel_answer(
    state: WorldState, intent: protocol.FateCompelAnswer, turn: Turn
) -> list[Event]:
    return fate_rules.answer_compel(state, intent.compel_id, intent.accept, turn.who)


async def scene_end(core: ServiceCore, session: Session, intent: protocol.SceneEnd) -> Reply:
    summaries: list[scene_rules.SceneEndSummary] = []

    def decide(state: WorldState, intent: protocol.SceneEnd, turn: Turn) -> list[Event]:
        events, summary = scene_rules.end_scene(
            state,
            turn.who,
            tuple(intent.keep_aspects),
            intent.scope,
            intent.gm_budget,
            turn.ruleset,
        )
        summaries[:] = [summary]
        return events

    def answer(done: Committed) -> BaseModel:
        return cards.scene_end(summaries[0], done.after)

    def scene_card(state: WorldState) -> list[tuple[str, BaseModel]]:
        summary = cards.scene_end(summaries[0], state)
        card = protocol.SceneEndCard(scope=intent.scope, summary=summary)
        return [(f"scene{summary.ended_scene}", card)]

    return await core.mutate(session, intent, decide, answer, extra_cards=scene_card)


async def scene_read(core: ServiceCore, session: Session, intent: protocol.SceneRead) -> Reply:
    _snapshot, state = await core.current(session.world_id)
    return Reply(ok(cards.scene_state(state)))


def _change_ruleset(state: WorldState, intent: protocol.WorldRuleset, turn: Turn) -> list[Event]:
    return change_ruleset(state, turn.who, intent.ruleset)


def _ruleset_now(done: Committed) -> BaseModel:
    return protocol.WorldRulesetData(
        ruleset=done.after.ruleset,
        changed=bool(done.rows),
        rules=cards.rules_info(get_ruleset(done.after.ruleset), done.after),
    )


async def world_ruleset(
    core: ServiceCore, session: Session, intent: protocol.WorldRuleset
) -> Reply:
    """R13.9: the GM chooses the rules; the answer says what they are now."""
    return await core.mutate(session, intent, _change_ruleset, _ruleset_now)


def _world_summary(done: Committed) -> protocol.WorldStateData:
    return cards.world_summary(done.after)


def _spend(state: WorldState, intent: protocol.FateSpend, turn: Turn) -> list[Event]:
    return fate_rules.spend(state, intent.character_id, intent.purpose, turn.who)


async def fate_spend(core: ServiceCore, session: Session, intent: protocol.FateSpend) -> Reply:
    return await core.mutate(session, intent, _spend, _world_summary)


def _sacrifice(state: WorldState, intent: protocol.FateSacrifice, turn: Turn) -> list[Event]:
    return fate_rules.sacrifice(
        state, intent.character_id, intent.severity, intent.name, turn.who, turn.ruleset
    )


async def fate_sacrifice(
    core: ServiceCore, session: Session, intent: protocol.FateSacrifice
) -> Reply:
    return await core.mutate(session, intent, _sacrifice, _world_summary)
