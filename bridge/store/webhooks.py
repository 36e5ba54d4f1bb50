"""Outbound webhooks' persistence: each world's webhooks, its outbox of deliveries, and
how far into the world's emit log the outbox has been filled.

Self-contained on purpose: its own tables (SQLite, on its own connection to the same
file) or keys (Redis, under ``<prefix>:wh``), so the state commit path knows nothing
of it. Deliveries are derived from the emit log *after* the state commits (the emit
log is written in the same transaction as the state), so a webhook can never block
or fail an action, and nothing is lost if the bridge stops between the two.
"""

from __future__ import annotations

import json
from dataclasses import asdict, astuple, dataclass, fields
from pathlib import Path
from typing import Literal, Protocol

import aiosqlite
from redis.asyncio import Redis

from bridge.store.base import Store, record_from_row
from bridge.store.redis import _done

WebhookKind = Literal["discord", "json"]
DeliveryStatus = Literal["pending", "delivered", "failed"]


@dataclass(frozen=True)
class WebhookRecord:
    """One configured target. ``url`` and ``secret`` are secrets: never sent to players."""

    world_id: str
    id: str
    kind: WebhookKind
    url: str
    secret: str
    name: str
    created_at: str


@dataclass(frozen=True)
class Delivery:
    """One body to send to one webhook; times are seconds since the epoch."""

    id: str
    world_id: str
    webhook_id: str
    # Unique per webhook: the same card is never queued twice for one target.
    key: str
    body: str
    status: DeliveryStatus = "pending"
    attempts: int = 0
    created_at: float = 0.0
    next_at: float = 0.0
    last_error: str = ""
    finished_at: float | None = None


