"""Project rules records into what the module shows: chat cards, actor patches, statuses.

Every view an emit or a frequent answer carries is built straight in its JSON form: a
plain dict typed by its definition in :mod:`bridge.service.protocol` (a ``TypedDict``), so
mypy checks every key and value of every literal here against the one definition the
schemas are generated from. Every key is built, defaults included. A card is built once
and never validated, dumped or copied again on its way to the store and the wire. Views
are shared (caches hand out the same dict to every card showing it): nothing may change a
view once built.

One module per kind of card: ``action`` (an action's card, the odds), ``scene`` (contests,
challenges, conflicts, the scene panel and its end), ``sheets`` (actor patches, token
statuses, the world for pickers), ``history`` (the roll history); ``common`` what they
all show alike.
"""

from bridge.service.cards.action import action_card, odds_view, outcome_ids
from bridge.service.cards.history import dice_distribution, history_entry
from bridge.service.cards.scene import (
    challenge_card,
    challenge_view,
    contest_card,
    contest_view,
    rules_info,
    scene_end,
    scene_state,
)
from bridge.service.cards.sheets import actor_patch, token_status, world_summary

__all__ = [
    "action_card",
    "actor_patch",
    "challenge_card",
    "challenge_view",
    "contest_card",
    "contest_view",
    "dice_distribution",
    "history_entry",
    "odds_view",
    "outcome_ids",
    "rules_info",
    "scene_end",
    "scene_state",
    "token_status",
    "world_summary",
]
