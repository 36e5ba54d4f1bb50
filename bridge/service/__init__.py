"""The application layer: turns intents into rules calls, commits, and emits."""

from __future__ import annotations

from bridge.service import protocol
from bridge.service.action_intents import ActionIntents
from bridge.service.core import Clock, ServiceCore
from bridge.service.history_intents import HistoryIntents
from bridge.service.scene_intents import SceneIntents
from bridge.service.session import (
    ConnectRefused,
    Emission,
    IntentError,
    Reply,
    Session,
    error,
    handlers_of,
    handles,
    ok,
    utc_now,
    world_room,
)
from bridge.service.webhook_settings import WebhookSettings
from bridge.service.webhooks.reach import WebhookReach
from bridge.service.world_intents import WorldIntents
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
    """Every intent of the wire protocol, each answered by the handler its domain's group
    marks for it (world, actions, scene, history); and the GM's webhook settings
    (``webhook_settings``), which answer when the bridge has a webhook store."""

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
        self._handlers = handlers_of(
            WorldIntents(self), ActionIntents(self), SceneIntents(self), HistoryIntents(self), self
        )

    # Envelopes the socket server opens itself (bridge.transport.relay): they never reach here.
    @handles(protocol.Relay)
    async def _relay(self, session: Session, intent: protocol.Relay) -> Reply:
        raise IntentError("forbidden", RELAY_ON_SOCKET_ONLY)

    @handles(protocol.RelayLeave)
    async def _relay_leave(self, session: Session, intent: protocol.RelayLeave) -> Reply:
        raise IntentError("forbidden", RELAY_ON_SOCKET_ONLY)


RELAY_ON_SOCKET_ONLY = "Relays travel only on a GM's socket connection."
