"""The scale-out store: state, log, outbox and answers in Redis, shared by bridge processes.

Each commit is one Lua script, so the version check and every write happen
atomically on the Redis server: two processes racing on one world see exactly
one commit succeed and the other get :class:`VersionConflict`. A commit appends
(events, emits, the answer) and writes the saved state only when the batch
carries a snapshot; a load reads the head, the saved state and its tail in one
script, so it never sees a half-written commit.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import secrets
from collections.abc import Awaitable
from dataclasses import asdict
from typing import Any, TypeVar

from redis.asyncio import Redis

from bridge import codec
from bridge.store.base import (
    AlreadyAnswered,
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
log = logging.getLogger("bridge.store.redis")

# Presence: one sorted set per (world, user); each member is a bridge process, scored by
# the Redis server's clock (ms) at which that process's claim expires. A process refreshes
# its claims with a heartbeat, so a process that dies (even by SIGKILL) stops counting
# once its claims expire. KEYS: the set; ARGV: node id, ttl ms, "1" to claim / "0" to drop.
_PRESENCE_TOUCH = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if ARGV[3] == '1' then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
else
  redis.call('ZREM', KEYS[1], ARGV[1])
end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then
  redis.call('PEXPIREAT', KEYS[1], last[2])
end
return redis.call('ZCARD', KEYS[1])
"""
_PRESENCE_COUNT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
"""
DEFAULT_PRESENCE_TTL = 15.0

# KEYS: world hash, events list, emits list, requests hash
# ARGV: expected version, snapshot ('' for none), last event seq, last event hash,
#       last emit seq, request field, response, then the count of events and the
#       events, then the emits.
# Returns the new version, 0 for a version conflict, or (a string) the answer an
# earlier commit stored under the request field: then nothing is written.
_COMMIT = """
if ARGV[6] ~= '' then
  local answered = redis.call('HGET', KEYS[4], ARGV[6])
  if answered then
    return answered
  end
end
local version = tonumber(redis.call('HGET', KEYS[1], 'version'))
if version == nil or version ~= tonumber(ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[1], 'version', version + 1)
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], 'last_event_seq', ARGV[3], 'last_event_hash', ARGV[4])
end
if ARGV[2] ~= '' then
  local head = redis.call('HGET', KEYS[1], 'last_event_seq')
  redis.call('HSET', KEYS[1], 'state', ARGV[2], 'state_seq', head)
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

# KEYS: world hash, events list. Returns the world hash's fields (flat) and then the
# events after the saved state. Worlds saved before snapshots had no state_seq: their
# state was as of the last event.
_LOAD = """
local row = redis.call('HGETALL', KEYS[1])
if #row == 0 then
  return {}
end
local state_seq = redis.call('HGET', KEYS[1], 'state_seq')
           or redis.call('HGET', KEYS[1], 'last_event_seq')
local tail = redis.call('LRANGE', KEYS[2], tonumber(state_seq), -1)
return {row, tail}
"""


def _event_json(e: EventRow) -> str:
    """The event as one list item: the same text as encoding the whole record as one
    dict (the codec is compact and keeps key order), with the payload's JSON reused."""
    return (
        f'{{"seq":{e.seq},"type":{codec.dumps(e.type)},"payload":{e.payload_json()},'
        f'"created_at":{codec.dumps(e.created_at)},"prev_hash":{codec.dumps(e.prev_hash)},'
        f'"hash":{codec.dumps(e.hash)}}}'
    )


def _event(raw: str) -> EventRow:
    return EventRow(**codec.loads(raw))


async def _done(result: Awaitable[T] | T) -> T:
    """redis-py types its asyncio methods as "awaitable or value"; this settles either."""
    if inspect.isawaitable(result):
        return await result
    return result


