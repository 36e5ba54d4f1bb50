"""Who writes a card: a present user Foundry lets update its chat message (issue 8.4).

Foundry lets only a ChatMessage's author or a GM update it. The client that creates an
action's message reports its author (``card.written``); later card emits go to that author
while connected, else to the active GM ("gm")."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Connect
from tests.seats import Seat, overcome_start, queue

pytestmark = pytest.mark.both_stores

START = overcome_start(2)


def card_emits(seat: Seat, action_id: str) -> list[dict[str, Any]]:
    return [c for c in seat.received("card") if c["card"]["action_id"] == action_id]


async def test_the_writer_follows_the_messages_author(
    table: dict[str, Seat], connect: Connect, world: tuple[str, str]
) -> None:
    gm, paul = table["gm"], table["paul"]
    await queue(gm, [0, 0, 0, 0])
    card = await paul.card("action.start", **START)
    action_id = card["action_id"]
    first = await gm.wait_for("card", lambda c: c["card"]["action_id"] == action_id)
    assert first[0]["writer"] == "paul"  # nobody has written it yet: the acting user creates it

    # The GM's client created the message (the player was away when the card arrived).
    written = await gm.ok("card.written", action_id=action_id, author="gm")
    assert written == {"action_id": action_id, "author": "gm", "changed": True}
    again = await gm.ok("card.written", action_id=action_id, author="gm")
    assert again["changed"] is False
    assert len(card_emits(gm, action_id)) == 1, "recording the author sent no card"
    # The player is connected, but the message is the GM's: the GM's client writes.
    await paul.ok("action.pass", action_id=action_id, side="actor")
    emits = await gm.wait_for("card", lambda c: c["card"]["action_id"] == action_id, count=2)
    assert [e["writer"] for e in emits] == ["paul", "gm"]
    assert emits[-1]["card"]["state"] == "resolved"


async def test_a_players_own_message_stays_its_own_while_connected(
    table: dict[str, Seat],
) -> None:
    gm, paul = table["gm"], table["paul"]
    await queue(gm, [1, 1, 1, 1])
    card = await paul.card("action.start", **START)
    action_id = card["action_id"]
    assert (await paul.ok("card.written", action_id=action_id, author="paul"))["changed"]
    await paul.ok("action.pass", action_id=action_id, side="actor")
    emits = await gm.wait_for("card", lambda c: c["card"]["action_id"] == action_id, count=2)
    assert [e["writer"] for e in emits] == ["paul", "paul"]


async def test_card_written_refusals_change_nothing(table: dict[str, Seat]) -> None:
    gm, paul, anna = table["gm"], table["paul"], table["anna"]
    await queue(gm, [0, 0, 0, 0])
    action_id = (await paul.card("action.start", **START))["action_id"]
    # Bad inputs, each with a clear error code and the field.
    tries = [
        (anna, {"action_id": action_id, "author": "paul"}, "forbidden", "author"),
        (anna, {"action_id": action_id, "author": "anna"}, "forbidden", "action_id"),
        (gm, {"action_id": "no-such-action", "author": "gm"}, "not_found", "action_id"),
        (gm, {"action_id": action_id, "author": "bad id!"}, "invalid", "author"),
        (gm, {"action_id": action_id}, "invalid", "author"),
    ]
    for seat, payload, code, field in tries:
        ack = await seat.send("card.written", **payload)
        assert ack["ok"] is False, payload
        assert (ack["error"]["code"], ack["error"]["field"]) == (code, field), ack
    # The author is still unknown: the acting user (present) remains the writer.
    await paul.ok("action.pass", action_id=action_id, side="actor")
    emits = await gm.wait_for("card", lambda c: c["card"]["action_id"] == action_id, count=2)
    assert [e["writer"] for e in emits] == ["paul", "paul"]
