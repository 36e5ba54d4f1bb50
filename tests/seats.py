"""People at a table over real Socket.IO, and the actors they play."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import socketio

from bridge.service.protocol import NAMESPACE

_ids = itertools.count(1)


def card_put_back(ack: Any) -> Any:
    """``ack`` as the module's connection reads it: an action's answer whose card was left
    to that card's emit in the same ack (protocol.ActionData) gets it back from there."""
    emits = ack.get("emits") if isinstance(ack, dict) else None
    answer = ack.get("data") if isinstance(ack, dict) else None
    if isinstance(emits, list) and isinstance(answer, dict) and answer.get("card", ...) is None:
        answer["card"] = next(
            e["data"]["card"]
            for e in emits
            if e["event"] == "card" and e["data"]["card_id"] == answer["card_id"]
        )
    return ack


BROUSSEAU: dict[str, Any] = {
    "id": "brousseau",
    "name": "Brousseau",
    "owners": ["paul"],
    "skills": {"Athletics": 3, "Notice": 2, "Lore": 1},
    "fate_points": 2,
    "refresh": 3,
    "aspects": [{"key": "hc", "name": "Skeptical Ghost Hunter"}],
    "consequences": [
        {"id": "mild", "severity": 2},
        {"id": "moderate", "severity": 4},
        {"id": "severe", "severity": 6},
    ],
}
MARGOT: dict[str, Any] = {
    "id": "margot",
    "name": "Margot",
    "owners": ["anna"],
    "skills": {"Athletics": 2, "Notice": 4, "Lore": 2},
    "fate_points": 1,
    "refresh": 3,
    "aspects": [{"key": "hc", "name": "Nosy Neighbour"}],
    "consequences": [{"id": "mild", "severity": 2}, {"id": "moderate", "severity": 4}],
}
GHOUL: dict[str, Any] = {
    "id": "ghoul",
    "name": "Ghoul",
    "owners": [],
    "skills": {"Athletics": 2, "Notice": 1},
    "aspects": [{"key": "hc", "name": "Hungry Dead"}],
    "consequences": [],
}


class Seat:
    """One person at the table: a connection and the acks it gets."""

    def __init__(self, client: socketio.AsyncClient) -> None:
        self.client = client

    async def send(self, event: str, **payload: Any) -> dict[str, Any]:
        payload.setdefault("request_id", f"r{next(_ids)}")
        ack: dict[str, Any] = await self.client.call(
            event, payload, namespace=NAMESPACE, timeout=10
        )
        card_put_back(ack)  # a no-op on the fixtures' clients, which do it already
        return ack

    async def ok(self, event: str, **payload: Any) -> dict[str, Any]:
        ack = await self.send(event, **payload)
        assert ack["ok"], ack
        data: dict[str, Any] = ack["data"]
        return data

    async def card(self, event: str, **payload: Any) -> dict[str, Any]:
        card: dict[str, Any] = (await self.ok(event, **payload))["card"]
        return card

    async def wait_for(
        self, event: str, predicate: Any = None, count: int = 1, tries: int = 200
    ) -> list[Any]:
        """The emits of ``event`` matching ``predicate``, once at least ``count`` arrived."""
        for _ in range(tries):
            found = [d for d in self.received(event) if predicate is None or predicate(d)]
            if len(found) >= count:
                return found
            await asyncio.sleep(0.02)
        raise AssertionError(f"fewer than {count} matching {event!r} emits arrived")

    async def wait_frames(self, count: int, tries: int = 200) -> list[tuple[str, Any]]:
        """Every frame this connection got from the world's room, once ``count`` arrived."""
        for _ in range(tries):
            frames: list[tuple[str, Any]] = self.client.frames
            if len(frames) >= count:
                return list(frames)
            await asyncio.sleep(0.02)
        raise AssertionError(f"fewer than {count} frames arrived")

    def received(self, event: str) -> list[Any]:
        return [d for e, d in self.client.received if e == event]


async def queue(gm: Seat, *rolls: list[int]) -> None:
    await gm.ok("dev.queue_dice", rolls=list(rolls))


def overcome_start(rating: int) -> dict[str, Any]:
    """The ``action.start`` payload of Brousseau's Athletics (+3) overcome against a
    passive ``rating``."""
    return {
        "type": "overcome",
        "actor_id": "brousseau",
        "skill": "Athletics",
        "opposition": {"kind": "passive", "rating": rating},
    }


async def overcome(seat: Seat, rating: int, **extra: Any) -> dict[str, Any]:
    """Brousseau's Athletics (+3) overcome against a passive ``rating``: its first card."""
    return await seat.card("action.start", **overcome_start(rating), **extra)
