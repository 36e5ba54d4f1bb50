"""The aiohttp app and the Socket.IO server in front of the service.

Thin on purpose: the wire lives in :mod:`bridge.transport` (the port that answers what a
connection says, and the bridge's own websocket-only Socket.IO server in front of it);
this module builds the app around them.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

from bridge import __version__, protocol
from bridge.connections import (
    DEFAULT_PER_ADDRESS,
    DEFAULT_UNBOUND_PER_ADDRESS,
    AddressGate,
    HandshakeRate,
    Seats,
)
from bridge.http_api import API_RATE_PER_SECOND, HttpApi
from bridge.module_package import ZIP_NAME, build_zip, document_routes, manifest
from bridge.service import BridgeService
from bridge.transport import RedisRoomFanOut, RoomFanOut
from bridge.transport.port import COSTED_READS, RATE_BURST, RATE_PER_SECOND
from bridge.transport.redis_fan_out import pubsub_channel
from bridge.transport.socket import JOIN_BURST, JOIN_RATE_PER_SECOND, FateSocket

__all__ = [
    "COSTED_READS",
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


# Every collection's survivors are frozen (GcFreezer), so a collection walks only what was
# allocated since the last one, and the young threshold alone sets the pause. The young
# generation holds more objects than its threshold when a collection starts (it counts
# allocations net of frees, and every commit frees the old state's objects as it builds
# the new one's). Measured in the 100-world run, when survivors were frozen only after
# middle collections: (5,000, 4) paused up to 24-32 ms of CPU, (2,000, 4) 15-20 ms,
# (1,000, 4) 12-14 ms for 40-70% more collector CPU in all; freezing after young ones too,
# (2,000, 4) pauses 9-17 ms, with about 30% less collector time in all.
GC_THRESHOLDS = (2_000, 4, 10)
# The frozen heap is counted this often, and everything is thawed for one full collection
# once it has grown by GC_THAW_GROWTH since the last (see GcFreezer).
GC_THAW_SECONDS = 60.0
GC_THAW_GROWTH = 0.25


class GcFreezer:
    """Keeps every garbage-collection pause proportional to what was allocated lately,
    never to the whole heap.

    CPython's full collection walks every tracked object: with 100 worlds and 1,000
    connections that is ~300,000 objects and ~200 ms, far over a request's budget. So
    after every collection, young ones included, what survived it is frozen, and no
    later collection walks it again. Before, only a middle collection's survivors were
    frozen, so each survivor was walked twice, and the middle collection, walking four
    young collections' survivors (20,000-30,000 objects in the 100-world run, none of
    them garbage), made the longest pauses (15-27 ms).
    Frozen objects are still freed by reference counting the moment they are dropped;
    only garbage in reference cycles among them waits, for the rare collection that
    thaws everything first: the frozen heap is looked at every ``thaw_seconds``, and
    thawed when it has grown by ``thaw_growth`` since the last thaw. Steady play leaves
    no such garbage (a full collection found none after 20 s of the 100-world run);
    closed connections do (about 45 objects, 16 KiB, each), so a stream of reconnects
    is reclaimed within a minute of its growing the heap by a quarter. That collection
    pauses as long as walking the whole heap takes (~150-400 ms at 100 worlds and 1,000
    connections on a shared 2-core machine), at most once a minute and only then."""

    def __init__(
        self,
        schedule: Callable[[Callable[[], None]], Any],
        thaw_seconds: float = GC_THAW_SECONDS,
        thaw_growth: float = GC_THAW_GROWTH,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.schedule = schedule
        self.thaw_seconds = thaw_seconds
        self.thaw_growth = thaw_growth
        self.clock = clock
        self.checked_at = clock()
        self.baseline = gc.get_freeze_count()
        self.thawing = False

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        generation = info.get("generation")
        if phase != "stop":
            return
        if self.thawing:
            # A full collection of everything is scheduled; once one has run, its
            # survivors are frozen again and are the new baseline.
            if generation == 2:
                self.thawing = False
                gc.freeze()
                self.baseline = gc.get_freeze_count()
            return
        gc.freeze()
        now = self.clock()
        # Counting the frozen objects walks all of them (~1 ms per 300,000): only when due.
        if now - self.checked_at < self.thaw_seconds:
            return
        self.checked_at = now
        if gc.get_freeze_count() > self.baseline * (1 + self.thaw_growth):
            # Not here: a collection cannot start inside a collector callback, and
            # CPython's own heuristics may not run a full one for a long time.
            self.thawing = True
            try:
                self.schedule(self.collect_everything)
            except RuntimeError:  # the event loop has closed: the process is ending
                self.thawing = False

    def collect_everything(self) -> None:
        """Thaw and collect the whole heap: the one long pause, when it is due."""
        gc.unfreeze()
        gc.collect()


def tune_gc() -> None:
    """Set the collector up for a long-running server, once start-up is done (called on
    the running event loop).

    ``gc.freeze`` moves everything alive now (imported modules, pydantic schemas, the
    app) into a permanent generation that no collection traverses again; from then on
    :class:`GcFreezer` freezes each collection's survivors likewise."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    if not any(isinstance(callback, GcFreezer) for callback in gc.callbacks):
        # Collections run in whichever thread allocates (the store's worker too): the
        # thaw's full collection runs on the event loop's.
        loop = asyncio.get_running_loop()
        gc.callbacks.append(GcFreezer(loop.call_soon_threadsafe))


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
