"""Project rules records into what the module shows: chat cards, actor patches, statuses.

Every view an emit or a frequent answer carries is built straight in its JSON form: a
plain dict typed by its definition in :mod:`bridge.service.protocol.views` (a ``TypedDict``), so
mypy checks every key and value of every literal here against the one definition the
schemas are generated from. Every key is built, defaults included. A card is built once
and never validated, dumped or copied again on its way to the store and the wire (building
pydantic models, then dumping them, cost several times as much). Views are shared (caches
hand out the same dict to every card showing it): nothing may change a view once built.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import cast

from bridge.rules import history
from bridge.rules.consequences import SEVERITY_NAMES
from bridge.rules.dice import dice_total
from bridge.rules.events import ActionCancelled, ActionResolved
from bridge.rules.odds import OUTCOMES, InvokeOdds, OutcomeOdds, action_invoke_odds
from bridge.rules.outcome import outcome_for, shifts
from bridge.rules.ruleset import Ruleset, get_ruleset
from bridge.rules.scene import SceneEndSummary
from bridge.rules.state import (
    GM,
    Action,
    Aspect,
    Challenge,
    Character,
    Conflict,
    Contest,
    ExchangeResult,
    ExchangeRoll,
    Side,
    WorldState,
)
from bridge.service import protocol
from bridge.service.protocol import (
    ActionCard,
    ActorPatch,
    CardAspect,
    CardCharacter,
    CardPrompt,
    CardSide,
    ChallengeCard,
    ChallengeView,
    ConflictView,
    ContestCard,
    ContestSideView,
    ContestView,
    DiceList,
    ExchangeRollView,
    ExchangeView,
    InvokeOddsView,
    OddsView,
    OutcomeName,
    PromptKind,
    Rated,
    RulesetInfo,
    SceneState,
    SideInvokeOdds,
    SlotState,
    StressTrackView,
    TaskView,
    TokenStatus,
    TokenStatusName,
    WorldStateData,
)
from bridge.service.protocol.base import DiceRoll
from bridge.service.view_index import ByIdentity, aspect_index, open_actions

GM_NAME = "GM"


# One view of a value serves every card showing it: the few ladder values of a table are
# built once, not on every card.
@lru_cache(maxsize=4096)
def _rated(value: int) -> Rated:
    return {"value": value}


def rated(value: int, ruleset: Ruleset) -> Rated:
    """A ladder value (R1.3); the reader names it in its own language."""
    return _rated(value)


@lru_cache(maxsize=8192)
def _character_view(character_id: str, name: str) -> CardCharacter:
    return {"id": character_id, "name": name}


def character_view(character_id: str, name: str) -> CardCharacter:
    """A character as a card names it."""
    return _character_view(character_id, name)


def _who(state: WorldState, character_id: str | None) -> CardCharacter | None:
    if character_id is None:
        return None
    if character_id == GM:
        return _character_view(GM, GM_NAME)
    character = state.characters.get(character_id)
    return _character_view(character_id, character.name if character else character_id)


def _name(state: WorldState, character_id: str) -> str:
    """The name a card shows for ``character_id``."""
    who = _who(state, character_id)
    return who["name"] if who is not None else ""


def _controllers(state: WorldState, side: Side) -> list[str]:
    leader = state.characters.get(side.leader or "")
    return list(leader.owners) if leader else []


def _dice(faces: DiceRoll | None) -> DiceList | None:
    return list(faces) if faces is not None else None


def _side(state: WorldState, side: Side, ruleset: Ruleset) -> CardSide:
    """One side of an action's card."""
    roll = side.roll
    passive = roll.passive_rating is not None
    rolled = passive or roll.dice is not None
    leader = state.characters.get(side.leader or "")
    return {
        "leader": _who(state, side.leader),
        "helpers": [c for c in (_who(state, h) for h in side.helpers) if c],
        "controllers": _controllers(state, side),
        "skill": roll.skill,
        "skill_rating": rated(roll.skill_rating, ruleset) if roll.skill else None,
        "stunt_bonus": roll.stunt_bonus,
        "teamwork_bonus": roll.teamwork_bonus,
        "invoke_bonus": roll.invoke_bonus,
        "dice": _dice(roll.dice),
        "dice_total": dice_total(roll.dice) if roll.dice else None,
        "passive": passive,
        "total": rated(roll.total, ruleset) if rolled else None,
        "dangerous": side.dangerous,
        "passed": side.passed,
        "fate_points": None if leader is None or leader.is_npc else leader.fate_points,
        "stunts": list(roll.stunts),
        "full_defense": roll.defense_bonus > 0,
    }


