"""Outbound webhooks from the persisted outbox: every outbound path under respx, through
the bridge's own guarded client, with the real service and real SQLite (and Redis for the
one-node-delivers test). The outbox's clock and jitter are injected, so retries are
driven by moving the clock, never by waiting; a stub resolver answers the one name a
webhook is added with, so nothing asks DNS."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from bridge.service import BridgeService, Session
from bridge.service.protocol.http import WebhookCardEvent, WebhookCreate
from bridge.service.webhooks.outbox import RetryPolicy, WebhookOutbox
from bridge.service.webhooks.reach import WebhookReach, webhook_client
from bridge.service.webhooks.signing import (
    DELIVERY_HEADER,
    REPLAY_WINDOW_SECONDS,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    new_secret,
    sign,
    verify,
)
from bridge.store.base import Store
from bridge.store.redis import RedisStore
from bridge.store.sqlite import SQLiteStore
from bridge.store.webhooks import WebhookStore, webhook_store_for
from tests.bridge_process import flush_redis
from tests.seats import BROUSSEAU, action_invoke, action_start
from tests.service_seat import ServiceSeat

WORLD = "table"
DISCORD_URL = "https://discord.com/api/webhooks/123456789012345678/s3cr3t-t0ken_value"
JSON_URL = "https://automation.example/hooks/fate?token=abc"
START = 1_800_000_000.0
POLICY = RetryPolicy(base_seconds=2.0, cap_seconds=60.0, give_up_after=300.0)


async def stub_resolve(host: str, port: int) -> list[str]:
    """The example hosts' public answer; no other name is looked up here."""
    assert host == "automation.example", host
    return ["93.184.216.34"]


REACH = WebhookReach(resolve=stub_resolve)


class FakeClock:
    """Seconds since the epoch that move only when a test moves them."""

    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def never_sleep(_seconds: float) -> None:
    raise AssertionError("the outbox must not sleep in these tests")


@dataclass
class Rig:
    store: Store
    hooks: WebhookStore
    service: BridgeService
    client: httpx.AsyncClient
    clock: FakeClock
    outbox: WebhookOutbox
    gm: Session

    async def send(self, event: str, **payload: Any) -> dict[str, Any]:
        """The data of the GM's ``event``, which must be ok."""
        return await ServiceSeat(self.service, self.gm).ok(event, **payload)

    async def resolve_overcome(self, dice: list[int], rating: int = 2) -> dict[str, Any]:
        """Brousseau (Athletics Good +3) overcomes a passive rating with these dice."""
        await self.send("dev.queue_dice", rolls=[dice])
        started = await self.send(
            "action.start", **action_start(actor=BROUSSEAU["id"], rating=rating)
        )
        passed = await self.send("action.pass", action_id=started["action_id"], side="actor")
        card: dict[str, Any] = passed["card"]
        assert card["state"] == "resolved"
        return card

    async def add(self, kind: str, url: str) -> tuple[str, str | None]:
        settings = self.service.webhook_settings
        created = await settings.add_webhook(WORLD, WebhookCreate(kind=kind, url=url))  # type: ignore[arg-type]
        return created.webhook.id, created.secret

    async def deliveries(self) -> list[dict[str, Any]]:
        listed = await self.service.webhook_settings.list_webhooks(WORLD)
        return [d.model_dump(mode="json") for d in listed.deliveries]


async def open_rig(store: Store, clock: FakeClock, client: httpx.AsyncClient) -> Rig:
    await store.open()
    hooks = webhook_store_for(store)
    await hooks.open()
    service = BridgeService(store, dev_dice=True, webhooks=hooks, webhook_reach=REACH)
    outbox = WebhookOutbox(
        store, hooks, client, clock=clock, sleep=never_sleep, jitter=lambda: 0.5, policy=POLICY
    )
    return Rig(store, hooks, service, client, clock, outbox, Session("s", WORLD, "gm", "gm", True))


async def close_rig(rig: Rig) -> None:
    await rig.hooks.close()
    await rig.store.close()


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    async with webhook_client(REACH) as client:
        built = await open_rig(SQLiteStore(tmp_path / "bridge.sqlite3"), FakeClock(), client)
        await built.service.add_world(WORLD, "Table")
        await built.send("actor.sync", actor=BROUSSEAU)
        try:
            yield built
        finally:
            await close_rig(built)


