"""Alike boosts over real Socket.IO: one entry with its count on cards and the scene
panel, spent one at a time (R12.6; issue 9: cards do not grow with unspent boosts)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.seats import Seat, action_invoke, overcome, queue

pytestmark = pytest.mark.both_stores


async def overcome_with(gm: Seat, paul: Seat, dice: list[int], rating: int) -> dict[str, Any]:
    """Brousseau (+3) overcomes a passive ``rating`` with ``dice``: the card to invoke on."""
    await queue(gm, dice)
    return await overcome(paul, rating)


async def excel(gm: Seat, paul: Seat) -> dict[str, Any]:
    """Brousseau overcomes a passive 0 with ++++ : excels, a momentum boost (R5.1)."""
    card = await overcome_with(gm, paul, [1, 1, 1, 1], 0)
    return await paul.card("action.pass", action_id=card["action_id"], side="actor")


async def test_alike_boosts_are_one_entry_and_spent_one_at_a_time(
    table: dict[str, Seat],
) -> None:
    gm, paul = table["gm"], table["paul"]
    for _ in range(3):
        resolved = await excel(gm, paul)
        assert resolved["outcome"] == "excel"
    card = await overcome_with(gm, paul, [0, 0, 0, 0], 4)
    assert card["state"] == "invoking"
    boosts = [a for a in card["aspects"] if a["kind"] == "boost"]
    assert [(a["name"], a["count"], a["free_invokes"]) for a in boosts] == [
        ("Brousseau's momentum", 3, {"brousseau": 1})
    ]
    scene = await gm.ok("scene.read")
    assert [(a["name"], a["count"]) for a in scene["aspects"] if a["kind"] == "boost"] == [
        ("Brousseau's momentum", 3)
    ]

    # Invoking the entry spends the one it names; the other two stay, as one entry.
    card = await paul.card(
        "action.invoke",
        **action_invoke(
            card["action_id"], boosts[0]["id"], payment="boost", side="actor", effect="bonus"
        ),
    )
    left = [a for a in card["aspects"] if a["kind"] == "boost"]
    assert [(a["count"], a["id"] != boosts[0]["id"]) for a in left] == [(2, True)]
    patches = [p for p in paul.received("actor.patch") if p["actor_id"] == "brousseau"]
    assert patches[-1]["boosts"] == 2
    scene = await gm.ok("scene.read")
    assert [a["count"] for a in scene["aspects"] if a["kind"] == "boost"] == [2]