# Views of aspects already built, by the (immutable) Aspect, its place's name and its
# count: states share every record an event did not replace, so a card listing a scene's
# aspects builds only the new ones.
_ASPECT_VIEWS: ByIdentity[Aspect, tuple[CardCharacter | None, int, CardAspect]] = ByIdentity(50_000)


def _aspect(state: WorldState, aspect: Aspect, count: int = 1) -> CardAspect:
    """An aspect as a card or the scene panel lists it."""
    attached = _who(state, aspect.attached_to)
    known = _ASPECT_VIEWS.get(aspect)
    if known is not None and (known[0] is attached or known[0] == attached) and known[1] == count:
        return known[2]
    view: CardAspect = {
        "id": aspect.id,
        "name": aspect.name,
        "kind": aspect.kind,
        "attached_to": attached,
        "free_invokes": dict(aspect.free_invokes),
        "count": count,
    }
    _ASPECT_VIEWS.put(aspect, (attached, count, view))
    return view


def _entries(state: WorldState, shown: Callable[[Aspect], bool]) -> list[CardAspect]:
    """The state's aspects that ``shown`` keeps, in card order, alike boosts as one
    entry with their count."""
    return [
        _aspect(state, e.aspect, e.count)
        for e in aspect_index(state.aspects).entries()
        if shown(e.aspect)
    ]


def invokable_aspects(state: WorldState, action: Action) -> list[CardAspect]:
    """Scene aspects, boosts, and every aspect on a character taking part or targeted."""
    involved = set(action.actor.members) | set(action.opposition.members)
    if action.target_id:
        involved.add(action.target_id)
    return _entries(state, lambda a: a.attached_to is None or a.attached_to in involved)


def _prompt_view(kind: PromptKind, users: list[str], gm: bool, options: list[str]) -> CardPrompt:
    """Who should act next on a card."""
    return {"kind": kind, "users": users, "gm": gm, "options": options}


def _prompt(state: WorldState, action: Action, ruleset: Ruleset) -> CardPrompt:
    actor_users = _controllers(state, action.actor)
    if action.state == "confirming":
        # R2.1, R9.1: the GM confirms; R10.1: invited helpers' owners answer; consent to
        # harm (DESIGN Reach and trust): the owners of the characters it would touch
        # answer. Once only helpers are left, the acting side may roll without them.
        invited = tuple(p.character_id for p in action.participants if p.status == "invited")
        asked = tuple(c.character_id for c in action.consents if c.status == "asked")
        users = _owners(state, invited + asked)
        options = ["confirm"] if action.proposal is not None else []
        if action.proposal is None and not asked:
            options.append("roll")
            users += [u for u in actor_users if u not in users]
        if invited:
            options.append("help")
        if asked:
            options.append("consent")
        return _prompt_view("confirm", users, True, options)
    if action.hint == "offered":
        return _prompt_view("hint", actor_users, True, ["take"])
    if action.hint == "asked":
        return _prompt_view("hint", [], True, ["give"])
    if action.state == "declared":
        return _prompt_view("roll", actor_users, True, ["concede"])
    if action.state == "awaiting_opposition":
        return _prompt_view("oppose", _controllers(state, action.opposition), True, [])
    if action.state == "invoking":
        users = [] if action.actor.passed else list(actor_users)
        if not action.opposition.passed:
            users += _controllers(state, action.opposition)
        return _prompt_view("invoke", users, True, [])
    if action.state == "choosing":
        options = {
            "fail_or_cost": ["fail", "succeed_at_cost"],
            "advantage_fumble": ["fail", "unintended_aspect", "succeed_at_cost"],
            "leave_mark": ["aspect", "mark"],
            "attack_style": ["full_hit", "boost"],
        }.get(action.pending_choice or "", [])
        return _prompt_view("choose", actor_users, True, options)
    if action.state == "costing":
        options = list(ruleset.costs[action.cost_severity or "serious"])
        return _prompt_view("cost", [], True, options)
    if action.state == "absorbing":
        target = state.characters.get(action.target_id or "")
        users = list(target.owners) if target else []
        return _prompt_view("absorb", users, True, [])
    return _prompt_view("none", [], False, [])


