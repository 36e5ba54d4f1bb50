"""Bodies of the HTTP API (``/api/v1``) that the socket protocol has no message for, and
the body of the generic JSON webhook. Everything else the API sends and takes is the
socket protocol's own models (intents in, results out)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints

from bridge.protocol.base import Identifier, Inbound, Name, Outbound
from bridge.protocol.views import Card, CharacterSummary

WebhookKindName = Literal["discord", "json"]


class CharacterList(Outbound):
    characters: list[CharacterSummary]


class WebhookCreate(Inbound):
    """Add a webhook: ``discord`` mirrors resolved cards into a channel (its URL from the
    channel's Integrations > Webhooks), ``json`` posts signed JSON to any HTTP endpoint."""

    kind: WebhookKindName
    url: Annotated[str, StringConstraints(min_length=1, max_length=2000)]
    name: Name | None = None


class WebhookView(Outbound):
    """A webhook as the GM sees it listed: the URL shortened, never the secret."""

    id: str
    kind: WebhookKindName
    name: str
    url_hint: str
    created_at: str


class WebhookCreated(Outbound):
    """The new webhook; ``secret`` (json webhooks) is shown this once: keep it to verify."""

    webhook: WebhookView
    secret: str | None


class DeliveryView(Outbound):
    id: str
    webhook_id: str
    key: str
    status: Literal["pending", "delivered", "failed"]
    attempts: int
    created_at: float
    next_at: float | None
    finished_at: float | None
    last_error: str


class WebhookList(Outbound):
    """The world's webhooks and its most recent deliveries, newest first."""

    webhooks: list[WebhookView]
    deliveries: list[DeliveryView]


class WebhookRemoved(Outbound):
    id: Identifier
    removed: bool


class WebhookCardEvent(Outbound):
    """The body a ``json`` webhook receives for each card the bridge resolved."""

    type: Literal["card"] = "card"
    world: str
    seq: int
    card_id: str
    card: Card