class RedisStore:
    """Every key under ``prefix``; lists hold the log and the outbox in seq order."""

    def __init__(
        self, url: str, prefix: str = "fate-bridge", presence_ttl: float = DEFAULT_PRESENCE_TTL
    ) -> None:
        self.url = url
        self.prefix = prefix
        self._redis: Redis | None = None
        # Presence: this process's connection counts; Redis holds one expiring claim per
        # (world, user) this process has a connection for.
        self.node_id = secrets.token_hex(8)
        self.presence_ttl = presence_ttl
        self._connections: dict[tuple[str, str], int] = {}
        self._heartbeat: asyncio.Task[None] | None = None
        self._commit_script: Any = None
        self._load_script: Any = None
        self._presence_touch: Any = None
        self._presence_count: Any = None

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
        self._heartbeat = asyncio.create_task(self._refresh_presence())
        # Registered scripts run by hash (EVALSHA), not resent with every call.
        self._commit_script = self._redis.register_script(_COMMIT)
        self._load_script = self._redis.register_script(_LOAD)
        self._presence_touch = self._redis.register_script(_PRESENCE_TOUCH)
        self._presence_count = self._redis.register_script(_PRESENCE_COUNT)

    async def close(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat
            self._heartbeat = None
        if self._redis is not None:
            # A clean stop drops this process's claims at once (a crash waits for expiry).
            for world_id, user_id in list(self._connections):
                with contextlib.suppress(Exception):
                    await self._claim(world_id, user_id, keep=False)
            self._connections.clear()
            await self._redis.aclose()
            self._redis = None

    async def add_world(self, world: WorldRecord, initial_state: dict[str, Any]) -> None:
        added = await _done(
            self.redis.hsetnx(self._key("worlds"), world.id, codec.dumps(asdict(world)))
        )
        if not added:
            raise WorldExists(world.id)
        await _done(
            self.redis.hset(
                self._key("world", world.id),
                mapping={
                    "version": 0,
                    "state": codec.dumps(initial_state),
                    "state_seq": 0,
                    "last_event_seq": 0,
                    "last_event_hash": GENESIS_HASH,
                    "last_emit_seq": 0,
                },
            )
        )

    async def get_world(self, world_id: str) -> WorldRecord | None:
        raw = await _done(self.redis.hget(self._key("worlds"), world_id))
        return WorldRecord(**codec.loads(raw)) if raw else None

    async def list_worlds(self) -> list[WorldRecord]:
        raw = await _done(self.redis.hgetall(self._key("worlds")))
        worlds = [WorldRecord(**codec.loads(v)) for v in raw.values()]
        return sorted(worlds, key=lambda w: (w.created_at, w.id))

    async def set_key_hash(self, world_id: str, key_hash: str) -> bool:
        world = await self.get_world(world_id)
        if world is None:
            return False
        record = {**asdict(world), "key_hash": key_hash}
        await _done(self.redis.hset(self._key("worlds"), world_id, codec.dumps(record)))
        return True

    async def load(self, world_id: str) -> Snapshot | None:
        world = await self.get_world(world_id)
        if world is None:
            return None
        found = await self._load_script(
            keys=[self._key("world", world_id), self._key("events", world_id)]
        )
        if not found:
            return None
        flat, tail = found
        row: dict[str, str] = dict(zip(flat[::2], flat[1::2], strict=True))
        return Snapshot(
            world=world,
            version=int(row["version"]),
            state=codec.loads(row["state"]),
            state_seq=int(row.get("state_seq", row["last_event_seq"])),
            tail=tuple(_event(item) for item in tail),
            last_event_seq=int(row["last_event_seq"]),
            last_event_hash=row["last_event_hash"],
            last_emit_seq=int(row["last_emit_seq"]),
            state_size=len(row["state"]),
            # Each item is the whole record; its payload is most of it.
            tail_size=sum(len(item) for item in tail),
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
            ""
            if batch.snapshot is None
            else batch.snapshot
            if isinstance(batch.snapshot, str)
            else codec.dumps(batch.snapshot),
            last_event.seq if last_event else "",
            last_event.hash if last_event else "",
            last_emit.seq if last_emit else "",
            request_field,
            codec.dumps(batch.response) if request_field else "",
            len(batch.events),
            *(_event_json(e) for e in batch.events),
            *(
                codec.dumps({"seq": m.seq, "event": m.event, "payload": m.payload})
                for m in batch.emits
            ),
        ]
        keys = [
            self._key("world", batch.world_id),
            self._key("events", batch.world_id),
            self._key("emits", batch.world_id),
            self._key("requests", batch.world_id),
        ]
        result = await self._commit_script(keys=keys, args=args)
        if isinstance(result, str):
            raise AlreadyAnswered(codec.loads(result))
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
        response: dict[str, Any] = codec.loads(raw)
        return response

    async def emits_since(self, world_id: str, since: int, limit: int) -> list[EmitRow]:
        # Emit seq n sits at list index n - 1.
        raw = await _done(self.redis.lrange(self._key("emits", world_id), since, since + limit - 1))
        return [EmitRow(**codec.loads(item)) for item in raw]

    async def events(self, world_id: str, after: int = 0) -> list[EventRow]:
        # Event seq n sits at list index n - 1.
        raw = await _done(self.redis.lrange(self._key("events", world_id), after, -1))
        return [_event(item) for item in raw]

    async def events_between(self, world_id: str, first: int, last: int) -> list[EventRow]:
        # Event seq n sits at list index n - 1.
        if last < first or last < 1:
            return []
        start = max(first, 1) - 1
        raw = await _done(self.redis.lrange(self._key("events", world_id), start, last - 1))
        return [_event(item) for item in raw]

    async def add_presence(self, world_id: str, user_id: str, delta: int) -> None:
        key = (world_id, user_id)
        count = self._connections.get(key, 0) + delta
        if count > 0:
            self._connections[key] = count
        else:
            self._connections.pop(key, None)
        await self._claim(world_id, user_id, keep=count > 0)

    async def is_present(self, world_id: str, user_id: str) -> bool:
        key = self._key("present", world_id, user_id)
        live = await self._presence_count(keys=[key])
        return int(live) > 0

    async def _claim(self, world_id: str, user_id: str, *, keep: bool) -> None:
        key = self._key("present", world_id, user_id)
        ttl_ms = int(self.presence_ttl * 1000)
        flag = "1" if keep else "0"
        await self._presence_touch(keys=[key], args=[self.node_id, ttl_ms, flag])

    async def _refresh_presence(self) -> None:
        """The heartbeat: renew every claim of this process three times per ttl."""
        while True:
            await asyncio.sleep(self.presence_ttl / 3)
            for world_id, user_id in list(self._connections):
                try:
                    await self._claim(world_id, user_id, keep=True)
                except Exception as exc:  # Redis away: retry on the next beat
                    log.warning("presence heartbeat failed: %s", exc)
                    break

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
