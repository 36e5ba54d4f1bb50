"""Declaring an action and getting the dice on the table (R2, R9, R10)."""

from __future__ import annotations

from collections.abc import Sequence

from bridge.rules.actions.commands import Principal, SideName, StartAction
from bridge.rules.actions.common import (
    add_effects,
    find_action,
    find_character,
    pending_fate_point,
    require_active,
    require_control,
    side_of,
    situation_key,
    stunt_bonus,
)
from bridge.rules.actions.resolution import finish
from bridge.rules.consequences import overwhelm
from bridge.rules.dice import DiceSource
from bridge.rules.draft import Draft
from bridge.rules.errors import RuleViolation
from bridge.rules.events import Event
from bridge.rules.ruleset import Ruleset
from bridge.rules.state import (
    Action,
    Character,
    Earning,
    Effect,
    HarmKind,
    Roll,
    Side,
    WorldState,
)


def start_action(
    state: WorldState,
    command: StartAction,
    principal: Principal,
    dice: DiceSource,
    ruleset: Ruleset,
) -> list[Event]:
    """Declare an action (R2, R5, R9, R10); rolls at once unless someone must act first."""
    draft = Draft(state, "action.start")
    declare(draft, command, principal, dice, ruleset)
    return draft.events()


def declare(
    draft: Draft,
    command: StartAction,
    principal: Principal,
    dice: DiceSource,
    ruleset: Ruleset,
) -> Action:
    """Declare an action on a Draft and return it as it stands after any first roll."""
    if command.type not in ruleset.actions:
        raise RuleViolation(
            "not_in_ruleset",
            f"{ruleset.title} has no {command.type.replace('_', ' ')} action.",
            "type",
        )
    actor = find_character(draft, command.actor_id, "actor_id")
    require_control(principal, actor, "actor_id")
    require_active(actor, "act", "actor_id")
    attack_kind = _attack_kind(draft, command, actor)

    # R10.1: the participant with the highest skill leads; each other with +1 adds +1.
    participants: list[tuple[Character, str]] = [(actor, command.skill)]
    for index, helper in enumerate(command.helpers):
        if helper.character_id == actor.id or any(
            p.id == helper.character_id for p, _ in participants
        ):
            raise RuleViolation(
                "invalid", "A character can only be on an action once.", f"helpers.{index}"
            )
        helping = find_character(draft, helper.character_id, f"helpers.{index}")
        require_active(helping, "help", f"helpers.{index}")
        participants.append((helping, helper.skill or command.skill))
    leader, lead_skill = _leader(participants)
    helpers = tuple(c.id for c, _ in participants if c.id != leader.id)
    teamwork = sum(
        1 for c, skill in participants if c.id != leader.id and c.skills.get(skill, 0) >= 1
    )

    target_aspect_id = command.target_aspect_id
    if command.type == "take_advantage" and (
        not target_aspect_id or target_aspect_id not in draft.aspects
    ):
        raise RuleViolation(
            "invalid", "Take advantage needs an existing aspect.", "target_aspect_id"
        )
    elif target_aspect_id is not None and target_aspect_id not in draft.aspects:
        raise RuleViolation("not_found", "There is no such aspect.", "target_aspect_id")
    if command.type == "create_advantage" and not command.aspect_name:
        raise RuleViolation("invalid", "Name the aspect you want to create.", "aspect_name")
    if command.target_id is not None:
        find_character(draft, command.target_id, "target_id")
        if command.type == "attack" and command.target_id in {c.id for c, _ in participants}:
            raise RuleViolation("invalid", "A character cannot attack itself.", "target_id")
    if command.type == "attack" and command.target_id is None and command.opposer_id is None:
        # R5.9, R5.10: a hit lands on someone; without a target it could never resolve.
        raise RuleViolation("invalid", "An attack needs a target.", "target_id")

    situation = command.situation
    if situation and not command.allow_repeat:
        key = situation_key(leader.id, situation)
        if command.type == "discover" and key in draft.scene.exhausted:
            raise RuleViolation(
                "exhausted",
                f"{leader.name} has already learned all there is from {situation!r}; "
                "change the situation first, or the GM may allow it.",
                "situation",
            )
        if command.type == "overcome" and key in draft.scene.overcome:
            raise RuleViolation(
                "already_overcome",
                f"{leader.name} already overcame {situation!r}; unless the situation changed, "
                "it is no longer an obstacle. The GM may allow it.",
                "situation",
            )

    passive = command.passive_rating
    recovery_slot_id: str | None = None
    if command.recovery_of is not None:
        # R7.4: overcome against the consequence's value, +2 when treating oneself.
        patient_id, slot_id = command.recovery_of
        patient = find_character(draft, patient_id, "recovery_of")
        slot = next((s for s in patient.consequences if s.id == slot_id), None)
        if command.type != "overcome" or slot is None or slot.empty:
            raise RuleViolation(
                "invalid", "Recovery is an overcome against a filled consequence.", "recovery_of"
            )
        if slot.status != "fresh":
            raise RuleViolation(
                "invalid", "That consequence is already being treated.", "recovery_of"
            )
        passive = slot.severity + (2 if patient_id == leader.id else 0)
        recovery_slot_id = f"{patient_id}|{slot_id}"

    opposer: Character | None = None
    if command.opposer_id is not None:
        opposer = find_character(draft, command.opposer_id, "opposer_id")
        require_active(opposer, "oppose", "opposer_id")
        if opposer.id in {c.id for c, _ in participants}:
            raise RuleViolation("invalid", "A character cannot oppose itself.", "opposer_id")
    elif passive is None:
        raise RuleViolation(
            "invalid", "Give a passive opposition rating or an opposer.", "opposition"
        )

    action_id = draft.new_action_id()
    opposition_action = None
    if opposer is not None:
        opposition_action = "defend" if command.type == "attack" else "oppose"
    action = Action(
        id=action_id,
        type=command.type,
        requested_by=principal.user_id,
        actor=Side(
            leader=leader.id,
            helpers=helpers,
            roll=Roll(
                skill=lead_skill,
                skill_rating=leader.skills.get(lead_skill, 0),
                stunt_bonus=stunt_bonus(leader, lead_skill, command.type),
                teamwork_bonus=teamwork,
            ),
            dangerous=command.dangerous_actor,
        ),
        opposition=Side(
            leader=opposer.id if opposer else None,
            roll=Roll(passive_rating=None if opposer else passive),
            dangerous=command.dangerous_opposition,
            # R4.4 with passive opposition the GM side starts passed; invoking reopens it.
            passed=opposer is None,
        ),
        opposition_kind="active" if opposer else "passive",
        opposition_action=opposition_action,
        state="declared",
        target_id=command.target_id or (opposer.id if opposer else None),
        target_aspect_id=target_aspect_id,
        aspect_name=command.aspect_name,
        situation=situation,
        recovery_slot_id=recovery_slot_id,
        description=command.description,
        attack_kind=attack_kind,
        purpose=command.purpose,
        contest_id=command.contest_id,
        side_id=command.side_id,
        challenge_id=command.challenge_id,
        task_id=command.task_id,
    )
    if command.dangerous_actor or command.dangerous_opposition:
        draft.put_action(action)  # R9.3: the concession window before any dice
    else:
        advance_to_dice(draft, action, dice)
    return draft.action(action_id)


