"""One world of an SQLite store copied out to a file, and copied back in.

:func:`copy_world_out` uses SQLite's online backup API: a consistent copy of the file as
of one moment, taken while a bridge goes on serving and writing (in WAL mode a reader
never blocks the writer), then every other world's rows removed from the copy.
:func:`copy_world_in` replaces one world's rows in a store with a backup's, in one
transaction: all of them or, on any failure, none. The checks around them (the file is
SQLite, holds the world, its history verifies; no bridge serves the store while it is
restored) are :mod:`bridge.cli.backup`'s, which says what is wrong in one line.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bridge.store.sqlite_schema import connect_readable


class NotABackup(Exception):
    """The file is not a database a bridge wrote (the message says why, for people)."""


def _world_tables(db: sqlite3.Connection, schema: str = "main") -> dict[str, tuple[str, str]]:
    """Every table holding rows of a world: its name -> (the world's column, the column
    list). The worlds table is keyed by ``id``, the others by ``world_id``."""
    tables: dict[str, tuple[str, str]] = {}
    names = db.execute(
        f"SELECT name FROM {schema}.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    for (name,) in names:
        columns = [row[1] for row in db.execute(f'PRAGMA {schema}.table_info("{name}")')]
        key = "id" if name == "worlds" else "world_id"
        if key in columns:
            tables[name] = (key, ", ".join(f'"{c}"' for c in columns))
    return tables


def worlds_in(path: Path) -> list[str]:
    """The ids of the worlds a database file holds; :class:`NotABackup` if it is not one
    a bridge wrote (not SQLite, or no worlds table)."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise NotABackup(f"cannot open it: {exc}") from exc
    try:
        rows = db.execute("SELECT id FROM worlds ORDER BY id").fetchall()
    except sqlite3.DatabaseError as exc:
        if "no such table" in str(exc):
            raise NotABackup("it is an SQLite database, but not a Fate Bridge one") from exc
        raise NotABackup(f"it is not an SQLite database ({exc})") from exc
    finally:
        db.close()
    return [row[0] for row in rows]


def copy_world_out(source: Path, world_id: str, target: Path) -> None:
    """Write ``target``: a copy of ``source`` as of now holding world ``world_id`` only,
    one self-contained file (no write-ahead log beside it). ``target`` must not exist."""
    src = connect_readable(source)
    dst = sqlite3.connect(target, isolation_level=None)
    try:
        # All pages in one step: one read transaction, so one consistent moment.
        src.backup(dst)
        dst.execute("PRAGMA journal_mode=DELETE")
        dst.execute("BEGIN IMMEDIATE")
        for table, (key, _columns) in _world_tables(dst).items():
            dst.execute(f'DELETE FROM "{table}" WHERE "{key}" IS NOT ?', (world_id,))
        dst.execute("COMMIT")
        dst.execute("VACUUM")
    finally:
        dst.close()
        src.close()


def copy_world_in(store_path: Path, backup: Path, world_id: str) -> int:
    """Replace world ``world_id``'s rows in the store at ``store_path`` with ``backup``'s
    (a file of the store's own schema), in one transaction; returns the rows copied.
    A table the backup lacks keeps the store's rows."""
    db = connect_readable(store_path, isolation_level=None)
    try:
        db.execute("ATTACH DATABASE ? AS backup", (str(backup),))
        present = _world_tables(db, "backup")
        copied = 0
        db.execute("BEGIN IMMEDIATE")
        try:
            # The worlds row last out and first in: the other tables refer to it.
            tables = sorted(_world_tables(db).items(), key=lambda item: item[0] != "worlds")
            for table, (key, _columns) in reversed(tables):
                if table in present:
                    db.execute(f'DELETE FROM main."{table}" WHERE "{key}" = ?', (world_id,))
            for table, (key, columns) in tables:
                if table in present:
                    cursor = db.execute(
                        f'INSERT INTO main."{table}" ({columns}) '
                        f'SELECT {columns} FROM backup."{table}" WHERE "{key}" = ?',
                        (world_id,),
                    )
                    copied += cursor.rowcount
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("DETACH DATABASE backup")
    finally:
        db.close()
    return copied
