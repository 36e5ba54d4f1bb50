"""The active GM's client in relay mode, for the bench: ``python -m bench.relay_host``.

It does what the module's ``RelayHost`` does (foundry-module/scripts/relay.mjs) with two
python-socketio clients: one on the fake Foundry server (bench/foundry.py) as the GM user,
one on the bridge (``/fate``, GM auth with the world key, its hello said as the module
says it). A ``relay.request`` on the module's channel goes to the bridge as a ``relay``
envelope naming the sender Foundry's server stamped (never one the message claims); the
ack's emits go back on the channel as ``relay.emits``, then the ack without them as
``relay.answer`` to the sender. Every ``emits`` frame the bridge sends this connection is
forwarded on the channel too, and the host says how its bridge is (``relay.host``) when it
starts and whenever a client asks (``relay.ask``).

Its configuration is one JSON line on stdin (``foundry``, ``bridge``: URLs; ``auth``: the
bridge's connect auth; ``user``: the GM's Foundry user id). It prints ``ready`` once both
connections are up. Then each ``stats`` line on stdin gets one JSON line of what it timed
since the last: for each relayed intent, its call to the bridge (``bridge_calls``) and the
whole of its handling, from the request's arrival to its answer's emit (``handled``), in
seconds. Any other line, or stdin's end, closes both connections.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import socketio

from bridge.service.protocol import EMITS_FRAME, NAMESPACE, PROTOCOL_VERSION

MODULE_ID = "fate-bridge"
CHANNEL = f"module.{MODULE_ID}"
# The module's bound on one relayed message (the bridge's MAX_MESSAGE_BYTES).
MAX_RELAYED_BYTES = 64 * 1024
CALL_TIMEOUT = 30.0


def sender_of(args: tuple[Any, ...]) -> str | None:
    """The sender Foundry's server stamped on a channel message: the handler's last
    argument (after the data, so a client cannot put a forged id in its place)."""
    sender = args[-1] if len(args) > 1 else None
    return sender if isinstance(sender, str) and sender else None


class RelayHost:
    def __init__(self, user: str) -> None:
        self.user = user
        self.foundry = socketio.AsyncClient(reconnection=False)
        self.bridge = socketio.AsyncClient(reconnection=False)
        self.foundry.on(CHANNEL, self.receive)
        self.bridge.on(EMITS_FRAME, self.forward_emits, namespace=NAMESPACE)
        self.bridge_calls: list[float] = []
        self.handled: list[float] = []

    async def start(self, foundry_url: str, bridge_url: str, auth: dict[str, Any]) -> None:
        await self.bridge.connect(
            bridge_url, namespaces=[NAMESPACE], auth=auth, transports=["websocket"]
        )
        hello = await self.bridge.call(
            "hello",
            {"request_id": "relay-host-hello", "module_version": "bench"},
            namespace=NAMESPACE,
            timeout=CALL_TIMEOUT,
        )
        if not isinstance(hello, dict) or not hello.get("ok"):
            raise RuntimeError(f"the bridge refused the relay host's hello: {hello!r}")
        await self.foundry.connect(
            foundry_url, auth={"userId": self.user}, transports=["websocket"]
        )
        await self.announce()

    async def stop(self) -> None:
        await self.foundry.disconnect()
        await self.bridge.disconnect()

    async def post(self, message: dict[str, Any]) -> None:
        await self.foundry.emit(CHANNEL, message)

    async def announce(self) -> None:
        """Tell every client how this GM's bridge connection is."""
        await self.post(
            {
                "t": "relay.host",
                "state": "connected",
                "reason": None,
                "message": None,
                "protocol": PROTOCOL_VERSION,
            }
        )

    async def forward_emits(self, frame: Any) -> None:
        """A frame the bridge sent this connection by itself reaches every client."""
        if isinstance(frame, dict) and isinstance(frame.get("emits"), list):
            await self.post({"t": "relay.emits", "emits": frame["emits"]})

    async def receive(self, *args: Any) -> None:
        message = args[0] if args else None
        sender = sender_of(args)
        if not isinstance(message, dict) or sender is None:
            return
        if message.get("t") == "relay.ask":
            await self.announce()
        elif message.get("t") == "relay.request":
            await self.relay(message, sender)

    async def relay(self, message: dict[str, Any], sender: str) -> None:
        arrived = time.perf_counter()
        payload = message.get("payload")
        request_id = payload.get("request_id") if isinstance(payload, dict) else None
        if not isinstance(request_id, str) or not request_id:
            return  # nothing to answer to: not a request the module sends
        event = message.get("event")
        if sender == self.user:
            return await self.refuse(sender, request_id, "forbidden", "GMs connect themselves.")
        if not isinstance(event, str) or not event or len(event) > 64:
            return await self.refuse(sender, request_id, "invalid", "Not an intent.")
        if len(json.dumps(message)) > MAX_RELAYED_BYTES:
            return await self.refuse(sender, request_id, "too_large", "Message too large.")
        began = time.perf_counter()
        try:
            ack = await self.bridge.call(
                "relay",
                {"user": sender, "event": event, "payload": payload},
                namespace=NAMESPACE,
                timeout=CALL_TIMEOUT,
            )
        except socketio.exceptions.SocketIOError as exc:
            return await self.refuse(sender, request_id, "timeout", f"No answer: {exc}")
        self.bridge_calls.append(time.perf_counter() - began)
        if not isinstance(ack, dict):
            return await self.refuse(sender, request_id, "internal", "Not an ack.")
        answer = dict(ack)
        emits = answer.pop("emits", None)
        # As the module's connection delivers an ack's emits before the call resolves: they
        # reach every client before the answer does.
        if isinstance(emits, list) and emits:
            await self.post({"t": "relay.emits", "emits": emits})
        await self.answer(sender, request_id, answer)
        self.handled.append(time.perf_counter() - arrived)

    def take_stats(self) -> dict[str, list[float]]:
        stats = {"bridge_calls": self.bridge_calls, "handled": self.handled}
        self.bridge_calls, self.handled = [], []
        return stats

    async def refuse(self, to: str, request_id: str, code: str, message: str) -> None:
        await self.answer(
            to, request_id, {"ok": False, "error": {"code": code, "message": message}}
        )

    async def answer(self, to: str, request_id: str, ack: dict[str, Any]) -> None:
        await self.post({"t": "relay.answer", "to": to, "id": request_id, "ack": ack})


async def serve(config: dict[str, Any]) -> None:
    host = RelayHost(config["user"])
    await host.start(config["foundry"], config["bridge"], config["auth"])
    print("ready", flush=True)
    loop = asyncio.get_running_loop()
    while (await loop.run_in_executor(None, sys.stdin.readline)).strip() == "stats":
        print(json.dumps(host.take_stats()), flush=True)
    await host.stop()


def main() -> None:
    asyncio.run(serve(json.loads(sys.stdin.readline())))


if __name__ == "__main__":
    main()
