"""The Redis fan-out's publishing rule, on a real redis-server: a bridge process alone on
the pub/sub channel publishes no emit, and publishes again before a process that starts
later is ready. (Delivery across real bridge processes: tests/test_scale_out.py.)"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.asyncio.client import PubSub

from bridge.service.protocol import NAMESPACE
from bridge.store import codec
from bridge.transport.redis_fan_out import RedisRoomFanOut, pubsub_channel

_channels = itertools.count(1)

# Surveys only when a test asks for one: no timer publishes behind the test's back.
NEVER = 3600.0

StartFanOut = Callable[[], Awaitable[RedisRoomFanOut]]


@pytest.fixture
def channel() -> str:
    """A channel of its own (pub/sub ignores database numbers)."""
    return f"fan-out-test-{next(_channels)}"


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
async def start_fan_out(redis_url: str, channel: str) -> AsyncIterator[StartFanOut]:
    """Start fan-outs the way the bridge does (before its server would listen); every one
    is stopped at the end."""
    started: list[RedisRoomFanOut] = []

    async def _start() -> RedisRoomFanOut:
        fan_out = RedisRoomFanOut(redis_url, channel=channel, survey_seconds=NEVER)
        started.append(fan_out)
        await fan_out.start()
        return fan_out

    yield _start
    for fan_out in started:
        await fan_out.stop()


async def publishes(redis: Redis) -> int:
    """PUBLISH commands the Redis server has run so far."""
    stats = await redis.info("commandstats")
    calls: int = stats.get("cmdstat_publish", {}).get("calls", 0)
    return calls


async def next_emit(pubsub: PubSub) -> dict[str, Any]:
    """The next emit published on the channel, decoded (the survey's probes skipped)."""
    async for got in pubsub.listen():
        if got["type"] == "message":
            message: dict[str, Any] = codec.loads(got["data"])
            if message.get("method") == "emit":
                return message
    raise AssertionError("the subscription ended")


async def emit_card(fan_out: RedisRoomFanOut) -> None:
    await fan_out.emit("card", {"card": {"action_id": "a1"}}, namespace=NAMESPACE, room="w:t")


async def test_a_lone_process_publishes_no_emit(start_fan_out: StartFanOut, redis: Redis) -> None:
    alone = await start_fan_out()
    assert alone.peers is False  # its hello came back to it alone
    before = await publishes(redis)
    await emit_card(alone)
    await emit_card(alone)
    assert await publishes(redis) == before


async def test_a_starting_process_is_ready_only_once_the_others_publish(
    start_fan_out: StartFanOut, redis: Redis
) -> None:
    first = await start_fan_out()
    assert first.peers is False
    second = await start_fan_out()  # its hello, the first one's welcome
    assert first.peers is True and second.peers is True
    before = await publishes(redis)
    await emit_card(first)
    await emit_card(second)
    assert await publishes(redis) == before + 2


async def test_a_survey_goes_back_to_silence_only_when_alone(
    start_fan_out: StartFanOut, redis: Redis
) -> None:
    first = await start_fan_out()
    second = await start_fan_out()
    await first.survey(hello=False)
    assert first.peers is True  # the second still listens
    await second.stop()
    await first.survey(hello=False)
    assert first.peers is False
    before = await publishes(redis)
    await emit_card(first)
    assert await publishes(redis) == before


async def test_any_other_subscriber_keeps_a_process_publishing(
    start_fan_out: StartFanOut, redis: Redis, channel: str
) -> None:
    """A subscriber that is no bridge of this version (an older bridge says no hello, a
    stranger never answers) is still counted by the next survey."""
    alone = await start_fan_out()
    stranger = redis.pubsub()
    await stranger.subscribe(channel)
    try:
        await alone.survey(hello=False)
        assert alone.peers is True
        before = await publishes(redis)
        await emit_card(alone)
        assert await publishes(redis) == before + 1
        message = await asyncio.wait_for(next_emit(stranger), 10)
        # python-socketio's own message, as JSON (never pickle): any peer can read it.
        assert (message["method"], message["event"], message["room"]) == ("emit", "card", "w:t")
    finally:
        await stranger.unsubscribe(channel)
        # redis-py leaves PubSub.aclose unannotated.
        await stranger.aclose()  # type: ignore[no-untyped-call]
    await alone.survey(hello=False)
    assert alone.peers is False


def test_each_redis_database_has_its_own_channel() -> None:
    # Pub/sub ignores database numbers: deployments in separate databases of one
    # redis-server must not hear each other's room emits (rooms are world ids).
    assert pubsub_channel("redis://127.0.0.1:6379/0") == pubsub_channel("redis://127.0.0.1:6379")
    assert pubsub_channel("redis://127.0.0.1:6379/1") != pubsub_channel("redis://127.0.0.1:6379/2")
    assert pubsub_channel("redis://h:1/3") == pubsub_channel("unix:///tmp/redis.sock?db=3")


async def test_bridges_in_other_databases_are_not_peers(redis_url: str, redis: Redis) -> None:
    # A bridge alone in its database publishes nothing, however many bridges listen in
    # other databases of the same redis-server; those never receive its emits.
    base = redis_url.rsplit("/", 1)[0] if redis_url.count("/") > 2 else redis_url
    fan_outs = []
    for db in (5, 6):
        fan_out = RedisRoomFanOut(f"{base}/{db}", answer_seconds=0.5, survey_seconds=NEVER)
        await fan_out.start()
        fan_outs.append(fan_out)
    try:
        assert fan_outs[0].channel != fan_outs[1].channel
        await fan_outs[0].survey(hello=False)
        await fan_outs[1].survey(hello=False)
        assert not fan_outs[0].peers and not fan_outs[1].peers
    finally:
        for fan_out in fan_outs:
            await fan_out.stop()
