"""The store a command names (``--data-dir`` or ``--redis``), opened after the checks that
turn a wrong setting into one line, and the world command that runs on it."""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

from bridge.cli.startup import (
    StartupError,
    check_redis_url,
    command,
    default_data_dir,
    open_store,
    prepare_data_dir,
    require_database,
    store_flags,
)
from bridge.store.base import Store
from bridge.store.redis import DEFAULT_PRESENCE_TTL, RedisStore
from bridge.store.sqlite import SQLiteStore

DB_NAME = "bridge.sqlite3"

# A world command's work, once its store is open (and its world known to be there).
WorldWork = Callable[[Store, argparse.Namespace], Awaitable[int]]


def resolve_data_dir(args: argparse.Namespace) -> None:
    """``--data-dir``, else ``FATE_BRIDGE_DATA``, else the user's data folder; notes which,
    so that printed commands name the folder unless it is the default."""
    given = args.data_dir or os.environ.get("FATE_BRIDGE_DATA")
    args.data_dir_is_default = not given
    args.data_dir = Path(given) if given else default_data_dir()


def flags_of(args: argparse.Namespace) -> list[str]:
    """The global flags that name this command's store to another command."""
    return store_flags(args.data_dir, default=args.data_dir_is_default, redis_url=args.redis)


def db_path(args: argparse.Namespace) -> Path:
    path: Path = args.data_dir / DB_NAME
    return path


def _store(args: argparse.Namespace) -> Store:
    """Redis when ``--redis`` is given (several bridges share it), else embedded SQLite."""
    if args.redis:
        return RedisStore(
            args.redis, presence_ttl=getattr(args, "presence_ttl", DEFAULT_PRESENCE_TTL)
        )
    return SQLiteStore(db_path(args))


async def opened_store(args: argparse.Namespace, *, create: bool) -> Store:
    """The store, opened after the checks that turn a wrong setting into one line: a Redis
    URL that cannot be one, a data folder that cannot be used, and (``create`` false) a
    database that is not there yet, which is then left uncreated."""
    if args.redis:
        check_redis_url(args.redis)
    elif create:
        prepare_data_dir(args.data_dir, create=True, parents=args.data_dir_is_default)
    else:
        require_database(db_path(args), flags_of(args))
        prepare_data_dir(args.data_dir, create=False, parents=False)
    store = _store(args)
    await open_store(store, redis_url=args.redis, db_path=db_path(args))
    return store


async def require_world(store: Store, args: argparse.Namespace) -> None:
    """Raise ``StartupError`` naming the store's worlds unless world ``args.id`` is there."""
    if await store.get_world(args.id) is not None:
        return
    flags = flags_of(args)
    where = f"Redis at {flags[1]}" if args.redis else str(db_path(args).absolute())
    known = [w.id for w in await store.list_worlds()]
    there = f" (its worlds: {', '.join(known)})" if known else " (it has no worlds yet)"
    raise StartupError(
        f"no world {args.id!r} in {where}{there}: check the id, or register it with "
        f"`{command(flags, 'world', 'add', args.id)}`"
    )


def on_store(
    work: WorldWork, *, create: bool = False, known_world: bool = True
) -> Callable[[argparse.Namespace], int]:
    """A world command: ``work`` on the store opened (``create``: made when missing), once
    world ``args.id`` is known to be there (unless not ``known_world``); the store is closed
    whatever happens."""

    async def opened(args: argparse.Namespace) -> int:
        store = await opened_store(args, create=create)
        try:
            if known_world:
                await require_world(store, args)
            return await work(store, args)
        finally:
            await store.close()

    return lambda args: asyncio.run(opened(args))


def sqlite_only(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A command that copies the SQLite file: refused, before anything opens, with --redis."""

    def checked(args: argparse.Namespace) -> int:
        if args.redis:
            raise StartupError(
                f"world {args.world_command} copies the SQLite store; with --redis, back "
                "Redis up with its own persistence (RDB snapshots or the append-only file)"
            )
        return run(args)

    return checked
