"""``world webhooks list|add|remove``: a world's outbound webhooks, set on the store a
running bridge uses (it picks changes up on its next outbox pass)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from pydantic import ValidationError

from bridge.cli.options import (
    AddParser,
    add_json,
    add_webhook_allow,
    add_world,
    count,
    webhook_reach,
)
from bridge.cli.stores import WorldWork, on_store
from bridge.service import BridgeService, IntentError
from bridge.service.protocol.http import WebhookCreate, WebhookList
from bridge.service.session import validation_error
from bridge.service.webhook_settings import WebhookSettings
from bridge.store.base import Store
from bridge.store.webhooks import webhook_store_for

# A webhooks command's work, on the world's webhook settings.
SettingsWork = Callable[[WebhookSettings, argparse.Namespace], Awaitable[int]]


def add_command(add_parser: AddParser) -> None:
    webhooks = add_parser(
        "webhooks",
        help="a world's outbound webhooks: list them with their recent deliveries and "
        "failures, add or remove one",
    ).add_subparsers(dest="webhooks_command", required=True, metavar="WEBHOOKS_COMMAND")
    hooks_list = webhooks.add_parser("list", help="webhooks, recent deliveries and failures")
    add_world(hooks_list)
    hooks_list.add_argument("--limit", type=count, default=20, help="deliveries shown")
    add_json(hooks_list)
    hooks_list.set_defaults(run=on_store(_settings(_list)))
    hooks_add = webhooks.add_parser(
        "add",
        help="add a webhook: 'discord' mirrors resolved cards into a channel; 'json' posts "
        "signed JSON (its signing secret is printed once)",
    )
    add_world(hooks_add)
    hooks_add.add_argument("kind", choices=["discord", "json"])
    hooks_add.add_argument("url", help="the Discord webhook URL, or your endpoint's URL")
    hooks_add.add_argument("--name", help="a name to tell webhooks apart")
    add_json(hooks_add)
    add_webhook_allow(hooks_add)
    hooks_add.set_defaults(run=on_store(_settings(_add)))
    hooks_remove = webhooks.add_parser("remove", help="remove a webhook")
    add_world(hooks_remove)
    hooks_remove.add_argument("webhook_id")
    hooks_remove.set_defaults(run=on_store(_settings(_remove)))


def _settings(work: SettingsWork) -> WorldWork:
    """``work`` on the service's webhook settings, over the store's webhooks; a refusal
    (an unknown webhook, a URL the bridge may not send to) is one line and exit status 1."""

    async def on_settings(store: Store, args: argparse.Namespace) -> int:
        hooks = webhook_store_for(store)
        await hooks.open()
        try:
            service = BridgeService(store, webhooks=hooks, webhook_reach=webhook_reach(args))
            return await work(service.webhook_settings, args)
        except IntentError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            return 1
        except ValidationError as exc:
            print(f"error: {validation_error(exc)['error']['message']}", file=sys.stderr)
            return 1
        finally:
            await hooks.close()

    return on_settings


async def _add(settings: WebhookSettings, args: argparse.Namespace) -> int:
    created = await settings.add_webhook(
        args.id, WebhookCreate(kind=args.kind, url=args.url, name=args.name)
    )
    if args.json:
        print(created.model_dump_json())
        return 0
    hook = created.webhook
    print(f"Webhook {hook.id} ({hook.kind}) added: {hook.url_hint}")
    if created.secret:
        print(f"Signing secret (shown once): {created.secret}")
    return 0


async def _remove(settings: WebhookSettings, args: argparse.Namespace) -> int:
    await settings.remove_webhook(args.id, args.webhook_id)
    print(f"Webhook {args.webhook_id} removed.")
    return 0


async def _list(settings: WebhookSettings, args: argparse.Namespace) -> int:
    listed = await settings.list_webhooks(args.id, max(1, args.limit))
    print(listed.model_dump_json() if args.json else _webhook_listing(listed))
    return 0


def _webhook_listing(listed: WebhookList) -> str:
    """What ``world webhooks list`` prints: each webhook, then deliveries, failures first."""
    if not listed.webhooks:
        lines = ["No webhooks."]
    else:
        lines = ["Webhooks:"]
        lines += [f"  {h.id}\t{h.kind}\t{h.name}\t{h.url_hint}" for h in listed.webhooks]
    failed = [d for d in listed.deliveries if d.status == "failed"]
    lines.append(f"Recent deliveries: {len(listed.deliveries)}, failed: {len(failed)}")
    for d in sorted(listed.deliveries, key=lambda d: d.status != "failed"):
        when = datetime.fromtimestamp(d.finished_at or d.created_at, UTC).isoformat(
            timespec="seconds"
        )
        error = f"\t{d.last_error}" if d.last_error else ""
        lines.append(
            f"  {d.status.upper()}\t{when}\t{d.webhook_id}\t{d.key}\tattempts {d.attempts}{error}"
        )
    return "\n".join(lines)
