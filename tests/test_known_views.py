"""A commit compares its emits with views the commit before it built (its before state is
that commit's after), not with views built afresh: those kept views must be exactly what
building them afresh gives, after every kind of commit, or a patch or a scene panel that
changed would go unsent (or one that did not, be sent again). The kept views are the
service's own: two services in one process never share them."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from bridge.service import BridgeService, Session, cards
from bridge.service.cards.scene import build_scene_state
from bridge.store.sqlite import SQLiteStore
from tests.seats import action_start
from tests.service_seat import ServiceSeat
from tests.stores import opened

HERO = {"id": "hero", "name": "Hero", "owners": ["p"], "fate_points": 3, "skills": {"Fight": 2}}
RIVAL = {"id": "rival", "name": "Rival", "owners": ["q"], "fate_points": 2, "skills": {"Fight": 1}}


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[BridgeService]:
    async with opened(SQLiteStore(tmp_path / "bridge.sqlite")) as store:
        service = BridgeService(store)
        await service.add_world("w", "World")
        yield service


def _overcome(actor: str) -> dict[str, Any]:
    return action_start(actor=actor, skill="Fight", rating=0)


def _advantage(actor: str) -> dict[str, Any]:
    return action_start(
        "create_advantage", actor=actor, skill="Fight", rating=0, aspect_name="Off balance"
    )


async def test_views_kept_for_the_next_commit_are_the_views_built_afresh(
    service: BridgeService,
) -> None:
    send = ServiceSeat(service, Session("s", "w", "gm", "gm", bound=True, present=True)).send
    numbers = iter(range(1_000_000))

    async def resolved(start: dict[str, Any]) -> None:
        started = await send("action.start", **start)
        assert started["ok"], started
        action_id = started["data"]["action_id"]
        await send("action.pass", action_id=action_id, side="actor")
        # An advantage's success asks for nothing more; a tie or a fumble may ask a choice.
        await send("action.choose", action_id=action_id, choice="fail")

    async def synced(actor: dict[str, Any]) -> None:
        assert (await send("actor.sync", actor=actor))["ok"]

    steps: list[Callable[[], Awaitable[object]]] = [
        lambda: resolved(_overcome("hero")),
        lambda: resolved(_overcome("rival")),
        lambda: resolved(_advantage("hero")),
        lambda: synced({**HERO, "name": f"Hero {next(numbers)}"}),
        lambda: synced({**RIVAL, "fate_points": next(numbers) % 5}),
        lambda: send("scene.aspect", op="add", name=f"Smoke {next(numbers)}"),
        # An offered compel shows its character's name on the scene panel: a rename
        # changes the panel with no event the panel looks at.
        lambda: send("fate.compel", character_id="hero", text="Trouble finds you"),
        lambda: send("fate.gm_budget", fate_points=next(numbers) % 4),
        lambda: send("history.undo"),
        lambda: send("scene.end"),
    ]
    await synced(HERO)
    await synced(RIVAL)
    chosen = random.Random(9)
    checked = {"scene": 0, "characters": 0}
    for _ in range(150):
        await chosen.choice(steps)()
        _snapshot, state = service.states["w"]
        known = service.known_views.get(state)
        if known is None:
            continue
        if known.scene is not None:
            assert known.scene == build_scene_state(state)
            checked["scene"] += 1
        for character_id, (patch, status) in known.characters.items():
            character = state.characters[character_id]
            assert patch == cards.actor_patch(character, state, "w", 0)
            assert status == cards.token_status(character, state, "w", 0)
            checked["characters"] += 1
    # The sequence kept views of both kinds many times over (the check was not vacuous).
    assert checked["scene"] > 20 and checked["characters"] > 20, checked


async def test_each_service_keeps_its_own_views(tmp_path: Path) -> None:
    # Two services in one process (two bridges, or a test's two tables): one's commits
    # fill its own cache of views, never the other's.
    services: list[BridgeService] = []
    stores: list[SQLiteStore] = []
    try:
        for name in ("one", "two"):
            store = SQLiteStore(tmp_path / f"{name}.sqlite")
            await store.open()
            stores.append(store)
            services.append(BridgeService(store))
            await services[-1].add_world("w", "World")
        one, two = services
        assert one.known_views is not two.known_views
        gm = Session("s", "w", "gm", "gm", bound=True, present=True)
        reply = await one.handle(gm, "actor.sync", {"request_id": "r1", "actor": HERO})
        assert reply.ack["ok"], reply.ack
        _snapshot, state = one.states["w"]
        assert one.known_views.get(state) is not None
        assert two.known_views.get(state) is None
    finally:
        for store in stores:
            await store.close()
