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
from collections.abc import Awaitable, Collection
from dataclasses import asdict
from typing import Any, TypeVar

from redis.asyncio import Redis

from bridge.store import codec
from bridge.store.base import (
    AlreadyAnswered,
    CommitBatch,
    EmitRow,
    EventRow,
    HistoryFound,
    HistoryQuery,
    HistoryRow,
    Snapshot,
    VersionConflict,
    WorldExists,
    WorldRecord,
)
from bridge.store.chain import GENESIS_HASH
from bridge.store.compact import pack_text, unpack_text

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

# KEYS: world hash, events list, emits list, requests hash, history rows hash, then
#       each history row's index sets in the order of the rows (see _history_keys).
# ARGV: expected version, snapshot ('' for none), last event seq, last event hash,
#       last emit seq, request field, response, the counts of events and of emits, the
#       events, the emits, then per history row its seq, its JSON and how many index
#       sets it joins.
# Returns the new version, 0 for a version conflict, or (a string) the answer an
# earlier commit stored under the request field: then nothing is written. A world
# written before the history index existed learns here which events it has not
# indexed (history_pending: those up to this commit's first).
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
  if redis.call('HEXISTS', KEYS[1], 'history_pending') == 0 then
    redis.call('HSET', KEYS[1], 'history_pending',
               redis.call('HGET', KEYS[1], 'last_event_seq') or 0)
  end
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
local emits = tonumber(ARGV[9])
for i = 1, events do
  redis.call('RPUSH', KEYS[2], ARGV[9 + i])
end
for i = 10 + events, 9 + events + emits do
  redis.call('RPUSH', KEYS[3], ARGV[i])
end
local key = 6
local i = 10 + events + emits
while i <= #ARGV do
  local seq, row, sets = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  redis.call('HSET', KEYS[5], seq, row)
  for k = key, key + sets - 1 do
    redis.call('ZADD', KEYS[k], seq, seq)
  end
  key = key + sets
  i = i + 3
end
return version + 1
"""

# KEYS: the index set to walk (the narrowest filter's), the history rows hash, the events
# list. ARGV: the seq to start below, limit, rows to look at at most, then the filters
# ('' for any: scene, kind, cancelled 0/1, character), then the seqs to leave out.
# Returns the events found (newest first), 1 when no older row passes, the lowest seq
# looked at (0: none) and how many rows were looked at.
_HISTORY_PAGE = """
local limit, scan = tonumber(ARGV[2]), tonumber(ARGV[3])
local scene, kind, cancelled, character = ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local skip = {}
for i = 8, #ARGV do
  skip[ARGV[i]] = true
