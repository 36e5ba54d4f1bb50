"""Declaring an action and getting the dice on the table (R2, R9, R10)."""

from __future__ import annotations

from collections.abc import Sequence

from bridge.rules.actions.commands import Helper, Principal, StartAction
from bridge.rules.actions.common import (
    check_stunts,
    find_character,
    require_active,
    require_control,
    require_rating,
    situation_key,
    stunt_bonus,
)
from bridge.rules.dice import DiceSource, Face
from bridge.rules.draft import Draft
from bridge.rules.errors import refused
from bridge.rules.events import Event
from bridge.rules.odds import OutcomeOdds, roll_odds
from bridge.rules.ruleset import Ruleset
from bridge.rules.state import (
    Action,
    ActionState,
    Character,
    Consent,
    ConsentPart,
    HarmKind,
    OppositionAction,
    OppositionKind,
    Participant,
    Proposal,
    Roll,
    Side,
    WorldState,
)
from bridge.rules.turns import require_turn


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
        raise refused(
            "not_in_ruleset", "no_such_action", "type", ruleset=ruleset.title, action=command.type
        )
    actor = find_character(draft, command.actor_id, "actor_id")
    require_control(principal, actor, "actor_id")
    require_active(actor, "act", "actor_id")
    attack_kind = _attack_kind(draft, command, actor)
    require_turn(draft, actor, principal)
    require_rating(ruleset, command.skill, "skill")
    for index, helper in enumerate(command.helpers):
        if helper.skill is not None:
            require_rating(ruleset, helper.skill, f"helpers.{index}.skill")
    named = named_stunts(command.stunts, ruleset)
    if command.stunts:
        check_stunts(actor, command.skill, command.type, command.stunts, "stunts")

    if command.helpers:
        participants = name_participants(draft, actor, command.skill, command.helpers, principal)
        joined = _joined(draft, participants)
        leader, lead_skill = _leader(joined)
        members = [p.character_id for p in participants]
    else:
        # The actor alone, as most actions are: it joins, leads and rolls (R10.1).
        participants = (Participant(character_id=actor.id, skill=command.skill),)
        joined = [(actor, command.skill)]
        leader, lead_skill = actor, command.skill
        members = [actor.id]

    target_aspect_id = command.target_aspect_id
    if command.type == "take_advantage" and (
        not target_aspect_id or target_aspect_id not in draft.aspects
    ):
        raise refused("invalid", "take_advantage_needs_aspect", "target_aspect_id")
    elif target_aspect_id is not None and target_aspect_id not in draft.aspects:
        raise refused("not_found", "no_such_aspect", "target_aspect_id")
    if command.type == "create_advantage" and not command.aspect_name:
        raise refused("invalid", "name_aspect_to_create", "aspect_name")
    if command.target_id is not None:
        find_character(draft, command.target_id, "target_id")
        if command.type == "attack" and command.target_id in members:
            raise refused("invalid", "attack_self", "target_id")
    if command.type == "attack" and command.target_id is None and command.opposer_id is None:
        # R5.9, R5.10: a hit lands on someone; without a target it could never resolve.
        raise refused("invalid", "attack_needs_target", "target_id")

    situation = command.situation
    if situation and not command.allow_repeat:
        key = situation_key(leader.id, situation)
        if command.type == "discover" and key in draft.scene.exhausted:
            raise refused(
                "exhausted",
                "discover_exhausted",
                "situation",
                name=leader.name,
                situation=situation,
            )
        if command.type == "overcome" and key in draft.scene.overcome:
            raise refused(
                "already_overcome",
                "already_overcame",
                "situation",
                name=leader.name,
                situation=situation,
            )

    passive = command.passive_rating
    recovery_slot_id: str | None = None
    if command.recovery_of is not None:
        # R7.4: overcome against the consequence's value, +2 when treating oneself.
        patient_id, slot_id = command.recovery_of
        patient = find_character(draft, patient_id, "recovery_of")
        slot = next((s for s in patient.consequences if s.id == slot_id), None)
        if command.type != "overcome" or slot is None or slot.empty:
            raise refused("invalid", "recovery_needs_consequence", "recovery_of")
        if slot.status != "fresh":
            raise refused("invalid", "already_treated", "recovery_of")
        passive = slot.severity + (2 if patient_id == leader.id else 0)
        recovery_slot_id = f"{patient_id}|{slot_id}"

    opposer: Character | None = None
    if command.opposer_id is not None:
        opposer = find_character(draft, command.opposer_id, "opposer_id")
        require_active(opposer, "oppose", "opposer_id")
        if opposer.id in members:
            raise refused("invalid", "oppose_self", "opposer_id")
    elif passive is None:
        raise refused("invalid", "opposition_needed", "opposition")

    proposal = _proposal(draft, command, principal, passive, recovery_slot_id)
    consents = _consents(draft, command, principal)
    action_id = draft.new_action_id()
    opposition_action: OppositionAction | None = None
    if opposer is not None:
        opposition_action = "defend" if command.type == "attack" else "oppose"
    if opposer is None:
        opposition = _passive_side(passive, command.dangerous_opposition)
    else:
        opposition = Side(leader=opposer.id, roll=Roll(), dangerous=command.dangerous_opposition)
    opposition_kind: OppositionKind = "active" if opposer else "passive"
    # The action is built once, in the state it goes on to (rolled, when nothing waits),
    # and so is its acting side: with its dice, when it goes straight to them.
    state: ActionState
    if proposal is not None or consents or any_invited(participants):
        state = "confirming"
    else:
        dangerous = command.dangerous_actor or command.dangerous_opposition
        state = _state_after_declared(dangerous, opposition_kind)
    actor_side = _side_of(
        joined,
        leader,
        lead_skill,
        command.type,
        dangerous=command.dangerous_actor,
        faces=dice.roll() if state == "invoking" else None,
        stunts=named,
    )
    action = Action(
        id=action_id,
        type=command.type,
        requested_by=principal.user_id,
        actor=actor_side,
        opposition=opposition,
        opposition_kind=opposition_kind,
        opposition_action=opposition_action,
        state=state,
        target_id=command.target_id or (opposer.id if opposer else None),
        target_aspect_id=command.target_aspect_id,
        aspect_name=command.aspect_name,
        situation=command.situation,
        recovery_slot_id=recovery_slot_id,
        description=command.description,
        attack_kind=attack_kind,
        purpose=command.purpose,
        contest_id=command.contest_id,
        side_id=command.side_id,
        challenge_id=command.challenge_id,
        task_id=command.task_id,
        proposal=proposal,
        participants=participants,
        consents=consents,
        stress_rule=(ruleset.stress_rule or "") if command.type == "attack" else "",
    )
    return draft.put_action(action)


