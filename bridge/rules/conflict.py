"""Conflicts (R11.3, Fate Condensed): zones, turn order, exchanges, one side left."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bridge.rules.actions import Principal, may_control
from bridge.rules.draft import Draft
from bridge.rules.errors import RuleViolation
from bridge.rules.events import Event
from bridge.rules.ruleset import Ruleset
from bridge.rules.state import Character, Conflict, ConflictSide, WorldState, Zone


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
) -> tuple[tuple[str, ...], dict[str, int], tuple[tuple[str, ...], ...]]:
    """R11.3: highest first; ties broken by the GM's ``tie_break`` order, then by name.

    With ``group_npcs`` every NPC acts at its best NPC's place, together. Returns
    the order, each character's effective rating, and the groups still tied.
    """
    rating = {c.id: c.skills.get(skill, 0) for c in characters}
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
    by_id = {c.id: c for c in characters}

    def key(entry: tuple[int, str, tuple[str, ...]]) -> tuple[int, int, str]:
        value, head, _ = entry
        return (-value, preference.get(head, len(preference)), by_id[head].name)

    entries.sort(key=key)
    order = tuple(member for _, _, block in entries for member in block)
    ties: list[tuple[str, ...]] = []
    values = sorted({e[0] for e in entries}, reverse=True)
    for value in values:
        heads = [e[1] for e in entries if e[0] == value]
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
) -> list[Event]:
    if not principal.is_gm:
        raise RuleViolation("forbidden", "Only the GM may start a conflict.")
    if not ruleset.conflicts:
        raise RuleViolation(
            "not_in_ruleset", f"{ruleset.title} resolves harm without conflicts.", "kind"
        )
    if len(sides) < 2:
        raise RuleViolation("invalid", "A conflict needs at least two sides.", "sides")
    draft = Draft(state, "conflict.start")
    members: list[Character] = []
    for index, spec in enumerate(sides):
        for member in spec.members:
            character = draft.characters.get(member)
            if character is None:
                raise RuleViolation(
                    "unknown_actor",
                    f"The bridge does not know actor {member!r}.",
                    f"sides.{index}",
                )
            if character in members:
                raise RuleViolation(
                    "invalid", "A character can only be on one side.", f"sides.{index}"
                )
            members.append(character)
    zone_names = {z.name for z in zones}
    for zone in zones:
        unknown = set(zone.adjacent) - zone_names
        if unknown:
            raise RuleViolation("invalid", f"Unknown zones next to {zone.name!r}.", "zones")
    placed = dict(positions or {})
    for who, where in placed.items():
        if where not in zone_names or who not in {m.id for m in members}:
            raise RuleViolation("invalid", f"Can't place {who!r} in {where!r}.", "positions")
    skill = order_skill or ruleset.turn_order_skills[kind]
    order, ratings, ties = turn_order(members, skill, group_npcs=group_npcs, tie_break=tie_break)
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
    )
    draft.put_conflict(conflict)
    return draft.events()


def _conflict(draft: Draft, conflict_id: str) -> Conflict:
    conflict = draft.conflicts.get(conflict_id)
    if conflict is None:
        raise RuleViolation("not_found", f"There is no conflict {conflict_id!r}.", "conflict_id")
    if conflict.state != "open":
        raise RuleViolation("wrong_state", f"{conflict.name} is over.", "conflict_id")
    return conflict


def reorder(
    state: WorldState, conflict_id: str, order: Sequence[str], principal: Principal
) -> list[Event]:
    """R11.3: the GM breaks ties; the order must still run from highest to lowest."""
    if not principal.is_gm:
        raise RuleViolation("forbidden", "Only the GM breaks ties.")
    draft = Draft(state, "conflict.order")
    conflict = _conflict(draft, conflict_id)
    if sorted(order) != sorted(conflict.order):
        raise RuleViolation("invalid", "The order must list every participant once.", "order")
    values = [conflict.ratings[c] for c in order]
    if any(a < b for a, b in itertools.pairwise(values)):
        raise RuleViolation(
            "invalid", "Only ties may be reordered: higher ratings go first.", "order"
        )
    draft.put_conflict(conflict.model_copy(update={"order": tuple(order), "ties": ()}))
    return draft.events()


def _active(draft: Draft, character_id: str) -> bool:
    return not draft.character(character_id).overwhelmed


def _ended(draft: Draft, conflict: Conflict) -> Conflict:
    standing = [s for s in conflict.sides if any(_active(draft, m) for m in s.members)]
    if len(standing) <= 1:
        return conflict.model_copy(
            update={"state": "ended", "winner": standing[0].id if standing else None}
        )
    return conflict


def next_turn(state: WorldState, conflict_id: str, principal: Principal) -> list[Event]:
    """Hand the turn on, skipping anyone out of the conflict; a new exchange wraps around.
    The conflict ends when only one side still has characters in it."""
    draft = Draft(state, "conflict.next")
    conflict = _conflict(draft, conflict_id)
    current = draft.character(conflict.order[conflict.turn])
    if not (principal.is_gm or may_control(principal, current)):
        raise RuleViolation("forbidden", f"It is {current.name}'s turn.", "conflict_id")
    conflict = _ended(draft, conflict)
    if conflict.state == "open":
        turn, exchange = conflict.turn, conflict.exchange
        for _ in range(len(conflict.order)):
            turn += 1
            if turn >= len(conflict.order):
                turn, exchange = 0, exchange + 1
            if _active(draft, conflict.order[turn]):
                break
        conflict = conflict.model_copy(update={"turn": turn, "exchange": exchange})
    draft.put_conflict(conflict)
    return draft.events()


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
        raise RuleViolation("invalid", "That character is not in this conflict.", "character_id")
    if not may_control(principal, character):
        raise RuleViolation("forbidden", f"You may not move {character.name}.", "character_id")
    zones = {z.name: z for z in conflict.zones}
    if zone not in zones:
        raise RuleViolation("invalid", f"There is no zone {zone!r}.", "zone")
    here = conflict.positions.get(character_id)
    free = (
        here is None or here == zone or zone in zones[here].adjacent or here in zones[zone].adjacent
    )
    if not free and not (force and principal.is_gm):
        raise RuleViolation(
            "needs_overcome",
            f"{character.name} can't reach {zone!r} for free from {here!r}: that takes an "
            "overcome (the GM may move them after it).",
            "zone",
        )
    draft.put_conflict(
        conflict.model_copy(update={"positions": {**conflict.positions, character_id: zone}})
    )
    return draft.events()


def end_conflict(state: WorldState, conflict_id: str, principal: Principal) -> list[Event]:
    if not principal.is_gm:
        raise RuleViolation("forbidden", "Only the GM may end a conflict.")
    draft = Draft(state, "conflict.end")
    conflict = _conflict(draft, conflict_id)
    ended = _ended(draft, conflict)
    draft.put_conflict(
        ended if ended.state == "ended" else ended.model_copy(update={"state": "ended"})
    )
    return draft.events()