async def test_discord_mirrors_a_resolved_card_as_an_embed_that_mentions_nobody(
    rig: Rig, respx_mock: respx.MockRouter
) -> None:
    # R1.3: the embed shows ladder words with numbers; R3.1 the outcome; R3.2 only once final.
    route = respx_mock.post(DISCORD_URL).mock(return_value=httpx.Response(204))
    await rig.add("discord", DISCORD_URL)
    await rig.send("dev.queue_dice", rolls=[[1, 0, 0, 0]])
    started = await rig.send("action.start", **action_start(rating=2))
    assert started["card"]["state"] == "invoking"
    await rig.outbox.run_once()
    assert not route.called  # provisional: nothing mirrored yet
    await rig.send("action.pass", action_id=started["action_id"], side="actor")
    await rig.outbox.run_once()
    assert route.call_count == 1
    request = route.calls[0].request
    body = json.loads(request.content)
    assert body["allowed_mentions"] == {"parse": []}
    assert body["username"] == "Fate Bridge"
    (embed,) = body["embeds"]
    assert embed["title"] == "Brousseau: Overcome \u2014 Succeed"
    actor_field, opposition_field, shifts_field = embed["fields"][:3]
    assert actor_field["name"] == "Brousseau"
    assert "Athletics Good (+3)" in actor_field["value"]
    assert "[+] [0] [0] [0] (+1)" in actor_field["value"]
    assert "Total **Great (+4)**" in actor_field["value"]
    assert opposition_field["value"] == "Passive Fair (+2)"
    assert shifts_field == {"name": "Shifts", "value": "+2", "inline": True}
    assert embed["footer"]["text"].startswith("event ")
    assert request.headers[DELIVERY_HEADER].startswith("d_")
    # The same card is never mirrored twice, however often the outbox passes.
    await rig.outbox.run_once()
    assert route.call_count == 1
    (delivery,) = await rig.deliveries()
    assert delivery["status"] == "delivered" and delivery["attempts"] == 1


