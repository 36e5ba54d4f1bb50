"""The choices, costs, gifts and absorptions that follow a roll (R5, R6, R5.10, R10.2)."""

from __future__ import annotations

from typing import Literal

from bridge.rules.actions.commands import (
    MILD,
    AbsorbCommand,
    CostCommand,
    Principal,
)
from bridge.rules.actions.common import (
    FAILURE,
    SUCCESS,
    add_effects,
    add_free_invokes,
    find_action,
    find_character,
    new_boost,
    place_situation_aspect,
    require_control,
    require_gm,
)
from bridge.rules.actions.resolution import finish, start_hit, succeed
from bridge.rules.consequences import place_consequence
from bridge.rules.draft import Draft
from bridge.rules.errors import refused
from bridge.rules.events import Event
from bridge.rules.ruleset import Ruleset
from bridge.rules.state import (
    GM,
    Character,
    Cost,
    Effect,
    HarmKind,
    StressRuleName,
    StressTrack,
    WorldState,
)

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
    action = find_action(draft, action_id, "choosing")
    leader = draft.character(action.actor.leader or "")
    pending = action.pending_choice
    allowed: dict[str | None, tuple[str, ...]] = {
        "fail_or_cost": ("fail", "succeed_at_cost"),
        "advantage_fumble": ("fail", "unintended_aspect", "succeed_at_cost"),
        "leave_mark": ("aspect", "mark"),
        "attack_style": ("full_hit", "boost"),
    }
    if choice not in allowed.get(pending, ()):
        raise refused(
            "invalid", "choose_one_of", "choice", options=", ".join(allowed.get(pending, ()))
        )
    if choice == "unintended_aspect":
        # R5.2: the actor (or the GM) chooses and describes it; the GM may rename it on
        # the scene panel. Nobody gains free invokes from it.
        require_control(principal, leader, "choice")
        if not aspect_name:
            raise refused("invalid", "name_unintended", "aspect_name")
        effect = place_situation_aspect(
            draft, aspect_name, attached_to=None, holder=None, free=0, action_id=action.id
        )
        finish(draft, add_effects(action, effect, FAILURE), succeeded=False)
        return draft.events()
    require_control(principal, leader, "choice")
    if choice == "fail":
        finish(draft, add_effects(action, FAILURE), succeeded=False)
    elif choice == "succeed_at_cost":
        draft.put_action(action.model_copy(update={"state": "costing", "pending_choice": None}))
    elif choice == "aspect":
        succeed(draft, action.model_copy(update={"pending_choice": None}))
    elif choice == "mark" and action.target_id not in draft.characters:
        raise refused("invalid", "nobody_to_mark", "choice")
    elif choice == "mark":
        # R5.4: one free invoke becomes a mild consequence; the other sits on it.
        target_id = action.target_id or ""
        name = consequence_name or action.aspect_name or "Marked"
        placement = place_consequence(
            draft, target_id, MILD, name, caused_by=leader.id, free_invokes={leader.id: 1}
        )
        finish(
            draft,
            add_effects(action, *placement.effects, SUCCESS),
            succeeded=True,
        )
    elif choice == "full_hit":
        start_hit(draft, action, action.shifts or 0)
    else:
        boost = new_boost(draft, leader.id, f"{leader.name}'s style", action.id)
        start_hit(draft, add_effects(action, boost), max((action.shifts or 0) - 1, 0))
    return draft.events()


