"""Actions from declaration to resolution (R2-R10, R12.6).

Every public function takes the state, a command, the principal asking, the
dice and the ruleset, and returns the events that follow. The state machine:

    declared -> awaiting_opposition -> invoking -> choosing -> costing -> resolved
                                                \\-> absorbing (Fate Condensed hits)

Only the states an action needs are visited: a passive, safe overcome goes
straight from the roll to the invoke phase.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from bridge.rules.consequences import absorb_capacity, overwhelm, place_consequence
from bridge.rules.dice import DiceSource
from bridge.rules.draft import Draft
from bridge.rules.errors import RuleViolation
from bridge.rules.events import Event
from bridge.rules.outcome import outcome_for, shifts
from bridge.rules.ruleset import Ruleset
from bridge.rules.state import (
    GM,
    Action,
    ActionType,
    Aspect,
    Character,
    Cost,
    CostSeverity,
    Earning,
    Effect,
    Invoke,
    Purpose,
    Roll,
    Side,
    WorldState,
)

SideName = Literal["actor", "opposition"]
MILD = 2


@dataclass(frozen=True)
class Principal:
    """Who asks: a Foundry user, and whether the bridge knows it as a GM."""

    user_id: str
    is_gm: bool


@dataclass(frozen=True)
class Helper:
    character_id: str
    skill: str | None = None


@dataclass(frozen=True)
class StartAction:
    type: ActionType
    actor_id: str
    skill: str
    passive_rating: int | None = None
    opposer_id: str | None = None
    target_id: str | None = None
    target_aspect_id: str | None = None
    aspect_name: str | None = None
    situation: str | None = None
    helpers: tuple[Helper, ...] = ()
    dangerous_actor: bool = False
    dangerous_opposition: bool = False
    recovery_of: tuple[str, str] | None = None
    allow_repeat: bool = False
    description: str | None = None
    purpose: Purpose = "action"
    contest_id: str | None = None
    side_id: str | None = None
    challenge_id: str | None = None
    task_id: str | None = None


@dataclass(frozen=True)
class InvokeCommand:
    action_id: str
    invoker: str
    aspect_id: str
    payment: Literal["fate_point", "free", "boost"]
    effect: Literal["bonus", "reroll", "hostile"] = "bonus"
    side: SideName | None = None


@dataclass(frozen=True)
class CostCommand:
    action_id: str
    kind: str
    text: str = ""
    target_id: str | None = None
    aspect_name: str | None = None


@dataclass(frozen=True)
class AbsorbCommand:
    action_id: str
    stress_boxes: tuple[int, ...] = ()
    consequences: dict[str, str] = field(default_factory=dict)


# --- helpers -------------------------------------------------------------------


def _character(draft: Draft, character_id: str, field_name: str) -> Character:
    character = draft.characters.get(character_id)
    if character is None:
        raise RuleViolation(
            "unknown_actor",
            f"The bridge does not know actor {character_id!r}; sync it first.",
            field_name,
        )
    return character


def may_control(principal: Principal, character: Character) -> bool:
    return principal.is_gm or principal.user_id in character.owners


def _require_control(principal: Principal, character: Character, field_name: str) -> None:
    if not may_control(principal, character):
        raise RuleViolation("forbidden", f"You may not act for {character.name}.", field_name)


def _require_gm(principal: Principal) -> None:
    if not principal.is_gm:
        raise RuleViolation("forbidden", "Only the GM may do that.")


def _require_active(character: Character, doing: str, field_name: str) -> None:
    """R8.2: an overwhelmed character cannot act, oppose or help until the scene ends."""
    if character.overwhelmed:
        raise RuleViolation(
            "overwhelmed",
            f"{character.name} is overwhelmed and cannot {doing} until the scene ends.",
            field_name,
        )


def _action(draft: Draft, action_id: str, *states: str) -> Action:
    action = draft.actions.get(action_id)
    if action is None:
        raise RuleViolation("not_found", f"There is no action {action_id!r}.", "action_id")
    if states and action.state not in states:
        raise RuleViolation(
            "wrong_state",
            f"That can't be done now: the action is {action.state.replace('_', ' ')}.",
            "action_id",
        )
    return action


def stunt_bonus(character: Character, skill: str, action: str) -> int:
    """R1.2: the bonuses of stunts tied to this skill and action type."""
    return sum(
        s.bonus
        for s in character.stunts
        if s.skill == skill and (not s.actions or action in s.actions)
    )


def _key(character_id: str, situation: str) -> str:
    return f"{character_id}|{situation}"


def _side(action: Action, name: SideName) -> Side:
    return action.actor if name == "actor" else action.opposition


def _with_side(action: Action, name: SideName, side: Side) -> Action:
    return action.model_copy(update={name: side})


def _other(name: SideName) -> SideName:
    return "opposition" if name == "actor" else "actor"


def _add_effects(action: Action, *effects: Effect) -> Action:
    return action.model_copy(update={"effects": action.effects + tuple(effects)})


def _new_boost(draft: Draft, holder_id: str, name: str, action_id: str) -> Effect:
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


def _place_situation_aspect(
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


def _add_free_invokes(draft: Draft, aspect_id: str, holder: str, count: int) -> Effect:
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


# --- declaring and rolling --------------------------------------------------------


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
    actor = _character(draft, command.actor_id, "actor_id")
    _require_control(principal, actor, "actor_id")
    _require_active(actor, "act", "actor_id")

    # R10.1: the participant with the highest skill leads; each other with +1 adds +1.
    participants: list[tuple[Character, str]] = [(actor, command.skill)]
    for index, helper in enumerate(command.helpers):
        if helper.character_id == actor.id or any(
            p.id == helper.character_id for p, _ in participants
        ):
            raise RuleViolation(
                "invalid", "A character can only be on an action once.", f"helpers.{index}"
            )
        helping = _character(draft, helper.character_id, f"helpers.{index}")
        _require_active(helping, "help", f"helpers.{index}")
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
    if command.type == "create_advantage" and not command.aspect_name:
        raise RuleViolation("invalid", "Name the aspect you want to create.", "aspect_name")
    if command.target_id is not None:
        _character(draft, command.target_id, "target_id")

    situation = command.situation
    if situation and not command.allow_repeat:
        key = _key(leader.id, situation)
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
        patient = _character(draft, patient_id, "recovery_of")
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
        opposer = _character(draft, command.opposer_id, "opposer_id")
        _require_active(opposer, "oppose", "opposer_id")
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
        purpose=command.purpose,
        contest_id=command.contest_id,
        side_id=command.side_id,
        challenge_id=command.challenge_id,
        task_id=command.task_id,
    )
    if command.dangerous_actor or command.dangerous_opposition:
        draft.put_action(action)  # R9.3: the concession window before any dice
    else:
        _advance_to_dice(draft, action, dice)
    return draft.action(action_id)


def _leader(participants: Sequence[tuple[Character, str]]) -> tuple[Character, str]:
    """R10.1: highest skill leads; on a tie the declaring actor keeps the lead."""
    best = participants[0]
    for candidate in participants[1:]:
        if candidate[0].skills.get(candidate[1], 0) > best[0].skills.get(best[1], 0):
            best = candidate
    return best


def _advance_to_dice(draft: Draft, action: Action, dice: DiceSource) -> None:
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
    action = _action(draft, action_id, "declared")
    leader = draft.character(action.actor.leader or "")
    _require_control(principal, leader, "action_id")
    _advance_to_dice(draft, action, dice)
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
    action = _action(draft, action_id, "awaiting_opposition")
    opposer = draft.character(action.opposition.leader or "")
    _require_control(principal, opposer, "action_id")
    _require_active(opposer, "oppose", "action_id")
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
    action = _action(draft, action_id, "declared", "awaiting_opposition")
    conceder = _character(draft, character_id, "character_id")
    _require_control(principal, conceder, "character_id")
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
    for member in _side(action, conceding_side).members:
        effects.append(overwhelm(draft, member, caused_by=None))
    point = pending_fate_point(draft, character_id, Earning(kind="conceded"))
    if point:
        effects.append(point)
    succeeded = conceding_side == "opposition"
    effects.append(Effect(kind="success" if succeeded else "failure"))
    _finish(draft, _add_effects(action, *effects), succeeded=succeeded)
    return draft.events()


# --- the invoke phase (R4) ----------------------------------------------------------


def _invoking_side(
    draft: Draft, action: Action, command: InvokeCommand, principal: Principal
) -> SideName:
    if command.invoker == GM:
        _require_gm(principal)
        if command.side is not None:
            return command.side
        if action.opposition_kind == "passive":
            return "opposition"
        raise RuleViolation("invalid", "Say which side the GM invokes for.", "side")
    invoker = _character(draft, command.invoker, "invoker")
    _require_control(principal, invoker, "invoker")
    _require_active(invoker, "invoke", "invoker")
    if invoker.id in action.actor.members:
        return "actor"
    if invoker.id in action.opposition.members:
        return "opposition"
    raise RuleViolation(
        "forbidden", f"{invoker.name} is not taking part in this action.", "invoker"
    )


def invoke(
    state: WorldState,
    command: InvokeCommand,
    principal: Principal,
    dice: DiceSource,
    ruleset: Ruleset,
) -> list[Event]:
    """R4.1-R4.6: +2, a reroll or (Fate Condensed) a hostile -2, paid exactly once."""
    draft = Draft(state, "action.invoke")
    action = _action(draft, command.action_id, "invoking")
    side_name = _invoking_side(draft, action, command, principal)
    side = _side(action, side_name)
    aspect = draft.aspects.get(command.aspect_id)
    if aspect is None:
        raise RuleViolation("not_found", "There is no such aspect.", "aspect_id")

    opponent = _side(action, _other(side_name))
    if command.effect == "hostile":
        if not ruleset.hostile_invokes:
            raise RuleViolation(
                "not_in_ruleset", f"{ruleset.title} has no hostile invokes.", "effect"
            )
        if aspect.attached_to is None or aspect.attached_to not in opponent.members:
            raise RuleViolation(
                "invalid", "A hostile invoke uses an aspect on the opponent.", "aspect_id"
            )
    if command.effect == "reroll" and side.roll.dice is None:
        raise RuleViolation("invalid", "Passive opposition has no dice to reroll.", "effect")

    # The payer: a character, or the GM's budget for the GM and for NPCs (R4.2).
    holder = command.invoker
    pays_from_gm = holder == GM or draft.character(holder).is_npc

    if command.payment == "fate_point":
        if aspect.id in side.fate_point_aspects:
            raise RuleViolation(
                "already_invoked",
                f"{aspect.name!r} was already invoked with a fate point on this action.",
                "aspect_id",
            )
        if pays_from_gm:
            if draft.gm_fate_points < 1:
                raise RuleViolation(
                    "no_fate_points", "The GM's fate point budget is empty.", "payment"
                )
            draft.set_gm_fate_points(draft.gm_fate_points - 1)
        else:
            payer = draft.character(holder)
            if payer.fate_points < 1:
                raise RuleViolation(
                    "no_fate_points", f"{payer.name} has no fate points left.", "payment"
                )
            draft.put_character(payer.model_copy(update={"fate_points": payer.fate_points - 1}))
        side = side.model_copy(update={"fate_point_aspects": (*side.fate_point_aspects, aspect.id)})
        # R4.5: invoking someone else's aspect pays them at the end of the scene.
        owner_id = aspect.attached_to
        if owner_id and owner_id != holder and owner_id not in side.members:
            point = pending_fate_point(
                draft, owner_id, Earning(kind="invoked_against", aspect=aspect.name)
            )
            if point:
                action = _add_effects(action, point)
    else:
        key = GM if pays_from_gm and holder == GM else holder
        held = aspect.free_invokes.get(key, 0)
        if command.payment == "boost" and aspect.kind != "boost":
            raise RuleViolation("invalid", f"{aspect.name!r} is not a boost.", "payment")
        if held < 1:
            raise RuleViolation(
                "no_free_invokes", f"No free invoke on {aspect.name!r} to spend.", "payment"
            )
        remaining = {**aspect.free_invokes, key: held - 1}
        remaining = {k: v for k, v in remaining.items() if v > 0}
        if aspect.kind == "boost" and not remaining:
            draft.remove_aspect(aspect.id)  # R12.6: a boost vanishes when used
        else:
            draft.put_aspect(aspect.model_copy(update={"free_invokes": remaining}))

    new_dice = None
    if command.effect == "bonus":
        side = side.model_copy(
            update={
                "roll": side.roll.model_copy(update={"invoke_bonus": side.roll.invoke_bonus + 2})
            }
        )
    elif command.effect == "reroll":
        new_dice = dice.roll()
        side = side.model_copy(update={"roll": side.roll.model_copy(update={"dice": new_dice})})
    else:
        opponent = opponent.model_copy(
            update={
                "roll": opponent.roll.model_copy(
                    update={"invoke_bonus": opponent.roll.invoke_bonus - 2}
                )
            }
        )
    record = Invoke(
        side=side_name,
        invoker=command.invoker,
        aspect_id=aspect.id,
        aspect_name=aspect.name,
        payment=command.payment,
        effect=command.effect,
        dice=new_dice,
    )
    # R4.4: any invoke reopens the exchange for both sides. Passive opposition has no
    # one to answer, so it stays passed (the GM may still invoke while the phase is open).
    passive = action.opposition_kind == "passive"
    own_passed = passive and side_name == "opposition"
    other_passed = passive and side_name == "actor" and opponent.passed
    action = _with_side(action, side_name, side.model_copy(update={"passed": own_passed}))
    action = _with_side(
        action, _other(side_name), opponent.model_copy(update={"passed": other_passed})
    )
    draft.put_action(action.model_copy(update={"invokes": (*action.invokes, record)}))
    return draft.events()


def pass_invokes(
    state: WorldState, action_id: str, side_name: SideName, principal: Principal, ruleset: Ruleset
) -> list[Event]:
    """R4.4: when both sides have passed, the outcome is final and resolved (R3.2)."""
    draft = Draft(state, "action.pass")
    action = _action(draft, action_id, "invoking")
    side = _side(action, side_name)
    if side.leader is None:
        _require_gm(principal)
    else:
        _require_control(principal, draft.character(side.leader), "side")
    action = _with_side(action, side_name, side.model_copy(update={"passed": True}))
    if action.actor.passed and action.opposition.passed:
        _resolve(draft, action, ruleset)
    else:
        draft.put_action(action)
    return draft.events()


# --- resolution (R5) -------------------------------------------------------------------


def _resolve(draft: Draft, action: Action, ruleset: Ruleset) -> None:
    shift_count = shifts(action.actor.roll.total, action.opposition.roll.total)
    outcome = outcome_for(shift_count, ruleset)
    action = action.model_copy(update={"shifts": shift_count, "outcome": outcome})
    leader = action.actor.leader or ""
    effects: list[Effect] = []

    # R5.7: the opposer excels when it beats the actor by the excel threshold.
    if action.opposition_kind == "active" and shift_count <= -ruleset.excel_threshold:
        opposer = draft.character(action.opposition.leader or "")
        effects.append(_new_boost(draft, opposer.id, f"{opposer.name}'s upper hand", action.id))
    # R9.2: a side that fumbles a dangerous action is overwhelmed.
    if action.opposition.dangerous and action.opposition.leader and shift_count > 0:
        effects.append(overwhelm(draft, action.opposition.leader, caused_by=leader))
    if action.actor.dangerous and outcome == "fumble":
        for member in action.actor.members:
            effects.append(overwhelm(draft, member, caused_by=action.opposition.leader or GM))
        _finish(draft, _add_effects(action, *effects, Effect(kind="failure")), succeeded=False)
        return
    action = _add_effects(action, *effects)

    if action.purpose == "contest_roll":
        # R11.2: a contest roll is only a total; the exchange decides what it means.
        from bridge.rules import contest

        _finish(draft, action, succeeded=None)
        contest.record_roll(draft, draft.action(action.id))
        return
    if action.purpose == "contest_advantage" and outcome == "fumble":
        from bridge.rules import contest

        contest.forfeit(draft, action)

    if action.type == "create_advantage":
        _resolve_create_advantage(draft, action)
    elif action.type == "attack":
        _resolve_attack(draft, action)
    elif outcome == "fumble":
        _ask(draft, action, "fail_or_cost", "serious")
    elif outcome == "tie" and action.type == "take_advantage":
        _succeed(draft, action)
    elif outcome == "tie":
        _ask(draft, action, "fail_or_cost", "minor")
    else:
        _succeed(draft, action)


def _ask(draft: Draft, action: Action, choice: str, severity: CostSeverity | None) -> None:
    draft.put_action(
        action.model_copy(
            update={"state": "choosing", "pending_choice": choice, "cost_severity": severity}
        )
    )


def _resolve_create_advantage(draft: Draft, action: Action) -> None:
    """R5.2 and R5.4."""
    leader = draft.character(action.actor.leader or "")
    name = action.aspect_name or "Advantage"
    if action.outcome == "fumble":
        _ask(draft, action, "advantage_fumble", "serious")
    elif action.outcome == "tie":
        effect = _new_boost(draft, leader.id, name, action.id)
        _finish(draft, _add_effects(action, effect), succeeded=True)
    elif action.outcome == "succeed":
        _succeed(draft, action)
    elif action.target_id is not None:
        _ask(draft, action, "leave_mark", None)
    else:
        _succeed(draft, action)


def _resolve_attack(draft: Draft, action: Action) -> None:
    """R5.9: fail no hit; tie a boost; succeed a hit of the shifts; excel a choice."""
    leader = draft.character(action.actor.leader or "")
    if action.outcome == "fumble":
        _finish(draft, _add_effects(action, Effect(kind="failure")), succeeded=False)
    elif action.outcome == "tie":
        effect = _new_boost(draft, leader.id, f"{leader.name}'s opening", action.id)
        _finish(draft, _add_effects(action, effect), succeeded=False)
    elif action.outcome == "excel":
        _ask(draft, action, "attack_style", None)
    else:
        _start_hit(draft, action, action.shifts or 0)


def _start_hit(draft: Draft, action: Action, hit: int) -> None:
    """R5.10: the target absorbs the whole hit, or is taken out."""
    target = draft.character(action.target_id or "")
    effect = Effect(kind="hit", character_id=target.id, count=hit)
    action = _add_effects(action, effect)
    if absorb_capacity(target) < hit:
        out = overwhelm(draft, target.id, caused_by=action.actor.leader)
        _finish(draft, _add_effects(action, out), succeeded=True)
        return
    draft.put_action(
        action.model_copy(update={"state": "absorbing", "pending_hit": hit, "pending_choice": None})
    )


def _succeed(draft: Draft, action: Action, *, at_cost: bool = False) -> None:
    """Apply what success gives, by action type (R5.1-R5.5, R7.4)."""
    leader = draft.character(action.actor.leader or "")
    effects: list[Effect] = []
    excel = action.outcome == "excel" and not at_cost
    if action.type == "overcome":
        if excel:
            effects.append(_new_boost(draft, leader.id, f"{leader.name}'s momentum", action.id))
        if action.situation:
            scene = draft.scene
            key = _key(leader.id, action.situation)
            if key not in scene.overcome:
                draft.put_scene(scene.model_copy(update={"overcome": (*scene.overcome, key)}))
        if action.recovery_slot_id:
            effects.append(_mark_addressed(draft, action.recovery_slot_id))
    elif action.type == "create_advantage":
        free = 2 if excel else 1
        effects.append(
            _place_situation_aspect(
                draft,
                action.aspect_name or "Advantage",
                attached_to=action.target_id,
                holder=leader.id,
                free=free,
                action_id=action.id,
            )
        )
        _clear_exhaustion(draft, leader.id, action.situation)
    elif action.type == "take_advantage":
        free = 2 if excel else 1
        effects.append(_add_free_invokes(draft, action.target_aspect_id or "", leader.id, free))
    elif action.type == "discover":
        questions = 1 if at_cost or (action.shifts or 0) < 1 else action.shifts or 0
        effects.append(Effect(kind="questions", character_id=leader.id, count=questions))
        if excel:
            effects.append(Effect(kind="hint", character_id=leader.id, detail="offered"))
            scene = draft.scene
            draft.put_scene(scene.model_copy(update={"hints_open": (*scene.hints_open, leader.id)}))
        _exhaust(draft, leader.id, action.situation)
    effects.append(Effect(kind="success"))
    _finish(draft, _add_effects(action, *effects), succeeded=True)


def _finish(draft: Draft, action: Action, *, succeeded: bool | None) -> None:
    draft.put_action(
        action.model_copy(
            update={"state": "resolved", "succeeded": succeeded, "pending_choice": None}
        )
    )
    if action.challenge_id is not None:
        from bridge.rules import challenge

        challenge.check_complete(draft, action.challenge_id)


def _exhaust(draft: Draft, character_id: str, situation: str | None) -> None:
    """R5.6: a discover roll takes all there is from the situation as it is."""
    if not situation:
        return
    key = _key(character_id, situation)
    scene = draft.scene
    if key not in scene.exhausted:
        draft.put_scene(scene.model_copy(update={"exhausted": (*scene.exhausted, key)}))


def _clear_exhaustion(draft: Draft, character_id: str, situation: str | None) -> None:
    """R5.6: creating an advantage on the situation changes it."""
    if not situation:
        return
    key = _key(character_id, situation)
    scene = draft.scene
    if key in scene.exhausted:
        draft.put_scene(
            scene.model_copy(update={"exhausted": tuple(k for k in scene.exhausted if k != key)})
        )


def _mark_addressed(draft: Draft, recovery_slot_id: str) -> Effect:
    """R7.4: success marks the consequence addressed."""
    patient_id, slot_id = recovery_slot_id.split("|", 1)
    patient = draft.character(patient_id)
    slots = tuple(
        s.model_copy(update={"status": "addressed"}) if s.id == slot_id else s
        for s in patient.consequences
    )
    draft.put_character(patient.model_copy(update={"consequences": slots}))
    slot = next(s for s in slots if s.id == slot_id)
    name = draft.aspects[slot.aspect_id].name if slot.aspect_id in draft.aspects else ""
    return Effect(
        kind="consequence",
        character_id=patient_id,
        aspect_id=slot.aspect_id,
        count=slot.severity,
        text=name,
        detail="addressed",
    )


# --- choices and costs (R5, R6) ----------------------------------------------------------

ChoiceValue = Literal[
    "fail", "succeed_at_cost", "unintended_aspect", "aspect", "mark", "full_hit", "boost"
]


def choose(
    state: WorldState,
    action_id: str,
    choice: ChoiceValue,
    principal: Principal,
    *,
    aspect_name: str | None = None,
    consequence_name: str | None = None,
) -> list[Event]:
    """The actor's owner answers the pending choice."""
    draft = Draft(state, "action.choose")
    action = _action(draft, action_id, "choosing")
    leader = draft.character(action.actor.leader or "")
    pending = action.pending_choice
    allowed: dict[str | None, tuple[str, ...]] = {
        "fail_or_cost": ("fail", "succeed_at_cost"),
        "advantage_fumble": ("fail", "unintended_aspect", "succeed_at_cost"),
        "leave_mark": ("aspect", "mark"),
        "attack_style": ("full_hit", "boost"),
    }
    if choice not in allowed.get(pending, ()):
        raise RuleViolation(
            "invalid",
            f"Choose one of: {', '.join(allowed.get(pending, ()))}.",
            "choice",
        )
    if choice == "unintended_aspect":
        # R5.2: the GM names it; nobody gains free invokes from it.
        _require_gm(principal)
        if not aspect_name:
            raise RuleViolation("invalid", "Name the unintended aspect.", "aspect_name")
        effect = _place_situation_aspect(
            draft, aspect_name, attached_to=None, holder=None, free=0, action_id=action.id
        )
        _finish(draft, _add_effects(action, effect, Effect(kind="failure")), succeeded=False)
        return draft.events()
    _require_control(principal, leader, "choice")
    if choice == "fail":
        _finish(draft, _add_effects(action, Effect(kind="failure")), succeeded=False)
    elif choice == "succeed_at_cost":
        draft.put_action(action.model_copy(update={"state": "costing", "pending_choice": None}))
    elif choice == "aspect":
        _succeed(draft, action.model_copy(update={"pending_choice": None}))
    elif choice == "mark":
        # R5.4: one free invoke becomes a mild consequence; the other sits on it.
        target_id = action.target_id or ""
        name = consequence_name or action.aspect_name or "Marked"
        placement = place_consequence(
            draft, target_id, MILD, name, caused_by=leader.id, free_invokes={leader.id: 1}
        )
        _finish(
            draft,
            _add_effects(action, *placement.effects, Effect(kind="success")),
            succeeded=True,
        )
    elif choice == "full_hit":
        _start_hit(draft, action, action.shifts or 0)
    else:
        boost = _new_boost(draft, leader.id, f"{leader.name}'s style", action.id)
        _start_hit(draft, _add_effects(action, boost), max((action.shifts or 0) - 1, 0))
    return draft.events()