class WebhookStore(Protocol):
    """What the outbox needs; one implementation per store backend."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def add_webhook(self, hook: WebhookRecord, start_cursor: int) -> None:
        """Save a webhook. A world's first webhook starts the outbox at ``start_cursor``
        (the world's last emit), so the history before it is not replayed."""
        ...

    async def webhooks(self, world_id: str) -> list[WebhookRecord]: ...

    async def remove_webhook(self, world_id: str, webhook_id: str) -> bool: ...

    async def webhook_worlds(self) -> list[str]:
        """Worlds with at least one webhook."""
        ...

    async def cursor(self, world_id: str) -> int:
        """The last emit seq already turned into deliveries."""
        ...

    async def enqueue(
        self, world_id: str, expected_cursor: int, new_cursor: int, items: list[Delivery]
    ) -> bool:
        """Queue ``items`` (skipping keys a webhook already has) and move the cursor, all
        at once, only if the cursor is still ``expected_cursor``; False when another
        node got there first (then nothing changed)."""
        ...

    async def claim(
        self, now: float, lease_seconds: float, owner: str, limit: int
    ) -> list[Delivery]:
        """Pending deliveries due at ``now``, leased to ``owner``: until the lease ends no
        other claim returns them (one node sends each)."""
        ...

    async def settle(self, delivery: Delivery, owner: str) -> bool:
        """Write back a claimed delivery's outcome (status, attempts, next_at, error) if
        ``owner`` still holds it; a pending one becomes claimable again at ``next_at``."""
        ...

    async def deliveries(self, world_id: str, limit: int) -> list[Delivery]:
        """The world's most recent deliveries, newest first."""
        ...

    async def pending(self) -> int:
        """Deliveries of every world not yet delivered nor given up on (the outbox's depth)."""
        ...


def webhook_store_for(store: Store) -> WebhookStore:
    """The webhook store beside a state store: same SQLite file, or same Redis."""
    from bridge.store.redis import RedisStore
    from bridge.store.sqlite import SQLiteStore

    if isinstance(store, SQLiteStore):
        return SQLiteWebhookStore(store.path)
    if isinstance(store, RedisStore):
        return RedisWebhookStore(store.url, store.prefix)
    raise TypeError(f"no webhook store for {type(store).__name__}")


_SQLITE_TABLES = """
CREATE TABLE IF NOT EXISTS webhooks (
    world_id TEXT NOT NULL,
    id TEXT NOT NULL,
    kind TEXT NOT NULL,
    url TEXT NOT NULL,
    secret TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (world_id, id)
);
CREATE TABLE IF NOT EXISTS webhook_cursors (
    world_id TEXT PRIMARY KEY,
    emit_seq INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id TEXT PRIMARY KEY,
    world_id TEXT NOT NULL,
    webhook_id TEXT NOT NULL,
    key TEXT NOT NULL,
    body TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    created_at REAL NOT NULL,
    next_at REAL NOT NULL,
    last_error TEXT NOT NULL,
    finished_at REAL,
    lease_owner TEXT NOT NULL DEFAULT '',
    UNIQUE (world_id, webhook_id, key)
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (status, next_at);
CREATE INDEX IF NOT EXISTS webhook_deliveries_world
    ON webhook_deliveries (world_id, created_at);
"""

_DELIVERY_COLUMNS = ", ".join(f.name for f in fields(Delivery))


class SQLiteWebhookStore:
    """Tables beside the state's in the same file, on a connection of their own (WAL
    lets both work; SQLite serialises the writes)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: aiosqlite.Connection | None = None

    @property
    def db(self) -> aiosqlite.Connection:
        if self._db is None:
            raise RuntimeError("webhook store is not open")
        return self._db

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = await aiosqlite.connect(self.path, isolation_level=None)
        self._db.row_factory = aiosqlite.Row
        await self._db.execute("PRAGMA journal_mode=WAL")
        await self._db.execute("PRAGMA busy_timeout=5000")
        await self._db.executescript(f"BEGIN; {_SQLITE_TABLES} COMMIT;")

    async def close(self) -> None:
        if self._db is not None:
            await self._db.close()
            self._db = None

    async def add_webhook(self, hook: WebhookRecord, start_cursor: int) -> None:
        db = self.db
        await db.execute("BEGIN IMMEDIATE")
        try:
            async with db.execute(
                "SELECT COUNT(*) FROM webhooks WHERE world_id = ?", (hook.world_id,)
            ) as cursor:
                row = await cursor.fetchone()
            if row is None or row[0] == 0:
                await db.execute(
                    "INSERT INTO webhook_cursors (world_id, emit_seq) VALUES (?, ?) "
                    "ON CONFLICT (world_id) DO UPDATE SET emit_seq = excluded.emit_seq",
                    (hook.world_id, start_cursor),
                )
            await db.execute(
                "INSERT INTO webhooks (world_id, id, kind, url, secret, name, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                astuple(hook),
            )
            await db.execute("COMMIT")
        except BaseException:
            await db.execute("ROLLBACK")
            raise

    async def webhooks(self, world_id: str) -> list[WebhookRecord]:
        async with self.db.execute(
            "SELECT * FROM webhooks WHERE world_id = ? ORDER BY created_at, id", (world_id,)
        ) as cursor:
            rows = await cursor.fetchall()
        return [record_from_row(WebhookRecord, r) for r in rows]

    async def remove_webhook(self, world_id: str, webhook_id: str) -> bool:
        cursor = await self.db.execute(
            "DELETE FROM webhooks WHERE world_id = ? AND id = ?", (world_id, webhook_id)
        )
        return cursor.rowcount == 1

    async def webhook_worlds(self) -> list[str]:
        async with self.db.execute(
            "SELECT DISTINCT world_id FROM webhooks ORDER BY world_id"
        ) as cursor:
            return [r[0] for r in await cursor.fetchall()]

    async def cursor(self, world_id: str) -> int:
        async with self.db.execute(
            "SELECT emit_seq FROM webhook_cursors WHERE world_id = ?", (world_id,)
        ) as cursor:
            row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def enqueue(
        self, world_id: str, expected_cursor: int, new_cursor: int, items: list[Delivery]
    ) -> bool:
        db = self.db
        await db.execute("BEGIN IMMEDIATE")
        try:
            moved = await db.execute(
                "UPDATE webhook_cursors SET emit_seq = ? WHERE world_id = ? AND emit_seq = ?",
                (new_cursor, world_id, expected_cursor),
            )
            if moved.rowcount != 1:
                await db.execute("ROLLBACK")
                return False
            await db.executemany(
                f"INSERT OR IGNORE INTO webhook_deliveries ({_DELIVERY_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [astuple(d) for d in items],
            )
            await db.execute("COMMIT")
        except BaseException:
            await db.execute("ROLLBACK")
            raise
        return True

    async def claim(
        self, now: float, lease_seconds: float, owner: str, limit: int
    ) -> list[Delivery]:
        # The lease is the row's next_at moved past the send: a node that dies mid-send
        # leaves it claimable again once the lease runs out.
        async with self.db.execute(
            "UPDATE webhook_deliveries SET next_at = ?, lease_owner = ? WHERE id IN ("
            "  SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_at <= ?"
            "  ORDER BY next_at LIMIT ?"
            f") RETURNING {_DELIVERY_COLUMNS}",
            (now + lease_seconds, owner, now, limit),
        ) as cursor:
            rows = await cursor.fetchall()
        return sorted(
            (record_from_row(Delivery, r) for r in rows), key=lambda d: (d.created_at, d.id)
        )

    async def settle(self, delivery: Delivery, owner: str) -> bool:
        cursor = await self.db.execute(
            "UPDATE webhook_deliveries SET status = ?, attempts = ?, next_at = ?, "
            "last_error = ?, finished_at = ?, lease_owner = '' "
            "WHERE id = ? AND lease_owner = ?",
            (
                delivery.status,
                delivery.attempts,
                delivery.next_at,
                delivery.last_error,
                delivery.finished_at,
                delivery.id,
                owner,
            ),
        )
        return cursor.rowcount == 1

    async def deliveries(self, world_id: str, limit: int) -> list[Delivery]:
        async with self.db.execute(
            f"SELECT {_DELIVERY_COLUMNS} FROM webhook_deliveries WHERE world_id = ? "
            "ORDER BY created_at DESC, id DESC LIMIT ?",
            (world_id, limit),
        ) as cursor:
            return [record_from_row(Delivery, r) for r in await cursor.fetchall()]

    async def pending(self) -> int:
        async with self.db.execute(
            "SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending'"
        ) as cursor:
            row = await cursor.fetchone()
        return int(row[0]) if row else 0


# KEYS: cursor hash, due zset, deliveries hash, unique keys hash, the world's by-time zset.
# ARGV: world, expected cursor, new cursor, then the deliveries as JSON.
_REDIS_ENQUEUE = """
local current = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if current ~= tonumber(ARGV[2]) then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
for i = 4, #ARGV do
  local item = cjson.decode(ARGV[i])
  local unique = item.world_id .. '\\31' .. item.webhook_id .. '\\31' .. item.key
  if redis.call('HSETNX', KEYS[4], unique, item.id) == 1 then
    redis.call('HSET', KEYS[3], item.id, ARGV[i])
    redis.call('ZADD', KEYS[2], item.next_at, item.id)
    redis.call('ZADD', KEYS[5], item.created_at, item.id)
  end
end
return 1
"""

# KEYS: due zset, leases hash, deliveries hash; ARGV: now, lease until, owner, limit.
_REDIS_CLAIM = """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[4]))
local claimed = {}
for _, id in ipairs(ids) do
  redis.call('ZADD', KEYS[1], ARGV[2], id)
  redis.call('HSET', KEYS[2], id, ARGV[3])
  table.insert(claimed, redis.call('HGET', KEYS[3], id))
