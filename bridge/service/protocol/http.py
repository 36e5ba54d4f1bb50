"""Bodies of the HTTP API (``/api/v1``) that the socket protocol has no message for, and
the body of the generic JSON webhook. Everything else the API sends and takes is the
socket protocol's own models (intents in, results out)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, create_model

from bridge.service.protocol.answers import CharacterSummary
from bridge.service.protocol.base import Identifier, Inbound, Name, Outbound
from bridge.service.protocol.intents import ActionRef
from bridge.service.protocol.scene_views import Card

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
    """One delivery of a card to a webhook: ``pending`` until first tried, ``retrying``
    after a try that did not deliver (``next_at`` says when), then ``delivered`` or
    ``failed``. ``last_error`` is the HTTP status of a target that answered (``HTTP
    404``) or ``no answer``; never how a connection failed."""

    id: str
    webhook_id: str
    key: str
    status: Literal["pending", "retrying", "delivered", "failed"]
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


def _no_default(schema: dict[str, Any]) -> None:
    # The field is optional, not nullable: a null default would invite a null that the
    # API then refuses as a mismatch.
    schema.pop("default", None)


def action_body(intent: type[ActionRef]) -> type[ActionRef]:
    """The HTTP body of an action intent whose action is named in the path
    (``/actions/{action_id}/...``): the intent's own message, ``action_id`` optional.

    Only the OpenAPI document uses this model: the API puts the path's id into the body
    and the service validates that with ``intent`` itself, as for a socket. A body's own
    ``action_id``, when given, must be the path's (the API refuses another with 422)."""
    return create_model(
        f"{intent.__name__}Body",
        __base__=intent,
        __module__=__name__,
        __doc__=intent.__doc__,
        action_id=(
            Identifier,
            Field(
                default=None,
                description="Optional: the action is the path's; another id here is refused.",
                json_schema_extra=_no_default,
            ),
        ),
    )
