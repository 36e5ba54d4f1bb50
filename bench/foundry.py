"""A stand-in for Foundry's own server, as far as a module's socket channel goes, for the
relay part of the bench: ``python -m bench.foundry PORT``.

What it does as Foundry's server does (and as the Node suites' fake does,
``tests/js/support/foundry-server.mjs``):

- A client connects as its user (Foundry knows who a socket is from its session; here the
  handshake's ``auth={"userId": ...}`` names it). A connection naming no user is refused.
- A message on a ``module.*`` (or ``system.*``) event goes to every *other* connected
  client, never back to its emitter, with no addressing, and with the sender's user id
  added by the server after whatever the client sent: a handler runs as
  ``(data, ..., senderUserId)``.
- Presence: a client learns who is active when it joins (``activeUsers``), and every other
  client hears ``userActivity(userId, {"active": ...})`` when a user's first connection
  opens or its last closes.

``GET /healthz`` answers once it listens; ``GET /stats`` counts the messages forwarded
(one per emit) and delivered (one per receiving client).
"""

from __future__ import annotations

import re
import sys
from typing import Any

import socketio
from aiohttp import web

CHANNEL = re.compile(r"^(module|system)\.")


def foundry_app() -> web.Application:
    app = web.Application()
    # Foundry leaves Socket.IO's buffer at its default (1e6 bytes): a larger message closes
    # its emitter's connection.
    sio = socketio.AsyncServer(async_mode="aiohttp", transports=["websocket"], async_handlers=False)
    user_of: dict[str, str] = {}
    counts = {"forwarded": 0, "delivered": 0}

    def tabs(user: str) -> int:
        return sum(1 for u in user_of.values() if u == user)

    async def connect(sid: str, _environ: Any, auth: Any = None) -> None:
        user = auth.get("userId") if isinstance(auth, dict) else None
        if not isinstance(user, str) or not user:
            raise socketio.exceptions.ConnectionRefusedError("no session")
        user_of[sid] = user
        await sio.emit("activeUsers", sorted(set(user_of.values())), to=sid)
        if tabs(user) == 1:
            await sio.emit("userActivity", (user, {"active": True}), skip_sid=sid)

    async def disconnect(sid: str, *_reason: Any) -> None:
        user = user_of.pop(sid, None)
        if user is not None and tabs(user) == 0:
            await sio.emit("userActivity", (user, {"active": False}))

    async def forward(event: str, sid: str, *args: Any) -> None:
        user = user_of.get(sid)
        if user is None or not CHANNEL.match(event):
            return
        counts["forwarded"] += 1
        counts["delivered"] += len(user_of) - 1
        # The sender's id is the server's to add, last, whatever the client put before it.
        await sio.emit(event, (*args, user), skip_sid=sid)

    sio.on("connect", connect)
    sio.on("disconnect", disconnect)
    sio.on("*", forward)
    sio.attach(app)

    async def healthz(_request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    async def stats(_request: web.Request) -> web.Response:
        return web.json_response({**counts, "clients": len(user_of)})

    app.router.add_get("/healthz", healthz)
    app.router.add_get("/stats", stats)
    return app


if __name__ == "__main__":
    web.run_app(foundry_app(), host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)