end
return claimed
"""

# KEYS: due zset, leases hash, deliveries hash; ARGV: id, owner, record, next_at or ''.
_REDIS_SETTLE = """
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then
  return 0
end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
if ARGV[4] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
end
return 1
"""


class RedisWebhookStore:
    """Keys under ``<prefix>:wh``; enqueue, claim and settle are each one Lua script, so
    nodes racing on them see exactly one winner."""

    def __init__(self, url: str, prefix: str = "fate-bridge") -> None:
        self.url = url
        self.prefix = f"{prefix}:wh"
        self._redis: Redis | None = None

    @property
    def redis(self) -> Redis:
        if self._redis is None:
            raise RuntimeError("webhook store is not open")
        return self._redis

    def _key(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))

    async def open(self) -> None:
        self._redis = Redis.from_url(self.url, decode_responses=True)

    async def close(self) -> None:
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None

    async def add_webhook(self, hook: WebhookRecord, start_cursor: int) -> None:
        hooks = self._key("hooks", hook.world_id)
        if not await _done(self.redis.hlen(hooks)):
            await _done(self.redis.hset(self._key("cursors"), hook.world_id, str(start_cursor)))
        await _done(self.redis.hset(hooks, hook.id, json.dumps(asdict(hook))))
        await _done(self.redis.sadd(self._key("worlds"), hook.world_id))

    async def webhooks(self, world_id: str) -> list[WebhookRecord]:
        raw = await _done(self.redis.hgetall(self._key("hooks", world_id)))
        hooks = [WebhookRecord(**json.loads(v)) for v in raw.values()]
        return sorted(hooks, key=lambda h: (h.created_at, h.id))

    async def remove_webhook(self, world_id: str, webhook_id: str) -> bool:
        removed = await _done(self.redis.hdel(self._key("hooks", world_id), webhook_id))
        if not await _done(self.redis.hlen(self._key("hooks", world_id))):
            await _done(self.redis.srem(self._key("worlds"), world_id))
        return bool(removed)

    async def webhook_worlds(self) -> list[str]:
        return sorted(await _done(self.redis.smembers(self._key("worlds"))))

    async def cursor(self, world_id: str) -> int:
        raw = await _done(self.redis.hget(self._key("cursors"), world_id))
        return int(raw or 0)

    async def enqueue(
        self, world_id: str, expected_cursor: int, new_cursor: int, items: list[Delivery]
    ) -> bool:
        keys = [
            self._key("cursors"),
            self._key("due"),
            self._key("deliveries"),
            self._key("keys"),
            self._key("by-world", world_id),
        ]
        args = [world_id, str(expected_cursor), str(new_cursor)]
        args += [json.dumps(asdict(d)) for d in items]
        result = await _done(self.redis.eval(_REDIS_ENQUEUE, len(keys), *keys, *args))
        return int(result) == 1

    async def claim(
        self, now: float, lease_seconds: float, owner: str, limit: int
    ) -> list[Delivery]:
        keys = [self._key("due"), self._key("leases"), self._key("deliveries")]
        raw = await _done(
            self.redis.eval(_REDIS_CLAIM, len(keys), *keys, now, now + lease_seconds, owner, limit)
        )
        claimed = [Delivery(**json.loads(item)) for item in raw if item]
        return sorted(claimed, key=lambda d: (d.created_at, d.id))

    async def settle(self, delivery: Delivery, owner: str) -> bool:
        keys = [self._key("due"), self._key("leases"), self._key("deliveries")]
        next_at = delivery.next_at if delivery.status == "pending" else ""
        record = json.dumps(asdict(delivery))
        result = await _done(
            self.redis.eval(_REDIS_SETTLE, len(keys), *keys, delivery.id, owner, record, next_at)
        )
        return int(result) == 1

    async def deliveries(self, world_id: str, limit: int) -> list[Delivery]:
        ids = await _done(self.redis.zrevrange(self._key("by-world", world_id), 0, limit - 1))
        if not ids:
            return []
        raw = await _done(self.redis.hmget(self._key("deliveries"), ids))
        return [Delivery(**json.loads(item)) for item in raw if item]

    async def pending(self) -> int:
        # A pending delivery stays in the due set until it is settled for good.
        return int(await _done(self.redis.zcard(self._key("due"))))
