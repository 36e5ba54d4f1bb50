"""Conflicts (R11.3, R13.5-R13.7): zones, turn order, exchanges, one side left."""

from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from bridge.rules.actions import Principal, may_control
from bridge.rules.draft import Draft
from bridge.rules.errors import refused
from bridge.rules.events import Event
from bridge.rules.ruleset import Ruleset
from bridge.rules.state import Character, Conflict, ConflictSide, WorldState, Zone
from bridge.rules.turns import close, conflict_of, end_if_decided, standing_sides


@dataclass(frozen=True)
class ConflictSideSpec:
    name: str
    members: tuple[str, ...]


def turn_order(
    characters: Sequence[Character],
    skill: str,
    *,
    group_npcs: bool,
    tie_break: Sequence[str] = (),
    tie_skills: Sequence[str] = (),
) -> tuple[tuple[str, ...], dict[str, int], tuple[tuple[str, ...], ...]]:
    """R11.3: highest first; R13.5: ties broken by ``tie_skills`` in turn (Fate Core:
    Athletics then Physique, or Rapport then Will), then by the GM's ``tie_break``
    order, then by name.

    With ``group_npcs`` every NPC acts at its best NPC's place, together. Returns
    the order, each character's effective rating, and the groups still tied.
    """
    rating = {c.id: c.skills.get(skill, 0) for c in characters}
    by_id = {c.id: c for c in characters}

    def tie_values(head: str) -> tuple[int, ...]:
        return tuple(-by_id[head].skills.get(s, 0) for s in tie_skills)

    preference = {cid: n for n, cid in enumerate(tie_break)}
    npcs = [c for c in characters if c.is_npc] if group_npcs else []
    entries: list[tuple[int, str, tuple[str, ...]]] = []
    for c in characters:
        if c not in npcs:
            entries.append((rating[c.id], c.id, (c.id,)))
    if npcs:
        block = tuple(c.id for c in sorted(npcs, key=lambda c: (-rating[c.id], c.name, c.id)))
        best = max(rating[c] for c in block)
        entries.append((best, block[0], block))
        for member in block:
            rating[member] = best

    def key(
        entry: tuple[int, str, tuple[str, ...]],
    ) -> tuple[int, tuple[int, ...], int, str]:
        value, head, _ = entry
        return (
            -value,
            tie_values(head),
            preference.get(head, len(preference)),
            by_id[head].name,
        )

    entries.sort(key=key)
    order = tuple(member for _, _, block in entries for member in block)
    ties: list[tuple[str, ...]] = []
    groups = sorted({(e[0], tie_values(e[1])) for e in entries}, key=lambda g: (-g[0], g[1]))
    for value, tied in groups:
        heads = [e[1] for e in entries if e[0] == value and tie_values(e[1]) == tied]
        if len(heads) > 1 and not all(h in preference for h in heads):
            ties.append(tuple(heads))
    return order, rating, tuple(ties)


