"""The opposing side's moves before the dice settle: an active opposer rolls (R2.2), a
defender steps in for another (R13.11), a side in danger concedes (R9.3)."""

from __future__ import annotations

from bridge.rules.actions.commands import Principal
from bridge.rules.actions.common import (
    add_effects,
    check_stunts,
    find_action,
    find_character,
    pending_fate_point,
    require_active,
    require_control,
    require_gm,
    require_rating,
    side_of,
    stunt_bonus,
)
from bridge.rules.actions.declare import (
    named_stunts,
    rolled_side,
)
from bridge.rules.actions.resolution import finish
from bridge.rules.consequences import overwhelm
from bridge.rules.dice import DiceSource
from bridge.rules.draft import Draft
from bridge.rules.errors import refused
from bridge.rules.events import Event
from bridge.rules.ruleset import Ruleset
from bridge.rules.state import (
    Action,
    Earning,
    Effect,
    Roll,
    SideName,
    WorldState,
)
from bridge.rules.turns import in_full_defense


def _roll_actor(draft: Draft, action: Action, dice: DiceSource) -> None:
    side = rolled_side(action.actor, dice)
    draft.put_action(action.model_copy(update={"actor": side, "state": "invoking"}))


def oppose(
    state: WorldState,
    action_id: str,
    skill: str,
    principal: Principal,
    dice: DiceSource,
    ruleset: Ruleset | None = None,
    stunts: tuple[str, ...] | None = None,
) -> list[Event]:
    """R2.2: the opposer picks its skill (and, R13.8, the stunts that apply) and rolls,
    then the actor rolls. R13.7: a defender in full defense adds +2.
    ``ruleset``: None reads as Unwritten's (every matching stunt unless named)."""
    draft = Draft(state, "action.oppose")
    action = find_action(draft, action_id, "awaiting_opposition")
    opposer = draft.character(action.opposition.leader or "")
    require_control(principal, opposer, "action_id")
    require_active(opposer, "oppose", "action_id")
    require_rating(ruleset, skill, "skill")
    kind = action.opposition_action or "oppose"
    if stunts:
        check_stunts(opposer, skill, kind, stunts, "stunts")
    bonus, used = stunt_bonus(
        opposer, skill, kind, named_stunts(stunts, ruleset) if ruleset else stunts
    )
    roll = Roll(
        skill=skill,
        skill_rating=opposer.skills.get(skill, 0),
        stunt_bonus=bonus,
        dice=dice.roll(),
        stunts=used,
        defense_bonus=2 if kind == "defend" and in_full_defense(draft, opposer.id) else 0,
    )
    action = action.model_copy(
        update={"opposition": action.opposition.model_copy(update={"roll": roll})}
    )
    _roll_actor(draft, action, dice)
    return draft.events()


def interpose(
    state: WorldState, action_id: str, defender_id: str, principal: Principal, ruleset: Ruleset
) -> list[Event]:
    """R13.11: the GM lets ``defender_id``, a character in the same conflict, defend in the
    target's place before the defense is rolled: it rolls the defense and takes the hit;
    the card keeps whom it defended (``interposed_for``); the target itself again takes
    its own defense back."""
    require_gm(principal)
    if not ruleset.defend_for_another:
        raise refused("not_in_ruleset", "no_defend_for_another", "action_id", ruleset=ruleset.title)
    draft = Draft(state, "action.interpose")
    action = find_action(draft, action_id, "awaiting_opposition")
    if action.type != "attack":
        raise refused("not_an_attack", "interpose_not_attack", "action_id")
    defender = find_character(draft, defender_id, "defender_id")
    target_id = action.opposition.leader or ""
    if defender.id == target_id:
        raise refused("already_defending", "already_defending", "defender_id", name=defender.name)
    if defender.id in action.actor.members:
        raise refused(
            "against_own_side", "interpose_attacking_side", "defender_id", name=defender.name
        )
    conflict = next(
        (c for c in draft.conflicts.values() if c.state == "open" and target_id in c.order),
        None,
    )
    if conflict is None or defender.id not in conflict.order:
        raise refused(
            "not_in_conflict", "interpose_not_in_conflict", "defender_id", name=defender.name
        )
    require_active(defender, "defend", "defender_id")
    opposition = action.opposition.model_copy(update={"leader": defender.id})
    # The first target stays the one defended for; stepping back gives it its own defense.
    defended = action.interposed_for or target_id
    draft.put_action(
        action.model_copy(
            update={
                "opposition": opposition,
                "target_id": defender.id,
                "interposed_for": None if defender.id == defended else defended,
            }
        )
    )
    return draft.events()


def concede(
    state: WorldState, action_id: str, character_id: str, principal: Principal
) -> list[Event]:
    """R9.3: before the roll only; overwhelmed, the other side gets what it wanted,
    and a fate point usable once the scene is over."""
    draft = Draft(state, "action.concede")
    action = find_action(draft, action_id, "declared", "awaiting_opposition")
    conceder = find_character(draft, character_id, "character_id")
    require_control(principal, conceder, "character_id")
    if character_id in action.actor.members and action.actor.dangerous:
        conceding_side: SideName = "actor"
    elif character_id == action.opposition.leader and action.opposition.dangerous:
        conceding_side = "opposition"
    else:
        raise refused("not_dangerous", "concede_not_dangerous", "character_id", name=conceder.name)
    effects: list[Effect] = [Effect(kind="conceded", character_id=character_id)]
    for member in side_of(action, conceding_side).members:
        effects.append(overwhelm(draft, member, caused_by=None))
    point = pending_fate_point(draft, character_id, Earning(kind="conceded"))
    if point:
        effects.append(point)
    succeeded = conceding_side == "opposition"
    effects.append(Effect(kind="success" if succeeded else "failure"))
    finish(draft, add_effects(action, *effects), succeeded=succeeded)
    return draft.events()
