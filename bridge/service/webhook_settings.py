"""The GM's webhook settings: add, list (with recent deliveries and failures), remove.

One implementation for the CLI and the HTTP API. The secrets (a Discord webhook's
URL, a JSON webhook's signing secret) are stored for the outbox and shown only once,
when created; listings show a hint of the URL. No socket intent reaches any of this,
so a player's connection can't either.
"""

from __future__ import annotations

import logging
import re
import secrets

import httpx

from bridge.service.core import ServiceCore
from bridge.service.protocol.http import (
    DeliveryView,
    WebhookCreate,
    WebhookCreated,
    WebhookList,
    WebhookRemoved,
    WebhookView,
)
from bridge.service.session import IntentError
from bridge.service.webhooks.outbox import NO_ANSWER, REMOVED
from bridge.service.webhooks.reach import TargetRefused, WebhookReach, refused_message
from bridge.service.webhooks.signing import new_secret
from bridge.store.webhooks import Delivery, WebhookRecord, WebhookStore

log = logging.getLogger("bridge.service.webhooks")

DISCORD_HOSTS = frozenset(
    {"discord.com", "discordapp.com", "ptb.discord.com", "canary.discord.com"}
)
DELIVERIES_LISTED = 50
WEBHOOKS_PER_WORLD = 10


def _hint(hook: WebhookRecord) -> str:
    url = httpx.URL(hook.url)
    if hook.kind == "discord":
        # The webhook's numeric id is not secret; the token after it is.
        parts = url.path.split("/")
        webhook_number = parts[3] if len(parts) > 3 else ""
        return f"https://{url.host}/api/webhooks/{webhook_number}/\u2026"
    return f"{url.scheme}://{url.host}{':' + str(url.port) if url.port else ''}/\u2026"


def webhook_view(hook: WebhookRecord) -> WebhookView:
    return WebhookView(
        id=hook.id, kind=hook.kind, name=hook.name, url_hint=_hint(hook), created_at=hook.created_at
    )


# What a delivery's error may say to a GM (the outbox writes no more): the HTTP status of a
# target that answered, or that none did.
_SHOWN_ERROR = re.compile(r"(gave up after \d+ attempts: )?(HTTP \d{3}|no answer)")
_GAVE_UP = re.compile(r"gave up after \d+ attempts: ")


def shown_error(error: str) -> str:
    """A delivery's error as a GM reads it; a record from before this rule (``ConnectError:
    ...``) reads as no answer."""
    if not error or error == REMOVED or _SHOWN_ERROR.fullmatch(error):
        return error
    gave_up = _GAVE_UP.match(error)
    return (gave_up.group(0) if gave_up else "") + NO_ANSWER


def delivery_view(delivery: Delivery) -> DeliveryView:
    status = delivery.status
    return DeliveryView(
        id=delivery.id,
        webhook_id=delivery.webhook_id,
        key=delivery.key,
        status="retrying" if status == "pending" and delivery.attempts else status,
        attempts=delivery.attempts,
        created_at=delivery.created_at,
        next_at=delivery.next_at if status == "pending" else None,
        finished_at=delivery.finished_at,
        last_error=shown_error(delivery.last_error),
    )


def _checked_url(request: WebhookCreate) -> str:
    """The URL if it can be a webhook of that kind; a clear error on field ``url`` if not."""
    try:
        url = httpx.URL(request.url)
    except (httpx.InvalidURL, ValueError) as exc:
        raise IntentError("invalid", f"That is not a URL: {exc}.", "url") from exc
    if url.scheme not in ("http", "https") or not url.host:
        raise IntentError("invalid", "A webhook URL starts with https:// (or http://).", "url")
    if request.kind == "discord":
        parts = url.path.split("/")
        if (
            url.scheme != "https"
            or url.host not in DISCORD_HOSTS
            or len(parts) < 5
            or parts[1:3] != ["api", "webhooks"]
            or not parts[3].isdigit()
            or not parts[4]
        ):
            raise IntentError(
                "invalid",
                "A Discord webhook URL looks like https://discord.com/api/webhooks/<id>/<token> "
                "(channel settings > Integrations > Webhooks > Copy Webhook URL).",
                "url",
            )
    return str(url)


class WebhookSettings:
    """Webhook management for a world's GM (CLI or HTTP API with the GM key), on the
    worlds of ``core``: none when the bridge runs without a webhook store."""

    def __init__(
        self,
        core: ServiceCore,
        webhooks: WebhookStore | None = None,
        webhook_reach: WebhookReach | None = None,
    ) -> None:
        self.core = core
        self.webhooks = webhooks
        self.webhook_reach = webhook_reach or WebhookReach()

    def _hooks(self) -> WebhookStore:
        if self.webhooks is None:
            raise IntentError("not_found", "This bridge runs without webhooks.")
        return self.webhooks

    async def add_webhook(self, world_id: str, request: WebhookCreate) -> WebhookCreated:
        """Save a webhook; it mirrors the cards resolved from now on (not the past)."""
        hooks = self._hooks()
        url = _checked_url(request)
        snapshot = await self.core.snapshot(world_id)
        if len(await hooks.webhooks(world_id)) >= WEBHOOKS_PER_WORLD:
            raise IntentError(
                "invalid", f"A world has at most {WEBHOOKS_PER_WORLD} webhooks; remove one first."
            )
        await self._check_reach(world_id, httpx.URL(url))
        secret = new_secret() if request.kind == "json" else ""
        hook = WebhookRecord(
            world_id=world_id,
            id="wh_" + secrets.token_hex(6),
            kind=request.kind,
            url=url,
            secret=secret,
            name=request.name or request.kind,
            created_at=self.core.clock().isoformat(),
        )
        await hooks.add_webhook(hook, snapshot.last_emit_seq)
        return WebhookCreated(webhook=webhook_view(hook), secret=secret or None)

    async def _check_reach(self, world_id: str, url: httpx.URL) -> None:
        """Only where a stranger's request may go (DESIGN "Reach and trust"); checked
        again at every send. Discord's own hosts are public by name."""
        if url.host in DISCORD_HOSTS:
            return
        try:
            await self.webhook_reach.check_url(url)
        except TargetRefused as refused:
            log.info(
                "webhook refused in %s: %s://%s: %s",
                world_id,
                url.scheme,
                url.host,
                refused.reason,
            )
            raise IntentError("invalid", refused_message(url), "url") from None

    async def list_webhooks(self, world_id: str, limit: int = DELIVERIES_LISTED) -> WebhookList:
        hooks = self._hooks()
        await self.core.snapshot(world_id)
        return WebhookList(
            webhooks=[webhook_view(h) for h in await hooks.webhooks(world_id)],
            deliveries=[delivery_view(d) for d in await hooks.deliveries(world_id, limit)],
        )

    async def remove_webhook(self, world_id: str, webhook_id: str) -> WebhookRemoved:
        """Remove a webhook; its undelivered items are then recorded as failed."""
        hooks = self._hooks()
        await self.core.snapshot(world_id)
        if not await hooks.remove_webhook(world_id, webhook_id):
            raise IntentError("not_found", f"This world has no webhook {webhook_id!r}.", "id")
        return WebhookRemoved(id=webhook_id, removed=True)
