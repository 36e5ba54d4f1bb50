"""The aiohttp app and the python-socketio server in front of the service.

Thin on purpose: it authenticates connections, keeps one session per socket,
bounds message size and rate, hands every event to the service and emits what
the service returns.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

import socketio
from aiohttp import web

from bridge import __version__, protocol
from bridge.http_api import API_RATE_PER_SECOND, HttpApi
from bridge.module_package import ZIP_NAME, build_zip, manifest
from bridge.ratelimit import TokenBucket
from bridge.service import BridgeService, ConnectRefused, Reply, Session, error
from bridge.service.session import user_room

log = logging.getLogger("bridge.server")

# Below engine.io's own limit, which drops the connection instead of answering.
TRANSPORT_LIMIT_BYTES = 1024 * 1024
RATE_PER_SECOND = 20.0
RATE_BURST = 40.0

SERVICE_KEY = web.AppKey("service", BridgeService)
CONFIG_KEY = web.AppKey("config", dict[str, Any])


class FateNamespace(socketio.AsyncNamespace):  # type: ignore[misc]
    """``/fate``: one class-level instance, so per-socket state lives in dicts keyed by sid."""

    def __init__(self, service: BridgeService, on_commit: Callable[[], None] | None = None) -> None:
        super().__init__(protocol.NAMESPACE)
        self.service = service
        self.on_commit = on_commit
        self.sessions: dict[str, Session] = {}
        self.buckets: dict[str, TokenBucket] = {}

    async def trigger_event(self, event: str, *args: Any) -> Any:
        if event == "connect":
            sid, _environ, auth = (*args, None)[:3]
            return await self._connect(sid, auth)
        if event == "disconnect":
            sid = args[0]
            gone = self.sessions.pop(sid, None)
            if gone is not None:
                await self.service.disconnect(gone)
            self.buckets.pop(sid, None)
            return None
        sid, *payload = args
        reply = await self._dispatch(sid, event, payload)
        for emission in reply.emissions:
            await self.emit(emission.event, emission.payload, room=emission.room)
        if reply.emissions and self.on_commit is not None:
            self.on_commit()
        return reply.ack

    async def _connect(self, sid: str, auth: object) -> None:
        try:
            session = await self.service.authenticate(sid, auth)
        except ConnectRefused as refused:
            raise socketio.exceptions.ConnectionRefusedError(
                "refused", refused.refusal.model_dump(mode="json")
            ) from None
        self.sessions[sid] = session
        self.buckets[sid] = TokenBucket(RATE_PER_SECOND, RATE_BURST, stamp=time.monotonic())
        # A player hears the world only once the GM's client has vouched for it (the
        # "bound" notice reaches its user room); see _dispatch.
        await self.enter_room(sid, user_room(session.world_id, session.user_id))
        if session.bound:
            await self.enter_room(sid, session.room)
        await self.service.connected(session)
        log.info(
            "connected %s as %s %s in %s", sid, session.role, session.user_id, session.world_id
        )

    async def _dispatch(self, sid: str, event: str, payload: list[Any]) -> Reply:
        session = self.sessions.get(sid)
        if session is None:
            return Reply(error("forbidden", "Not connected."))
        if not self.buckets[sid].take(time.monotonic()):
            return Reply(error("rate_limited", "Too many messages; slow down."))
        if len(payload) != 1:
            return Reply(error("invalid", "Send exactly one JSON object per event."))
        try:
            size = len(json.dumps(payload[0]))
        except (TypeError, ValueError):
            return Reply(error("invalid", "The message is not JSON."))
        if size > protocol.MAX_MESSAGE_BYTES:
            return Reply(
                error("too_large", f"The message is over {protocol.MAX_MESSAGE_BYTES} bytes.")
            )
        try:
            was_bound = session.bound
            reply = await self.service.handle(session, event, payload[0])
            if session.bound and not was_bound:
                await self.enter_room(sid, session.room)
            if reply.vouched is not None:
                await self._bind_local(reply.vouched)
            return reply
        except Exception:
            log.exception("handler for %s failed", event)
            return Reply(error("internal", "The bridge failed on this message; nothing changed."))

    async def _bind_local(self, vouched: tuple[str, str, str]) -> None:
        """Bind this process's connections that carry the vouched nonce, and let them
        hear the world at once (the notice itself goes out as an emission)."""
        for sid, session in list(self.sessions.items()):
            if (session.world_id, session.user_id, session.bind_nonce) == vouched:
                session.bound = True
                await self.enter_room(sid, session.room)


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
    on_commit: Callable[[], None] | None = None,
    api_rate: float = API_RATE_PER_SECOND,
) -> web.Application:
    """Build the app; the caller opens and closes the service's store around it.

    With ``redis_url`` several bridge processes share rooms: an emit on one reaches
    the clients of all (python-socketio's AsyncRedisManager). ``on_commit`` is called
    after any intent that committed something (it wakes the webhook outbox).
    """
    app = web.Application(client_max_size=TRANSPORT_LIMIT_BYTES)
    app[SERVICE_KEY] = service
    app[CONFIG_KEY] = {"public_url": public_url}
    sio = socketio.AsyncServer(
        async_mode="aiohttp",
        cors_allowed_origins=cors_origins,
        max_http_buffer_size=TRANSPORT_LIMIT_BYTES,
        transports=["websocket"],
        client_manager=socketio.AsyncRedisManager(redis_url) if redis_url else None,
    )
    sio.register_namespace(FateNamespace(service, on_commit))
    sio.attach(app)
    HttpApi(service, sio, on_commit, rate_per_second=api_rate).register(app)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/module/module.json", module_manifest)
    app.router.add_get(f"/module/{ZIP_NAME}", module_zip)
    return app
