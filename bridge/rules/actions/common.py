"""Lookups, permission checks and small builders every action step shares."""

from __future__ import annotations

from bridge.rules.actions.commands import Principal
from bridge.rules.draft import Draft
from bridge.rules.errors import refused
from bridge.rules.ruleset import Ruleset
from bridge.rules.state import (
    Action,
    Aspect,
    Character,
    Earning,
    Effect,
    Side,
    SideName,
    Stunt,
)

SUCCESS = Effect(kind="success")
"""The card's success line (records are immutable, so one serves every action)."""
FAILURE = Effect(kind="failure")
"""The card's failure line."""


def find_character(draft: Draft, character_id: str, field_name: str) -> Character:
    character = draft.characters.get(character_id)
    if character is None:
        raise refused("unknown_actor", "unknown_actor_sync", field_name, id=character_id)
    return character


def may_control(principal: Principal, character: Character) -> bool:
    return principal.is_gm or principal.user_id in character.owners


def require_control(principal: Principal, character: Character, field_name: str) -> None:
    if not may_control(principal, character):
        raise refused("forbidden", "act_for", field_name, name=character.name)


def require_gm(principal: Principal) -> None:
    if not principal.is_gm:
        raise refused("forbidden", "gm_only")


def require_active(character: Character, doing: str, field_name: str) -> None:
    """R8.2: an overwhelmed character cannot act, oppose or help until the scene ends;
    ``doing`` ("act", "oppose", "help", "invoke") picks the refusal's sentence."""
    if character.overwhelmed:
        raise refused("overwhelmed", f"overwhelmed_cannot_{doing}", field_name, name=character.name)


def require_rating(ruleset: Ruleset | None, rating: str, field_name: str) -> None:
    """R13.1: under a ruleset of approaches (Fate Accelerated) a roll names one of them."""
    if ruleset is not None and ruleset.approaches and rating not in ruleset.approaches:
        raise refused(
            "not_an_approach",
            "not_an_approach",
            field_name,
            ruleset=ruleset.title,
            approaches=", ".join(ruleset.approaches),
            rating=rating,
        )


def find_action(draft: Draft, action_id: str, *states: str) -> Action:
    action = draft.actions.get(action_id)
    if action is None:
        raise refused("not_found", "no_action_id", "action_id", id=action_id)
    if states and action.state not in states:
        raise refused("wrong_state", "action_state", "action_id", state=action.state)
    return action


def stunt_applies(stunt: Stunt, skill: str, action: str) -> bool:
    """R13.8: a stunt is tied to its skill and, when it lists them, its action types."""
    return stunt.skill == skill and (not stunt.actions or action in stunt.actions)


def stunt_bonus(
    character: Character, skill: str, action: str, named: tuple[str, ...] | None = None
) -> tuple[int, tuple[str, ...]]:
    """R1.2: the bonus of the stunts that apply to this roll, and their names. ``named``:
    the stunts the roll named (R13.8), of which those of this character that match count
    once each; None: every stunt tied to this skill and action type (Unwritten's rolls
    that name none)."""
    if not character.stunts or named == ():
        return 0, ()
    used = [
        s
        for s in character.stunts
        if stunt_applies(s, skill, action) and (named is None or s.name in named)
    ]
    if not used:
        return 0, ()
    # Each stunt counts once per roll, though a sheet may list a name twice.
    seen: dict[str, int] = {}
    for stunt in used:
        seen.setdefault(stunt.name, stunt.bonus)
    return sum(seen.values()), tuple(seen)


def check_stunts(
    character: Character, skill: str, action: str, named: tuple[str, ...], field_name: str
) -> None:
    """R13.8: every stunt a roll names is the character's, fits the skill and action,
    and is named once; else a refusal naming the first that is not."""
    if len(set(named)) != len(named):
        twice = next(n for n in named if named.count(n) > 1)
        raise refused("invalid", "stunt_twice", field_name, stunt=twice)
    own = {s.name: s for s in character.stunts}
    for name in named:
        stunt = own.get(name)
        if stunt is None:
            raise refused("invalid", "not_own_stunt", field_name, stunt=name, name=character.name)
        if not any(stunt_applies(s, skill, action) for s in character.stunts if s.name == name):
            raise refused(
                "invalid",
                "stunt_does_not_apply",
                field_name,
                stunt=name,
                skill=skill,
                action=action,
            )


def situation_key(character_id: str, situation: str) -> str:
    return f"{character_id}|{situation}"


def side_of(action: Action, name: SideName) -> Side:
    return action.actor if name == "actor" else action.opposition


def with_side(action: Action, name: SideName, side: Side) -> Action:
    return action.model_copy(update={name: side})


def other_side(name: SideName) -> SideName:
    return "opposition" if name == "actor" else "actor"


def add_effects(action: Action, *effects: Effect) -> Action:
    if not effects:
        return action
    return action.model_copy(update={"effects": action.effects + effects})


def new_boost(draft: Draft, holder_id: str, name: str, action_id: str) -> Effect:
    """R12.6: a temporary aspect with exactly one free invoke."""
    aspect = draft.put_aspect(
        Aspect(
            id=draft.new_aspect_id("boost"),
            name=name,
            kind="boost",
            free_invokes={holder_id: 1},
            created_by_action=action_id,
        )
    )
    return Effect(kind="boost", character_id=holder_id, aspect_id=aspect.id, text=name)


def place_situation_aspect(
    draft: Draft,
    name: str,
    *,
    attached_to: str | None,
    holder: str | None,
    free: int,
    action_id: str,
) -> Effect:
    aspect = draft.put_aspect(
        Aspect(
            id=draft.new_aspect_id("sit"),
            name=name,
            kind="situation",
            attached_to=attached_to,
            free_invokes={holder: free} if holder and free else {},
            created_by_action=action_id,
        )
    )
    return Effect(kind="aspect", character_id=holder, aspect_id=aspect.id, count=free, text=name)


def add_free_invokes(draft: Draft, aspect_id: str, holder: str, count: int) -> Effect:
    aspect = draft.aspect(aspect_id)
    invokes = dict(aspect.free_invokes)
    invokes[holder] = invokes.get(holder, 0) + count
    draft.put_aspect(aspect.model_copy(update={"free_invokes": invokes}))
    return Effect(
        kind="free_invokes",
        character_id=holder,
        aspect_id=aspect_id,
        count=count,
        text=aspect.name,
    )


def pending_fate_point(draft: Draft, character_id: str, why: Earning) -> Effect | None:
    """A point usable once the scene is over; the GM's NPCs receive nothing (R4.5)."""
    character = draft.character(character_id)
    if character.is_npc:
        return None
    draft.put_character(
        character.model_copy(
            update={
                "pending_fate_points": character.pending_fate_points + 1,
                "pending_reasons": (*character.pending_reasons, why),
            }
        )
    )
    return Effect(
        kind="fate_point",
        character_id=character_id,
        count=1,
        text=why.aspect or "",
        detail=why.kind,
    )
