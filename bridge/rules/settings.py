"""World settings the GM chooses for the table."""

from __future__ import annotations

from bridge.rules.actions import Principal
from bridge.rules.errors import RuleViolation
from bridge.rules.events import Event, SettingsPut
from bridge.rules.state import WorldState


def change_settings(
    state: WorldState, principal: Principal, *, trust_player_ratings: bool | None = None
) -> list[Event]:
    """GM only; fields left out keep their value; no event when nothing changes.
    R2.1 Decision: ``trust_player_ratings`` lets players' passive ratings through
    without the GM's confirmation (danger and helpers are confirmed either way)."""
    if not principal.is_gm:
        raise RuleViolation("forbidden", "Only the GM changes the world's settings.")
    updates: dict[str, object] = {}
    if trust_player_ratings is not None:
        updates["trust_player_ratings"] = trust_player_ratings
    settings = state.settings.model_copy(update=updates)
    if settings == state.settings:
        return []
    return [SettingsPut(reason="world.settings", settings=settings)]
