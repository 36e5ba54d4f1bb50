"""The application layer: turns intents into rules calls, commits, and emits."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from bridge.rules.errors import RuleViolation
from bridge.service.core import Clock, ServiceCore
from bridge.service.history_intents import HistoryReader
from bridge.service.intent_table import DECLARED, Act, Change, Declared
from bridge.service.session import (
    ConnectRefused,
    Emission,
    IntentError,
    Reply,
    Session,
    error,
    ok,
    utc_now,
    validation_error,
    world_room,
)
from bridge.service.webhook_settings import WebhookSettings
from bridge.service.webhooks.reach import WebhookReach
from bridge.store.base import Store
from bridge.store.webhooks import WebhookStore

__all__ = [
    "BridgeService",
    "ConnectRefused",
    "Emission",
    "IntentError",
    "Reply",
    "ServiceCore",
    "Session",
    "error",
    "ok",
    "world_room",
]


class BridgeService(ServiceCore):
    """Every intent of the wire protocol, each answered as its row of
    :data:`~bridge.service.intent_table.TABLE` says; the roll history's reader
    (``history``); and the GM's webhook settings (``webhook_settings``), which answer when
    the bridge has a webhook store."""

    def __init__(
        self,
        store: Store,
        *,
        dev_dice: bool = False,
        clock: Clock = utc_now,
        webhooks: WebhookStore | None = None,
        webhook_reach: WebhookReach | None = None,
    ) -> None:
        super().__init__(store, dev_dice=dev_dice, clock=clock)
        self.webhooks = webhooks
        self.webhook_settings = WebhookSettings(self, webhooks, webhook_reach)
        self.history = HistoryReader(self)

    async def handle(self, session: Session, event: str, payload: object) -> Reply:
        """Answer one intent; never raises for bad input, always returns an ack (counted
        in ``stats`` by its outcome)."""
        reply = await self._answer(session, event, payload)
        ack = reply.ack
        if ack.get("ok"):
            outcome = "ok"
        else:
            failure = ack.get("error")
            outcome = str(failure.get("code")) if isinstance(failure, dict) else "error"
        self.stats.intents[(event if event in DECLARED else "unknown", outcome)] += 1
        return reply

    async def _answer(self, session: Session, event: str, payload: object) -> Reply:
        declared = DECLARED.get(event)
        if declared is None:
            return Reply(error("unknown_event", f"The bridge has no event {event!r}."))
        try:
            intent = declared.model.model_validate(payload)
        except ValidationError as exc:
            return Reply(validation_error(exc))
        if (
            session.role == "player"
            and not session.bound
            and session.bind_nonce is not None
            # The GM's client may have vouched through another bridge process.
            and await self.store.nonce_bound(session.world_id, session.user_id, session.bind_nonce)
        ):
            await self.bind(session)
        if session.role == "player" and not session.bound and not declared.unbound:
            return Reply(
                error(
                    "unbound",
                    "The bridge has not yet confirmed which Foundry user you are; "
                    "this happens automatically while a GM is connected.",
                )
            )
        try:
            return await self._run(declared, session, intent)
        except (IntentError, RuleViolation) as exc:
            return Reply(error(exc.code, exc.message, exc.field, exc.params))

    async def _run(self, declared: Declared[Any], session: Session, intent: Any) -> Reply:
        """The intent answered as its row says."""
        answer = declared.answer
        if isinstance(answer, Act):
            return await self.run_action(session, intent, answer.rule)
        if isinstance(answer, Change):
            return await self.scene_change(session, intent, answer.rule)
        return await answer.handler(self, session, intent)