def apply_cost(
    state: WorldState, command: CostCommand, principal: Principal, ruleset: Ruleset
) -> list[Event]:
    """R6: the GM picks the cost; mechanical ones are applied, narrative ones recorded.
    R6.3: on a combined-skills roll a character cost falls on every participant."""
    draft = Draft(state, "action.cost")
    require_gm(principal)
    action = find_action(draft, command.action_id, "costing")
    severity = action.cost_severity or "serious"
    options = ruleset.costs[severity]
    if command.kind not in options:
        raise refused("invalid", "cost_one_of", "kind", options=", ".join(options))
    effects: list[Effect] = []
    members = action.actor.members
    if command.kind == "npc_boost":
        npc = find_character(draft, command.target_id or "", "target_id")
        if not npc.is_npc:
            raise refused("invalid", "boost_to_npc", "target_id")
        effects.append(new_boost(draft, npc.id, command.aspect_name or "Opening", action.id))
    elif command.kind == "aspect_on_actor":
        if not command.aspect_name:
            raise refused("invalid", "name_aspect", "aspect_name")
        for member in members:
            effects.append(
                place_situation_aspect(
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
            raise refused("invalid", "name_consequence", "aspect_name")
        for member in members:
            placement = place_consequence(draft, member, MILD, command.aspect_name, caused_by=GM)
            effects.extend(placement.effects)
    elif command.kind == "opponent_advantage":
        if not command.aspect_name:
            raise refused("invalid", "name_advantage", "aspect_name")
        holder = command.target_id or action.opposition.leader or GM
        if holder != GM:
            find_character(draft, holder, "target_id")
        effects.append(
            place_situation_aspect(
                draft,
                command.aspect_name,
                attached_to=None,
                holder=holder,
                free=1,
                action_id=action.id,
            )
        )
    elif not command.text:
        raise refused("invalid", "describe_cost", "text")
    cost = Cost(
        severity=severity,
        kind=command.kind,
        text=command.text or command.aspect_name or "",
        target_id=command.target_id,
    )
    effects.append(Effect(kind="cost", text=cost.text, detail=f"{severity}.{cost.kind}"))
    action = add_effects(action, *effects).model_copy(update={"costs": (*action.costs, cost)})
    if any(e.kind == "overwhelmed" and e.character_id == action.actor.leader for e in effects):
        finish(draft, action, succeeded=True)
    else:
        succeed(draft, action, at_cost=True)
    return draft.events()


def gift_free_invoke(
    state: WorldState, action_id: str, aspect_id: str, holder: str, principal: Principal
) -> list[Event]:
    """R5.2, R5.3: on a fumbled advantage the GM may give a free invoke to someone else."""
    draft = Draft(state, "action.gift")
    require_gm(principal)
    action = find_action(draft, action_id, "choosing", "costing", "resolved")
    if action.type not in ("create_advantage", "take_advantage") or action.outcome != "fumble":
        raise refused("invalid", "gift_only_fumble", "action_id")
    if holder in action.actor.members:
        raise refused("invalid", "gift_someone_else", "holder")
    if any(e.kind == "free_invokes" and e.text == "gift" for e in action.effects):
        raise refused("invalid", "gift_already", "action_id")
    if holder != GM:
        find_character(draft, holder, "holder")
    if aspect_id not in draft.aspects:
        raise refused("not_found", "no_such_aspect", "aspect_id")
    effect = add_free_invokes(draft, aspect_id, holder, 1).model_copy(update={"text": "gift"})
    draft.put_action(add_effects(action, effect))
    return draft.events()


def absorb(state: WorldState, command: AbsorbCommand, principal: Principal) -> list[Event]:
    """R5.10, R13.2: mark boxes on stress tracks of the hit's kind and fill consequences
    that take that harm (R13.3); together they must absorb the whole hit. How many boxes
    one hit may mark is the attack's rule: "one_box" (Core, Accelerated) one box, the
    smallest free one worth the shifts the consequences leave; "ones" (Condensed) any
    number of one-shift boxes, a box worth more only alone; "" (records from before
    R13) any boxes, each absorbing its value.

    Whatever is refused changes nothing: tracks of another kind or of kind "other",
    boxes taken or missing, a slot taken or of the other harm, too little absorbed."""
    draft = Draft(state, "action.absorb")
    action = find_action(draft, command.action_id, "absorbing")
    target = draft.character(action.target_id or "")
    require_control(principal, target, "action_id")
    harm = action.attack_kind or "physical"
    rule = action.stress_rule
    tracks = {t.id: t for t in target.stress}
    marked: dict[str, StressTrack] = {}
    chosen: list[tuple[StressTrack, int]] = []
    for mark in command.stress:
        track = marked.get(mark.track_id) or tracks.get(mark.track_id)
        if track is None:
            raise refused(
                "invalid", "no_such_track", "stress", name=target.name, track=mark.track_id
            )
        if not track.absorbs(harm):
            raise refused("invalid", f"absorb_wrong_kind_{harm}", "stress", track=track.name)
        boxes = list(track.boxes)
        for index in sorted(set(mark.boxes)):
            if index < 0 or index >= len(boxes) or boxes[index].marked:
                raise refused("invalid", "box_not_free", "stress", track=track.name, n=index + 1)
            boxes[index] = boxes[index].model_copy(update={"marked": True})
            chosen.append((track, index))
        marked[track.id] = track.model_copy(update={"boxes": tuple(boxes)})
    slots = {s.id: s for s in target.consequences}
    from_consequences = 0
    for slot_id in command.consequences:
        slot = slots.get(slot_id)
        if slot is None or not slot.empty:
            raise refused("invalid", "slot_not_free", "consequences")
        if not slot.takes(harm):
            raise refused("invalid", f"mild_takes_only_{slot.harm}", "consequences")
        from_consequences += slot.severity
    _check_box_rule(target, harm, rule, chosen, action.pending_hit - from_consequences)
    from_boxes = sum(track.boxes[index].value for track, index in chosen)
    if rule in ("one_box", "ones") and len(chosen) == 1:
        # One box absorbs up to its value: no more than what is left of the hit.
        from_boxes = min(from_boxes, max(action.pending_hit - from_consequences, 0))
    absorbed = from_boxes + from_consequences
    if absorbed < action.pending_hit:
        raise refused(
            "invalid", "absorb_short", "consequences", hit=action.pending_hit, absorbed=absorbed
        )
    effects: list[Effect] = []
    for track_id, track in marked.items():
        boxes_here = [index for t, index in chosen if t.id == track_id]
        shifts = sum(tracks[track_id].boxes[i].value for i in boxes_here)
        if boxes_here:
            effects.append(
                Effect(
                    kind="stress",
                    character_id=target.id,
                    count=len(boxes_here),
                    text=track.name,
                    detail=str(shifts),
                )
            )
    stress = tuple(marked.get(t.id, t) for t in target.stress)
    draft.put_character(target.model_copy(update={"stress": stress}))
    for slot_id, name in command.consequences.items():
        slot = slots[slot_id]
        placement = place_consequence(
            draft, target.id, slot.severity, name, caused_by=None, slot_id=slot_id
        )
        effects.extend(placement.effects)
    finish(
        draft,
        add_effects(action, *effects).model_copy(update={"pending_hit": 0}),
        succeeded=True,
    )
    return draft.events()


def _check_box_rule(
    target: Character,
    harm: HarmKind,
    rule: StressRuleName,
    chosen: list[tuple[StressTrack, int]],
    left: int,
) -> None:
    """R13.2: the boxes ``chosen`` for one hit follow the attack's per-hit rule, given the
    ``left`` shifts the consequences chosen do not absorb."""
    if rule == "":
        return
    values = [track.boxes[index].value for track, index in chosen]
    if rule == "one_box" and len(values) > 1:
        raise refused("invalid", "one_box_per_hit", "stress")
    if rule == "ones" and len(values) > 1 and any(v > 1 for v in values):
        raise refused("invalid", "big_box_alone", "stress")
    if len(values) != 1 or (rule == "ones" and values[0] == 1):
        return
    track, index = chosen[0]
    value = values[0]
    if left <= 0:
        raise refused("invalid", "consequences_absorb_all", "stress")
    if value < left:
        raise refused(
            "invalid",
            "box_too_small",
            "stress",
            track=track.name,
            n=index + 1,
            value=value,
            left=left,
        )
    smaller = [
        (box.value, t, i)
        for t in target.stress
        if t.absorbs(harm)
        for i, box in enumerate(t.boxes)
        if not box.marked and left <= box.value < value
    ]
    if smaller:
        fit, fit_track, fit_index = min(smaller, key=lambda entry: entry[0])
        raise refused(
            "invalid",
            "smaller_box_fits",
            "stress",
            track=fit_track.name,
            n=fit_index + 1,
            fit=fit,
            left=left,
        )


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
        raise refused("not_found", "no_such_aspect", "aspect_id")
    giver = find_character(draft, from_id, "from_id")
    require_control(principal, giver, "from_id")
    find_character(draft, to_id, "to_id")
    held = aspect.free_invokes.get(from_id, 0)
    if count < 1 or held < count:
        raise refused(
            "no_free_invokes", "holds_only", "count", name=giver.name, n=held, aspect=aspect.name
        )
    invokes = dict(aspect.free_invokes)
    invokes[from_id] = held - count
    invokes[to_id] = invokes.get(to_id, 0) + count
    draft.put_aspect(
        aspect.model_copy(update={"free_invokes": {k: v for k, v in invokes.items() if v > 0}})
    )
    return draft.events()


def take_hint(state: WorldState, action_id: str, principal: Principal) -> list[Event]:
    """R5.5 Decision: the actor of an excelled discover takes the hint by asking; the GM
    is prompted on the card, and that discover no longer pays a point at scene end."""
    draft = Draft(state, "action.hint")
    action = find_action(draft, action_id, "resolved")
    if action.hint != "offered":
        if action.hint is None:
            raise refused("wrong_state", "no_hint_offered", "action_id")
        raise refused("wrong_state", "hint_taken", "action_id")
    leader = find_character(draft, action.actor.leader or "", "action_id")
    require_control(principal, leader, "action_id")
    scene = draft.scene
    open_hints = list(scene.hints_open)
    if leader.id in open_hints:
        open_hints.remove(leader.id)  # one entry per excelled discover
        draft.put_scene(scene.model_copy(update={"hints_open": tuple(open_hints)}))
    effects = tuple(
        e.model_copy(update={"detail": "asked"}) if e.kind == "hint" else e for e in action.effects
    )
    draft.put_action(action.model_copy(update={"hint": "asked", "effects": effects}))
    return draft.events()


def give_hint(state: WorldState, action_id: str, text: str, principal: Principal) -> list[Event]:
    """R5.5: the GM answers a hint the actor asked for; the card shows it."""
    draft = Draft(state, "action.hint_give")
    require_gm(principal)
    action = find_action(draft, action_id, "resolved")
    if action.hint != "asked":
        raise refused("wrong_state", "no_hint_asked", "action_id")
    if not text.strip():
        raise refused("invalid", "write_hint", "text")
    effects = tuple(
        e.model_copy(update={"detail": "given", "text": text}) if e.kind == "hint" else e
        for e in action.effects
    )
    draft.put_action(
        action.model_copy(update={"hint": "given", "hint_text": text, "effects": effects})
    )
    return draft.events()


def set_gm_budget(state: WorldState, fate_points: int) -> list[Event]:
    """R12.2: the GM's fate points for this scene (pays NPC invokes, R4.2)."""
    draft = Draft(state, "fate.gm_budget")
    draft.set_gm_fate_points(max(fate_points, 0))
    return draft.events()
