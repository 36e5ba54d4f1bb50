"""What every kind of card shows alike: ladder values, characters, dice, aspects."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from bridge.rules.ruleset import Ruleset
from bridge.rules.state import (
    GM,
    Aspect,
    WorldState,
)
from bridge.service.protocol import (
    CardAspect,
    CardCharacter,
    DiceList,
    Rated,
)
from bridge.service.protocol.base import DiceRoll
from bridge.service.view_index import ByIdentity, aspect_index

GM_NAME = "GM"


# One view of a value serves every card showing it: the few ladder values of a table are
# built once, not on every card.
@lru_cache(maxsize=4096)
def _rated(value: int) -> Rated:
    return {"value": value}


def rated(value: int, ruleset: Ruleset) -> Rated:
    """A ladder value (R1.3); the reader names it in its own language."""
    return _rated(value)


@lru_cache(maxsize=8192)
def named(character_id: str, name: str) -> CardCharacter:
    return {"id": character_id, "name": name}


def who(state: WorldState, character_id: str | None) -> CardCharacter | None:
    if character_id is None:
        return None
    if character_id == GM:
        return named(GM, GM_NAME)
    character = state.characters.get(character_id)
    return named(character_id, character.name if character else character_id)


def dice_list(faces: DiceRoll | None) -> DiceList | None:
    return list(faces) if faces is not None else None


# Views of aspects already built, by the (immutable) Aspect, its place's name and its
# count: states share every record an event did not replace, so a card listing a scene's
# aspects builds only the new ones.
_ASPECT_VIEWS: ByIdentity[Aspect, tuple[CardCharacter | None, int, CardAspect]] = ByIdentity(50_000)


def aspect_view(state: WorldState, aspect: Aspect, count: int = 1) -> CardAspect:
    """An aspect as a card or the scene panel lists it."""
    attached = who(state, aspect.attached_to)
    known = _ASPECT_VIEWS.get(aspect)
    if known is not None and (known[0] is attached or known[0] == attached) and known[1] == count:
        return known[2]
    view: CardAspect = {
        "id": aspect.id,
        "name": aspect.name,
        "kind": aspect.kind,
        "attached_to": attached,
        "free_invokes": dict(aspect.free_invokes),
        "count": count,
    }
    _ASPECT_VIEWS.put(aspect, (attached, count, view))
    return view


def aspect_entries(state: WorldState, shown: Callable[[Aspect], bool]) -> list[CardAspect]:
    """The state's aspects that ``shown`` keeps, in card order, alike boosts as one
    entry with their count."""
    return [
        aspect_view(state, e.aspect, e.count)
        for e in aspect_index(state.aspects).entries()
        if shown(e.aspect)
    ]


def owners_of(state: WorldState, members: tuple[str, ...]) -> list[str]:
    users: list[str] = []
    for member in members:
        character = state.characters.get(member)
        for owner in character.owners if character else ():
            if owner not in users:
                users.append(owner)
    return users
