"""``fate-bridge`` (or ``python -m bridge``): serve the bridge and manage its worlds."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import re
import signal
import sys
import traceback
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import NoReturn
from urllib.parse import urlsplit

from aiohttp import web
from pydantic import ValidationError

from bridge import __version__
from bridge.logs import log_handler, log_level, redact_urls_in_logs
from bridge.rules.ruleset import RULESETS
from bridge.server import (
    BIND_TIMEOUT_SECONDS,
    HANDSHAKE_TIMEOUT_SECONDS,
    SOCKET_KEY,
    create_app,
    tune_gc,
)
from bridge.service import BridgeService, IntentError, protocol
from bridge.service.protocol.http import WebhookCreate, WebhookList
from bridge.service.session import validation_error
from bridge.service.webhooks.outbox import WebhookOutbox
from bridge.service.webhooks.reach import ALLOW_ENV, WebhookReach, webhook_client
from bridge.startup import (
    PROGRAM,
    DataLock,
    StartupError,
    check_redis_url,
    command,
    default_data_dir,
    is_wildcard,
    listen_error,
    open_store,
    prepare_data_dir,
    reachable_addresses,
    require_database,
    store_flags,
    url_for,
)
from bridge.store.backup import NotABackup, copy_world_in, copy_world_out, worlds_in
from bridge.store.base import Store, WorldExists
from bridge.store.redis import DEFAULT_PRESENCE_TTL, RedisStore
from bridge.store.sqlite import SQLiteStore
from bridge.store.webhooks import webhook_store_for
from bridge.transport.connections import (
    DEFAULT_PER_ADDRESS,
    DEFAULT_UNBOUND_PER_ADDRESS,
    AddressGate,
    RefusalCounts,
    listen,
)
from bridge.transport.metrics import Metrics
from bridge.transport.module_package import is_loopback_url, release_manifest_url

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DEFAULT_WORLD = "default"
DB_NAME = "bridge.sqlite3"
WORLD_ID = re.compile(r"^[A-Za-z0-9_.:\-]{1,64}$")


def _world_id(value: str) -> str:
    if not WORLD_ID.match(value):
        raise argparse.ArgumentTypeError("use 1-64 letters, digits, '_', '.', ':' or '-'")
    return value


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a port is a number from 0 to 65535, not {value!r}"
        ) from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a number from 0 to 65535, not {port}")
    return port


def _count(value: str) -> int:
    try:
        count = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number of 0 or more, not {value!r}") from None
    if count < 0:
        raise argparse.ArgumentTypeError(f"a whole number of 0 or more, not {count}")
    return count


def _positive(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number, not {value!r}") from None
    if not seconds > 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"a number above 0, not {value}")
    return seconds


def _public_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(
            f"an http:// or https:// URL Foundry can open (https://bridge.example.org), "
            f"not {value!r}"
        )
    return value.rstrip("/")


class OneLineParser(argparse.ArgumentParser):
    """A command-line mistake is one line on stderr, naming what to fix, and exit status 2
    (argparse's own usage block before it buries the line that matters)."""

    def error(self, message: str) -> NoReturn:
        where = self.prog.removeprefix(PROGRAM).strip()
        line = f"{where}: {message}" if where else message
        self.exit(2, f"error: {' '.join(line.split())} (see {self.prog} --help)\n")


def _allow_entry(value: str) -> str:
    try:
        WebhookReach.from_entries([value])
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return value


def _add_webhook_allow(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--webhook-allow",
        action="append",
        type=_allow_entry,
        default=[],
        metavar="HOST_OR_RANGE",
        help="also send webhooks to this host name or address range (CIDR), e.g. a "
        "self-hosted bridge's 192.168.1.0/24 or n8n.lan (repeatable; env "
        f"{ALLOW_ENV}, comma-separated; default only public internet addresses)",
    )


def _webhook_reach(args: argparse.Namespace) -> WebhookReach:
    """Where webhooks may go: public addresses, and what --webhook-allow and the
    environment name."""
    entries = WebhookReach.entries_from_env(os.environ)
    try:
        return WebhookReach.from_entries([*entries, *getattr(args, "webhook_allow", [])])
    except ValueError as exc:
        raise StartupError(f"{ALLOW_ENV}: {exc}") from exc


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROGRAM,
        description="Fate Bridge: the authoritative Fate referee behind a Foundry VTT module.",
    )
    parser.add_argument("--version", action="version", version=f"{PROGRAM} {__version__}")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="folder for the SQLite database (env FATE_BRIDGE_DATA; default the user's data "
        f"folder, here {default_data_dir()})",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the traceback behind a start-up error (include it when reporting one)",
    )
    parser.add_argument(
        "--redis",
        default=os.environ.get("FATE_BRIDGE_REDIS"),
        metavar="URL",
        help="keep state in Redis (e.g. redis://127.0.0.1:6379/0) so several bridge "
        "processes can serve one table (env FATE_BRIDGE_REDIS; default: SQLite in --data-dir)",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the bridge")
    serve.add_argument(
        "--host",
        default=os.environ.get("FATE_BRIDGE_HOST", DEFAULT_HOST),
        help="interface to listen on (env FATE_BRIDGE_HOST; default %(default)s)",
    )
    serve.add_argument(
        "--port",
        type=_port,
        # A string default goes through ``type`` too: a wrong env value is one line.
        default=os.environ.get("FATE_BRIDGE_PORT", str(DEFAULT_PORT)),
        help="port to listen on (env FATE_BRIDGE_PORT; default %(default)s)",
    )
    serve.add_argument(
        "--public-url",
        type=_public_url,
        default=os.environ.get("FATE_BRIDGE_PUBLIC_URL"),
        help="URL Foundry uses to reach the bridge, if not http://HOST:PORT "
        "(e.g. behind a TLS proxy; env FATE_BRIDGE_PUBLIC_URL)",
    )
    serve.add_argument(
        "--cors-origin",
        action="append",
        help="allowed browser origin (repeatable; default any origin, since the GM key "
        "and Foundry's own user check guard every connection)",
    )
    serve.add_argument(
        "--dev-dice",
        action="store_true",
        help="accept dev.queue_dice from a GM so tests can fix the next rolls; never in play",
    )
    serve.add_argument(
        "--presence-ttl",
        type=_positive,
        default=os.environ.get("FATE_BRIDGE_PRESENCE_TTL", str(DEFAULT_PRESENCE_TTL)),
        metavar="SECONDS",
        help="with --redis: a bridge process that dies stops counting its users as present "
        "after this long (env FATE_BRIDGE_PRESENCE_TTL; default %(default)s)",
    )
    serve.add_argument(
        "--max-connections-per-address",
        type=_count,
        default=os.environ.get("FATE_BRIDGE_MAX_PER_ADDRESS", str(DEFAULT_PER_ADDRESS)),
        metavar="N",
        help="keep at most N open connections from one address that have not joined the "
        "bridge (a new one cuts the oldest idle one), and refuse joined GM and bound player "
        "connections past N more; 0 for no cap "
        "(behind a reverse proxy every connection comes from the proxy: raise it there; "
        "env FATE_BRIDGE_MAX_PER_ADDRESS; default %(default)s)",
    )
    serve.add_argument(
        "--max-unbound-per-address",
        type=_count,
        default=os.environ.get(
            "FATE_BRIDGE_MAX_UNBOUND_PER_ADDRESS", str(DEFAULT_UNBOUND_PER_ADDRESS)
        ),
        metavar="N",
        help="refuse a player's connection past N from one address that no GM has bound yet "
        "(direct mode; they never count against a GM's); 0 for no cap (env "
        "FATE_BRIDGE_MAX_UNBOUND_PER_ADDRESS; default %(default)s)",
    )
    serve.add_argument(
        "--bind-timeout",
        type=_positive,
        default=os.environ.get("FATE_BRIDGE_BIND_TIMEOUT", str(BIND_TIMEOUT_SECONDS)),
        metavar="SECONDS",
        help="close a player's connection, with a notice, that no GM has bound within this "
        "long (direct mode; env FATE_BRIDGE_BIND_TIMEOUT; default %(default)s)",
    )
    serve.add_argument(
        "--handshake-timeout",
        type=_positive,
        default=os.environ.get("FATE_BRIDGE_HANDSHAKE_TIMEOUT", str(HANDSHAKE_TIMEOUT_SECONDS)),
        metavar="SECONDS",
        help="close a connection that has not sent a whole HTTP request, or has not joined "
        "the bridge's namespace, within this long (env FATE_BRIDGE_HANDSHAKE_TIMEOUT; "
        "default %(default)s)",
    )
    serve.add_argument(
        "--api-rate",
        type=_positive,
        default="10.0",
        metavar="PER_SECOND",
        help="HTTP API requests per second per world, with bursts of three times that "
        "(default %(default)s)",
    )
    serve.add_argument(
        "--websocket-compression",
        action="store_true",
        default=os.environ.get("FATE_BRIDGE_WEBSOCKET_COMPRESSION", "") == "1",
        help="accept permessage-deflate on websockets: frames shrink to about a third, paid "
        "in CPU for every frame to every client (env FATE_BRIDGE_WEBSOCKET_COMPRESSION=1; "
        "off by default)",
    )
    serve.add_argument(
        "--metrics",
        action="store_true",
        default=os.environ.get("FATE_BRIDGE_METRICS", "") == "1",
        help="answer GET /metrics in Prometheus's text format (connections, intents by "
        "outcome, commit latency, GC pauses, webhook outbox depth, refusals); off by "
        "default (env FATE_BRIDGE_METRICS=1)",
    )
    serve.add_argument(
        "--metrics-token",
        default=os.environ.get("FATE_BRIDGE_METRICS_TOKEN") or None,
        metavar="TOKEN",
        help="turn /metrics on, answering only a scrape that sends 'Authorization: Bearer "
        "TOKEN' (env FATE_BRIDGE_METRICS_TOKEN; prefer the environment: a flag shows in ps)",
    )
    _add_webhook_allow(serve)
    serve.add_argument(
        "--no-default-world",
        action="store_true",
        help=f"don't register the '{DEFAULT_WORLD}' world on first start",
    )

    world = commands.add_parser("world", help="manage worlds").add_subparsers(
        dest="world_command", required=True, metavar="WORLD_COMMAND"
    )
    add = world.add_parser("add", help="register a world and print its GM key")
    add.add_argument("id", type=_world_id, help="world id (what the module's settings name)")
    add.add_argument("--name", help="display name (default: the id)")
    add.add_argument("--ruleset", choices=sorted(RULESETS), default="unwritten")
    add.add_argument("--json", action="store_true", help="print JSON")
    listing = world.add_parser("list", help="list worlds")
    listing.add_argument("--json", action="store_true", help="print JSON")
    verify = world.add_parser(
        "verify",
        help="check a world's event log: the hash chain, its head against the world's stored "
        "head, that replaying it gives the stored state, and (--chat-log) Foundry's anchors",
    )
    verify.add_argument("id", type=_world_id)
    verify.add_argument(
        "--chat-log",
        type=Path,
        metavar="FILE",
        help="also check the log against the anchors Foundry's chat log kept: the JSON file "
        "the module's 'Export history anchors' writes",
    )
    backup = world.add_parser(
        "backup",
        help="copy one world to a file while the bridge serves (SQLite's online backup), "
        "then verify the copy as `world verify` does",
    )
    backup.add_argument("id", type=_world_id)
    backup.add_argument("file", type=Path, metavar="FILE", help="the backup to write (new)")
    restore = world.add_parser(
        "restore",
        help="replace one world with its backup, once the backup's history verifies; the "
        "world as it was is kept in the data folder's backups/ first (stop the bridge)",
    )
    restore.add_argument("id", type=_world_id)
    restore.add_argument("file", type=Path, metavar="FILE", help="a file `world backup` wrote")
    rotate = world.add_parser("rotate-key", help="replace a world's GM key and print the new one")
    rotate.add_argument("id", type=_world_id)
    rotate.add_argument("--json", action="store_true", help="print JSON")

    webhooks = world.add_parser(
        "webhooks",
        help="a world's outbound webhooks: list them with their recent deliveries and "
        "failures, add or remove one",
    ).add_subparsers(dest="webhooks_command", required=True, metavar="WEBHOOKS_COMMAND")
    hooks_list = webhooks.add_parser("list", help="webhooks, recent deliveries and failures")
    hooks_list.add_argument("id", type=_world_id)
    hooks_list.add_argument("--limit", type=_count, default=20, help="deliveries shown")
    hooks_list.add_argument("--json", action="store_true", help="print JSON")
    hooks_add = webhooks.add_parser(
        "add",
        help="add a webhook: 'discord' mirrors resolved cards into a channel; 'json' posts "
        "signed JSON (its signing secret is printed once)",
    )
    hooks_add.add_argument("id", type=_world_id)
    hooks_add.add_argument("kind", choices=["discord", "json"])
    hooks_add.add_argument("url", help="the Discord webhook URL, or your endpoint's URL")
    hooks_add.add_argument("--name", help="a name to tell webhooks apart")
    hooks_add.add_argument("--json", action="store_true", help="print JSON")
    _add_webhook_allow(hooks_add)
    hooks_remove = webhooks.add_parser("remove", help="remove a webhook")
    hooks_remove.add_argument("id", type=_world_id)
    hooks_remove.add_argument("webhook_id")

    schemas = commands.add_parser("schemas", help="write the JSON Schemas")
    schemas.add_argument("--out", default="schemas", help="output folder (default %(default)s)")

    module = commands.add_parser(
        "module",
        help="build the Foundry module zip: this bridge's (--url), or the public release's "
        "zip and module.json (--release)",
    )
    module.add_argument("--out", default="dist", help="output folder (default %(default)s)")
    module.add_argument(
        "--url",
        default=f"http://{DEFAULT_HOST}:{DEFAULT_PORT}",
        help="bridge URL written into the manifest (default %(default)s)",
    )
    release = module.add_mutually_exclusive_group()
    release.add_argument(
        "--release",
        action="store_true",
        help="write the release's fate-bridge.zip and module.json, every link on the public "
        "repository that pyproject.toml's [project.urls] Repository names; refuses when it is "
        "missing, not https or not public, or when the checkout's versions disagree",
    )
    release.add_argument(
        "--write-manifest",
        action="store_true",
        help="rewrite foundry-module/module.json as the release's manifest (after changing "
        "the version or the repository)",
    )
    module.add_argument(
        "--repository",
        metavar="URL",
        help="with --release: the repository releasing (e.g. CI's own); refused unless it is "
        "the one pyproject.toml names",
    )
    module.add_argument(
        "--source",
        type=Path,
        default=None,
        metavar="DIR",
        help="with --release or --write-manifest: the checkout (default this bridge's)",
    )
    return parser


def _resolve_data_dir(args: argparse.Namespace) -> None:
    """``--data-dir``, else ``FATE_BRIDGE_DATA``, else the user's data folder; notes which,
    so that printed commands name the folder unless it is the default."""
    given = args.data_dir or os.environ.get("FATE_BRIDGE_DATA")
    args.data_dir_is_default = not given
    args.data_dir = Path(given) if given else default_data_dir()


def _store_flags(args: argparse.Namespace) -> list[str]:
    return store_flags(args.data_dir, default=args.data_dir_is_default, redis_url=args.redis)


def _db_path(args: argparse.Namespace) -> Path:
    path: Path = args.data_dir / DB_NAME
    return path


def _store(args: argparse.Namespace) -> Store:
    """Redis when ``--redis`` is given (several bridges share it), else embedded SQLite."""
    if args.redis:
        return RedisStore(
            args.redis, presence_ttl=getattr(args, "presence_ttl", DEFAULT_PRESENCE_TTL)
        )
    return SQLiteStore(_db_path(args))


async def _open_store(args: argparse.Namespace, *, create: bool) -> Store:
    """The store, opened after the checks that turn a wrong setting into one line: a Redis
    URL that cannot be one, a data folder that cannot be used, and (``create`` false) a
    database that is not there yet, which is then left uncreated."""
    if args.redis:
        check_redis_url(args.redis)
    elif create:
        prepare_data_dir(args.data_dir, create=True, parents=args.data_dir_is_default)
    else:
        require_database(_db_path(args), _store_flags(args))
        prepare_data_dir(args.data_dir, create=False, parents=False)
    store = _store(args)
    await open_store(store, redis_url=args.redis, db_path=_db_path(args))
    return store


async def _require_world(store: Store, args: argparse.Namespace) -> None:
    if await store.get_world(args.id) is not None:
        return
    where = f"Redis at {_store_flags(args)[1]}" if args.redis else str(_db_path(args).absolute())
    known = [w.id for w in await store.list_worlds()]
    there = f" (its worlds: {', '.join(known)})" if known else " (it has no worlds yet)"
    flags = _store_flags(args)
    raise StartupError(
        f"no world {args.id!r} in {where}{there}: check the id, or register it with "
        f"`{command(flags, 'world', 'add', args.id)}`"
    )


async def _world_command(args: argparse.Namespace) -> int:
    if args.world_command in ("backup", "restore"):
        if args.redis:
            raise StartupError(
                f"world {args.world_command} copies the SQLite store; with --redis, back "
                "Redis up with its own persistence (RDB snapshots or the append-only file)"
            )
        if args.world_command == "restore":
            return await _restore(args)
    store = await _open_store(args, create=args.world_command == "add")
    try:
        if args.world_command not in ("add", "list"):
            await _require_world(store, args)
        service = BridgeService(store)
        if args.world_command == "webhooks":
            return await _webhooks_command(store, args)
        if args.world_command == "add":
            try:
                record, key = await service.add_world(args.id, args.name or args.id, args.ruleset)
            except WorldExists:
                rotate = command(_store_flags(args), "world", "rotate-key", args.id)
                print(
                    f"error: world {args.id!r} already exists: pick another id, or `{rotate}` "
                    "prints a new GM key for it",
                    file=sys.stderr,
                )
                return 1
            info = {"id": record.id, "name": record.name, "ruleset": record.ruleset, "key": key}
            if args.json:
                print(json.dumps(info))
            else:
                print(f"World {record.id!r} ({record.ruleset}) registered.\nGM key: {key}")
            return 0
        if args.world_command == "list":
            worlds = await store.list_worlds()
            if args.json:
                print(
                    json.dumps([{"id": w.id, "name": w.name, "ruleset": w.ruleset} for w in worlds])
                )
            else:
                for w in worlds:
                    print(f"{w.id}\t{w.ruleset}\t{w.name}")
                if not worlds:
                    add = command(_store_flags(args), "world", "add", "ID")
                    print(f"No worlds yet: `{add}` registers one.", file=sys.stderr)
            return 0
        if args.world_command == "verify":
            return await _verify(service, args.id, args.chat_log)
        if args.world_command == "backup":
            return await _backup(args)
        new_key = await service.rotate_key(args.id)
        if new_key is None:
            await _require_world(store, args)  # removed since the check: says so
            return 2
        print(json.dumps({"id": args.id, "key": new_key}) if args.json else f"GM key: {new_key}")
        return 0
    finally:
        await store.close()


async def _webhooks_command(store: Store, args: argparse.Namespace) -> int:
    """``world webhooks list|add|remove``: the service's webhook settings, on the store
    a running bridge uses (it picks changes up on its next outbox pass)."""
    hooks = webhook_store_for(store)
    await hooks.open()
    try:
        service = BridgeService(store, webhooks=hooks, webhook_reach=_webhook_reach(args))
        try:
            if args.webhooks_command == "add":
                created = await service.webhook_settings.add_webhook(
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
            if args.webhooks_command == "remove":
                await service.webhook_settings.remove_webhook(args.id, args.webhook_id)
                print(f"Webhook {args.webhook_id} removed.")
                return 0
            listed = await service.webhook_settings.list_webhooks(args.id, max(1, args.limit))
        except IntentError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            return 1
        except ValidationError as exc:
            print(f"error: {validation_error(exc)['error']['message']}", file=sys.stderr)
            return 1
        if args.json:
            print(listed.model_dump_json())
            return 0
        print(_webhook_listing(listed))
        return 0
    finally:
        await hooks.close()


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


def _read_chat_log(path: Path, world_id: str) -> list[tuple[int, str]]:
    """The anchors of a chat-log export (the module's "Export history anchors" file, format
    ``fate-bridge.history-anchors`` v1, schema ``schemas/history_anchors.json``).

    Raises ``ValueError`` with a message for people when the file is not that, or is another
    world's."""
    try:
        raw = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from exc
    try:
        export = protocol.HistoryAnchors.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "the top level"
        raise ValueError(
            f"{path} is not a {protocol.HISTORY_ANCHORS_FORMAT} export: {where}: {first['msg']}"
        ) from exc
    if export.world != world_id:
        raise ValueError(f"{path} is the chat log of world {export.world!r}, not {world_id!r}")
    return [(a.seq, a.hash) for a in export.anchors]


async def _verify(service: BridgeService, world_id: str, chat_log: Path | None) -> int:
    """Exit 0 when every check of ``verify_history`` holds, 2 when one fails, 1 when the
    chat-log file cannot be used (an unknown world was refused before, with 2)."""
    anchors: list[tuple[int, str]] = []
    if chat_log is not None:
        try:
            anchors = _read_chat_log(chat_log, world_id)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    report = await service.verify_history(world_id, anchors)
    for problem in report.problems:
        print(f"BROKEN: {problem}", file=sys.stderr)
    for bad in report.anchors_mismatched:
        logged = bad.log_hash or "no such event"
        print(f"  anchor {bad.seq}: chat log {bad.hash}, bridge log {logged}", file=sys.stderr)
    if not report.ok:
        return 2
    anchored = f", {report.anchors_checked} chat-log anchors agree" if chat_log else ""
    print(
        f"OK: {report.events} events, chain intact, stored head matches, replay matches"
        f"{anchored}. Head {report.head}"
    )
    return 0


async def _verified(path: Path, world_id: str) -> protocol.WorldVerifyData:
    """``world verify``'s checks of one world in the SQLite file at ``path`` (migrated to
    this bridge's schema if it is older)."""
    store = SQLiteStore(path)
    await store.open()
    try:
        return await BridgeService(store).verify_history(world_id)
    finally:
        await store.close()


def _single_file(path: Path) -> None:
    """Leave the database at ``path`` whole in its one file (no write-ahead log beside it)."""
    import sqlite3

    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=DELETE")
    finally:
        db.close()


async def _backup_to(
    db_path: Path, world_id: str, target: Path, *, verified: bool = True
) -> protocol.WorldVerifyData:
    """Copy the world to ``target`` (written whole, or not at all) and verify the copy;
    ``StartupError`` when the copy does not verify (then nothing is left behind), unless
    not ``verified`` (a copy kept whatever it holds: a broken world's too)."""
    partial = target.with_name(target.name + ".partial")
    for leftover in (partial, *partial.parent.glob(partial.name + "-*")):
        leftover.unlink(missing_ok=True)
    try:
        await asyncio.to_thread(copy_world_out, db_path, world_id, partial)
        report = await _verified(partial, world_id)
        if verified and not report.ok:
            raise StartupError(
                f"the copy of world {world_id!r} does not verify ({report.problems[0]}): "
                f"run `world verify {world_id}` on the bridge's own database"
            )
        _single_file(partial)
        partial.replace(target)
    finally:
        for leftover in (partial, *partial.parent.glob(partial.name + "-*")):
            leftover.unlink(missing_ok=True)
    return report


async def _backup(args: argparse.Namespace) -> int:
    """``world backup ID FILE``: the world copied while the bridge serves, verified."""
    target: Path = args.file
    if target.exists():
        raise StartupError(f"{target} exists already: name a new file (nothing was written)")
    if not target.parent.is_dir():
        raise StartupError(f"no folder {target.parent.absolute()} to write {target.name} in")
    try:
        report = await _backup_to(_db_path(args), args.id, target)
    except OSError as exc:
        raise StartupError(f"cannot write {target}: {exc.strerror or exc}") from exc
    print(
        f"Backed up world {args.id!r} to {target}: {report.events} events, chain intact, "
        f"replay matches. Head {report.head}"
    )
    return 0


async def _restore(args: argparse.Namespace) -> int:
    """``world restore ID FILE``: refused, with nothing changed, unless FILE is a backup
    holding world ID whose history verifies and no bridge serves the data folder; the
    world as it was is backed up first (it is kept, whatever happens next)."""
    import tempfile

    source: Path = args.file
    if not source.is_file():
        raise StartupError(f"no file {source}: nothing restored")
    try:
        held = worlds_in(source)
    except NotABackup as exc:
        raise StartupError(
            f"{source} is not a Fate Bridge backup: {exc}; nothing restored"
        ) from None
    if args.id not in held:
        names = ", ".join(repr(w) for w in held) or "none"
        raise StartupError(
            f"{source} holds world {names}, not {args.id!r}: nothing restored "
            f"(restore it as its own world id)"
        )
    prepare_data_dir(args.data_dir, create=True, parents=args.data_dir_is_default)
    db_path = _db_path(args)
    lock = DataLock(db_path)
    try:
        lock.acquire()
    except StartupError:
        raise StartupError(
            f"a bridge is serving {db_path.absolute()}: stop it before restoring (world "
            "backup works while it serves); nothing restored"
        ) from None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            # Checked, and brought to this bridge's schema, on a copy: FILE stays as it is.
            candidate = Path(tmp) / "restore.sqlite3"
            candidate.write_bytes(source.read_bytes())
            try:
                report = await _verified(candidate, args.id)
            except (RuntimeError, OSError, ValueError) as exc:  # a newer schema, a bad page
                raise StartupError(f"cannot read {source}: {exc}; nothing restored") from exc
            except Exception as exc:
                raise StartupError(
                    f"{source} is not a usable backup ({type(exc).__name__}: {exc}); "
                    "nothing restored"
                ) from exc
            if not report.ok:
                raise StartupError(
                    f"{source}'s history of world {args.id!r} does not verify "
                    f"({report.problems[0]}): nothing restored"
                )
            store = await _open_store(args, create=True)  # a new folder gets its schema
            try:
                exists = await store.get_world(args.id) is not None
            finally:
                await store.close()
            if exists:
                kept = args.data_dir / "backups"
                kept.mkdir(exist_ok=True)
                stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
                previous = kept / f"{args.id}-{stamp}.sqlite3"
                await _backup_to(db_path, args.id, previous, verified=False)
                print(f"World {args.id!r} as it was is kept in {previous}.")
            await asyncio.to_thread(copy_world_in, db_path, candidate, args.id)
        after = await _verified(db_path, args.id)
    finally:
        lock.release()
    if not after.ok:  # cannot happen short of a bug: say so, the copy kept above has it all
        print(f"BROKEN after restore: {after.problems[0]}", file=sys.stderr)
        return 2
    print(
        f"Restored world {args.id!r} from {source}: {after.events} events, chain intact, "
        f"replay matches. Head {after.head}"
    )
    return 0


def _banner(
    base_url: str,
    world_id: str,
    key: str | None,
    dev_dice: bool,
    rotate: str,
    reachable: list[str] | None = None,
) -> str:
    """What a GM needs, printed once the bridge listens. ``rotate`` is the command that
    prints a new GM key; ``reachable``, the URLs of a bridge on every interface."""
    key_line = (
        f"  GM key:        {key}\n"
        f"                 (shown once: paste it into Foundry now; `{rotate}` makes a new one)"
        if key
        else f"  GM key:        shown when the world was created; `{rotate}` prints a new one"
    )
    lines = [
        "",
        "Fate Bridge is running.",
        f"  Bridge URL:    {base_url}",
        f"  World id:      {world_id}",
        key_line,
        "  Module manifest (Foundry > Add-on Modules > Install Module > Manifest URL):",
    ]
    # Foundry's server fetches the manifest: the release's reaches any Foundry, this bridge's
    # only a Foundry that reaches this bridge (a loopback one: only on this machine).
    release = release_manifest_url()
    own = f"{base_url}/module/module.json"
    if release:
        local = is_loopback_url(base_url)
        who = "a Foundry on this machine" if local else "a Foundry that reaches this bridge"
        lines.append(f"                 {release}")
        lines.append(f"                 (or, for {who}: {own})")
    else:
        lines.append(f"                 {own}")
    if reachable:
        lines.append("  Listening on every interface; this machine can be reached at:")
        lines += [f"                 {url}" for url in reachable]
    lines += [
        "In Foundry: enable Fate Bridge, then Configure Settings > Fate Bridge:",
        "  set the bridge URL and world id (world settings), and the GM key (client setting).",
    ]
    if dev_dice:
        lines.append("  --dev-dice is ON: a GM can fix the next rolls. Never use it in play.")
    return "\n".join(lines) + "\n"


# A stop (SIGTERM, SIGINT) ends the process within about this many seconds in all: the
# intents running finish and every client is told to reconnect (STOP_SOCKETS_SECONDS),
# the webhook outbox sends what is due (STOP_OUTBOX_SECONDS), and aiohttp ends the
# requests still open (STOP_HTTP_SECONDS).
STOP_SOCKETS_SECONDS = 4.0
STOP_OUTBOX_SECONDS = 3.0
STOP_HTTP_SECONDS = 1.0


def _stop_on_signals(stop: asyncio.Event) -> None:
    """SIGTERM and SIGINT set ``stop`` (serve's clean-up then runs, bounded); a second
    one ends the process at once."""
    loop = asyncio.get_running_loop()

    def signalled() -> None:
        if stop.is_set():
            os._exit(1)
        logging.getLogger("bridge.cli").warning(
            "stopping: finishing the intents in flight, closing every connection"
        )
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, signalled)


async def _serve(args: argparse.Namespace) -> int:
    args.reach = _webhook_reach(args)  # a wrong FATE_BRIDGE_WEBHOOK_ALLOW is one line, first
    lock: DataLock | None = None
    if not args.redis:
        # Checked before anything is opened: the one line says what to fix.
        prepare_data_dir(args.data_dir, create=True, parents=args.data_dir_is_default)
        lock = DataLock(_db_path(args))
        lock.acquire()
    try:
        return await _serve_store(args, await _open_store(args, create=True))
    finally:
        if lock is not None:
            lock.release()


async def _serve_store(args: argparse.Namespace, store: Store) -> int:
    reach: WebhookReach = args.reach
    hooks = webhook_store_for(store)
    await hooks.open()
    service = BridgeService(store, dev_dice=args.dev_dice, webhooks=hooks, webhook_reach=reach)
    # The one HTTP client every webhook goes out through, checking every address it dials.
    client = webhook_client(reach)
    outbox = WebhookOutbox(store, hooks, client)
    # Listening on every interface: tell the GM the addresses Foundry can reach, not 0.0.0.0.
    reachable: list[str] = []
    shown_host = args.host
    if is_wildcard(args.host):
        addresses = reachable_addresses(args.host)
        reachable = [url_for(address, args.port) for address in addresses]
        outward = [a for a in addresses if a not in ("127.0.0.1", "::1")]
        shown_host = (outward or addresses or ["127.0.0.1"])[0]
    base_url = args.public_url or url_for(shown_host, args.port)
    # What the wire refuses, by reason: counted by the transport, read by /metrics.
    wire_refusals = RefusalCounts()
    gate = AddressGate(args.max_connections_per_address, count=wire_refusals)
    app = create_app(
        service,
        cors_origins=args.cors_origin or "*",
        public_url=args.public_url,
        redis_url=args.redis,
        handshake_timeout=args.handshake_timeout,
        on_commit=outbox.nudge,
        api_rate=args.api_rate,
        websocket_compression=args.websocket_compression,
        gate=gate,
        bind_timeout=args.bind_timeout,
        max_per_address=args.max_connections_per_address,
        max_unbound_per_address=args.max_unbound_per_address,
        count_refusal=wire_refusals,
    )
    if args.metrics or args.metrics_token:
        Metrics(service.stats, hooks, args.metrics_token, wire_refusals).register(app)
    # aiohttp's keepalive timer starts when a connection opens and closes it if no complete
    # request has arrived by then: the timeout for slow or partial HTTP headers.
    runner = web.AppRunner(
        app,
        access_log=None,
        keepalive_timeout=args.handshake_timeout,
        shutdown_timeout=STOP_HTTP_SECONDS,
    )
    listener: asyncio.Server | None = None
    try:
        await runner.setup()
        assert runner.server is not None
        try:
            listener = await listen(runner.server, args.host, args.port, gate, start_serving=False)
        except OSError as exc:
            raise listen_error(exc, args.host, args.port) from exc
        # The default world only once the port is ours (a key is never made and lost),
        # and the first answer only once the banner is out.
        first_key: str | None = None
        worlds = await store.list_worlds()
        if not worlds and not args.no_default_world:
            _record, first_key = await service.add_world(DEFAULT_WORLD, "Default world")
            worlds = await store.list_worlds()
        outbox.start()
        tune_gc()
        shown = worlds[0].id if worlds else DEFAULT_WORLD
        rotate = command(_store_flags(args), "world", "rotate-key", shown)
        banner = _banner(base_url, shown, first_key, args.dev_dice, rotate, reachable)
        print(banner, flush=True)
        if len(worlds) > 1:
            print(f"  Other worlds: {', '.join(w.id for w in worlds[1:])}", flush=True)
        print(f"Listening on {base_url} (protocol {protocol.PROTOCOL_VERSION}).", flush=True)
        stop = asyncio.Event()
        if getattr(args, "handle_signals", False):
            _stop_on_signals(stop)
        await listener.start_serving()
        await stop.wait()
    finally:
        # Stop accepting; let the intents in flight finish and tell every client to
        # reconnect; send the webhooks their cards are due; then close the rest.
        if listener is not None:
            listener.close()
        await app[SOCKET_KEY].stop(STOP_SOCKETS_SECONDS)
        await outbox.stop()
        if listener is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(outbox.run_once(), STOP_OUTBOX_SECONDS)
        await runner.cleanup()
        await client.aclose()
        await hooks.close()
        await store.close()
    return 0


def _write_schemas(args: argparse.Namespace) -> int:
    from bridge.schemas import write_schemas

    written = write_schemas(Path(args.out))
    print(f"wrote {len(written)} schema files to {args.out}")
    return 0


def _build_module(args: argparse.Namespace) -> int:
    from bridge.transport.module_package import (
        PROJECT_ROOT,
        ZIP_NAME,
        ReleaseError,
        build_release,
        build_zip,
        write_public_manifest,
    )

    out = Path(args.out)
    if args.release or args.write_manifest:
        source = args.source or PROJECT_ROOT
        try:
            if args.write_manifest:
                print(f"wrote {write_public_manifest(source)}")
                return 0
            written = build_release(out, args.repository, source)
        except (ReleaseError, FileNotFoundError) as exc:
            print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
            return 2
        print("\n".join(f"wrote {path}" for path in written))
        return 0
    out.mkdir(parents=True, exist_ok=True)
    try:
        (out / ZIP_NAME).write_bytes(build_zip(args.url))
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {out / ZIP_NAME}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _resolve_data_dir(args)
    logging.basicConfig(level=log_level(), handlers=[log_handler(sys.stderr)])
    redact_urls_in_logs()
    try:
        return _run(args)
    except StartupError as exc:
        # One line a GM can act on; --debug adds how it came about.
        if args.debug:
            traceback.print_exc()
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    if args.command == "serve":
        args.handle_signals = True  # a stop is graceful (see _stop_on_signals)
        try:
            return asyncio.run(_serve(args))
        except KeyboardInterrupt:
            return 0
    if args.command == "world":
        return asyncio.run(_world_command(args))
    if args.command == "schemas":
        return _write_schemas(args)
    return _build_module(args)