def start_conflict(
    state: WorldState,
    name: str,
    kind: Literal["physical", "mental"],
    sides: Sequence[ConflictSideSpec],
    principal: Principal,
    ruleset: Ruleset,
    *,
    zones: Sequence[Zone] = (),
    positions: dict[str, str] | None = None,
    order_skill: str | None = None,
    group_npcs: bool = False,
    tie_break: Sequence[str] = (),
    first_id: str | None = None,
) -> list[Event]:
    """R11.3, R13.5: the GM starts a conflict; its order is ranked by the ruleset's skill
    for its kind (``order_skill`` overrides it), or elective (Fate Condensed), opened by
    ``first_id`` (default: the first member of the first side)."""
    if not principal.is_gm:
        raise refused("forbidden", "gm_only")
    if not ruleset.conflicts:
        raise refused("not_in_ruleset", "no_conflicts", "kind", ruleset=ruleset.title)
    if len(sides) < 2:
        raise refused("invalid", "two_sides_needed", "sides")
    draft = Draft(state, "conflict.start")
    members: list[Character] = []
    for index, spec in enumerate(sides):
        for member in spec.members:
            character = draft.characters.get(member)
            if character is None:
                raise refused("unknown_actor", "unknown_actor_sync", f"sides.{index}", id=member)
            if character in members:
                raise refused("invalid", "one_side_only", f"sides.{index}")
            members.append(character)
    zone_names = _zone_names(zones)
    placed = _placed(positions or {}, zone_names, {m.id for m in members})
    for joining in members:
        if conflict_of(draft, joining.id) is not None:
            raise refused("invalid", "already_in_conflict", "sides", name=joining.name)
    elective = ruleset.turn_order == "elective" and order_skill is None
    turn = 0
    if elective:
        # R13.5 (Condensed): no ratings; whoever opens, then whoever acted picks.
        order = tuple(m.id for m in members)
        ratings: dict[str, int] = {}
        ties: tuple[tuple[str, ...], ...] = ()
        skill = ""
        if first_id is not None:
            if first_id not in order:
                raise refused("invalid", "opener_in_conflict", "first_id")
            turn = order.index(first_id)
    else:
        if first_id is not None:
            raise refused("invalid", "order_by_rating_open", "first_id")
        skill = order_skill or ruleset.turn_order_skills[kind]
        order, ratings, ties = turn_order(
            members,
            skill,
            group_npcs=group_npcs,
            tie_break=tie_break,
            tie_skills=() if order_skill else ruleset.turn_tie_skills.get(kind, ()),
        )
    conflict = Conflict(
        id=draft.new_id("conflict"),
        name=name,
        kind=kind,
        order_skill=skill,
        zones=tuple(zones),
        positions=placed,
        sides=tuple(
            ConflictSide(id=f"s{n + 1}", name=s.name, members=s.members)
            for n, s in enumerate(sides)
        ),
        order=order,
        ratings=ratings,
        ties=ties,
        turn=turn,
        order_method="elective" if elective else "",
        clears_stress=ruleset.stress_clears == "conflict",
    )
    draft.put_conflict(conflict)
    return draft.events()


def _zone_names(zones: Sequence[Zone]) -> set[str]:
    """The names of a conflict's map (R11.3), once each name is unique and every zone's
    ``adjacent`` names a zone of the same map; RuleViolation "invalid" on "zones" otherwise."""
    names: set[str] = set()
    for zone in zones:
        if zone.name in names:
            raise refused("invalid", "zone_twice", "zones", zone=zone.name)
        names.add(zone.name)
    for zone in zones:
        unknown = sorted(set(zone.adjacent) - names)
        if unknown:
            raise refused(
                "invalid",
                "unknown_adjacent_zones",
                "zones",
                zone=zone.name,
                zones=", ".join(unknown),
            )
    return names


def _placed(
    positions: Mapping[str, str], zone_names: set[str], members: Collection[str]
) -> dict[str, str]:
    """``positions`` as a new dict, once each names a member of the conflict and a zone of
    its map; RuleViolation "invalid" on "positions" otherwise."""
    for who, where in positions.items():
        if where not in zone_names or who not in members:
            raise refused("invalid", "cannot_place", "positions", who=who, zone=where)
    return dict(positions)


def _conflict(draft: Draft, conflict_id: str) -> Conflict:
    conflict = draft.conflicts.get(conflict_id)
    if conflict is None:
        raise refused("not_found", "no_conflict_id", "conflict_id", id=conflict_id)
    if conflict.state != "open":
        raise refused("wrong_state", "over", "conflict_id", name=conflict.name)
    return conflict


def reorder(
    state: WorldState, conflict_id: str, order: Sequence[str], principal: Principal
) -> list[Event]:
    """R11.3: the GM breaks ties; the order must still run from highest to lowest."""
    if not principal.is_gm:
        raise refused("forbidden", "gm_only")
    draft = Draft(state, "conflict.order")
    conflict = _conflict(draft, conflict_id)
    if sorted(order) != sorted(conflict.order):
        raise refused("invalid", "order_every_once", "order")
    values = [conflict.ratings[c] for c in order]
    if any(a < b for a, b in itertools.pairwise(values)):
        raise refused("invalid", "only_ties_reordered", "order")
    draft.put_conflict(conflict.model_copy(update={"order": tuple(order), "ties": ()}))
    return draft.events()


def _active(draft: Draft, character_id: str) -> bool:
    return not draft.character(character_id).overwhelmed


