"""``world backup ID FILE`` and ``world restore ID FILE`` (issue 35): a backup taken while
the bridge serves and writes is whole and verifies; a restore refuses, with one line and
nothing changed, any file that is not a verified backup of that world, and keeps the
world as it was before replacing it."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sqlite3
import subprocess
from pathlib import Path

from bridge.store.sqlite_schema import connect_readable
from tests.bridge_process import Bridge, add_world
from tests.conftest import Connect
from tests.in_process import InProcessBridge, run_cli
from tests.log_forgery import rewrite_event
from tests.seats import BROUSSEAU, Seat, queue, start_action


async def play(gm: Seat, rolls: int) -> None:
    """``rolls`` overcomes resolved, each through its invoke phase."""
    await gm.ok("actor.sync", actor=BROUSSEAU)
    for _ in range(rolls):
        await queue(gm, [1, 0, 0, -1])
        card = await start_action(gm, rating=2)
        await gm.card("action.pass", action_id=card["action_id"], side="actor")


async def two_worlds(bridge: Bridge, connect: Connect, world: tuple[str, str]) -> tuple[Seat, Seat]:
    """The GMs of ``world``, after two rolls there, and of a second world, "other", on the
    same bridge (a backup holds its own world alone)."""
    other_key = add_world(bridge, "other")
    gm = Seat(await connect(world[0], key=world[1]))
    await play(gm, 2)
    return gm, Seat(await connect("other", key=other_key))


def events_of(data_dir: Path, world: str) -> int:
    with contextlib.closing(connect_readable(data_dir / "bridge.sqlite3")) as db:
        return int(
            db.execute("SELECT COUNT(*) FROM events WHERE world_id = ?", (world,)).fetchone()[0]
        )


async def stop(bridge: InProcessBridge, *seats: Seat) -> None:
    """The bridge stopped, its clients gone first (a restore needs it stopped)."""
    for seat in seats:
        await seat.client.disconnect()
    await bridge.aclose()


def world_cli(target: Path | Bridge, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(target, "world", *args, check=False)


def verified_as_data_dir(backup: Path, folder: Path, world: str) -> str:
    """``world verify`` on a backup put where a bridge keeps its database; its output."""
    folder.mkdir()
    shutil.copy(backup, folder / "bridge.sqlite3")
    done = world_cli(folder, "verify", world)
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_a_backup_taken_while_the_bridge_serves_and_writes_is_whole_and_verifies(
    bridge: Bridge, connect: Connect, world: tuple[str, str], tmp_path: Path
) -> None:
    gm, other = await two_worlds(bridge, connect, world)
    writing = asyncio.create_task(play(other, 6))
    await asyncio.sleep(0)  # the other world's GM is writing while the backup runs
    backup = tmp_path / "table.backup"
    done = await asyncio.to_thread(world_cli, bridge, "backup", world[0], str(backup))
    await play(gm, 1)  # and this world goes on after it
    await writing
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Backed up world {world[0]!r} to {backup}: ")
    # One file, the world's alone, and `world verify` passes on it.
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("table.backup")] == [
        backup.name
    ]
    with contextlib.closing(sqlite3.connect(backup)) as db:
        assert db.execute("SELECT id FROM worlds").fetchall() == [(world[0],)]
        assert db.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    out = verified_as_data_dir(backup, tmp_path / "restored", world[0])
    assert out.startswith("OK: ") and "chain intact" in out
    # A second backup to the same name is refused: nothing overwritten.
    again = world_cli(bridge, "backup", world[0], str(backup))
    assert again.returncode == 2 and "exists already" in again.stderr
    assert again.stderr.count("\n") == 1


async def test_restore_refuses_what_is_no_verified_backup_of_the_world_and_changes_nothing(
    bridge: InProcessBridge, connect: Connect, world: tuple[str, str], tmp_path: Path
) -> None:
    gm, other = await two_worlds(bridge, connect, world)
    await play(other, 1)
    good = tmp_path / "table.backup"
    assert world_cli(bridge, "backup", world[0], str(good)).returncode == 0
    other_backup = tmp_path / "other.backup"
    assert world_cli(bridge, "backup", "other", str(other_backup)).returncode == 0

    # While the bridge serves: refused (its cache would not know).
    serving = world_cli(bridge, "restore", world[0], str(good))
    assert serving.returncode == 2 and "a bridge is serving" in serving.stderr
    await stop(bridge, gm, other)
    before = events_of(bridge.data_dir, world[0])

    not_sqlite = tmp_path / "notes.txt"
    not_sqlite.write_text("my campaign notes\n" * 100)
    not_ours = tmp_path / "other-app.sqlite3"
    with contextlib.closing(sqlite3.connect(not_ours)) as db:
        db.execute("CREATE TABLE things (n INTEGER)")
    tampered = tmp_path / "tampered.backup"
    shutil.copy(good, tampered)
    with contextlib.closing(connect_readable(tampered)) as db, db:
        # A roll's payload edited without re-hashing: the chain breaks there.
        rewrite_event(db, world[0], 3, {"edited": True})
    cases = {
        tmp_path / "missing.backup": "no file",
        not_sqlite: "is not a Fate Bridge backup: it is not an SQLite database",
        not_ours: "is not a Fate Bridge backup: it is an SQLite database, but not a Fate",
        other_backup: f"holds world 'other', not {world[0]!r}",
        tampered: f"history of world {world[0]!r} does not verify",
    }
    for path, expected in cases.items():
        refused = world_cli(bridge, "restore", world[0], str(path))
        assert refused.returncode == 2, (path, refused.stdout, refused.stderr)
        assert refused.stderr.startswith("error: ") and expected in refused.stderr, refused.stderr
        assert refused.stderr.count("\n") == 1 and "nothing restored" in refused.stderr
    assert events_of(bridge.data_dir, world[0]) == before
    assert not (bridge.data_dir / "backups").exists()
    assert world_cli(bridge, "verify", world[0]).returncode == 0


async def test_restore_puts_the_backup_back_and_keeps_the_world_as_it_was(
    bridge: InProcessBridge, connect: Connect, world: tuple[str, str], tmp_path: Path
) -> None:
    gm = Seat(await connect(world[0], key=world[1]))
    await play(gm, 1)
    backup = tmp_path / "table.backup"
    assert world_cli(bridge, "backup", world[0], str(backup)).returncode == 0
    at_backup = events_of(bridge.data_dir, world[0])
    await play(gm, 2)
    await stop(bridge, gm)
    later = events_of(bridge.data_dir, world[0])
    assert later > at_backup

    done = world_cli(bridge, "restore", world[0], str(backup))
    assert done.returncode == 0, done.stderr
    assert f"Restored world {world[0]!r} from {backup}: {at_backup} events" in done.stdout
    assert events_of(bridge.data_dir, world[0]) == at_backup
    # Nothing lost: the world as it was, later rolls included, is a backup of its own.
    [kept] = (bridge.data_dir / "backups").iterdir()
    assert str(kept) in done.stdout
    out = verified_as_data_dir(kept, tmp_path / "as-it-was", world[0])
    assert out.startswith(f"OK: {later} events")
    # The bridge serves the restored world, and it goes on from there.
    await bridge.serve()
    gm = Seat(await connect(world[0], key=world[1]))
    await play(gm, 1)
    assert world_cli(bridge, "verify", world[0]).returncode == 0