def _proposal(
    draft: Draft,
    command: StartAction,
    principal: Principal,
    passive: int | None,
    recovery_slot_id: str | None,
) -> Proposal | None:
    """R2.1, R9.1 Decision: the numbers a player set that the GM owns, or None when
    nothing waits for the GM (the GM's own action, a rating the rules or a GM-set
    procedure gave, a table that trusts its players' ratings and no danger)."""
    if principal.is_gm:
        return None
    rating_proposed = (
        passive is not None
        and command.opposer_id is None
        and recovery_slot_id is None
        and not command.rating_from_gm
        and not draft.base.settings.trust_player_ratings
    )
    danger = command.dangerous_actor or command.dangerous_opposition
    if not rating_proposed and not danger:
        return None
    return Proposal(
        passive_rating=passive if rating_proposed else None,
        dangerous_actor=command.dangerous_actor,
        dangerous_opposition=command.dangerous_opposition,
    )


def _consents(draft: Draft, command: StartAction, principal: Principal) -> tuple[Consent, ...]:
    """Consent to harm (DESIGN Reach and trust: the GM owns "whom a player's action may
    harm"): every character this player's action would touch that the player does not
    own, with the parts it plays: the target (named, or the opposer when none is named),
    the active opposer, the character an aspect the action is about sits on. NPCs too:
    their owner is the GM. Empty for the GM's own actions, and for a player's action that
    touches only its own characters and the scene. Trusting the players' ratings (R2.1)
    changes nothing here."""
    target_id = command.target_id or command.opposer_id
    aspect_id = command.target_aspect_id
    if principal.is_gm or (target_id is None and aspect_id is None):
        return ()
    parts: dict[str, list[ConsentPart]] = {}
    characters = draft.characters
    user = principal.user_id

    def ask(character_id: str | None, part: ConsentPart) -> None:
        character = characters.get(character_id) if character_id is not None else None
        if character is not None and user not in character.owners:
            parts.setdefault(character.id, []).append(part)

    ask(target_id, "target")
    ask(command.opposer_id, "opposer")
    if aspect_id is not None:
        ask(draft.aspects[aspect_id].attached_to, "aspect")
    return tuple(
        Consent(character_id=character_id, parts=tuple(named), status="asked")
        for character_id, named in parts.items()
    )


