"""Zoomed-in play (R11) and the scene panel: contests, challenges, conflicts, the scene's end."""

from __future__ import annotations

from bridge.rules.ruleset import Ruleset, get_ruleset
from bridge.rules.scene import SceneEndSummary
from bridge.rules.state import (
    Challenge,
    Conflict,
    Contest,
    ExchangeResult,
    ExchangeRoll,
    WorldState,
)
from bridge.service import protocol
from bridge.service.cards.common import aspect_entries, named, owners_of, rated, who
from bridge.service.protocol import (
    CardCharacter,
    ChallengeCard,
    ChallengeView,
    ConflictView,
    ContestCard,
    ContestSideView,
    ContestView,
    ExchangeRollView,
    ExchangeView,
    RulesetInfo,
    SceneState,
    TaskView,
)
from bridge.service.view_index import ByIdentity


def scene_end(summary: SceneEndSummary, state: WorldState) -> protocol.SceneEndData:
    def note(character_id: str, name: str, severity: int) -> protocol.ConsequenceNote:
        character = who(state, character_id) or named(character_id, "")
        return protocol.ConsequenceNote.model_validate(
            {"character": character, "name": name, "severity": severity}
        )

    return protocol.SceneEndData.model_validate(
        {
            "ended_scene": summary.scene,
            "removed_consequences": [note(*entry) for entry in summary.removed],
            "recovering_consequences": [note(*entry) for entry in summary.recovering],
            "fate_points": [
                {
                    "character": who(state, c) or named(c, ""),
                    "gained": gained,
                    "reasons": [{"kind": r.kind, "aspect": r.aspect} for r in reasons],
                }
                for c, (gained, reasons) in summary.fate_points.items()
            ],
            "expired_boosts": summary.expired_boosts,
            "cleared_aspects": summary.cleared_aspects,
            "no_longer_overwhelmed": [
                c for c in (who(state, i) for i in summary.no_longer_overwhelmed) if c
            ],
            "closed_unfinished": summary.closed_unfinished,
        }
    )


def _members(state: WorldState, members: tuple[str, ...]) -> list[CardCharacter]:
    return [c for c in (who(state, m) for m in members) if c]


def _side_view(
    state: WorldState,
    side_id: str,
    name: str,
    members: tuple[str, ...],
    progress: int = 0,
    conceded: bool = False,
) -> ContestSideView:
    """A side of a contest or a conflict, with the users who may act for it."""
    return {
        "id": side_id,
        "name": name,
        "members": _members(state, members),
        "controllers": owners_of(state, members),
        "progress": progress,
        "conceded": conceded,
    }


def _roll_view(roll: ExchangeRoll, ruleset: Ruleset) -> ExchangeRollView:
    """One side's roll in a contest's exchange."""
    return {
        "side_id": roll.side_id,
        "action_id": roll.action_id,
        "total": rated(roll.total, ruleset) if roll.total is not None else None,
        "shifts": roll.shifts,
        "forfeited": roll.forfeited,
    }


def exchange_view(result: ExchangeResult, ruleset: Ruleset) -> ExchangeView:
    """A contest's exchange once rolled."""
    return {
        "number": result.number,
        "rolls": [_roll_view(r, ruleset) for r in result.rolls],
        "winner": result.winner,
        "margin": result.margin,
        "progress": result.progress,
        "twist": result.twist,
        "twist_aspect": result.twist_aspect,
        "excelled": result.excelled,
    }


def contest_view(contest: Contest, state: WorldState, ruleset: Ruleset) -> ContestView:
    """A contest as the scene panel and its cards show it."""
    return {
        "id": contest.id,
        "name": contest.name,
        "mode": contest.mode,
        "skill": contest.skill,
        "passive": rated(contest.passive_rating, ruleset)
        if contest.passive_rating is not None
        else None,
        "target": contest.target,
        "sides": [
            _side_view(state, s.id, s.name, s.members, s.progress, s.conceded)
            for s in contest.sides
        ],
        "exchange": contest.exchange,
        "current": [_roll_view(r, ruleset) for r in contest.current],
        "history": [exchange_view(h, ruleset) for h in contest.history],
        "twist_pending": contest.twist_pending,
        "state": contest.state,
        "winner": contest.winner,
    }


def contest_card(
    contest: ContestView, exchange: ExchangeView | None, undone: bool = False
) -> ContestCard:
    """A contest's exchange result (or its end)."""
    return {"kind": "contest", "contest": contest, "exchange": exchange, "undone": undone}


