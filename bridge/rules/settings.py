"""World settings and the ruleset the GM chooses for the table."""

from __future__ import annotations

from bridge.rules.actions import Principal
from bridge.rules.errors import refused
from bridge.rules.events import Event, RulesetPut, SettingsPut
from bridge.rules.ruleset import RULESETS
from bridge.rules.state import WorldState


def change_settings(
    state: WorldState,
    principal: Principal,
    *,
    trust_player_ratings: bool | None = None,
    full_defense: bool | None = None,
) -> list[Event]:
    """GM only; fields left out keep their value; no event when nothing changes.
    R2.1 Decision: ``trust_player_ratings`` lets players' passive ratings through
    without the GM's confirmation (danger and helpers are confirmed either way).
    R13.7: ``full_defense`` turns on Fate Condensed's optional full defense."""
    if not principal.is_gm:
        raise refused("forbidden", "gm_only")
    updates: dict[str, object] = {}
    if trust_player_ratings is not None:
        updates["trust_player_ratings"] = trust_player_ratings
    if full_defense is not None:
        updates["full_defense"] = full_defense
    settings = state.settings.model_copy(update=updates)
    if settings == state.settings:
        return []
    return [SettingsPut(reason="world.settings", settings=settings)]


def change_ruleset(state: WorldState, principal: Principal, ruleset_id: str) -> list[Event]:
    """R13.9: the GM sets the rules the world plays from the next intent on; the log
    keeps everything before (replay never reads the ruleset). Only between procedures:
    refused while a conflict, contest or challenge is open or an action unresolved, so
    nothing started under one ruleset finishes under another. No event when unchanged."""
    if not principal.is_gm:
        raise refused("forbidden", "gm_only")
    if ruleset_id not in RULESETS:
        raise refused(
            "invalid", "no_ruleset", "ruleset", id=ruleset_id, rulesets=", ".join(sorted(RULESETS))
        )
    if ruleset_id == state.ruleset:
        return []
    # What is still open, by name (conflicts, contests, challenges), and how many actions.
    open_names = ", ".join(
        c.name
        for group in (state.conflicts, state.contests, state.challenges)
        for c in group.values()
        if c.state == "open"
    )
    unresolved = sum(1 for a in state.actions.values() if not a.closed)
    if open_names and unresolved:
        raise refused(
            "wrong_state", "rules_busy_both", "ruleset", open=open_names, actions=unresolved
        )
    if open_names:
        raise refused("wrong_state", "rules_busy_open", "ruleset", open=open_names)
    if unresolved:
        raise refused("wrong_state", "rules_busy_actions", "ruleset", actions=unresolved)
    return [RulesetPut(reason="world.ruleset", ruleset=ruleset_id)]
