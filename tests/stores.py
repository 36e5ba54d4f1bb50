"""The bridge's real stores opened for a test: the embedded SQLite file or a fresh database
on the session's redis-server, closed again when the test is done with them."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TypeVar

import pytest

from bridge.store.base import Store
from bridge.store.redis import RedisStore
from bridge.store.sqlite import SQLiteStore
from tests.bridge_process import flush_redis

AnyStore = TypeVar("AnyStore", bound=Store)


@contextlib.asynccontextmanager
async def opened(store: AnyStore) -> AsyncIterator[AnyStore]:
    """``store`` opened for the ``async with`` block and closed after it, whatever the
    block raises."""
    await store.open()
    try:
        yield store
    finally:
        await store.close()


def store_of_kind(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Store:
    """A store not opened yet: ``"sqlite"``, a file in ``tmp_path``; ``"redis"``, the test's
    own Redis database (the ``redis_url`` fixture), emptied first."""
    if kind == "redis":
        url: str = request.getfixturevalue("redis_url")
        flush_redis(url)
        return RedisStore(url)
    assert kind == "sqlite", kind
    return SQLiteStore(tmp_path / "bridge.sqlite3")


@pytest.fixture(params=["sqlite", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    """Each store opened on its own empty data: the test runs once on SQLite and once on
    Redis (a test module's own ``store`` fixture takes its place)."""
    async with opened(store_of_kind(request.param, tmp_path, request)) as found:
        yield found
