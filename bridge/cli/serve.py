"""``serve``: the bridge listening, until a stop signal; what a GM needs printed once it
does."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import logging
import os
import signal
from urllib.parse import urlsplit

from aiohttp import web

from bridge.cli.options import (
    AddParser,
    add_env_option,
    add_env_switch,
    add_webhook_allow,
    count,
    port,
    positive,
    public_url,
    webhook_reach,
)
from bridge.cli.release import release_manifest_url
from bridge.cli.startup import (
    DataLock,
    command,
    is_wildcard,
    listen_error,
    prepare_data_dir,
    reachable_addresses,
    url_for,
)
from bridge.cli.stores import db_path, flags_of, opened_store
from bridge.server import (
    BIND_TIMEOUT_SECONDS,
    HANDSHAKE_TIMEOUT_SECONDS,
    SOCKET_KEY,
    create_app,
    tune_gc,
)
from bridge.service import BridgeService, protocol
from bridge.service.webhooks.outbox import WebhookOutbox
from bridge.service.webhooks.reach import WebhookReach, webhook_client
from bridge.store.base import Store
from bridge.store.redis import DEFAULT_PRESENCE_TTL
from bridge.store.webhooks import webhook_store_for
from bridge.transport.connections import (
    DEFAULT_PER_ADDRESS,
    DEFAULT_UNBOUND_PER_ADDRESS,
    AddressGate,
    RefusalCounts,
    listen,
)
from bridge.transport.metrics import Metrics

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DEFAULT_WORLD = "default"


def add_command(add_parser: AddParser) -> None:
    serve = add_parser("serve", help="run the bridge")
    serve.set_defaults(run=_run)
    add_env_option(
        serve,
        "--host",
        "FATE_BRIDGE_HOST",
        DEFAULT_HOST,
        "interface to listen on ({env}; default %(default)s)",
    )
    add_env_option(
        serve,
        "--port",
        "FATE_BRIDGE_PORT",
        DEFAULT_PORT,
        "port to listen on ({env}; default %(default)s)",
        type=port,
    )
    add_env_option(
        serve,
        "--public-url",
        "FATE_BRIDGE_PUBLIC_URL",
        None,
        "URL Foundry uses to reach the bridge, if not http://HOST:PORT "
        "(e.g. behind a TLS proxy; {env})",
        type=public_url,
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
    add_env_option(
        serve,
        "--presence-ttl",
        "FATE_BRIDGE_PRESENCE_TTL",
        DEFAULT_PRESENCE_TTL,
        "with --redis: a bridge process that dies stops counting its users as present "
        "after this long ({env}; default %(default)s)",
        type=positive,
        metavar="SECONDS",
    )
    add_env_option(
        serve,
        "--max-connections-per-address",
        "FATE_BRIDGE_MAX_PER_ADDRESS",
        DEFAULT_PER_ADDRESS,
        "keep at most N open connections from one address that have not joined the "
        "bridge (a new one cuts the oldest idle one), and refuse joined GM and bound player "
        "connections past N more; 0 for no cap "
        "(behind a reverse proxy every connection comes from the proxy: raise it there; "
        "{env}; default %(default)s)",
        type=count,
        metavar="N",
    )
    add_env_option(
        serve,
        "--max-unbound-per-address",
        "FATE_BRIDGE_MAX_UNBOUND_PER_ADDRESS",
        DEFAULT_UNBOUND_PER_ADDRESS,
        "refuse a player's connection past N from one address that no GM has bound yet "
        "(direct mode; they never count against a GM's); 0 for no cap "
        "({env}; default %(default)s)",
        type=count,
        metavar="N",
    )
    add_env_option(
        serve,
        "--bind-timeout",
        "FATE_BRIDGE_BIND_TIMEOUT",
        BIND_TIMEOUT_SECONDS,
        "close a player's connection, with a notice, that no GM has bound within this "
        "long (direct mode; {env}; default %(default)s)",
        type=positive,
        metavar="SECONDS",
    )
    add_env_option(
        serve,
        "--handshake-timeout",
        "FATE_BRIDGE_HANDSHAKE_TIMEOUT",
        HANDSHAKE_TIMEOUT_SECONDS,
        "close a connection that has not sent a whole HTTP request, or has not joined "
        "the bridge's namespace, within this long ({env}; default %(default)s)",
        type=positive,
        metavar="SECONDS",
    )
    serve.add_argument(
        "--api-rate",
        type=positive,
        default="10.0",
        metavar="PER_SECOND",
        help="HTTP API requests per second per world, with bursts of three times that "
        "(default %(default)s)",
    )
    add_env_switch(
        serve,
        "--websocket-compression",
        "FATE_BRIDGE_WEBSOCKET_COMPRESSION",
        "accept permessage-deflate on websockets: frames shrink to about a third, paid "
        "in CPU for every frame to every client ({env}; off by default)",
    )
    add_env_switch(
        serve,
        "--metrics",
        "FATE_BRIDGE_METRICS",
        "answer GET /metrics in Prometheus's text format (connections, intents by "
        "outcome, commit latency, GC pauses, webhook outbox depth, refusals); off by "
        "default ({env})",
    )
    serve.add_argument(
        "--metrics-token",
        default=os.environ.get("FATE_BRIDGE_METRICS_TOKEN") or None,
        metavar="TOKEN",
        help="turn /metrics on, answering only a scrape that sends 'Authorization: Bearer "
        "TOKEN' (env FATE_BRIDGE_METRICS_TOKEN; prefer the environment: a flag shows in ps)",
    )
    add_webhook_allow(serve)
    serve.add_argument(
        "--no-default-world",
        action="store_true",
        help=f"don't register the '{DEFAULT_WORLD}' world on first start",
    )


def is_loopback_url(url: str) -> bool:
    """True when ``url``'s host is this machine's loopback (127.0.0.0/8, ::1, localhost)."""
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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


def _run(args: argparse.Namespace) -> int:
    """``serve``: until SIGTERM or SIGINT, then a graceful stop (see _stop_on_signals)."""
    try:
        return asyncio.run(serve(args, handle_signals=True))
    except KeyboardInterrupt:
        return 0


async def serve(args: argparse.Namespace, *, handle_signals: bool = False) -> int:
    """Serve as ``args`` (parsed by :func:`bridge.cli.parse_args`) say until cancelled, or
    until a stop signal when ``handle_signals``; every problem a GM can fix before the
    bridge listens is a ``StartupError``."""
    reach = webhook_reach(args)  # a wrong FATE_BRIDGE_WEBHOOK_ALLOW is one line, first
    lock: DataLock | None = None
    if not args.redis:
        # Checked before anything is opened: the one line says what to fix.
        prepare_data_dir(args.data_dir, create=True, parents=args.data_dir_is_default)
        lock = DataLock(db_path(args))
        lock.acquire()
    try:
        store = await opened_store(args, create=True)
        return await _serve_store(args, store, reach, handle_signals)
    finally:
        if lock is not None:
            lock.release()


async def _serve_store(
    args: argparse.Namespace, store: Store, reach: WebhookReach, handle_signals: bool
) -> int:
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
        rotate = command(flags_of(args), "world", "rotate-key", shown)
        banner = _banner(base_url, shown, first_key, args.dev_dice, rotate, reachable)
        print(banner, flush=True)
        if len(worlds) > 1:
            print(f"  Other worlds: {', '.join(w.id for w in worlds[1:])}", flush=True)
        print(f"Listening on {base_url} (protocol {protocol.PROTOCOL_VERSION}).", flush=True)
        stop = asyncio.Event()
        if handle_signals:
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