def next_turn(
    state: WorldState,
    conflict_id: str,
    principal: Principal,
    next_id: str | None = None,
) -> list[Event]:
    """Hand the turn on. Ranked (R11.3): to the next in order still in, a new exchange
    wrapping around. Elective (R13.5): to ``next_id``, picked by whoever acted (the GM for
    an NPC) among those who have not acted this exchange; once all have, whoever acted
    last picks who opens the next. R13.7: full defense ends when its taker's turn comes.
    The conflict ends when only one side still has characters in it."""
    draft = Draft(state, "conflict.next")
    conflict = _conflict(draft, conflict_id)
    current = draft.character(conflict.order[conflict.turn])
    if not (principal.is_gm or may_control(principal, current)):
        raise refused("forbidden", "turn_of", "conflict_id", name=current.name)
    standing = standing_sides(draft, conflict)
    if len(standing) <= 1:
        close(draft, conflict, standing[0] if standing else None)
        return draft.events()
    if conflict.order_method == "elective":
        conflict = _elective_next(draft, conflict, current, next_id)
    else:
        if next_id is not None:
            raise refused("invalid", "order_by_rating_next", "next_id")
        turn, exchange = conflict.turn, conflict.exchange
        for _ in range(len(conflict.order)):
            turn += 1
            if turn >= len(conflict.order):
                turn, exchange = 0, exchange + 1
            if _active(draft, conflict.order[turn]):
                break
        conflict = conflict.model_copy(update={"turn": turn, "exchange": exchange})
    upcoming = conflict.order[conflict.turn]
    if upcoming in conflict.full_defense:
        defending = tuple(c for c in conflict.full_defense if c != upcoming)
        conflict = conflict.model_copy(update={"full_defense": defending})
    draft.put_conflict(conflict)
    return draft.events()


def _elective_next(
    draft: Draft, conflict: Conflict, current: Character, next_id: str | None
) -> Conflict:
    acted = conflict.acted if current.id in conflict.acted else (*conflict.acted, current.id)
    still_in = [c for c in conflict.order if _active(draft, c)]
    waiting = [c for c in still_in if c not in acted]
    exchange = conflict.exchange
    if not waiting:
        acted, waiting, exchange = (), still_in, exchange + 1
    if next_id is None:
        names = ", ".join(draft.character(c).name for c in waiting)
        raise refused("invalid", "pick_next_of", "next_id", names=names)
    if next_id not in waiting and next_id in still_in:
        raise refused("invalid", "pick_waiting", "next_id")
    if next_id not in waiting:
        raise refused("invalid", "pick_still_in", "next_id")
    return conflict.model_copy(
        update={"turn": conflict.order.index(next_id), "acted": acted, "exchange": exchange}
    )


def full_defense(
    state: WorldState,
    conflict_id: str,
    character_id: str,
    principal: Principal,
    ruleset: Ruleset,
) -> list[Event]:
    """R13.7: on its turn, instead of acting, a character takes +2 on every defend roll
    until its next turn (Fate Core; Fate Condensed when the world turned it on)."""
    draft = Draft(state, "conflict.full_defense")
    if not (
        ruleset.full_defense == "always"
        or (ruleset.full_defense == "option" and state.settings.full_defense)
    ):
        if ruleset.full_defense == "option":
            raise refused(
                "not_in_ruleset", "full_defense_option", "conflict_id", ruleset=ruleset.title
            )
        raise refused("not_in_ruleset", "no_full_defense", "conflict_id", ruleset=ruleset.title)
    conflict = _conflict(draft, conflict_id)
    character = _member(draft, conflict, character_id)
    if not may_control(principal, character):
        raise refused("forbidden", "act_for", "character_id", name=character.name)
    if conflict.current != character_id and not principal.is_gm:
        raise refused("not_your_turn", "full_defense_own_turn", "character_id", name=character.name)
    if character_id in conflict.full_defense:
        raise refused("invalid", "already_full_defense", "character_id", name=character.name)
    draft.put_conflict(
        conflict.model_copy(update={"full_defense": (*conflict.full_defense, character_id)})
    )
    return draft.events()


