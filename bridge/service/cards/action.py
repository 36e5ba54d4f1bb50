"""An action's chat card (R2-R10), and the odds the roll dialog shows."""

from __future__ import annotations

from bridge.rules.dice import dice_total
from bridge.rules.odds import OUTCOMES, InvokeOdds, OutcomeOdds, action_invoke_odds
from bridge.rules.outcome import outcome_for, shifts
from bridge.rules.ruleset import Ruleset
from bridge.rules.state import (
    Action,
    Side,
    WorldState,
)
from bridge.service.cards.common import (
    aspect_entries,
    aspect_view,
    dice_list,
    named,
    owners_of,
    rated,
    who,
)
from bridge.service.protocol import (
    ActionCard,
    CardAspect,
    CardPrompt,
    CardSide,
    InvokeOddsView,
    OddsView,
    OutcomeName,
    PromptKind,
    SideInvokeOdds,
)


def _name(state: WorldState, character_id: str) -> str:
    """The name a card shows for ``character_id``."""
    shown = who(state, character_id)
    return shown["name"] if shown is not None else ""


def _controllers(state: WorldState, side: Side) -> list[str]:
    leader = state.characters.get(side.leader or "")
    return list(leader.owners) if leader else []


def _side(state: WorldState, side: Side, ruleset: Ruleset) -> CardSide:
    """One side of an action's card."""
    roll = side.roll
    passive = roll.passive_rating is not None
    rolled = passive or roll.dice is not None
    leader = state.characters.get(side.leader or "")
    return {
        "leader": who(state, side.leader),
        "helpers": [c for c in (who(state, h) for h in side.helpers) if c],
        "controllers": _controllers(state, side),
        "skill": roll.skill,
        "skill_rating": rated(roll.skill_rating, ruleset) if roll.skill else None,
        "stunt_bonus": roll.stunt_bonus,
        "teamwork_bonus": roll.teamwork_bonus,
        "invoke_bonus": roll.invoke_bonus,
        "dice": dice_list(roll.dice),
        "dice_total": dice_total(roll.dice) if roll.dice else None,
        "passive": passive,
        "total": rated(roll.total, ruleset) if rolled else None,
        "dangerous": side.dangerous,
        "passed": side.passed,
        "fate_points": None if leader is None or leader.is_npc else leader.fate_points,
        "stunts": list(roll.stunts),
        "full_defense": roll.defense_bonus > 0,
    }


def invokable_aspects(state: WorldState, action: Action) -> list[CardAspect]:
    """Scene aspects, boosts, and every aspect on a character taking part or targeted."""
    involved = set(action.actor.members) | set(action.opposition.members)
    if action.target_id:
        involved.add(action.target_id)
    return aspect_entries(state, lambda a: a.attached_to is None or a.attached_to in involved)


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
        users = owners_of(state, invited + asked)
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
        "target": who(state, action.target_id),
        "target_aspect": aspect_view(state, target_aspect) if target_aspect else None,
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
                "dice": dice_list(i.dice),
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
                "character": who(state, e.character_id),
                "aspect_id": e.aspect_id,
                "detail": e.detail,
                "cause": who(state, e.cause),
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
                "character": who(state, p.character_id) or named(p.character_id, p.character_id),
                "skill": p.skill,
                "status": p.status,
                "controllers": owners_of(state, (p.character_id,)),
            }
            for p in action.participants
        ],
        "consents": [
            {
                "character": who(state, c.character_id) or named(c.character_id, c.character_id),
                "parts": list(c.parts),
                "status": c.status,
                "controllers": owners_of(state, (c.character_id,)),
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
        "interposed_for": who(state, action.interposed_for),
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
