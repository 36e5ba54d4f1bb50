"""Whose turn it is in a conflict, and what a conflict's end settles (R11.3, R13.4-R13.7).

Kept apart from :mod:`bridge.rules.conflict` (the GM's and players' conflict intents):
declaring an action asks whose turn it is, and taking a character out ends its
conflict at once, so the action rules and the consequence rules call these, and
these call nothing of theirs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bridge.rules.draft import Draft
from bridge.rules.errors import refused
from bridge.rules.state import Character, Conflict, StressTrack

if TYPE_CHECKING:
    from bridge.rules.actions.commands import Principal


def conflict_of(draft: Draft, character_id: str) -> Conflict | None:
    """The open conflict ``character_id`` takes part in, if any."""
    for conflict in draft.conflicts.values():
        if conflict.state == "open" and character_id in conflict.order:
            return conflict
    return None


def require_turn(draft: Draft, actor: Character, principal: Principal) -> None:
    """R13.5 Decision: in an open conflict a character acts only on its turn; the GM may
    act out of turn for anyone. (Defending is a reaction: it never comes here.)"""
    if principal.is_gm or not draft.conflicts:
        return
    conflict = conflict_of(draft, actor.id)
    if conflict is None or conflict.current == actor.id:
        return
    current = draft.characters.get(conflict.current or "")
    if current is None:
        raise refused("not_your_turn", "own_turn", "actor_id", name=actor.name)
    raise refused(
        "not_your_turn",
        "acts_on_own_turn",
        "actor_id",
        current=current.name,
        conflict=conflict.name,
        name=actor.name,
    )


def in_full_defense(draft: Draft, character_id: str) -> bool:
    """R13.7: whether the character took full defense and its next turn has not come."""
    conflict = conflict_of(draft, character_id)
    return conflict is not None and character_id in conflict.full_defense


def standing_sides(draft: Draft, conflict: Conflict) -> list[str]:
    """The ids of the sides that still have a character in the conflict."""
    return [
        side.id
        for side in conflict.sides
        if any(
            (c := draft.characters.get(m)) is not None and not c.overwhelmed for m in side.members
        )
    ]


def close(draft: Draft, conflict: Conflict, winner: str | None) -> Conflict:
    """End ``conflict``: R13.6 pays each player character that conceded one fate point
    plus one per consequence it took in this conflict; R13.4 clears every member's
    stress when the ruleset clears it after the conflict (Fate Core)."""
    for conceder in conflict.conceded:
        character = draft.characters.get(conceder)
        if character is None or character.is_npc:
            continue  # R4.5: the GM's NPCs receive nothing
        points = 1 + conflict.consequences_taken.get(conceder, 0)
        draft.put_character(
            character.model_copy(update={"fate_points": character.fate_points + points})
        )
    if conflict.clears_stress:
        for member in conflict.order:
            character = draft.characters.get(member)
            if character is not None and any(t.marked for t in character.stress):
                draft.put_character(
                    character.model_copy(update={"stress": clear_stress(character.stress)})
                )
    ended = conflict.model_copy(update={"state": "ended", "winner": winner, "full_defense": ()})
    draft.put_conflict(ended)
    return ended


def clear_stress(tracks: tuple[StressTrack, ...]) -> tuple[StressTrack, ...]:
    """Every box free again (R13.4)."""
    return tuple(
        track.model_copy(
            update={"boxes": tuple(b.model_copy(update={"marked": False}) for b in track.boxes)}
        )
        if track.marked
        else track
        for track in tracks
    )


def end_if_decided(draft: Draft, character_id: str) -> None:
    """R13.6: the moment only one side has characters in it, the conflict
    ``character_id`` was in ends (called when a character is taken out or concedes)."""
    conflict = conflict_of(draft, character_id)
    if conflict is None:
        return
    standing = standing_sides(draft, conflict)
    if len(standing) <= 1:
        close(draft, conflict, standing[0] if standing else None)


def note_consequence(draft: Draft, character_id: str) -> None:
    """R13.6: count a consequence the character took while in an open conflict."""
    conflict = conflict_of(draft, character_id)
    if conflict is None:
        return
    taken = dict(conflict.consequences_taken)
    taken[character_id] = taken.get(character_id, 0) + 1
    draft.put_conflict(conflict.model_copy(update={"consequences_taken": taken}))