def apply_cost(
    state: WorldState, command: CostCommand, principal: Principal, ruleset: Ruleset
) -> list[Event]:
    """R6: the GM picks the cost; mechanical ones are applied, narrative ones recorded.
    R6.3: on a combined-skills roll a character cost falls on every participant."""
    draft = Draft(state, "action.cost")
    _require_gm(principal)
    action = _action(draft, command.action_id, "costing")
    severity = action.cost_severity or "serious"
    options = ruleset.costs[severity]
    if command.kind not in options:
        raise RuleViolation(
            "invalid",
            f"A {severity} cost is one of: {', '.join(options)}.",
            "kind",
        )
    effects: list[Effect] = []
    members = action.actor.members
    if command.kind == "npc_boost":
        npc = _character(draft, command.target_id or "", "target_id")
        if not npc.is_npc:
            raise RuleViolation("invalid", "Give the boost to an NPC.", "target_id")
        effects.append(_new_boost(draft, npc.id, command.aspect_name or "Opening", action.id))
    elif command.kind == "aspect_on_actor":
        if not command.aspect_name:
            raise RuleViolation("invalid", "Name the aspect.", "aspect_name")
        for member in members:
            effects.append(
                _place_situation_aspect(
                    draft,
                    command.aspect_name,
                    attached_to=member,
                    holder=None,
                    free=0,
                    action_id=action.id,
                )
            )
    elif command.kind == "mild_consequence":
        if not command.aspect_name:
            raise RuleViolation("invalid", "Name the consequence.", "aspect_name")
        for member in members:
            placement = place_consequence(draft, member, MILD, command.aspect_name, caused_by=GM)
            effects.extend(placement.effects)
    elif command.kind == "opponent_advantage":
        if not command.aspect_name:
            raise RuleViolation("invalid", "Name the advantage.", "aspect_name")
        holder = command.target_id or action.opposition.leader or GM
        if holder != GM:
            _character(draft, holder, "target_id")
        effects.append(
            _place_situation_aspect(
                draft,
                command.aspect_name,
                attached_to=None,
                holder=holder,
                free=1,
                action_id=action.id,
            )
        )
    elif not command.text:
        raise RuleViolation("invalid", "Describe the cost.", "text")
    cost = Cost(
        severity=severity,
        kind=command.kind,
        text=command.text or command.aspect_name or "",
        target_id=command.target_id,
    )
    effects.append(Effect(kind="cost", text=cost.text, detail=f"{severity}.{cost.kind}"))
    action = _add_effects(action, *effects).model_copy(update={"costs": (*action.costs, cost)})
    if any(e.kind == "overwhelmed" and e.character_id == action.actor.leader for e in effects):
        _finish(draft, action, succeeded=True)
    else:
        _succeed(draft, action, at_cost=True)
    return draft.events()