def compose_actor_side(
    draft: Draft,
    participants: Sequence[Participant],
    action_type: str,
    *,
    dangerous: bool = False,
    stunts: tuple[str, ...] | None = None,
) -> Side:
    """R10.1: of the participants who joined, the highest skill leads and alone rolls;
    every other with at least +1 in its similar skill adds +1 (teamwork). ``dangerous``:
    the acting side's danger (R9.1), which the participants do not change; ``stunts``:
    the stunts the roll names (R13.8; None: every matching one)."""
    joined = _joined(draft, participants)
    leader, lead_skill = _leader(joined)
    return _side_of(joined, leader, lead_skill, action_type, dangerous=dangerous, stunts=stunts)


# Passive opposition sides as declared, by rating and danger: records never change, so
# every action declared against the same rating shares one (as SUCCESS and FAILURE are
# shared), instead of building two records per declaration. Bounded: ratings outside
# the ladder's usual span are built afresh.
_PASSIVE_SIDES: dict[tuple[int | None, bool], Side] = {}
_SHARED_RATINGS = range(-20, 41)


def _passive_side(rating: int | None, dangerous: bool) -> Side:
    """R4.4: a passive opposition as declared: its rating, and passed from the start
    (there is no one to invoke for it; the GM invoking reopens it)."""
    key = (rating, dangerous)
    side = _PASSIVE_SIDES.get(key)
    if side is None:
        side = Side(roll=Roll(passive_rating=rating), dangerous=dangerous, passed=True)
        if rating is None or rating in _SHARED_RATINGS:
            _PASSIVE_SIDES[key] = side
    return side


def _joined(draft: Draft, participants: Sequence[Participant]) -> list[tuple[Character, str]]:
    """R10.1: the participants who joined, each with the skill it brings, in order."""
    characters = draft.characters
    joined: list[tuple[Character, str]] = []
    for p in participants:
        if p.status == "joined":
            joined.append((characters[p.character_id], p.skill))
    return joined


def _side_of(
    joined: Sequence[tuple[Character, str]],
    leader: Character,
    lead_skill: str,
    action_type: str,
    *,
    dangerous: bool,
    faces: tuple[Face, Face, Face, Face] | None = None,
    stunts: tuple[str, ...] | None = None,
) -> Side:
    """:func:`compose_actor_side` once its leader is known (``_leader(joined)``), with
    the leader's dice when ``faces`` are given."""
    teamwork = 0
    helpers: tuple[str, ...] = ()
    if len(joined) > 1:
        teamwork = sum(
            1 for c, skill in joined if c.id != leader.id and c.skills.get(skill, 0) >= 1
        )
        helpers = tuple(c.id for c, _ in joined if c.id != leader.id)
    bonus, used = stunt_bonus(leader, lead_skill, action_type, stunts)
    roll = Roll(
        skill=lead_skill,
        skill_rating=leader.skills.get(lead_skill, 0),
        stunt_bonus=bonus,
        teamwork_bonus=teamwork,
        dice=faces,
    )
    if used:
        roll = roll.model_copy(update={"stunts": used})
    return Side(leader=leader.id, helpers=helpers, roll=roll, dangerous=dangerous)


def any_invited(participants: Sequence[Participant]) -> bool:
    """R10.1: whether a named helper has not answered yet."""
    # A loop, not any() over a generator: every declaration asks, mostly of one.
    for p in participants:  # noqa: SIM110
        if p.status == "invited":
            return True
    return False


def proceed(draft: Draft, action: Action, dice: DiceSource) -> None:
    """Past confirmation: a dangerous action opens the concession window (R9.3) before
    any dice; any other goes to the dice."""
    state, actor = _after_declared(action.actor, action.opposition, action.opposition_kind, dice)
    draft.put_action(action.model_copy(update={"state": state, "proposal": None, "actor": actor}))


def _after_declared(
    actor: Side, opposition: Side, opposition_kind: OppositionKind, dice: DiceSource
) -> tuple[ActionState, Side]:
    """Where a declared action nothing waits for goes (:func:`_state_after_declared`), and
    its acting side there: rolled when it goes to the invokes."""
    state = _state_after_declared(actor.dangerous or opposition.dangerous, opposition_kind)
    return state, rolled_side(actor, dice) if state == "invoking" else actor


def _state_after_declared(dangerous: bool, opposition_kind: OppositionKind) -> ActionState:
    """Where a declared action nothing waits for goes: a dangerous one to the concession
    window before any dice (R9.3); with active opposition to the opposer's roll, which
    comes first (R2.2); any other to the actor's roll and the invokes."""
    if dangerous:
        return "declared"
    if opposition_kind == "active":
        return "awaiting_opposition"
    return "invoking"