async def test_a_name_with_everyone_cannot_ping_the_channel(
    rig: Rig, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(DISCORD_URL).mock(return_value=httpx.Response(204))
    await rig.add("discord", DISCORD_URL)
    await rig.send("actor.sync", actor={**BROUSSEAU, "name": "@everyone <@&123>"})
    await rig.resolve_overcome([0, 0, 0, 0])
    await rig.outbox.run_once()
    body = json.loads(route.calls[0].request.content)
    assert "@everyone" in body["embeds"][0]["title"]
    assert body["allowed_mentions"] == {"parse": []}


async def test_json_webhook_is_signed_over_timestamp_and_raw_body(
    rig: Rig, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(JSON_URL).mock(return_value=httpx.Response(200))
    _hook, secret = await rig.add("json", JSON_URL)
    assert secret is not None and secret.startswith("whsec_")
    card = await rig.resolve_overcome([1, 1, 0, 0])
    await rig.outbox.run_once()
    request = route.calls[0].request
    raw = request.content
    stamp = request.headers[TIMESTAMP_HEADER]
    signature = request.headers[SIGNATURE_HEADER]
    assert stamp == str(int(START))
    assert signature.startswith("sha256=")
    event = WebhookCardEvent.model_validate_json(raw)
    assert event.world == WORLD and event.model_dump(mode="json")["card"] == card
    # What a receiver does (README): verify over the raw bytes, within the window.
    assert verify(secret, raw, stamp, signature, now=START + 10)
    assert not verify(secret, raw + b" ", stamp, signature, now=START + 10)
    assert not verify(secret, raw, stamp, signature, now=START + REPLAY_WINDOW_SECONDS + 1)
    assert not verify(secret, raw, str(int(START) + 1), signature, now=START)
    assert not verify("whsec_wrong", raw, stamp, signature, now=START)
    assert not verify(secret, raw, None, signature, now=START)
    assert not verify(secret, raw, "not-a-number", signature, now=START)


async def test_a_roll_the_gm_cancels_is_posted_as_cancelled_and_a_cancel_before_any_roll_is_not(
    rig: Rig, respx_mock: respx.MockRouter
) -> None:
    # R1.1: every roll made reaches the channel, the ones called off too (R4.2 the refund
    # said); R9.1 an action still declared, before its dice, is no roll and posts nothing.
    discord = respx_mock.post(DISCORD_URL).mock(return_value=httpx.Response(204))
    signed = respx_mock.post(JSON_URL).mock(return_value=httpx.Response(200))
    await rig.add("discord", DISCORD_URL)
    await rig.add("json", JSON_URL)
    declared = await rig.send("action.start", **action_start(rating=2, dangerous={"actor": True}))
    assert declared["card"]["state"] == "declared"
    await rig.send("action.cancel", action_id=declared["action_id"])
    await rig.outbox.run_once()
    assert not discord.called and not signed.called

    await rig.send("dev.queue_dice", rolls=[[-1, -1, 0, -1]])
    started = await rig.send("action.start", **action_start(rating=4))
    await rig.send(
        "action.invoke", **action_invoke(started["action_id"], effect="bonus", side="actor")
    )
    await rig.outbox.run_once()
    assert not discord.called  # still open: nothing mirrored yet
    cancelled = await rig.send(
        "action.cancel", action_id=started["action_id"], reason="Wrong skill"
    )
    await rig.outbox.run_once()
    assert discord.call_count == 1 and signed.call_count == 1
    (embed,) = json.loads(discord.calls[0].request.content)["embeds"]
    assert embed["title"] == "Brousseau: Overcome \u2014 Cancelled by the GM"
    assert embed["color"] == 0x607D8B
    assert "[\u2212] [\u2212] [0] [\u2212] (-3)" in embed["fields"][0]["value"]
    invokes = next(f for f in embed["fields"] if f["name"] == "Invokes")
    assert invokes["value"] == "Brousseau: *Skeptical Ghost Hunter* (fate point, bonus)"
    effects = next(f for f in embed["fields"] if f["name"] == "Effects")
    assert effects["value"].splitlines() == [
        "Brousseau gets back what the invoke on *Skeptical Ghost Hunter* cost",
        "Cancelled by the GM: Wrong skill",
    ]
    event = WebhookCardEvent.model_validate_json(signed.calls[0].request.content)
    assert event.model_dump(mode="json")["card"] == cancelled["card"]
    assert cancelled["card"]["state"] == "cancelled"
    # Posted once, however often the outbox passes.
    await rig.outbox.run_once()
    assert discord.call_count == 1 and signed.call_count == 1


async def test_429_waits_exactly_as_long_as_retry_after_says(
    rig: Rig, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(DISCORD_URL).mock(
        side_effect=[
            httpx.Response(429, headers={"Retry-After": "30"}, json={"retry_after": 30}),
            httpx.Response(204),
        ]
    )
    await rig.add("discord", DISCORD_URL)
    await rig.resolve_overcome([0, 0, 0, 0])
    await rig.outbox.run_once()
    (pending,) = await rig.deliveries()
    assert pending["status"] == "retrying" and pending["last_error"] == "HTTP 429"
    assert pending["next_at"] == START + 30
    rig.clock.now = START + 29
    assert await rig.outbox.run_once() == 0
    assert route.call_count == 1
    rig.clock.now = START + 30
    assert await rig.outbox.run_once() == 1
    (delivered,) = await rig.deliveries()
    assert delivered["status"] == "delivered" and delivered["attempts"] == 2


async def test_5xx_backs_off_exponentially_with_jitter_then_succeeds(
    rig: Rig, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(JSON_URL).mock(
        side_effect=[httpx.Response(503), httpx.Response(502), httpx.Response(200)]
    )
    await rig.add("json", JSON_URL)
    await rig.resolve_overcome([0, 0, 0, 0])
    waits = []
    for _ in range(3):
        await rig.outbox.run_once()
        (delivery,) = await rig.deliveries()
        if delivery["status"] != "retrying":
            break
        waits.append(delivery["next_at"] - rig.clock.now)
        rig.clock.now = delivery["next_at"]
    # Jitter 0.5 of the random half: 2 s -> 1.5 s, 4 s -> 3 s.
    assert waits == [1.5, 3.0]
    assert delivery["status"] == "delivered" and delivery["attempts"] == 3
    assert route.call_count == 3
    # Each retry is signed afresh, with the same body and the same delivery id.
    bodies = {c.request.content for c in route.calls}
    ids = {c.request.headers[DELIVERY_HEADER] for c in route.calls}
    stamps = [c.request.headers[TIMESTAMP_HEADER] for c in route.calls]
    assert len(bodies) == 1 and len(ids) == 1 and len(set(stamps)) == 3


async def test_a_network_error_is_retried_and_shown_as_no_answer(
    rig: Rig, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(DISCORD_URL).mock(
        side_effect=[httpx.ConnectError("connection refused"), httpx.Response(204)]
    )
    await rig.add("discord", DISCORD_URL)
    await rig.resolve_overcome([0, 0, 0, 0])
    await rig.outbox.run_once()
    (pending,) = await rig.deliveries()
    assert pending["status"] == "retrying"
    # Never how it failed: that would map the host's network for whoever chose the URL.
    assert pending["last_error"] == "no answer"
    rig.clock.now = pending["next_at"]
    await rig.outbox.run_once()
    (delivered,) = await rig.deliveries()
    assert delivered["status"] == "delivered" and route.call_count == 2


async def test_gives_up_after_a_bounded_time_and_records_the_failure(
    rig: Rig, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(DISCORD_URL).mock(return_value=httpx.Response(500))
    await rig.add("discord", DISCORD_URL)
    await rig.resolve_overcome([0, 0, 0, 0])
    for _ in range(50):
        await rig.outbox.run_once()
        (delivery,) = await rig.deliveries()
        if delivery["status"] != "retrying":
            break
        rig.clock.now = delivery["next_at"]
    assert delivery["status"] == "failed"
    assert delivery["finished_at"] - delivery["created_at"] <= POLICY.give_up_after
    assert delivery["last_error"] == f"gave up after {route.call_count} attempts: HTTP 500"
    # Waits of 2, 4, 8, 16, 32, then the 60 s cap, each three quarters (jitter 0.5):
    # 1.5+3+6+12+24+45*5 = 271.5 s of ten retries; one more wait passes 300 s.
    assert route.call_count == 11
    # The URL's token never lands in the record the GM reads.
    assert "s3cr3t" not in json.dumps(await rig.deliveries())


async def test_a_refusing_target_fails_at_once(rig: Rig, respx_mock: respx.MockRouter) -> None:
    respx_mock.post(DISCORD_URL).mock(return_value=httpx.Response(404))
    await rig.add("discord", DISCORD_URL)
    await rig.resolve_overcome([0, 0, 0, 0])
    await rig.outbox.run_once()
    (delivery,) = await rig.deliveries()
    assert delivery["status"] == "failed" and delivery["attempts"] == 1
    assert delivery["last_error"] == "HTTP 404"


async def test_undelivered_items_are_sent_once_after_a_restart(
    tmp_path: Path, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(JSON_URL).mock(
        side_effect=[httpx.ConnectError("down"), httpx.Response(200)]
    )
    clock = FakeClock()
    async with webhook_client(REACH) as client:
        first = await open_rig(SQLiteStore(tmp_path / "bridge.sqlite3"), clock, client)
        await first.service.add_world(WORLD, "Table")
        await first.send("actor.sync", actor=BROUSSEAU)
        await first.add("json", JSON_URL)
        card = await first.resolve_overcome([1, 0, 0, 0])
        await first.resolve_overcome([1, 1, 1, 1])  # this one is never tried before the stop
        await first.outbox.fill()
        first.outbox.policy = RetryPolicy(batch=1)
        await first.outbox.drain()  # the first card: target down
        await close_rig(first)
    clock.now += 60
    async with webhook_client(REACH) as client:
        second = await open_rig(SQLiteStore(tmp_path / "bridge.sqlite3"), clock, client)
        route.side_effect = None
        route.return_value = httpx.Response(200)
        assert await second.outbox.run_once() == 2
        assert await second.outbox.run_once() == 0
        statuses = sorted(d["status"] for d in await second.deliveries())
        assert statuses == ["delivered", "delivered"]
        cards = [json.loads(c.request.content)["card"] for c in route.calls]
        assert len(cards) == 3  # one failed try, then each card once
        assert cards[0] == card
        assert sorted(c["action_id"] for c in cards[1:]) == ["a1", "a2"]
        await close_rig(second)


async def test_an_action_resolves_while_the_target_hangs_then_is_down(
    rig: Rig, respx_mock: respx.MockRouter
) -> None:
    released = asyncio.Event()
    reached = asyncio.Event()

    async def hanging_then_down(_request: httpx.Request) -> httpx.Response:
        reached.set()
        await released.wait()
        raise httpx.ConnectError("target down")

    route = respx_mock.post(DISCORD_URL).mock(side_effect=hanging_then_down)
    await rig.add("discord", DISCORD_URL)
    await rig.resolve_overcome([0, 0, 0, 0])
    sending = asyncio.create_task(rig.outbox.run_once())
    await reached.wait()
    # The outbox is stuck on the target; the table plays on.
    second = await rig.resolve_overcome([1, 1, 1, 0])
    assert second["outcome"] == "excel"
    released.set()
    await sending
    route.side_effect = None
    route.return_value = httpx.Response(204)
    rig.clock.now += 10
    await rig.outbox.run_once()
    statuses = sorted(d["status"] for d in await rig.deliveries())
    assert statuses == ["delivered", "delivered"]


async def test_a_removed_webhook_fails_its_pending_items(
    rig: Rig, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(DISCORD_URL).mock(return_value=httpx.Response(500))
    hook_id, _ = await rig.add("discord", DISCORD_URL)
    await rig.resolve_overcome([0, 0, 0, 0])
    await rig.outbox.run_once()
    removed = await rig.service.webhook_settings.remove_webhook(WORLD, hook_id)
    assert removed.removed
    rig.clock.now += 600
    await rig.outbox.run_once()
    (delivery,) = await rig.deliveries()
    assert delivery["status"] == "failed" and delivery["last_error"] == "the webhook was removed"


async def test_bad_webhook_settings_get_clear_errors(rig: Rig) -> None:
    from bridge.service import IntentError

    bad = [
        ("discord", "https://example.com/api/webhooks/1/x"),
        ("discord", "http://discord.com/api/webhooks/1/x"),
        ("discord", "https://discord.com/api/webhooks/notanumber/x"),
        ("discord", "https://discord.com/api/webhooks/1"),
        ("json", "ftp://automation.example/x"),
        ("json", "not a url"),
        ("json", "https://"),
        ("json", "http://127.0.0.1:8080/hook"),
        ("json", "http://169.254.169.254/latest/meta-data/"),
    ]
    for kind, url in bad:
        with pytest.raises(IntentError) as refused:
            await rig.service.webhook_settings.add_webhook(WORLD, WebhookCreate(kind=kind, url=url))  # type: ignore[arg-type]
        assert refused.value.code == "invalid" and refused.value.field == "url", url
    with pytest.raises(IntentError) as missing:
        await rig.service.webhook_settings.remove_webhook(WORLD, "wh_nothere")
    assert missing.value.code == "not_found"
    with pytest.raises(IntentError) as unknown:
        await rig.service.webhook_settings.list_webhooks("no-such-world")
    assert unknown.value.code == "not_found"
    assert (await rig.service.webhook_settings.list_webhooks(WORLD)).webhooks == []


async def test_players_never_reach_webhook_settings_or_secrets(
    rig: Rig, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(JSON_URL).mock(return_value=httpx.Response(200))
    _hook, secret = await rig.add("json", JSON_URL)
    await rig.add("discord", DISCORD_URL)
    player = Session("p", WORLD, "paul", "player", bound=True)
    for event in ("webhooks.list", "webhook.add", "world.webhooks"):
        reply = await rig.service.handle(player, event, {"request_id": "x"})
        assert reply.ack["error"]["code"] == "unknown_event"
    await rig.resolve_overcome([0, 0, 0, 0])
    state = await rig.service.handle(player, "world.state", {"request_id": "y"})
    sync = await rig.service.handle(player, "world.sync", {"request_id": "z", "since": 0})
    listed = (await rig.service.webhook_settings.list_webhooks(WORLD)).model_dump_json()
    for text in (json.dumps(state.ack), json.dumps(sync.ack), listed):
        assert secret is not None and secret not in text
        assert "s3cr3t" not in text and "token=abc" not in text


async def test_on_redis_exactly_one_node_delivers_each_item(
    redis_url: str, respx_mock: respx.MockRouter
) -> None:
    flush_redis(redis_url)
    route = respx_mock.post(JSON_URL).mock(return_value=httpx.Response(200))
    clock = FakeClock()
    async with webhook_client(REACH) as client_a, webhook_client(REACH) as client_b:
        node_a = await open_rig(RedisStore(redis_url), clock, client_a)
        node_b = await open_rig(RedisStore(redis_url), clock, client_b)
        try:
            await node_a.service.add_world(WORLD, "Table")
            await node_a.send("actor.sync", actor=BROUSSEAU)
            await node_a.add("json", JSON_URL)
            for dice in ([0, 0, 0, 0], [1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0]):
                await node_b.resolve_overcome(dice)
            # Both nodes fill and drain at once, twice over.
            for _ in range(2):
                await asyncio.gather(node_a.outbox.run_once(), node_b.outbox.run_once())
            ids = [c.request.headers[DELIVERY_HEADER] for c in route.calls]
            assert len(ids) == 4 and len(set(ids)) == 4
            statuses = [d["status"] for d in await node_b.deliveries()]
            assert statuses == ["delivered"] * 4
        finally:
            await close_rig(node_a)
            await close_rig(node_b)


def test_the_readme_verification_snippet_accepts_the_bridge_signature() -> None:
    """The receiver code a GM copies from the README checks what the bridge signs."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text("utf-8")
    section = readme.split("### Verifying a JSON webhook", 1)[1]
    snippet = section.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, Any] = {}
    exec(snippet, namespace)  # the README's own code, as a GM would paste it
    authentic = namespace["authentic"]
    secret = new_secret()
    body = b'{"type":"card"}'
    now = int(time.time())
    assert authentic(secret, body, str(now), sign(secret, now, body))
    assert not authentic(secret, body + b"x", str(now), sign(secret, now, body))
    assert not authentic(secret, body, str(now - 301), sign(secret, now - 301, body))
