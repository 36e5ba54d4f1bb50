"""``world verify``, ``world backup`` and ``world restore``: a world's history checked,
copied out while the bridge serves, and copied back in."""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from bridge.cli.options import AddParser, add_world
from bridge.cli.startup import DataLock, StartupError, prepare_data_dir
from bridge.cli.stores import db_path, on_store, opened_store, sqlite_only
from bridge.service import BridgeService, protocol
from bridge.store.backup import NotABackup, copy_world_in, copy_world_out, worlds_in
from bridge.store.base import Store
from bridge.store.sqlite import SQLiteStore


def add_commands(add_parser: AddParser) -> None:
    verify = add_parser(
        "verify",
        help="check a world's event log: the hash chain, its head against the world's stored "
        "head, that replaying it gives the stored state, and (--chat-log) Foundry's anchors",
    )
    add_world(verify)
    verify.add_argument(
        "--chat-log",
        type=Path,
        metavar="FILE",
        help="also check the log against the anchors Foundry's chat log kept: the JSON file "
        "the module's 'Export history anchors' writes",
    )
    verify.set_defaults(run=on_store(_verify))
    backup = add_parser(
        "backup",
        help="copy one world to a file while the bridge serves (SQLite's online backup), "
        "then verify the copy as `world verify` does",
    )
    _add_world_and_file(backup, "the backup to write (new)")
    backup.set_defaults(run=sqlite_only(on_store(_backup)))
    restore = add_parser(
        "restore",
        help="replace one world with its backup, once the backup's history verifies; the "
        "world as it was is kept in the data folder's backups/ first (stop the bridge)",
    )
    _add_world_and_file(restore, "a file `world backup` wrote")
    restore.set_defaults(run=sqlite_only(lambda args: asyncio.run(_restore(args))))


def _add_world_and_file(parser: argparse.ArgumentParser, text: str) -> None:
    add_world(parser)
    parser.add_argument("file", type=Path, metavar="FILE", help=text)


def _read_chat_log(path: Path, world_id: str) -> list[tuple[int, str]]:
    """The anchors of a chat-log export (the module's "Export history anchors" file, format
    ``fate-bridge.history-anchors`` v1, schema ``schemas/history_anchors.json``).

    Raises ``ValueError`` with a message for people when the file is not that, or is another
    world's."""
    try:
        raw = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from exc
    try:
        export = protocol.HistoryAnchors.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "the top level"
        raise ValueError(
            f"{path} is not a {protocol.HISTORY_ANCHORS_FORMAT} export: {where}: {first['msg']}"
        ) from exc
    if export.world != world_id:
        raise ValueError(f"{path} is the chat log of world {export.world!r}, not {world_id!r}")
    return [(a.seq, a.hash) for a in export.anchors]


async def _verify(store: Store, args: argparse.Namespace) -> int:
    """``world verify ID``: exit 0 when every check of ``verify_history`` holds, 2 when one
    fails, 1 when the chat-log file cannot be used (an unknown world was refused before,
    with 2)."""
    world_id: str = args.id
    chat_log: Path | None = args.chat_log
    anchors: list[tuple[int, str]] = []
    if chat_log is not None:
        try:
            anchors = _read_chat_log(chat_log, world_id)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    report = await BridgeService(store).verify_history(world_id, anchors)
    for problem in report.problems:
        print(f"BROKEN: {problem}", file=sys.stderr)
    for bad in report.anchors_mismatched:
        logged = bad.log_hash or "no such event"
        print(f"  anchor {bad.seq}: chat log {bad.hash}, bridge log {logged}", file=sys.stderr)
    if not report.ok:
        return 2
    anchored = f", {report.anchors_checked} chat-log anchors agree" if chat_log else ""
    print(
        f"OK: {report.events} events, chain intact, stored head matches, replay matches"
        f"{anchored}. Head {report.head}"
    )
    return 0


async def _verified(path: Path, world_id: str) -> protocol.WorldVerifyData:
    """``world verify``'s checks of one world in the SQLite file at ``path`` (migrated to
    this bridge's schema if it is older)."""
    store = SQLiteStore(path)
    await store.open()
    try:
        return await BridgeService(store).verify_history(world_id)
    finally:
        await store.close()