def challenge_view(challenge: Challenge, state: WorldState, ruleset: Ruleset) -> ChallengeView:
    """A challenge as the scene panel and its card show it."""
    tasks: list[TaskView] = []
    for task in challenge.tasks:
        action = state.actions.get(task.action_id or "")
        tasks.append(
            {
                "id": task.id,
                "name": task.name,
                "skill": task.skill,
                "opposition": rated(task.rating, ruleset),
                "action_id": task.action_id,
                "actor": who(state, action.actor.leader) if action else None,
                "total": rated(action.actor.roll.total, ruleset)
                if action and action.actor.roll.dice
                else None,
                "shifts": action.shifts if action else None,
                "outcome": action.outcome if action else None,
                "state": action.state if action else None,
                "succeeded": action.succeeded if action else None,
                "costs": [
                    {"severity": c.severity, "kind": c.kind, "text": c.text} for c in action.costs
                ]
                if action
                else [],
            }
        )
    return {
        "id": challenge.id,
        "name": challenge.name,
        "tasks": tasks,
        "advantages": list(challenge.advantage_action_ids),
        "state": challenge.state,
        "carry_boosts": challenge.carry_boosts,
    }


def challenge_card(challenge: ChallengeView, undone: bool = False) -> ChallengeCard:
    """A challenge's summary once every task is in."""
    return {"kind": "challenge", "challenge": challenge, "undone": undone}


def conflict_view(conflict: Conflict, state: WorldState) -> ConflictView:
    """A conflict as the scene panel shows it."""
    side_of = {m: s.id for s in conflict.sides for m in s.members}
    return {
        "id": conflict.id,
        "name": conflict.name,
        "kind": conflict.kind,
        "order_skill": conflict.order_skill,
        "sides": [_side_view(state, s.id, s.name, s.members) for s in conflict.sides],
        "order": [
            {
                "character": who(state, c) or named(c, c),
                "side_id": side_of.get(c, ""),
                "rating": conflict.ratings.get(c, 0),
                "out": bool(state.characters.get(c) and state.characters[c].overwhelmed),
                "npc": bool(state.characters.get(c) and state.characters[c].is_npc),
            }
            for c in conflict.order
        ],
        "ties": [list(t) for t in conflict.ties],
        "turn": conflict.turn,
        "exchange": conflict.exchange,
        "zones": [
            {
                "name": z.name,
                "adjacent": list(z.adjacent),
                "occupants": _members(
                    state, tuple(c for c, where in conflict.positions.items() if where == z.name)
                ),
            }
            for z in conflict.zones
        ],
        "state": conflict.state,
        "winner": conflict.winner,
        "order_method": conflict.order_method or "ranked",
        "current": conflict.current,
        "acted": list(conflict.acted),
        "full_defense": list(conflict.full_defense),
        "conceded": list(conflict.conceded),
        "clears_stress": conflict.clears_stress,
    }


def rules_info(ruleset: Ruleset, state: WorldState) -> RulesetInfo:
    """What the module shows and offers under this ruleset."""
    return {
        "id": ruleset.id,
        "title": ruleset.title,
        "conflicts": ruleset.conflicts,
        "ratings": ruleset.ratings,
        "turn_order": ruleset.turn_order if ruleset.conflicts else None,
        "full_defense": ruleset.full_defense == "always"
        or (ruleset.full_defense == "option" and state.settings.full_defense),
        "stress_rule": ruleset.stress_rule,
        "stunts_chosen": ruleset.stunts_chosen,
        "full_defense_optional": ruleset.full_defense == "option",
        "approaches": list(ruleset.approaches),
        "defend_for_another": ruleset.defend_for_another,
    }


# Scene views of recent states: a commit compares the scene before it, built by the
# commit before, with the scene after it.
_SCENE_VIEWS: ByIdentity[WorldState, SceneState] = ByIdentity(256)


def scene_state(state: WorldState) -> SceneState:
    """The scene panel: aspects, budget, and every open or finished procedure."""
    known = _SCENE_VIEWS.get(state)
    return known if known is not None else _SCENE_VIEWS.put(state, build_scene_state(state))


def build_scene_state(state: WorldState) -> SceneState:
    """The scene panel built afresh (:func:`scene_state` keeps the recent ones)."""
    ruleset = get_ruleset(state.ruleset)
    scene = state.scene
    return {
        "ruleset": state.ruleset,
        "rules": rules_info(ruleset, state),
        "scene": {"number": scene.number, "session": scene.session, "scenario": scene.scenario},
        "settings": {
            "trust_player_ratings": state.settings.trust_player_ratings,
            "full_defense": state.settings.full_defense,
        },
        "gm_fate_points": state.gm_fate_points,
        "aspects": aspect_entries(state, lambda a: a.kind in ("situation", "boost")),
        "contests": [contest_view(c, state, ruleset) for c in state.contests.values()],
        "challenges": [challenge_view(c, state, ruleset) for c in state.challenges.values()],
        "conflicts": [conflict_view(c, state) for c in state.conflicts.values()],
        "compels": [
            {
                "id": c.id,
                "character": who(state, c.character_id) or named(c.character_id, ""),
                "controllers": owners_of(state, (c.character_id,)),
                "text": c.text,
                "aspect_id": c.aspect_id,
                "state": c.state,
            }
            for c in state.compels.values()
            if c.state == "offered"
        ],
        "created_id": None,
    }