def _to_dice(
    actor: Side, opposition_kind: OppositionKind, dice: DiceSource
) -> tuple[ActionState, Side]:
    """R2.2: active opposition rolls first, so wait for the opposer's skill; else the
    actor rolls and both sides may invoke."""
    if opposition_kind == "active":
        return "awaiting_opposition", actor
    return "invoking", rolled_side(actor, dice)


def rolled_side(side: Side, dice: DiceSource) -> Side:
    return side.model_copy(update={"roll": side.roll.model_copy(update={"dice": dice.roll()})})


def name_participants(
    draft: Draft,
    actor: Character,
    skill: str,
    helpers: Sequence[Helper],
    principal: Principal | None,
) -> tuple[Participant, ...]:
    """R10.1: the declared actor, then every helper named. A helper another user owns waits
    for its owner (or the GM) to accept (Decision); one the acting user owns joins at once.
    With no ``principal`` (a look ahead, as for odds) every helper counts as joined.

    Raises ``RuleViolation`` for an unknown, repeated or overwhelmed helper."""
    participants: list[Participant] = [Participant(character_id=actor.id, skill=skill)]
    for index, helper in enumerate(helpers):
        if any(p.character_id == helper.character_id for p in participants):
            raise refused("invalid", "on_action_once", f"helpers.{index}")
        helping = find_character(draft, helper.character_id, f"helpers.{index}")
        require_active(helping, "help", f"helpers.{index}")
        joins = principal is None or principal.is_gm or principal.user_id in helping.owners
        participants.append(
            Participant(
                character_id=helping.id,
                skill=helper.skill or skill,
                status="joined" if joins else "invited",
            )
        )
    return tuple(participants)


def odds_before_roll(
    state: WorldState,
    actor_id: str,
    skill: str,
    action_type: str,
    helpers: Sequence[Helper],
    opposition_total: int,
    ruleset: Ruleset,
    stunts: tuple[str, ...] | None = None,
) -> tuple[int, OutcomeOdds]:
    """The modifier the actor's roll would have (skill, stunts, teamwork: what ``declare``
    gives it) and the exact odds of each outcome against ``opposition_total``. Changes nothing."""
    draft = Draft(state, "odds")
    actor = find_character(draft, actor_id, "actor_id")
    if stunts:
        check_stunts(actor, skill, action_type, stunts, "stunts")
    participants = name_participants(draft, actor, skill, helpers, None)
    named = named_stunts(stunts, ruleset)
    lead = compose_actor_side(draft, participants, action_type, stunts=named).roll
    return lead.total, roll_odds(lead.total, opposition_total, ruleset)


def _attack_kind(draft: Draft, command: StartAction, actor: Character) -> HarmKind | None:
    """R11.3 Decision: an attack in a conflict is of the conflict's kind (the GM set it);
    outside one, the kind asked for, physical when none is. Only attacks have a kind."""
    if command.type != "attack":
        if command.attack_kind is not None:
            raise refused("invalid", "harm_kind_attack_only", "attack_kind")
        return None
    conflict = next(
        (c for c in draft.conflicts.values() if c.state == "open" and actor.id in c.order),
        None,
    )
    if conflict is None:
        return command.attack_kind or "physical"
    if command.attack_kind not in (None, conflict.kind):
        raise refused(
            "invalid", f"conflict_kind_{conflict.kind}", "attack_kind", conflict=conflict.name
        )
    return conflict.kind


def named_stunts(named: tuple[str, ...] | None, ruleset: Ruleset) -> tuple[str, ...] | None:
    """R13.8: the stunts a roll counts: those it names; naming none, none under the SRD
    rulesets, every matching one (None) under Unwritten."""
    if named is not None:
        return named
    return () if ruleset.stunts_chosen else None


def _leader(participants: Sequence[tuple[Character, str]]) -> tuple[Character, str]:
    """R10.1: highest skill leads; on a tie the declaring actor keeps the lead."""
    best = participants[0]
    if len(participants) == 1:
        return best
    for candidate in participants[1:]:
        if candidate[0].skills.get(candidate[1], 0) > best[0].skills.get(best[1], 0):
            best = candidate
    return best


def advance_to_dice(draft: Draft, action: Action, dice: DiceSource) -> None:
    """R2.2: active opposition rolls first, so wait for the opposer's skill; else roll."""
    state, actor = _to_dice(action.actor, action.opposition_kind, dice)
    draft.put_action(action.model_copy(update={"state": state, "actor": actor}))
