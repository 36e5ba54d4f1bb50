"""The application layer: turns intents into rules calls, commits, and emits."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from bridge import protocol
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
    ok,
    utc_now,
    world_room,
)
from bridge.service.webhook_settings import WebhookSettings
from bridge.service.world_intents import WorldIntents
from bridge.store.base import Store
from bridge.store.webhooks import WebhookStore
from bridge.webhooks.reach import WebhookReach

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


class BridgeService(WorldIntents, ActionIntents, SceneIntents, HistoryIntents, WebhookSettings):
    """Every intent of the wire protocol, each with its handler; and the GM's webhook
    settings when given a webhook store."""

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
        if webhook_reach is not None:
            self.webhook_reach = webhook_reach
        self._handlers: dict[str, Callable[[Session, Any], Awaitable[Reply]]] = {
            "hello": self._hello,
            "world.sync": self._world_sync,
            "actor.sync": self._actor_sync,
            "world.state": self._world_state,
            "user.bind": self._user_bind,
            "world.verify": self._world_verify,
            "card.written": self._card_written,
            "action.start": self._action_start,
            "action.odds": self._action_odds,
            "action.roll": self._action_roll,
            "action.oppose": self._action_oppose,
            "action.invoke": self._action_invoke,
            "action.pass": self._action_pass,
            "action.choose": self._action_choose,
            "action.cost": self._action_cost,
            "action.concede": self._action_concede,
            "action.absorb": self._action_absorb,
            "action.gift": self._action_gift,
            "action.cancel": self._action_cancel,
            "action.confirm": self._action_confirm,
            "action.help": self._action_help,
            "action.hint": self._action_hint,
            "action.hint_give": self._action_hint_give,
            "aspect.give": self._aspect_give,
            "scene.end": self._scene_end,
            "scene.aspect": self._scene_aspect,
            "scene.read": self._scene_read,
            "world.settings": self._world_settings,
            "world.ruleset": self._world_ruleset,
            "contest.start": self._contest_start,
            "contest.roll": self._contest_roll,
            "contest.advantage": self._contest_advantage,
            "contest.twist": self._contest_twist,
            "contest.concede": self._contest_concede,
            "challenge.start": self._challenge_start,
            "challenge.roll": self._challenge_roll,
            "challenge.advantage": self._challenge_advantage,
            "challenge.carry": self._challenge_carry,
            "conflict.start": self._conflict_start,
            "conflict.order": self._conflict_order,
            "conflict.next": self._conflict_next,
            "conflict.full_defense": self._conflict_full_defense,
            "conflict.concede": self._conflict_concede,
            "conflict.move": self._conflict_move,
            "conflict.end": self._conflict_end,
            "fate.compel": self._fate_compel,
            "fate.compel_answer": self._fate_compel_answer,
            "fate.spend": self._fate_spend,
            "fate.sacrifice": self._fate_sacrifice,
            "fate.gm_budget": self._gm_budget,
            "history.read": self._history_read,
            "history.stats": self._history_stats,
            "history.undo": self._history_undo,
            "dev.queue_dice": self._dev_queue_dice,
            # Envelopes the socket server opens itself (bridge.relay): never reach here.
            "relay": self._socket_only,
            "relay.leave": self._socket_only,
        }
        missing = set(protocol.INTENTS) ^ set(self._handlers)
        if missing:
            raise RuntimeError(f"intents without handlers or models: {sorted(missing)}")

    async def _socket_only(self, session: Session, intent: object) -> Reply:
        raise IntentError("forbidden", "Relays travel only on a GM's socket connection.")
