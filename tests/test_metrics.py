"""``/metrics`` (issue 35): off unless asked for; Prometheus's text format from
prometheus-client, scraped over real HTTP from a serving bridge, with the connections,
intents by outcome, handshake refusals, the wire's own refusals by reason, commit latency,
GC pauses and the webhook outbox's depth; behind a bearer token when one is set."""

from __future__ import annotations

import asyncio
import contextlib
import gc

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from tests.bridge_process import Bridge, BridgeProcess
from tests.in_process import InProcessBridge
from tests.raw_socket import RawSocket
from tests.seats import Seat, gm_auth, queue, start_action
from tests.test_socket_bridge import refusal

TOKEN = "scrape-me-0123456789"


async def scrape(bridge: Bridge, headers: dict[str, str] | None = None) -> tuple[int, str, str]:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"{bridge.url}/metrics", headers=headers or {}) as response,
    ):
        return response.status, response.headers.get("Content-Type", ""), await response.text()


def samples(text: str) -> dict[str, list[Sample]]:
    """Every sample of the exposition, by sample name."""
    found: dict[str, list[Sample]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append(sample)
    return found


def value(found: dict[str, list[Sample]], name: str, **labels: str) -> float:
    matching = [s.value for s in found.get(name, []) if labels.items() <= s.labels.items()]
    assert matching, (name, labels, sorted(found))
    return sum(matching)


async def test_metrics_are_off_unless_asked_for(bridge: Bridge) -> None:
    status, _type, _text = await scrape(bridge)
    assert status == 404


@pytest.mark.bridge_args("--metrics")
async def test_a_scrape_shows_connections_intents_refusals_commits_and_gc_pauses(
    bridge: BridgeProcess, world: tuple[str, str], gm: Seat
) -> None:
    await queue(gm, [1, 0, 0, -1])
    card = await start_action(gm, rating=2)
    refused = await gm.send("action.pass", action_id="no-such-action", side="actor")
    assert refused["ok"] is False
    assert (await refusal(bridge, gm_auth(world, key="not-the-key")))["reason"] == "bad_key"
    gc.collect()  # at least one pause of the oldest generation to show

    status, content_type, text = await scrape(bridge)
    assert status == 200 and content_type.startswith("text/plain; version=")
    found = samples(text)
    assert value(found, "fate_bridge_connections", role="gm") == 1
    assert value(found, "fate_bridge_connections", role="player") == 0
    assert value(found, "fate_bridge_intents_total", event="action.start", outcome="ok") == 1
    code = refused["error"]["code"]
    assert value(found, "fate_bridge_intents_total", event="action.pass", outcome=code) == 1
    assert value(found, "fate_bridge_handshake_refusals_total", reason="bad_key") == 1
    # actor.sync, dev.queue_dice and action.start each committed once.
    assert value(found, "fate_bridge_commit_seconds_count") >= 3
    assert value(found, "fate_bridge_commit_seconds_bucket", le="+Inf") >= 3
    assert value(found, "fate_bridge_gc_pause_seconds_count", generation="2") >= 1
    assert value(found, "fate_bridge_webhook_outbox_depth") == 0
    assert value(found, "process_resident_memory_bytes") > 0
    assert card["action_id"]


@pytest.mark.bridge_args("--metrics-token", TOKEN)
async def test_with_a_token_a_scrape_must_send_it(bridge: Bridge) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        status, _type, text = await scrape(bridge, headers)
        assert status == 401, headers
        assert "fate_bridge" not in text
    status, _type, text = await scrape(bridge, {"Authorization": f"Bearer {TOKEN}"})
    assert status == 200 and "fate_bridge_connections" in text


# /metrics on, a one-second join clock and four strangers an address.
@pytest.mark.bridge_args(
    "--metrics", "--handshake-timeout", "1", "--max-connections-per-address", "4"
)
async def test_the_wires_own_refusals_are_counted_by_reason(bridge: InProcessBridge) -> None:
    # Issue 35: "refusals by reason" counted only handshakes the service refused; what
    # the transport refuses, cuts or reads late is counted too, one count per event.
    chatty = await RawSocket.open(bridge.url)
    try:
        with contextlib.suppress(ConnectionError):
            for _ in range(15):  # past an unjoined socket's burst of 10 frames: cut
                await chatty.ws.send_str("3")
        await asyncio.wait_for(chatty.closed.wait(), 10)
    finally:
        await chatty.close()
    quiet = await RawSocket.open(bridge.url)
    try:  # it never joins: closed by the join clock
        await asyncio.wait_for(quiet.closed.wait(), 10)
    finally:
        await quiet.close()
    flooder = await RawSocket.open(bridge.url)
    try:
        with contextlib.suppress(ConnectionError):
            for _ in range(50):  # CONNECTs to another namespace: a few answered, then cut
                await flooder.send("0/other,")
        await asyncio.wait_for(flooder.closed.wait(), 10)
    finally:
        await flooder.close()
    idle = [await asyncio.open_connection("127.0.0.1", bridge.port) for _ in range(5)]
    try:
        # Five idle strangers of one address over a pool of four: the oldest is cut.
        assert await asyncio.wait_for(idle[0][0].read(1), 10) == b""
    finally:
        for _reader, writer in idle:
            writer.close()

    status, _type, text = await scrape(bridge)
    assert status == 200
    found = samples(text)
    wire = "fate_bridge_wire_refusals_total"
    assert value(found, wire, reason="inbound_budget") >= 1
    assert value(found, wire, reason="join_timeout") == 1
    assert value(found, wire, reason="connect_flood") == 1
    assert value(found, wire, reason="address_pool") >= 1
    assert not [s for s in found[wire] if s.labels["reason"] == "handshake_rate"]
