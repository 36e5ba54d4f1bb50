"""The fate point economy (R12.2-R12.5): compels, spending, sacrifice."""

from __future__ import annotations

from typing import Literal

from bridge.rules.actions import Principal, may_control
from bridge.rules.consequences import place_consequence, roll_up_slot
from bridge.rules.draft import Draft
from bridge.rules.errors import refused
from bridge.rules.events import Event
from bridge.rules.ruleset import Ruleset
from bridge.rules.state import GM, Character, Compel, WorldState


def _character(draft: Draft, character_id: str) -> Character:
    character = draft.characters.get(character_id)
    if character is None:
        raise refused("unknown_actor", "unknown_actor_sync", "character_id", id=character_id)
    return character


def offer_compel(
    state: WorldState,
    character_id: str,
    text: str,
    principal: Principal,
    aspect_id: str | None = None,
) -> list[Event]:
    if not principal.is_gm:
        raise refused("forbidden", "gm_only")
    draft = Draft(state, "fate.compel")
    _character(draft, character_id)
    if aspect_id is not None and aspect_id not in draft.aspects:
        raise refused("not_found", "no_such_aspect", "aspect_id")
    draft.put_compel(
        Compel(id=draft.new_id("compel"), character_id=character_id, text=text, aspect_id=aspect_id)
    )
    return draft.events()


def answer_compel(
    state: WorldState, compel_id: str, accept: bool, principal: Principal
) -> list[Event]:
    """R12.4 accept: +1 fate point. R12.3 refuse: pay 1 fate point."""
    draft = Draft(state, "fate.compel_answer")
    compel = draft.compels.get(compel_id)
    if compel is None or compel.state != "offered":
        raise refused("not_found", "no_compel_waiting", "compel_id")
    character = _character(draft, compel.character_id)
    if not may_control(principal, character):
        raise refused("forbidden", "compel_owner_only", "compel_id", name=character.name)
    if accept:
        draft.put_character(character.model_copy(update={"fate_points": character.fate_points + 1}))
    else:
        if character.fate_points < 1:
            raise refused(
                "no_fate_points", "refuse_compel_no_points", "accept", name=character.name
            )
        draft.put_character(character.model_copy(update={"fate_points": character.fate_points - 1}))
    draft.put_compel(compel.model_copy(update={"state": "accepted" if accept else "refused"}))
    return draft.events()


def spend(
    state: WorldState,
    character_id: str,
    purpose: Literal["detail", "stunt"],
    principal: Principal,
) -> list[Event]:
    """R12.3: declare a minor detail or power a stunt for one fate point."""
    draft = Draft(state, f"fate.spend.{purpose}")
    character = _character(draft, character_id)
    if not may_control(principal, character):
        raise refused("forbidden", "spend_for", name=character.name)
    if character.fate_points < 1:
        raise refused("no_fate_points", "no_points_left", name=character.name)
    draft.put_character(character.model_copy(update={"fate_points": character.fate_points - 1}))
    return draft.events()


def sacrifice(
    state: WorldState,
    character_id: str,
    severity: int,
    name: str,
    principal: Principal,
    ruleset: Ruleset,
) -> list[Event]:
    """R12.5: only with no fate points left; the consequence rolls up (R7.2), the GM
    gets a free invoke on it, and the character gains the ruleset's points for it."""
    draft = Draft(state, "fate.sacrifice")
    character = _character(draft, character_id)
    if not may_control(principal, character):
        raise refused("forbidden", "sacrifice_for", name=character.name)
    if character.fate_points > 0:
        raise refused("has_fate_points", "sacrifice_has_points", name=character.name)
    points = ruleset.sacrifice_points.get(severity)
    if points is None:
        raise refused("invalid", "choose_severity", "severity")
    if roll_up_slot(character, severity) is None:
        raise refused("no_slot", "no_slot_of", "severity", name=character.name, shifts=severity)
    place_consequence(draft, character_id, severity, name, caused_by=None, free_invokes={GM: 1})
    placed = draft.character(character_id)
    draft.put_character(placed.model_copy(update={"fate_points": placed.fate_points + points}))
    return draft.events()