def action_card(
    action: Action,
    state: WorldState,
    ruleset: Ruleset,
    event_seq: int,
    event_hash: str,
) -> ActionCard:
    """The card for one action, as of the event that last changed it."""
    target_aspect = state.aspects.get(action.target_aspect_id or "")
    shift_count, outcome = action.shifts, action.outcome
    provisional = False
    if outcome is None and action.state == "invoking":
        # R3.2: shown while the sides invoke, final only once both have passed.
        shift_count = shifts(action.actor.roll.total, action.opposition.roll.total)
        outcome = outcome_for(shift_count, ruleset)
        provisional = True
    proposal = action.proposal
    return {
        "kind": "action",
        "action_id": action.id,
        "ruleset": ruleset.id,
        "action_type": action.type,
        "state": action.state,
        "actor": _side(state, action.actor, ruleset),
        "opposition": _side(state, action.opposition, ruleset),
        "opposition_kind": action.opposition_kind,
        "opposition_action": action.opposition_action,
        "target": _who(state, action.target_id),
        "target_aspect": _aspect(state, target_aspect) if target_aspect else None,
        "aspect_name": action.aspect_name,
        "situation": action.situation,
        "invokes": [
            {
                "side": i.side,
                "invoker": i.invoker,
                "invoker_name": _name(state, i.invoker),
                "aspect_id": i.aspect_id,
                "aspect_name": i.aspect_name,
                "payment": i.payment,
                "effect": i.effect,
                "dice": _dice(i.dice),
            }
            for i in action.invokes
        ],
        "shifts": shift_count,
        "outcome": outcome,
        "provisional": provisional,
        "succeeded": action.succeeded,
        "pending_choice": action.pending_choice,
        "cost_severity": action.cost_severity if action.state == "costing" else None,
        "pending_hit": action.pending_hit,
        "attack_kind": action.attack_kind,
        "effects": [
            {
                "kind": e.kind,
                "text": e.text,
                "count": e.count,
                "character": _who(state, e.character_id),
                "aspect_id": e.aspect_id,
                "detail": e.detail,
                "cause": _who(state, e.cause),
            }
            for e in action.effects
        ],
        "aspects": invokable_aspects(state, action),
        "gm_fate_points": state.gm_fate_points,
        "fate_points": {
            c.id: c.fate_points
            for c in (
                state.characters.get(m) for m in (*action.actor.members, *action.opposition.members)
            )
            if c is not None and not c.is_npc
        },
        "prompt": _prompt(state, action, ruleset),
        "proposal": {
            "passive_rating": rated(proposal.passive_rating, ruleset)
            if proposal.passive_rating is not None
            else None,
            "dangerous_actor": proposal.dangerous_actor,
            "dangerous_opposition": proposal.dangerous_opposition,
        }
        if proposal is not None
        else None,
        "participants": [
            {
                "character": _who(state, p.character_id)
                or _character_view(p.character_id, p.character_id),
                "skill": p.skill,
                "status": p.status,
                "controllers": _owners(state, (p.character_id,)),
            }
            for p in action.participants
        ],
        "consents": [
            {
                "character": _who(state, c.character_id)
                or _character_view(c.character_id, c.character_id),
                "parts": list(c.parts),
                "status": c.status,
                "controllers": _owners(state, (c.character_id,)),
            }
            for c in action.consents
        ],
        "hint": {"status": action.hint, "text": action.hint_text} if action.hint else None,
        "description": action.description,
        "undone": False,
        "event_seq": event_seq,
        "event_hash": event_hash,
        "invoke_odds": _invoke_odds(action, ruleset) if action.state == "invoking" else None,
        "stress_rule": action.stress_rule or None,
        "interposed_for": _who(state, action.interposed_for),
    }


def odds_view(odds: OutcomeOdds) -> OddsView:
    """Exact odds of each outcome."""
    c = odds.counts
    return {
        "out_of": odds.out_of,
        "fumble": c["fumble"],
        "tie": c["tie"],
        "succeed": c["succeed"],
        "excel": c["excel"],
    }


