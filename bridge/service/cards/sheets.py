"""What a character's sheet and token show, and the world as pickers read it."""

from __future__ import annotations

from typing import cast

from bridge.rules.consequences import SEVERITY_NAMES
from bridge.rules.state import (
    Character,
    WorldState,
)
from bridge.service.cards.common import aspect_entries
from bridge.service.protocol import (
    ActorPatch,
    SlotState,
    StressTrackView,
    TokenStatus,
    TokenStatusName,
    WorldStateData,
)
from bridge.service.view_index import aspect_index, open_actions


def _slots(character: Character, state: WorldState) -> list[SlotState]:
    """The character's consequence slots."""
    return [
        {
            "id": s.id,
            "severity": s.severity,
            "name": aspect.name if (aspect := state.aspects.get(s.aspect_id or "")) else None,
            "status": s.status,
            "harm": s.harm,
        }
        for s in character.consequences
    ]


def stress_views(character: Character) -> list[StressTrackView]:
    """The character's stress tracks, boxes and values as the module shows them (R5.10)."""
    return [
        {
            "id": t.id,
            "name": t.name,
            "kind": t.kind,
            "boxes": [{"value": b.value, "marked": b.marked} for b in t.boxes],
        }
        for t in character.stress
    ]


def world_summary(state: WorldState) -> WorldStateData:
    """Everything pickers need: characters, every aspect with its free invokes."""
    return {
        "ruleset": state.ruleset,
        "characters": [
            {
                "id": c.id,
                "name": c.name,
                "owners": list(c.owners),
                "skills": dict(c.skills),
                "fate_points": c.fate_points,
                "pending_fate_points": c.pending_fate_points,
                "overwhelmed": c.overwhelmed,
                "consequences": _slots(c, state),
                "stress": stress_views(c),
            }
            for c in sorted(state.characters.values(), key=lambda c: c.name)
        ],
        "aspects": aspect_entries(state, lambda _a: True),
        "gm_fate_points": state.gm_fate_points,
        "open_actions": open_actions(state.actions).ids(),
    }


def actor_patch(character: Character, state: WorldState, world_id: str, seq: int) -> ActorPatch:
    """What the rules hold of an actor, for the GM's client to write back."""
    return {
        "seq": seq,
        "world": world_id,
        "writer": "gm",
        "actor_id": character.id,
        "fate_points": character.fate_points,
        "pending_fate_points": character.pending_fate_points,
        "consequences": _slots(character, state),
        "stress": stress_views(character),
        "overwhelmed": character.overwhelmed,
        "boosts": held_boosts(character, state),
    }


def held_boosts(character: Character, state: WorldState) -> int:
    """How many boosts (R12.6) the character holds a free invoke on."""
    return aspect_index(state.aspects).held_boosts(character.id)


def token_status(character: Character, state: WorldState, world_id: str, seq: int) -> TokenStatus:
    """The status effects of an actor's tokens."""
    filled = {s.severity for s in character.consequences if not s.empty}
    statuses: dict[TokenStatusName, bool] = {
        "overwhelmed": character.overwhelmed,
        **{cast(TokenStatusName, n): s in filled for s, n in SEVERITY_NAMES.items()},
        "boost": held_boosts(character, state) > 0,
    }
    return {
        "seq": seq,
        "world": world_id,
        "writer": "gm",
        "actor_id": character.id,
        "statuses": statuses,
    }
