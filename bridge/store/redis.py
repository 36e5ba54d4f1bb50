"""The scale-out store: state, log, outbox and answers in Redis, shared by bridge processes.

Each commit is one Lua script, so the version check and every write happen
atomically on the Redis server: two processes racing on one world see exactly
one commit succeed and the other get :class:`VersionConflict`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable
from dataclasses import asdict
from typing import Any, TypeVar

from redis.asyncio import Redis

from bridge.store.base import (
    CommitBatch,
    EmitRow,
    EventRow,
    Snapshot,
    VersionConflict,
    WorldExists,
    WorldRecord,
)
from bridge.store.chain import GENESIS_HASH

T = TypeVar("T")

# KEYS: world hash, events list, emits list, requests hash
# ARGV: expected version, new state, last event seq, last event hash, last emit seq,
#       request field, response, then the count of events and the events, then the emits.
_COMMIT = """
local version = tonumber(redis.call('HGET', KEYS[1], 'version'))
if version == nil or version ~= tonumber(ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[1], 'version', version + 1, 'state', ARGV[2])
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], 'last_event_seq', ARGV[3], 'last_event_hash', ARGV[4])
end
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[1], 'last_emit_seq', ARGV[5])
end
if ARGV[6] ~= '' then
  redis.call('HSET', KEYS[4], ARGV[6], ARGV[7])
end
local events = tonumber(ARGV[8])
for i = 1, events do
  redis.call('RPUSH', KEYS[2], ARGV[8 + i])
end
for i = 9 + events, #ARGV do
  redis.call('RPUSH', KEYS[3], ARGV[i])
