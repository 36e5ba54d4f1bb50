"""Each reader pays for what it reads (issue 26): a player flooding history reads over the
real socket spends its own budget by what its reads cost, not by how many it sends, and
another world's GM is answered all along. Behaviour only (tokens spent, answers), no timings.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.conftest import Connect
from tests.seats import Seat, overcome_start

pytestmark = pytest.mark.both_stores

RESOLUTIONS = 55  # more than a full page (50)
BURST = 40  # a connection's burst (bridge.server.RATE_BURST)


async def steady(seat: Seat, event: str, **payload: Any) -> dict[str, Any]:
    """``event`` answered ok, waiting out the sender's own rate limit."""
    for _ in range(100):
        ack = await seat.send(event, **payload)
        if ack["ok"]:
            data: dict[str, Any] = ack["data"]
            return data
        assert ack["error"]["code"] == "rate_limited", ack
        await asyncio.sleep(0.2)
    raise AssertionError(f"{event} stayed rate limited")


async def burst(seat: Seat, event: str, count: int, **payload: Any) -> list[str]:
    """``count`` requests sent at once; each answer's outcome ("ok" or its error code)."""
    acks = await asyncio.gather(*(seat.send(event, **payload) for _ in range(count)))
    return ["ok" if a["ok"] else a["error"]["code"] for a in acks]


async def test_a_players_heavy_history_reads_spend_its_own_budget_by_their_cost(
    table: dict[str, Seat], connect: Connect, bridge: Any
) -> None:
    gm, paul = table["gm"], table["paul"]
    for _ in range(RESOLUTIONS):
        # Athletics +3 against -4: succeeds with style whatever the dice, resolved on a pass.
        card = (await steady(gm, "action.start", **overcome_start(-4)))["card"]
        passed = await steady(gm, "action.pass", action_id=card["action_id"], side="actor")
        assert passed["card"]["state"] == "resolved", passed
    # Another world, and its GM.
    from tests.bridge_process import add_world

    other_key = add_world(bridge, "other")
    other = Seat(await connect("other", key=other_key, user="otherGm"))
    assert (await other.ok("hello"))["world"] == "other"

    # A read that finds nothing costs what it returns: a whole burst of them is answered.
    await asyncio.sleep(BURST / 20 + 0.5)  # paul's bucket full again
    nothing = await burst(paul, "history.read", BURST, character="nobody")
    assert nothing == ["ok"] * BURST, nothing

    # Full pages, fifty entries each: a burst's worth of messages, but each page costs more
    # than one token, so paul's own budget stops most of them (before, all 40 were read).
    await asyncio.sleep(BURST / 20 + 0.5)
    flood = asyncio.ensure_future(burst(paul, "history.read", BURST, limit=50))
    # Meanwhile the other world's GM is answered, every time.
    for n in range(5):
        assert (await other.ok("hello", request_id=f"other{n}"))["world"] == "other"
    pages = await flood
    assert pages.count("ok") >= 1, pages
    assert pages.count("ok") <= BURST // 4, pages
    assert set(pages) <= {"ok", "rate_limited"}, pages
    # The budget refills at its rate: paul reads again once it has.
    await asyncio.sleep(BURST / 20 + 0.5)
    page = await paul.ok("history.read", limit=50)
    assert len(page["entries"]) == 50 and page["next_before"] == page["entries"][-1]["seq"]

    # The dice statistics are kept as the log grows: a burst of them is answered whole.
    await asyncio.sleep(BURST / 20 + 0.5)
    stats = await burst(paul, "history.stats", BURST)
    assert stats == ["ok"] * BURST, stats
    assert (await steady(paul, "history.stats"))["world"]["rolls"] == RESOLUTIONS
