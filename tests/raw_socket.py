"""A client that speaks Engine.IO 4 / Socket.IO 5 frames by hand over a real websocket.

python-socketio's client only sends what a well-behaved client would; this one sends any
text frame, so tests can reproduce what a hostile client puts on the wire.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import aiohttp

from bridge.service.protocol import NAMESPACE

_ACK = re.compile(r"^3" + re.escape(NAMESPACE) + r",(\d+)(.*)$", re.S)
_EVENT = re.compile(r"^2" + re.escape(NAMESPACE) + r",(.*)$", re.S)


class RawSocket:
    """One websocket; ``frames`` holds every Socket.IO frame the bridge sent, in order."""

    def __init__(self, session: aiohttp.ClientSession, ws: aiohttp.ClientWebSocketResponse):
        self.session = session
        self.ws = ws
        self.acks: dict[int, Any] = {}
        self.events: list[tuple[str, Any]] = []
        self.frames: list[str] = []
        self.closed = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, url: str, compress: int = 0) -> RawSocket:
        """Open the websocket and wait for Engine.IO's open packet. ``compress`` offers
        permessage-deflate with that window size, as browsers do (0: not offered)."""
        session = aiohttp.ClientSession()
        ws = await session.ws_connect(
            f"{url}/socket.io/?EIO=4&transport=websocket", compress=compress
        )
        first = await ws.receive(timeout=10)
        assert isinstance(first.data, str) and first.data.startswith("0"), first
        return cls(session, ws)

    async def _read(self) -> None:
        try:
            async for message in self.ws:
                if message.type != aiohttp.WSMsgType.TEXT:
                    break
                data: str = message.data
                if data == "2":  # Engine.IO ping: answer, or the bridge drops us
                    await self.ws.send_str("3")
                    continue
                if not data.startswith("4"):
                    continue
                frame = data[1:]
                self.frames.append(frame)
                ack = _ACK.match(frame)
                if ack:
                    self.acks[int(ack.group(1))] = json.loads(ack.group(2))
                    continue
                event = _EVENT.match(frame)
                if event:
                    name, *args = json.loads(event.group(1))
                    self.events.append((name, args[0] if args else None))
        finally:
            self.closed.set()

    async def send(self, socketio_frame: str) -> None:
        """Send one Socket.IO frame (without Engine.IO's ``4`` message prefix)."""
        await self.ws.send_str("4" + socketio_frame)

    async def join(self, auth: Any) -> str:
        """Connect to the namespace; returns the CONNECT or CONNECT_ERROR frame."""
        await self.send(f"0{NAMESPACE},{json.dumps(auth)}")
        return await self.wait_frame(lambda f: f.startswith(("0" + NAMESPACE, "4" + NAMESPACE)))

    async def wait_frame(self, predicate: Any, deadline: float = 10, since: int = 0) -> str:
        """The first frame from index ``since`` on that matches (bounded wait)."""

        async def find() -> str:
            while True:
                for frame in self.frames[since:]:
                    if predicate(frame):
                        return frame
                if self.closed.is_set():
                    raise AssertionError(f"closed before a matching frame; got {self.frames}")
                await asyncio.sleep(0.02)

        return await asyncio.wait_for(find(), deadline)

    async def wait_ack(self, ack_id: int, deadline: float = 10) -> Any:
        await self.wait_frame(lambda f: f.startswith(f"3{NAMESPACE},{ack_id}["), deadline)
        return self.acks[ack_id]

    async def wait_event(self, name: str, deadline: float = 10) -> Any:
        await self.wait_frame(lambda f: f.startswith(f'2{NAMESPACE},["{name}"'), deadline)
        return next(data for event, data in self.events if event == name)

    async def call(self, ack_id: int, event: Any, payload: Any) -> Any:
        """Emit ``[event, payload]`` with an ack id and wait for the ack's first argument."""
        await self.send(f"2{NAMESPACE},{ack_id}{json.dumps([event, payload])}")
        return (await self.wait_ack(ack_id))[0]

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()
        await self.session.close()