end
return version + 1
"""


async def _done(result: Awaitable[T] | T) -> T:
    """redis-py types its asyncio methods as "awaitable or value"; this settles either."""
    if inspect.isawaitable(result):
        return await result
    return result


class RedisStore:
    """Every key under ``prefix``; lists hold the log and the outbox in seq order."""

    def __init__(self, url: str, prefix: str = "fate-bridge") -> None:
        self.url = url
        self.prefix = prefix
        self._redis: Redis | None = None

    @property
    def redis(self) -> Redis:
        if self._redis is None:
            raise RuntimeError("store is not open")
        return self._redis

    def _key(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))

    async def open(self) -> None:
        self._redis = Redis.from_url(self.url, decode_responses=True)
        await _done(self._redis.ping())

    async def close(self) -> None:
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None

    async def add_world(self, world: WorldRecord, initial_state: dict[str, Any]) -> None:
        added = await _done(
            self.redis.hsetnx(self._key("worlds"), world.id, json.dumps(asdict(world)))
        )
        if not added:
            raise WorldExists(world.id)
        await _done(
            self.redis.hset(
                self._key("world", world.id),
                mapping={
                    "version": 0,
                    "state": json.dumps(initial_state),
                    "last_event_seq": 0,
                    "last_event_hash": GENESIS_HASH,
                    "last_emit_seq": 0,
                },
            )
        )

    async def get_world(self, world_id: str) -> WorldRecord | None:
        raw = await _done(self.redis.hget(self._key("worlds"), world_id))
        return WorldRecord(**json.loads(raw)) if raw else None

    async def list_worlds(self) -> list[WorldRecord]:
        raw = await _done(self.redis.hgetall(self._key("worlds")))
        worlds = [WorldRecord(**json.loads(v)) for v in raw.values()]
        return sorted(worlds, key=lambda w: (w.created_at, w.id))

    async def set_key_hash(self, world_id: str, key_hash: str) -> bool:
        world = await self.get_world(world_id)
        if world is None:
            return False
        record = {**asdict(world), "key_hash": key_hash}
        await _done(self.redis.hset(self._key("worlds"), world_id, json.dumps(record)))
        return True

    async def load(self, world_id: str) -> Snapshot | None:
        world = await self.get_world(world_id)
        if world is None:
            return None
        row = await _done(self.redis.hgetall(self._key("world", world_id)))
        return Snapshot(
            world=world,
            version=int(row["version"]),
            state=json.loads(row["state"]),
            last_event_seq=int(row["last_event_seq"]),
            last_event_hash=row["last_event_hash"],
            last_emit_seq=int(row["last_emit_seq"]),
        )

    async def version(self, world_id: str) -> int | None:
        raw = await _done(self.redis.hget(self._key("world", world_id), "version"))
        return int(raw) if raw is not None else None

    async def commit(self, batch: CommitBatch) -> int:
        last_event = batch.events[-1] if batch.events else None
        last_emit = batch.emits[-1] if batch.emits else None
        request_field = (
            f"{batch.user_id}\x1f{batch.request_id}"
            if batch.request_id is not None and batch.user_id is not None
            else ""
        )
        args: list[Any] = [
            batch.expected_version,
            json.dumps(batch.state),
            last_event.seq if last_event else "",
            last_event.hash if last_event else "",
            last_emit.seq if last_emit else "",
            request_field,
            json.dumps(batch.response) if request_field else "",
            len(batch.events),
            *(json.dumps(asdict(e)) for e in batch.events),
            *(json.dumps(asdict(m)) for m in batch.emits),
        ]
        keys = [
            self._key("world", batch.world_id),
            self._key("events", batch.world_id),
            self._key("emits", batch.world_id),
            self._key("requests", batch.world_id),
        ]
        result = await _done(self.redis.eval(_COMMIT, len(keys), *keys, *args))
        if int(result) == 0:
            raise VersionConflict(batch.world_id)
        return int(result)

    async def get_response(
        self, world_id: str, user_id: str, request_id: str
    ) -> dict[str, Any] | None:
        raw = await _done(
            self.redis.hget(self._key("requests", world_id), f"{user_id}\x1f{request_id}")
        )
        if raw is None:
            return None
        response: dict[str, Any] = json.loads(raw)
        return response

    async def emits_since(self, world_id: str, since: int, limit: int) -> list[EmitRow]:
        # Emit seq n sits at list index n - 1.
        raw = await _done(self.redis.lrange(self._key("emits", world_id), since, since + limit - 1))
        return [EmitRow(**json.loads(item)) for item in raw]

    async def events(self, world_id: str) -> list[EventRow]:
        raw = await _done(self.redis.lrange(self._key("events", world_id), 0, -1))
        return [EventRow(**json.loads(item)) for item in raw]

    async def events_between(self, world_id: str, first: int, last: int) -> list[EventRow]:
        # Event seq n sits at list index n - 1.
        if last < first or last < 1:
            return []
        start = max(first, 1) - 1
        raw = await _done(self.redis.lrange(self._key("events", world_id), start, last - 1))
        return [EventRow(**json.loads(item)) for item in raw]

    async def add_presence(self, world_id: str, user_id: str, delta: int) -> None:
        await _done(self.redis.hincrby(self._key("presence", world_id), user_id, delta))

    async def is_present(self, world_id: str, user_id: str) -> bool:
        raw = await _done(self.redis.hget(self._key("presence", world_id), user_id))
        return int(raw or 0) > 0

    async def put_nonce(self, world_id: str, user_id: str, nonce: str) -> None:
        await _done(self.redis.hset(self._key("nonces", world_id), nonce, f"{user_id}\x1f0"))

    async def bind_nonce(self, world_id: str, user_id: str, nonce: str) -> bool:
        key = self._key("nonces", world_id)
        raw = await _done(self.redis.hget(key, nonce))
        if raw is None or raw.split("\x1f")[0] != user_id:
            return False
        await _done(self.redis.hset(key, nonce, f"{user_id}\x1f1"))
        return True

    async def nonce_bound(self, world_id: str, user_id: str, nonce: str) -> bool:
        raw = await _done(self.redis.hget(self._key("nonces", world_id), nonce))
        return raw == f"{user_id}\x1f1"

    async def drop_nonce(self, world_id: str, nonce: str) -> None:
        await _done(self.redis.hdel(self._key("nonces", world_id), nonce))