def gift_free_invoke(
    state: WorldState, action_id: str, aspect_id: str, holder: str, principal: Principal
) -> list[Event]:
    """R5.2, R5.3: on a fumbled advantage the GM may give a free invoke to someone else."""
    draft = Draft(state, "action.gift")
    _require_gm(principal)
    action = _action(draft, action_id, "choosing", "costing", "resolved")
    if action.type not in ("create_advantage", "take_advantage") or action.outcome != "fumble":
        raise RuleViolation(
            "invalid", "Only a fumbled advantage lets the GM give a free invoke.", "action_id"
        )
    if holder in action.actor.members:
        raise RuleViolation("invalid", "Give it to someone else.", "holder")
    if any(e.kind == "free_invokes" and e.text == "gift" for e in action.effects):
        raise RuleViolation("invalid", "The GM already gave one on this action.", "action_id")
    if holder != GM:
        _character(draft, holder, "holder")
    if aspect_id not in draft.aspects:
        raise RuleViolation("not_found", "There is no such aspect.", "aspect_id")
    effect = _add_free_invokes(draft, aspect_id, holder, 1).model_copy(update={"text": "gift"})
    draft.put_action(_add_effects(action, effect))
    return draft.events()


def absorb(state: WorldState, command: AbsorbCommand, principal: Principal) -> list[Event]:
    """R5.10: mark stress boxes (one shift each) and fill consequences (their value)."""
    draft = Draft(state, "action.absorb")
    action = _action(draft, command.action_id, "absorbing")
    target = draft.character(action.target_id or "")
    _require_control(principal, target, "action_id")
    stress = list(target.stress)
    absorbed = 0
    for index in sorted(set(command.stress_boxes)):
        if index < 0 or index >= len(stress) or stress[index]:
            raise RuleViolation("invalid", f"Stress box {index + 1} is not free.", "stress_boxes")
        stress[index] = True
        absorbed += 1
    slots = {s.id: s for s in target.consequences}
    for slot_id in command.consequences:
        slot = slots.get(slot_id)
        if slot is None or not slot.empty:
            raise RuleViolation("invalid", "That consequence slot is not free.", "consequences")
        absorbed += slot.severity
    if absorbed < action.pending_hit:
        raise RuleViolation(
            "invalid",
            f"The hit is {action.pending_hit} shifts; that absorbs only {absorbed}.",
            "consequences",
        )
    draft.put_character(target.model_copy(update={"stress": tuple(stress)}))
    effects: list[Effect] = []
    if command.stress_boxes:
        effects.append(
            Effect(kind="stress", character_id=target.id, count=len(set(command.stress_boxes)))
        )
    for slot_id, name in command.consequences.items():
        slot = slots[slot_id]
        placement = place_consequence(draft, target.id, slot.severity, name, caused_by=None)
        effects.extend(placement.effects)
    _finish(
        draft,
        _add_effects(action, *effects).model_copy(update={"pending_hit": 0}),
        succeeded=True,
    )
    return draft.events()