def _attack_kind(draft: Draft, command: StartAction, actor: Character) -> HarmKind | None:
    """R11.3 Decision: an attack in a conflict is of the conflict's kind (the GM set it);
    outside one, the kind asked for, physical when none is. Only attacks have a kind."""
    if command.type != "attack":
        if command.attack_kind is not None:
            raise RuleViolation("invalid", "Only an attack has a kind of harm.", "attack_kind")
        return None
    conflict = next(
        (c for c in draft.conflicts.values() if c.state == "open" and actor.id in c.order),
        None,
    )
    if conflict is None:
        return command.attack_kind or "physical"
    if command.attack_kind not in (None, conflict.kind):
        raise RuleViolation(
            "invalid",
            f"{conflict.name} is a {conflict.kind} conflict: its attacks are {conflict.kind}.",
            "attack_kind",
        )
    return conflict.kind


def _leader(participants: Sequence[tuple[Character, str]]) -> tuple[Character, str]:
    """R10.1: highest skill leads; on a tie the declaring actor keeps the lead."""
    best = participants[0]
    for candidate in participants[1:]:
        if candidate[0].skills.get(candidate[1], 0) > best[0].skills.get(best[1], 0):
            best = candidate
    return best


def advance_to_dice(draft: Draft, action: Action, dice: DiceSource) -> None:
    """R2.2: active opposition rolls first, so wait for the opposer's skill; else roll."""
    if action.opposition_kind == "active":
        draft.put_action(action.model_copy(update={"state": "awaiting_opposition"}))
    else:
        _roll_actor(draft, action, dice)


def _roll_actor(draft: Draft, action: Action, dice: DiceSource) -> None:
    roll = action.actor.roll.model_copy(update={"dice": dice.roll()})
    side = action.actor.model_copy(update={"roll": roll})
    draft.put_action(action.model_copy(update={"actor": side, "state": "invoking"}))


def roll_now(
    state: WorldState, action_id: str, principal: Principal, dice: DiceSource
) -> list[Event]:
    """Leave the concession window: the actor's side (or the GM) says roll."""
    draft = Draft(state, "action.roll")
    action = find_action(draft, action_id, "declared")
    leader = draft.character(action.actor.leader or "")
    require_control(principal, leader, "action_id")
    advance_to_dice(draft, action, dice)
    return draft.events()


def oppose(
    state: WorldState,
    action_id: str,
    skill: str,
    principal: Principal,
    dice: DiceSource,
) -> list[Event]:
    """R2.2: the opposer picks its skill and rolls, then the actor rolls."""
    draft = Draft(state, "action.oppose")
    action = find_action(draft, action_id, "awaiting_opposition")
    opposer = draft.character(action.opposition.leader or "")
    require_control(principal, opposer, "action_id")
    require_active(opposer, "oppose", "action_id")
    kind = action.opposition_action or "oppose"
    roll = Roll(
        skill=skill,
        skill_rating=opposer.skills.get(skill, 0),
        stunt_bonus=stunt_bonus(opposer, skill, kind),
        dice=dice.roll(),
    )
    action = action.model_copy(
        update={"opposition": action.opposition.model_copy(update={"roll": roll})}
    )
    _roll_actor(draft, action, dice)
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
        raise RuleViolation(
            "not_dangerous",
            f"{conceder.name} is not facing a dangerous action here, so cannot concede it.",
            "character_id",
        )
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