end
local filtered = scene ~= '' or kind ~= '' or cancelled ~= '' or character ~= ''
local found, examined, lowest, below = {}, 0, 0, '(' .. ARGV[1]
while #found < limit and examined < scan do
  local want = math.max(1, math.min(limit - #found + #ARGV - 7, scan - examined))
  local seqs = redis.call('ZREVRANGEBYSCORE', KEYS[1], below, '-inf', 'LIMIT', 0, want)
  for _, seq in ipairs(seqs) do
    examined = examined + 1
    lowest = tonumber(seq)
    below = '(' .. seq
    if not skip[seq] then
      local pass = true
      if filtered then
        local row = cjson.decode(redis.call('HGET', KEYS[2], seq))
        pass = (scene == '' or tostring(row[1]) == scene)
          and (kind == '' or row[2] == kind)
          and (cancelled == '' or tostring(row[3]) == cancelled)
        if pass and character ~= '' then
          pass = false
          for _, who in ipairs(row[4]) do
            if who == character then
              pass = true
              break
            end
          end
        end
      end
      if pass then
        local event = redis.call('LINDEX', KEYS[3], tonumber(seq) - 1)
        if event then
          found[#found + 1] = event
        end
        if #found == limit then
          return {found, 0, lowest, examined}
        end
      end
    end
  end
  if #seqs < want then
    return {found, 1, lowest, examined}
  end
end
return {found, 0, lowest, examined}
"""

# KEYS: world hash. ARGV: the pending count the caller indexed. The world has none pending
# once it says so still (or, never written since the index existed, its log ends there).
_HISTORY_INDEXED = """
local pending = redis.call('HGET', KEYS[1], 'history_pending')
  or redis.call('HGET', KEYS[1], 'last_event_seq')
if tonumber(pending) == tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'history_pending', 0)
end
return 0
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
    """The event as one list item, packed (bridge.store.compact): the same text as
    encoding the whole record as one dict (the codec is compact and keeps key order), with
    the payload's JSON reused."""
    return pack_text(
        f'{{"seq":{e.seq},"type":{codec.dumps(e.type)},"payload":{e.payload_json()},'
        f'"created_at":{codec.dumps(e.created_at)},"prev_hash":{codec.dumps(e.prev_hash)},'
        f'"hash":{codec.dumps(e.hash)}}}'
    )


def _event(raw: str) -> EventRow:
    return EventRow(**codec.loads(unpack_text(raw)))


def _history_json(row: HistoryRow) -> str:
    """A history row as the rows hash keeps it: [scene, kind, cancelled, characters, rolls]."""
    rolls = [list(roll) for roll in row.rolls]
    return codec.dumps([row.scene, row.kind, int(row.cancelled), list(row.characters), rolls])


def _history_row(seq: int, raw: str) -> HistoryRow:
    scene, kind, cancelled, characters, rolls = codec.loads(raw)
    return HistoryRow(
        seq,
        scene,
        kind,
        bool(cancelled),
        tuple(characters),
        tuple((who, total) for who, total in rolls),
    )


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
        self._history_page_script: Any = None
        self._history_indexed_script: Any = None
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
        self._history_page_script = self._redis.register_script(_HISTORY_PAGE)
        self._history_indexed_script = self._redis.register_script(_HISTORY_INDEXED)
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
                    "state": pack_text(codec.dumps(initial_state), row=False),
                    "state_seq": 0,
                    "last_event_seq": 0,
                    "last_event_hash": GENESIS_HASH,
                    "last_emit_seq": 0,
                    "history_pending": 0,
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
        state = unpack_text(row["state"])
        return Snapshot(
            world=world,
            version=int(row["version"]),
            state=codec.loads(state),
            state_seq=int(row.get("state_seq", row["last_event_seq"])),
            tail=tuple(_event(item) for item in tail),
            last_event_seq=int(row["last_event_seq"]),
            last_event_hash=row["last_event_hash"],
            last_emit_seq=int(row["last_emit_seq"]),
            state_size=len(state),
            # Each item is the whole record, packed; its payload is most of it.
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
            else pack_text(
                batch.snapshot if isinstance(batch.snapshot, str) else codec.dumps(batch.snapshot),
                row=False,
            ),
            last_event.seq if last_event else "",
            last_event.hash if last_event else "",
            last_emit.seq if last_emit else "",
            request_field,
            pack_text(codec.dumps(batch.response)) if request_field else "",
            len(batch.events),
            len(batch.emits),
            *(_event_json(e) for e in batch.events),
            *(
                pack_text(codec.dumps({"seq": m.seq, "event": m.event, "payload": m.payload}))
                for m in batch.emits
            ),
        ]
        keys = [
            self._key("world", batch.world_id),
            self._key("events", batch.world_id),
            self._key("emits", batch.world_id),
            self._key("requests", batch.world_id),
            self._key("history", batch.world_id),
        ]
        for row in batch.history:
            sets = self._history_keys(batch.world_id, row)
            keys += sets
            args += [row.seq, _history_json(row), len(sets)]
        result = await self._commit_script(keys=keys, args=args)
        if isinstance(result, str):
            raise AlreadyAnswered(codec.loads(unpack_text(result)))
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
        response: dict[str, Any] = codec.loads(unpack_text(raw))
        return response

    async def emits_since(self, world_id: str, since: int, limit: int) -> list[EmitRow]:
        # Emit seq n sits at list index n - 1.
        raw = await _done(self.redis.lrange(self._key("emits", world_id), since, since + limit - 1))
        return [EmitRow(**codec.loads(unpack_text(item))) for item in raw]

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

    def _history_set(self, world_id: str, *by: str) -> str:
        """One index set of the world's history (its members and scores are seqs)."""
        return self._key("history-by", world_id, *by)

    def _history_keys(self, world_id: str, row: HistoryRow) -> list[str]:
        return [
            self._history_set(world_id, "all"),
            self._history_set(world_id, "scene", str(row.scene)),
            self._history_set(world_id, "kind", row.kind),
            self._history_set(world_id, "cancelled", str(int(row.cancelled))),
            *(self._history_set(world_id, "character", who) for who in row.characters),
        ]

    async def history_page(self, world_id: str, query: HistoryQuery) -> HistoryFound:
        # The set of the narrowest filter is walked; the script checks the others.
        if query.character is not None:
            walked = self._history_set(world_id, "character", query.character)
        elif query.scene is not None:
            walked = self._history_set(world_id, "scene", str(query.scene))
        elif query.kind is not None:
            walked = self._history_set(world_id, "kind", query.kind)
        elif query.cancelled is not None:
            walked = self._history_set(world_id, "cancelled", str(int(query.cancelled)))
        else:
            walked = self._history_set(world_id, "all")
        below = "+inf" if query.before is None else query.before
        skip = [s for s in query.skip if query.before is None or s < query.before]
        found = await self._history_page_script(
            keys=[walked, self._key("history", world_id), self._key("events", world_id)],
            args=[
                below,
                query.limit,
                query.scan,
                "" if query.scene is None else query.scene,
                query.kind or "",
                "" if query.cancelled is None else int(query.cancelled),
                query.character or "",
                *skip,
            ],
        )
        events, exhausted, lowest, examined = found
        return HistoryFound(
            [_event(item) for item in events],
            bool(int(exhausted)),
            int(lowest) or None,
            int(examined),
        )

    async def history_rows(
        self, world_id: str, *, after: int = 0, seqs: Collection[int] | None = None
    ) -> list[HistoryRow]:
        if seqs is None:
            members = await _done(
                self.redis.zrangebyscore(self._history_set(world_id, "all"), f"({after}", "+inf")
            )
            wanted = [int(m) for m in members]
        else:
            wanted = sorted(set(seqs))
        if not wanted:
            return []
        raw = await _done(self.redis.hmget(self._key("history", world_id), wanted))
        return [_history_row(seq, row) for seq, row in zip(wanted, raw, strict=True) if row]

    async def history_pending(self, world_id: str) -> int:
        pending, last = await _done(
            self.redis.hmget(self._key("world", world_id), ["history_pending", "last_event_seq"])
        )
        # Not written since the index existed: every event it has is pending.
        return int(pending if pending is not None else last or 0)

    async def index_history(self, world_id: str, rows: list[HistoryRow], pending: int) -> None:
        if rows:
            writes = self.redis.pipeline(transaction=True)
            writes.hset(
                self._key("history", world_id),
                mapping={str(row.seq): _history_json(row) for row in rows},
            )
            for row in rows:
                for key in self._history_keys(world_id, row):
                    writes.zadd(key, {str(row.seq): row.seq})
            await writes.execute()
        await self._history_indexed_script(keys=[self._key("world", world_id)], args=[pending])

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