def _invoke_odds(action: Action, ruleset: Ruleset) -> InvokeOddsView | None:
    """What a +2 or a reroll would change for each side (R4.1), for the invoke picker."""
    sides = action_invoke_odds(action, ruleset)
    if not sides:
        return None

    def view(side: InvokeOdds) -> SideInvokeOdds:
        reroll = odds_view(side.reroll) if side.reroll else None
        return {"now": side.now, "plus_two": side.plus_two, "reroll": reroll}

    return {
        "actor": view(sides["actor"]),
        "opposition": view(sides["opposition"]),
        "outcomes": outcome_ids(ruleset),
    }


def outcome_ids(ruleset: Ruleset) -> list[OutcomeName]:
    """The outcomes, fumble to excel (R3.1); the reader names them for ``ruleset``."""
    return list(OUTCOMES)


def _slots(character: Character, state: WorldState) -> list[SlotState]:
    """The character's consequence slots."""
    return [
        {
            "id": s.id,
            "severity": s.severity,
            "name": aspect.name if (aspect := state.aspects.get(s.aspect_id or "")) else None,
            "status": s.status,
            "harm": s.harm,
        }
        for s in character.consequences
    ]


def stress_views(character: Character) -> list[StressTrackView]:
    """The character's stress tracks, boxes and values as the module shows them (R5.10)."""
    return [
        {
            "id": t.id,
            "name": t.name,
            "kind": t.kind,
            "boxes": [{"value": b.value, "marked": b.marked} for b in t.boxes],
        }
        for t in character.stress
    ]


def world_summary(state: WorldState) -> WorldStateData:
    """Everything pickers need: characters, every aspect with its free invokes."""
    return {
        "ruleset": state.ruleset,
        "characters": [
            {
                "id": c.id,
                "name": c.name,
                "owners": list(c.owners),
                "skills": dict(c.skills),
                "fate_points": c.fate_points,
                "pending_fate_points": c.pending_fate_points,
                "overwhelmed": c.overwhelmed,
                "consequences": _slots(c, state),
                "stress": stress_views(c),
            }
            for c in sorted(state.characters.values(), key=lambda c: c.name)
        ],
        "aspects": _entries(state, lambda _a: True),
        "gm_fate_points": state.gm_fate_points,
        "open_actions": open_actions(state.actions).ids(),
    }


def actor_patch(character: Character, state: WorldState, world_id: str, seq: int) -> ActorPatch:
    """What the rules hold of an actor, for the GM's client to write back."""
    return {
        "seq": seq,
        "world": world_id,
        "writer": "gm",
        "actor_id": character.id,
        "fate_points": character.fate_points,
        "pending_fate_points": character.pending_fate_points,
        "consequences": _slots(character, state),
        "stress": stress_views(character),
        "overwhelmed": character.overwhelmed,
        "boosts": held_boosts(character, state),
    }


def held_boosts(character: Character, state: WorldState) -> int:
    """How many boosts (R12.6) the character holds a free invoke on."""
    return aspect_index(state.aspects).held_boosts(character.id)


def token_status(character: Character, state: WorldState, world_id: str, seq: int) -> TokenStatus:
    """The status effects of an actor's tokens."""
    filled = {s.severity for s in character.consequences if not s.empty}
    statuses: dict[TokenStatusName, bool] = {
        "overwhelmed": character.overwhelmed,
        **{cast(TokenStatusName, n): s in filled for s, n in SEVERITY_NAMES.items()},
        "boost": held_boosts(character, state) > 0,
    }
    return {
        "seq": seq,
        "world": world_id,
        "writer": "gm",
        "actor_id": character.id,
        "statuses": statuses,
    }


def scene_end(summary: SceneEndSummary, state: WorldState) -> protocol.SceneEndData:
    def note(character_id: str, name: str, severity: int) -> protocol.ConsequenceNote:
        who = _who(state, character_id) or _character_view(character_id, "")
        return protocol.ConsequenceNote.model_validate(
            {"character": who, "name": name, "severity": severity}
        )

    return protocol.SceneEndData.model_validate(
        {
            "ended_scene": summary.scene,
            "removed_consequences": [note(*entry) for entry in summary.removed],
            "recovering_consequences": [note(*entry) for entry in summary.recovering],
            "fate_points": [
                {
                    "character": _who(state, c) or _character_view(c, ""),
                    "gained": gained,
                    "reasons": [{"kind": r.kind, "aspect": r.aspect} for r in reasons],
                }
                for c, (gained, reasons) in summary.fate_points.items()
            ],
            "expired_boosts": summary.expired_boosts,
            "cleared_aspects": summary.cleared_aspects,
            "no_longer_overwhelmed": [
                c for c in (_who(state, i) for i in summary.no_longer_overwhelmed) if c
            ],
            "closed_unfinished": summary.closed_unfinished,
        }
    )


