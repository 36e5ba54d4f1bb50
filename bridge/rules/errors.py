"""The one exception the rules raise for a command they refuse."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

# Every code the rules refuse with; the wire's ``ErrorCode`` (bridge.service.protocol)
# includes them.
RuleCode = Literal[
    "invalid",
    "forbidden",
    "not_found",
    "unknown_actor",
    "wrong_state",
    "overwhelmed",
    "no_fate_points",
    "no_free_invokes",
    "already_invoked",
    "not_dangerous",
    "not_in_ruleset",
    "exhausted",
    "already_overcome",
    "awaiting_gm",
    "awaiting_consent",
    "advantage_pending",
    "forfeited",
    "has_fate_points",
    "needs_overcome",
    "no_slot",
    "nothing_to_undo",
    "mid_commit",
    "scene_ended",
    "not_your_turn",
    "side_required",
    "against_own_side",
    "no_ally_on_side",
    "not_an_approach",
    "not_an_attack",
    "not_in_conflict",
    "already_defending",
]


class RuleViolation(Exception):
    """A command the rules refuse: ``code``, ``field`` and the named ``params`` say it in
    any language (the module's ``FATEBRIDGE.Error.<code>``); ``message`` is its English."""

    def __init__(
        self,
        code: RuleCode,
        message: str,
        field: str | None = None,
        params: Mapping[str, str | int] | None = None,
    ) -> None:
        super().__init__(message)
        self.code: RuleCode = code
        self.message = message
        self.field = field
        self.params: dict[str, str | int] = dict(params or {})


def refused(
    code: RuleCode, reason: str, field: str | None = None, **params: str | int
) -> RuleViolation:
    """A refusal with a sentence of its own: ``reason`` names it in the module's language files
    (``FATEBRIDGE.Refusal.<reason>``, filled from ``params``), the one home of its words in
    every language; the bridge's English ``message`` is rendered from there by the service."""
    return RuleViolation(code, reason, field, {"reason": reason, **params})