def give_free_invokes(
    state: WorldState,
    aspect_id: str,
    from_id: str,
    to_id: str,
    count: int,
    principal: Principal,
) -> list[Event]:
    """R10.2: stack advantages by handing free invokes to one character."""
    draft = Draft(state, "aspect.give")
    aspect = draft.aspects.get(aspect_id)
    if aspect is None:
        raise RuleViolation("not_found", "There is no such aspect.", "aspect_id")
    giver = _character(draft, from_id, "from_id")
    _require_control(principal, giver, "from_id")
    _character(draft, to_id, "to_id")
    held = aspect.free_invokes.get(from_id, 0)
    if count < 1 or held < count:
        raise RuleViolation(
            "no_free_invokes",
            f"{giver.name} holds {held} free invokes on {aspect.name!r}.",
            "count",
        )
    invokes = dict(aspect.free_invokes)
    invokes[from_id] = held - count
    invokes[to_id] = invokes.get(to_id, 0) + count
    draft.put_aspect(
        aspect.model_copy(update={"free_invokes": {k: v for k, v in invokes.items() if v > 0}})
    )
    return draft.events()


def set_gm_budget(state: WorldState, fate_points: int) -> list[Event]:
    """R12.2: the GM's fate points for this scene (pays NPC invokes, R4.2)."""
    draft = Draft(state, "fate.gm_budget")
    draft.set_gm_fate_points(max(fate_points, 0))
    return draft.events()
