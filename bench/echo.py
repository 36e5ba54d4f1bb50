"""Rungs 0 and 1: the transport alone, answering every message with what it carried.

``python -m bench.echo ws PORT``: aiohttp websocket echo (the frame comes back as sent).
``python -m bench.echo sio PORT``: python-socketio on aiohttp, every ``/fate`` event acked
with its payload: the same server configuration as the bridge's, and no service behind it.
``python -m bench.echo sio-room PORT``: the same, and each event's payload also goes to
every client in the sender's room (the ``room`` its connect auth names), by python-socketio's
own room emit: the framework's cost of the fan-out an action's emits make.
"""

from __future__ import annotations

import sys
from typing import Any

import socketio
from aiohttp import WSMsgType, web

NAMESPACE = "/fate"


async def healthz(_request: web.Request) -> web.Response:
    return web.json_response({"ok": True})


async def ws_echo(request: web.Request) -> web.WebSocketResponse:
    ws = web.WebSocketResponse()
    await ws.prepare(request)
    async for message in ws:
        if message.type == WSMsgType.TEXT:
            await ws.send_str(message.data)
    return ws


def ws_app() -> web.Application:
    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/echo", ws_echo)
    return app


def sio_app(rooms: bool = False) -> web.Application:
    app = web.Application()
    sio = socketio.AsyncServer(async_mode="aiohttp", transports=["websocket"])
    room_of: dict[str, str] = {}

    async def connect(sid: str, _environ: Any, auth: Any = None) -> None:
        room = auth.get("room") if rooms and isinstance(auth, dict) else None
        if isinstance(room, str):
            room_of[sid] = room
            await sio.enter_room(sid, room, namespace=NAMESPACE)

    async def disconnect(sid: str, *_reason: Any) -> None:
        room_of.pop(sid, None)

    async def echo(_event: str, sid: str, data: Any) -> Any:
        room = room_of.get(sid)
        if room is not None:
            await sio.emit("echo", data, room=room, namespace=NAMESPACE)
        return data

    sio.on("connect", connect, namespace=NAMESPACE)
    sio.on("disconnect", disconnect, namespace=NAMESPACE)
    sio.on("*", echo, namespace=NAMESPACE)

    sio.attach(app)
    app.router.add_get("/healthz", healthz)
    return app


if __name__ == "__main__":
    kind, port = sys.argv[1], int(sys.argv[2])
    web.run_app(
        ws_app() if kind == "ws" else sio_app(rooms=kind == "sio-room"),
        host="127.0.0.1",
        port=port,
        print=None,
        access_log=None,
    )
