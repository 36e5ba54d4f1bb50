"""The aiohttp app and the Socket.IO server in front of the service.

Thin on purpose: the wire lives in :mod:`bridge.transport` (the port that answers what a
connection says, and the bridge's own websocket-only Socket.IO server in front of it);
this module builds the app around them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from bridge import __version__
from bridge.service import BridgeService, protocol
from bridge.transport.connections import (
    DEFAULT_PER_ADDRESS,
    DEFAULT_UNBOUND_PER_ADDRESS,
    AddressGate,
    HandshakeRate,
    Seats,
    ignore_refusal,
)
from bridge.transport.fan_out import RoomFanOut
from bridge.transport.gc_pauses import tune_gc
from bridge.transport.http_api import API_RATE_PER_SECOND, HttpApi
from bridge.transport.module_package import ZIP_NAME, build_zip, document_routes, manifest
from bridge.transport.port import RATE_BURST, RATE_PER_SECOND
from bridge.transport.redis_fan_out import RedisRoomFanOut, pubsub_channel
from bridge.transport.socket import JOIN_BURST, JOIN_RATE_PER_SECOND, FateSocket

__all__ = [
    "JOIN_BURST",
    "JOIN_RATE_PER_SECOND",
    "RATE_BURST",
    "RATE_PER_SECOND",
    "RedisRoomFanOut",
    "create_app",
    "pubsub_channel",
    "tune_gc",
]

# A websocket frame past this size ends its connection (Engine.IO's maxPayload); the
# protocol's own message limit is below it, so an oversized intent is answered instead.
TRANSPORT_LIMIT_BYTES = 1024 * 1024
# A connection must finish its HTTP request, and then join /fate, within this many seconds
# (a join refused does not count; a socket that leaves /fate must join again as soon).
HANDSHAKE_TIMEOUT_SECONDS = 5.0
# A player joined with a world id must be bound (the GM's client vouching for it, direct
# mode) within this many seconds, or it is told why and closed.
BIND_TIMEOUT_SECONDS = 30.0

SERVICE_KEY = web.AppKey("service", BridgeService)
SOCKET_KEY = web.AppKey("socket", FateSocket)
CONFIG_KEY = web.AppKey("config", dict[str, Any])


def public_base_url(request: web.Request) -> str:
    configured: str | None = request.app[CONFIG_KEY].get("public_url")
    return configured or f"{request.scheme}://{request.host}"


async def healthz(request: web.Request) -> web.Response:
    health = protocol.Health(ok=True, version=__version__, protocol=protocol.PROTOCOL_VERSION)
    return web.json_response(health.model_dump(mode="json"))


async def module_manifest(request: web.Request) -> web.Response:
    return web.json_response(manifest(public_base_url(request)))


async def module_zip(request: web.Request) -> web.Response:
    try:
        body = build_zip(public_base_url(request))
    except FileNotFoundError as exc:
        raise web.HTTPServiceUnavailable(text=str(exc)) from exc
    return web.Response(
        body=body,
        content_type="application/zip",
        headers={"Content-Disposition": f'attachment; filename="{ZIP_NAME}"'},
    )


def create_app(
    service: BridgeService,
    *,
    cors_origins: str | list[str] = "*",
    public_url: str | None = None,
    redis_url: str | None = None,
    handshake_timeout: float = HANDSHAKE_TIMEOUT_SECONDS,
    on_commit: Callable[[], None] | None = None,
    api_rate: float = API_RATE_PER_SECOND,
    websocket_compression: bool = False,
    gate: AddressGate | None = None,
    bind_timeout: float = BIND_TIMEOUT_SECONDS,
    max_per_address: int = DEFAULT_PER_ADDRESS,
    max_unbound_per_address: int = DEFAULT_UNBOUND_PER_ADDRESS,
    count_refusal: Callable[[str], None] = ignore_refusal,
) -> web.Application:
    """Build the app; the caller opens and closes the service's store around it.

    With ``redis_url`` several bridge processes share rooms: an emit on one reaches
    the clients of all (:class:`bridge.transport.RedisRoomFanOut`). ``on_commit`` is called
    after any intent that committed something (it wakes the webhook outbox).
    Websockets decline permessage-deflate unless ``websocket_compression``
    (see :class:`bridge.transport.FateSocket`). ``gate`` is the TCP listener's
    (its strangers stop counting once they join ``/fate``); joined sockets are capped per
    address at ``max_per_address`` GMs and bound players and ``max_unbound_per_address``
    players not yet bound, who must be bound within ``bind_timeout`` seconds (0: no cap).
    ``count_refusal`` is handed the reason of each refusal the wire makes
    (:class:`bridge.transport.connections.RefusalCounts`).
    """
    app = web.Application(client_max_size=TRANSPORT_LIMIT_BYTES)
    app[SERVICE_KEY] = service
    app[CONFIG_KEY] = {"public_url": public_url}
    fan_out = RedisRoomFanOut(redis_url) if redis_url else RoomFanOut()
    socket = FateSocket(
        service,
        fan_out,
        on_commit=on_commit,
        join_timeout=handshake_timeout,
        bind_timeout=bind_timeout,
        seats=Seats(max_per_address, max_unbound_per_address),
        # Capped per address only where connections are (0: every client on one address,
        # as the bench's load generators are).
        handshakes=HandshakeRate() if max_per_address else HandshakeRate(0),
        gate=gate,
        compress=websocket_compression,
        cors_origins=cors_origins,
        max_payload=TRANSPORT_LIMIT_BYTES,
        count_refusal=count_refusal,
    )
    socket.attach(app)
    app[SOCKET_KEY] = socket
    if isinstance(fan_out, RedisRoomFanOut):
        shared: RedisRoomFanOut = fan_out

        async def start_fan_out(_app: web.Application) -> None:
            await shared.start()

        async def stop_fan_out(_app: web.Application) -> None:
            await shared.stop()

        # Before the server listens: its first client already hears every process.
        app.on_startup.append(start_fan_out)
        app.on_cleanup.append(stop_fan_out)
    HttpApi(service, fan_out, on_commit, rate_per_second=api_rate).register(app)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/module/module.json", module_manifest)
    app.router.add_get(f"/module/{ZIP_NAME}", module_zip)
    # The documents the manifest links to (readme, bugs, license, changelog).
    app.router.add_routes(document_routes())
    return app