# --- zoomed-in play (R11) and the scene panel --------------------------------------


def _owners(state: WorldState, members: tuple[str, ...]) -> list[str]:
    users: list[str] = []
    for member in members:
        character = state.characters.get(member)
        for owner in character.owners if character else ():
            if owner not in users:
                users.append(owner)
    return users


def _members(state: WorldState, members: tuple[str, ...]) -> list[CardCharacter]:
    return [c for c in (_who(state, m) for m in members) if c]


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
        "controllers": _owners(state, members),
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
                "actor": _who(state, action.actor.leader) if action else None,
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
                "character": _who(state, c) or _character_view(c, c),
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
    return known if known is not None else _SCENE_VIEWS.put(state, _build_scene_state(state))


def _build_scene_state(state: WorldState) -> SceneState:
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
        "aspects": _entries(state, lambda a: a.kind in ("situation", "boost")),
        "contests": [contest_view(c, state, ruleset) for c in state.contests.values()],
        "challenges": [challenge_view(c, state, ruleset) for c in state.challenges.values()],
        "conflicts": [conflict_view(c, state) for c in state.conflicts.values()],
        "compels": [
            {
                "id": c.id,
                "character": _who(state, c.character_id) or _character_view(c.character_id, ""),
                "controllers": _owners(state, (c.character_id,)),
                "text": c.text,
                "aspect_id": c.aspect_id,
                "state": c.state,
            }
            for c in state.compels.values()
            if c.state == "offered"
        ],
        "created_id": None,
    }


# --- the roll history -----------------------------------------------------------------


def history_entry(
    event: ActionResolved | ActionCancelled,
    seq: int,
    digest: str,
    at: str,
    card_id: str,
    state: WorldState,
    ruleset: Ruleset,
    undone: bool,
) -> protocol.HistoryEntry:
    """One history entry as its card showed it; names as the world now knows them. A
    cancelled roll keeps its dice, invokes and effects (refunds, the GM's reason) and has
    no outcome, as its card says."""
    action = event.action
    cancelled = isinstance(event, ActionCancelled)
    card = action_card(action, state, ruleset, seq, digest)
    rolls = [
        {
            "character": _who(state, roll.character),
            "side": roll.side,
            "dice": _dice(roll.dice),
            "reroll": roll.reroll,
        }
        for roll in history.rolls_of(action)
    ]
    return protocol.HistoryEntry.model_validate(
        {
            "seq": seq,
            "hash": digest,
            "at": at,
            "scene": event.scene,
            "action_id": action.id,
            "card_id": card_id,
            "kind": history.kind_of(action),
            "action_type": action.type,
            "requested_by": action.requested_by,
            "actor": card["actor"],
            "opposition": card["opposition"],
            "opposition_kind": action.opposition_kind,
            "target": card["target"],
            "rolls": rolls,
            "invokes": card["invokes"],
            "shifts": card["shifts"],
            "outcome": None if cancelled else card["outcome"],
            "succeeded": None if cancelled else action.succeeded,
            "costs": [
                {"severity": c.severity, "kind": c.kind, "text": c.text} for c in action.costs
            ],
            "effects": card["effects"],
            "undone": undone,
            "cancelled": cancelled,
        }
    )


def dice_distribution(counts: list[int], cancelled: int = 0) -> protocol.DiceDistribution:
    """R1.1: the 4dF sums rolled against the expected share of each (x/81); ``cancelled``
    of them were rolled on actions the GM cancelled afterwards."""
    rolls = sum(counts)
    mean = sum((n - 4) * c for n, c in enumerate(counts)) / rolls if rolls else None
    return protocol.DiceDistribution(
        rolls=rolls,
        counts=counts,
        expected=[ways / 81 for ways in history.FOUR_DF_WAYS],
        mean=mean,
        cancelled=cancelled,
    )