def concede(
    state: WorldState, conflict_id: str, character_id: str, principal: Principal
) -> list[Event]:
    """R13.6: the character's owner (or the GM) concedes before a roll it is part of (its
    own, or one against it): it is out of the conflict at once, and when the conflict ends
    it gets one fate point plus one per consequence it took in it. The conflict ends at
    once if only one side is left."""
    draft = Draft(state, "conflict.concede")
    conflict = _conflict(draft, conflict_id)
    character = _member(draft, conflict, character_id)
    if not may_control(principal, character):
        raise refused("forbidden", "concede_for", "character_id", name=character.name)
    if character.overwhelmed:
        raise refused("invalid", "already_out", "character_id", name=character.name)
    rolling = next(
        (
            a
            for a in draft.actions.values()
            if a.state in _ROLLED
            and (
                character_id in a.actor.members
                or character_id in (a.target_id, a.opposition.leader)
            )
        ),
        None,
    )
    if rolling is not None:
        raise refused("wrong_state", "concede_before_dice", "character_id", name=character.name)
    draft.put_conflict(conflict.model_copy(update={"conceded": (*conflict.conceded, character_id)}))
    draft.put_character(character.model_copy(update={"overwhelmed": True, "overwhelmed_by": None}))
    end_if_decided(draft, character_id)
    return draft.events()


# An action in these states has dice on the table (R13.6: concede before the roll).
_ROLLED = frozenset({"invoking", "choosing", "costing", "absorbing"})


def _member(draft: Draft, conflict: Conflict, character_id: str) -> Character:
    character = draft.characters.get(character_id)
    if character is None or character_id not in conflict.order:
        raise refused("invalid", "not_in_this_conflict", "character_id")
    return character


def move(
    state: WorldState,
    conflict_id: str,
    character_id: str,
    zone: str,
    principal: Principal,
    *,
    force: bool = False,
) -> list[Event]:
    """R11.3: one zone is free; two or more (or past an obstacle) takes an overcome."""
    draft = Draft(state, "conflict.move")
    conflict = _conflict(draft, conflict_id)
    character = draft.characters.get(character_id)
    if character is None or character_id not in conflict.order:
        raise refused("invalid", "not_in_this_conflict", "character_id")
    if not may_control(principal, character):
        raise refused("forbidden", "move_for", "character_id", name=character.name)
    zones = {z.name: z for z in conflict.zones}
    if zone not in zones:
        raise refused("invalid", "no_zone", "zone", zone=zone)
    here = conflict.positions.get(character_id)
    free = (
        here is None or here == zone or zone in zones[here].adjacent or here in zones[zone].adjacent
    )
    if not free and not (force and principal.is_gm):
        raise refused(
            "needs_overcome",
            "zone_needs_overcome",
            "zone",
            name=character.name,
            zone=zone,
            here=here or "",
        )
    draft.put_conflict(
        conflict.model_copy(update={"positions": {**conflict.positions, character_id: zone}})
    )
    return draft.events()


def redraw_zones(
    state: WorldState,
    conflict_id: str,
    zones: Sequence[Zone],
    positions: Mapping[str, str],
    principal: Principal,
) -> list[Event]:
    """R11.3: the GM redraws an open conflict's map mid-conflict (adds, renames or removes
    zones). The new map replaces the old one whole; its zone names are unique and every
    ``adjacent`` names one of them. ``positions`` places members of the conflict in zones
    of the new map, over where they were. A character left in a zone the new map drops
    must be placed anew, or nothing changes; everyone else keeps their zone. An empty map
    clears every position (a conflict without zones)."""
    if not principal.is_gm:
        raise refused("forbidden", "gm_only")
    draft = Draft(state, "conflict.zones")
    conflict = _conflict(draft, conflict_id)
    names = _zone_names(zones)
    placed = _placed(positions, names, conflict.order)
    kept: dict[str, str] = {}
    if names:
        for who, where in conflict.positions.items():
            if where in names:
                kept[who] = where
            elif who not in placed:
                character = draft.characters.get(who)
                raise refused(
                    "invalid",
                    "zone_dropped",
                    "positions",
                    name=character.name if character else who,
                    zone=where,
                )
    draft.put_conflict(
        conflict.model_copy(update={"zones": tuple(zones), "positions": {**kept, **placed}})
    )
    return draft.events()


def end_conflict(state: WorldState, conflict_id: str, principal: Principal) -> list[Event]:
    """The GM ends a conflict: the side still standing wins when only one is left."""
    if not principal.is_gm:
        raise refused("forbidden", "gm_only")
    draft = Draft(state, "conflict.end")
    conflict = _conflict(draft, conflict_id)
    standing = standing_sides(draft, conflict)
    close(draft, conflict, standing[0] if len(standing) == 1 else None)
    return draft.events()