def _single_file(path: Path) -> None:
    """Leave the database at ``path`` whole in its one file (no write-ahead log beside it)."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=DELETE")
    finally:
        db.close()


async def _backup_to(
    database: Path, world_id: str, target: Path, *, verified: bool = True
) -> protocol.WorldVerifyData:
    """Copy the world to ``target`` (written whole, or not at all) and verify the copy;
    ``StartupError`` when the copy does not verify (then nothing is left behind), unless
    not ``verified`` (a copy kept whatever it holds: a broken world's too)."""
    partial = target.with_name(target.name + ".partial")
    for leftover in (partial, *partial.parent.glob(partial.name + "-*")):
        leftover.unlink(missing_ok=True)
    try:
        await asyncio.to_thread(copy_world_out, database, world_id, partial)
        report = await _verified(partial, world_id)
        if verified and not report.ok:
            raise StartupError(
                f"the copy of world {world_id!r} does not verify ({report.problems[0]}): "
                f"run `world verify {world_id}` on the bridge's own database"
            )
        _single_file(partial)
        partial.replace(target)
    finally:
        for leftover in (partial, *partial.parent.glob(partial.name + "-*")):
            leftover.unlink(missing_ok=True)
    return report


async def _backup(_store: Store, args: argparse.Namespace) -> int:
    """``world backup ID FILE``: the world copied while the bridge serves, verified."""
    target: Path = args.file
    if target.exists():
        raise StartupError(f"{target} exists already: name a new file (nothing was written)")
    if not target.parent.is_dir():
        raise StartupError(f"no folder {target.parent.absolute()} to write {target.name} in")
    try:
        report = await _backup_to(db_path(args), args.id, target)
    except OSError as exc:
        raise StartupError(f"cannot write {target}: {exc.strerror or exc}") from exc
    print(
        f"Backed up world {args.id!r} to {target}: {report.events} events, chain intact, "
        f"replay matches. Head {report.head}"
    )
    return 0


async def _restore(args: argparse.Namespace) -> int:
    """``world restore ID FILE``: refused, with nothing changed, unless FILE is a backup
    holding world ID whose history verifies and no bridge serves the data folder; the
    world as it was is backed up first (it is kept, whatever happens next)."""
    source: Path = args.file
    if not source.is_file():
        raise StartupError(f"no file {source}: nothing restored")
    try:
        held = worlds_in(source)
    except NotABackup as exc:
        raise StartupError(
            f"{source} is not a Fate Bridge backup: {exc}; nothing restored"
        ) from None
    if args.id not in held:
        names = ", ".join(repr(w) for w in held) or "none"
        raise StartupError(
            f"{source} holds world {names}, not {args.id!r}: nothing restored "
            f"(restore it as its own world id)"
        )
    prepare_data_dir(args.data_dir, create=True, parents=args.data_dir_is_default)
    database = db_path(args)
    lock = DataLock(database)
    try:
        lock.acquire()
    except StartupError:
        raise StartupError(
            f"a bridge is serving {database.absolute()}: stop it before restoring (world "
            "backup works while it serves); nothing restored"
        ) from None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            # Checked, and brought to this bridge's schema, on a copy: FILE stays as it is.
            candidate = Path(tmp) / "restore.sqlite3"
            candidate.write_bytes(source.read_bytes())
            try:
                report = await _verified(candidate, args.id)
            except (RuntimeError, OSError, ValueError) as exc:  # a newer schema, a bad page
                raise StartupError(f"cannot read {source}: {exc}; nothing restored") from exc
            except Exception as exc:
                raise StartupError(
                    f"{source} is not a usable backup ({type(exc).__name__}: {exc}); "
                    "nothing restored"
                ) from exc
            if not report.ok:
                raise StartupError(
                    f"{source}'s history of world {args.id!r} does not verify "
                    f"({report.problems[0]}): nothing restored"
                )
            store = await opened_store(args, create=True)  # a new folder gets its schema
            try:
                exists = await store.get_world(args.id) is not None
            finally:
                await store.close()
            if exists:
                kept = args.data_dir / "backups"
                kept.mkdir(exist_ok=True)
                stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
                previous = kept / f"{args.id}-{stamp}.sqlite3"
                await _backup_to(database, args.id, previous, verified=False)
                print(f"World {args.id!r} as it was is kept in {previous}.")
            await asyncio.to_thread(copy_world_in, database, candidate, args.id)
        after = await _verified(database, args.id)
    finally:
        lock.release()
    if not after.ok:  # cannot happen short of a bug: say so, the copy kept above has it all
        print(f"BROKEN after restore: {after.problems[0]}", file=sys.stderr)
        return 2
    print(
        f"Restored world {args.id!r} from {source}: {after.events} events, chain intact, "
        f"replay matches. Head {after.head}"
    )
    return 0
