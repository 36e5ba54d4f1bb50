"""The history index (issue 26), on both stores: kept with every commit, read in pages
that cost what they return, old logs indexed on their first read; and the history and
dice statistics it gives are the ones a scan of the whole log gives."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from bridge.rules import history
from bridge.rules.events import EVENT_ADAPTER, ActionCancelled
from bridge.service import BridgeService, Session, protocol
from bridge.service.history_index import index_row
from bridge.store.base import CommitBatch, EventRow, HistoryQuery, HistoryRow, Store, WorldRecord
from bridge.store.chain import GENESIS_HASH, event_hash
from bridge.store.redis import RedisStore, _done
from bridge.store.sqlite import SQLiteStore
from bridge.store.sqlite_schema import MIGRATIONS
from tests.seats import action_start
from tests.service_seat import ServiceSeat
from tests.stores import opened

WORLD = WorldRecord(id="w", name="World", ruleset="unwritten", key_hash="h", created_at="t0")


# --- the store's index ---------------------------------------------------------------------


def rows_of(count: int) -> tuple[list[EventRow], list[HistoryRow]]:
    """``count`` events, every other one an entry: scenes of four events, kinds and the
    characters in turn, every sixth entry cancelled."""
    events, index, prev = [], [], GENESIS_HASH
    for seq in range(1, count + 1):
        payload = {"n": seq}
        digest = event_hash(prev, seq, "t", payload, f"t{seq}")
        events.append(EventRow(seq, "t", payload, f"t{seq}", prev, digest))
        prev = digest
        if seq % 2 == 0:
            n = seq // 2
            index.append(
                HistoryRow(
                    seq=seq,
                    scene=1 + (seq - 1) // 4,
                    kind=("overcome", "attack", "discover")[n % 3],
                    cancelled=n % 6 == 0,
                    characters=(("ann", "bob"), ("bob",), ("cy",))[n % 3],
                    rolls=(("ann" if n % 3 == 0 else None, n % 9 - 4),),
                )
            )
    return events, index


async def test_the_index_is_written_with_each_commit_and_paged_by_every_filter(
    store: Store,
) -> None:
    await store.add_world(WORLD, {})
    assert await store.history_pending("w") == 0
    events, index = rows_of(60)
    for version, start in enumerate(range(0, 60, 6)):
        part = events[start : start + 6]
        await store.commit(
            CommitBatch(
                world_id="w",
                expected_version=version,
                events=part,
                history=[r for r in index if part[0].seq <= r.seq <= part[-1].seq],
            )
        )
    by_seq = {r.seq: r for r in index}

    def expect(query: HistoryQuery) -> list[int]:
        kept = [
            r.seq
            for r in reversed(index)
            if (query.before is None or r.seq < query.before)
            and r.seq not in query.skip
            and query.scene in (None, r.scene)
            and query.kind in (None, r.kind)
            and query.cancelled in (None, r.cancelled)
            and (query.character is None or query.character in r.characters)
        ]
        return kept[: query.limit]

    queries = [
        HistoryQuery(limit=50),
        HistoryQuery(limit=7, before=41),
        HistoryQuery(limit=5, scene=3),
        HistoryQuery(limit=50, kind="attack"),
        HistoryQuery(limit=50, cancelled=True),
        HistoryQuery(limit=50, character="ann"),
        HistoryQuery(limit=3, character="bob", kind="overcome", before=50),
        HistoryQuery(limit=50, character="cy", scene=2),
        HistoryQuery(limit=4, skip=frozenset({60, 58, 54})),
        HistoryQuery(limit=50, character="nobody"),
        HistoryQuery(limit=50, kind="take_advantage"),
        HistoryQuery(limit=50, scene=99),
    ]
    for query in queries:
        found = await store.history_page("w", query)
        wanted = expect(query)
        assert [e.seq for e in found.events] == wanted, query
        assert [e.payload for e in found.events] == [{"n": s} for s in wanted]
        if len(wanted) < query.limit:
            assert found.exhausted, query
        # A page looks at what it returns and what it skips, not at the log (with two
        # filters, a store may look at the rows of one and check the other).
        given = [query.scene, query.kind, query.cancelled, query.character]
        if sum(f is not None for f in given) <= 1:
            assert found.examined <= len(wanted) + len(query.skip) + 1, (query, found.examined)
    # A read that matches nothing looks at nothing.
    assert (await store.history_page("w", HistoryQuery(limit=50, character="x"))).examined == 0
    # The scan stops at its bound, and says where to go on from.
    bounded = await store.history_page("w", HistoryQuery(limit=50, kind="discover", scan=2))
    assert not bounded.exhausted and bounded.examined == 2 and bounded.lowest is not None
    # (A store may look at the kind's own rows, or at every row and check the kind.)
    discoveries = expect(HistoryQuery(limit=50, kind="discover"))
    assert 0 < len(bounded.events) <= 2
    assert [e.seq for e in bounded.events] == discoveries[: len(bounded.events)]

    assert await store.history_rows("w", after=54) == [by_seq[56], by_seq[58], by_seq[60]]
    assert await store.history_rows("w", seqs=[4, 2, 999]) == [by_seq[2], by_seq[4]]
    assert await store.history_rows("w") == index


# --- the service over the index ------------------------------------------------------------

CHARACTERS = [
    {"id": cid, "name": cid.title(), "owners": [owner], "skills": {"Athletics": 3, "Lore": 2}}
    for cid, owner in (("ann", "p1"), ("bob", "p2"), ("cy", "p1"))
]
GM = Session("gm", "w", "gm", "gm", bound=True)
PLAYER = Session("p1", "w", "p1", "player", bound=True)


async def ask(service: BridgeService, session: Session, event: str, **payload: Any) -> Any:
    return await ServiceSeat(service, session).ok(event, **payload)


async def play(service: BridgeService) -> None:
    """A world with every kind of entry: three scenes of overcomes, discoveries and
    advantages by three characters, some cancelled after their roll, one undo."""
    await service.add_world("w", "World")
    for character in CHARACTERS:
        await ask(service, GM, "actor.sync", actor=character)
    kinds = ("overcome", "discover", "create_advantage")
    for n in range(36):
        actor = str(CHARACTERS[n % 3]["id"])
        kind = kinds[(n // 3) % 3]
        extra = {"aspect_name": f"Edge {n}"} if kind == "create_advantage" else {}
        started = await ask(
            service, GM, "action.start", **action_start(kind, actor=actor, rating=-4, **extra)
        )
        if n % 7 == 3:
            await ask(service, GM, "action.cancel", action_id=started["action_id"])
        else:
            await ask(service, GM, "action.pass", action_id=started["action_id"], side="actor")
        if n in (11, 23):
            await ask(service, GM, "scene.end")
    await ask(service, GM, "history.undo")  # the last entry: players no longer see it


async def whole_log(service: BridgeService) -> tuple[list[Any], frozenset[int]]:
    """Every entry in the log, newest first (seq, event), and the seqs undone."""
    state = await service.latest_state("w")
    entries = []
    for row in reversed(await service.store.events("w")):
        if row.type in history.ENTRY_TYPES:
            entry = history.entry_of(EVENT_ADAPTER.validate_python(row.payload))
            if entry is not None:
                entries.append((row.seq, entry))
    return entries, frozenset(state.undone)


def filters() -> list[dict[str, Any]]:
    return [
        {},
        {"limit": 5},
        {"limit": 4, "before": 60},
        {"scene": 2},
        {"scene": 3, "kind": "discover"},
        {"character": "bob"},
        {"character": "cy", "cancelled": True},
        {"cancelled": False, "kind": "create_advantage"},
        {"character": "nobody"},
        {"kind": "attack"},
        {"limit": 50},
    ]


async def check_against_the_log(service: BridgeService) -> None:
    """Every page and every statistic the index gives equals what a scan of the log gives."""
    entries, undone = await whole_log(service)
    assert entries, "the world has history"
    for session in (GM, PLAYER):
        for asked in filters():
            request = protocol.HistoryRead(request_id="q", **asked)
            page = await ask(service, session, "history.read", **asked)
            wanted = [
                seq
                for seq, entry in entries
                if (request.before is None or seq < request.before)
                and (session.role == "gm" or seq not in undone)
                and history.matches(
                    entry,
                    scene=request.scene,
                    character=request.character,
                    kind=request.kind,
                    cancelled=request.cancelled,
                )
            ][: request.limit]
            assert [e["seq"] for e in page["entries"]] == wanted, (session.role, asked)
            assert [e["undone"] for e in page["entries"]] == [s in undone for s in wanted]
            full = len(wanted) == request.limit
            assert page["next_before"] == (wanted[-1] if full else None), (session.role, asked)
        for scene in (None, 1, 2, 3, 4):
            stats = await ask(
                service, session, "history.stats", **({} if scene is None else {"scene": scene})
            )
            world, per, cancelled = [0] * 9, dict[str, list[int]](), 0
            for seq, entry in entries:
                if (session.role != "gm" and seq in undone) or scene not in (None, entry.scene):
                    continue
                for roll in history.rolls_of(entry.action):
                    world[sum(roll.dice) + 4] += 1
                    cancelled += isinstance(entry, ActionCancelled)
                    if roll.character is not None:
                        per.setdefault(roll.character, [0] * 9)[sum(roll.dice) + 4] += 1
            assert stats["world"]["counts"] == world, (session.role, scene)
            assert stats["world"]["cancelled"] == cancelled
            assert {c: d["counts"] for c, d in stats["characters"].items()} == per


async def test_pages_and_statistics_by_the_index_are_what_the_whole_log_gives(
    store: Store,
) -> None:
    service = BridgeService(store)
    await play(service)
    await check_against_the_log(service)
    # The statistics follow the log: another roll, then the GM takes it back.
    started = await ask(
        service, GM, "action.start", **action_start(actor="ann", skill="Lore", rating=-4)
    )
    await ask(service, GM, "action.pass", action_id=started["action_id"], side="actor")
    await check_against_the_log(service)
    await ask(service, GM, "history.undo")
    await check_against_the_log(service)


async def forget_the_index(store: Store) -> None:
    """Make the world look written before the index existed: no rows, all pending."""
    if isinstance(store, RedisStore):
        keys = [k async for k in store.redis.scan_iter(f"{store.prefix}:history*")]
        await _done(store.redis.delete(*keys))
        await _done(store.redis.hdel(store._key("world", "w"), "history_pending"))
        return
    assert isinstance(store, SQLiteStore)

    def forget(db: sqlite3.Connection) -> None:
        db.execute("DELETE FROM history")
        db.execute("DELETE FROM history_characters")
        db.execute("UPDATE worlds SET history_pending = last_event_seq")

    await store._run(forget)


async def test_a_log_written_before_the_index_is_indexed_on_its_first_read(
    store: Store,
) -> None:
    service = BridgeService(store)
    await play(service)
    last = (await service.latest_state("w")).model_dump()
    await forget_the_index(store)
    # Commits go on meanwhile: their own entries are indexed, the old ones wait.
    fresh = BridgeService(store)
    started = await ask(fresh, GM, "action.start", **action_start(actor="bob", rating=-4))
    await ask(fresh, GM, "action.pass", action_id=started["action_id"], side="actor")
    snapshot = await store.load("w")
    assert snapshot is not None
    pending = await store.history_pending("w")
    assert 0 < pending < snapshot.last_event_seq
    await check_against_the_log(fresh)
    assert await store.history_pending("w") == 0
    assert last  # the world was played


async def test_a_schema_4_database_migrates_and_indexes_its_history_on_first_read(
    tmp_path: Path,
) -> None:
    # A database an earlier bridge wrote: played by this one, then copied into a file at
    # schema 4 (the tables it had then), as a bridge upgraded in place finds it.
    async with opened(SQLiteStore(tmp_path / "played.sqlite3")) as played:
        await play(BridgeService(played))
    old = tmp_path / "old.sqlite3"
    db = sqlite3.connect(old, isolation_level=None)
    for number, script in enumerate(MIGRATIONS[:4], start=1):
        db.executescript(f"BEGIN; {script}; PRAGMA user_version={number}; COMMIT;")
    db.execute("ATTACH DATABASE ? AS played", (str(tmp_path / "played.sqlite3"),))
    columns = "id, name, ruleset, key_hash, created_at, version, last_event_seq, "
    columns += "last_event_hash, last_emit_seq"
    db.executescript(
        f"""
        BEGIN;
        INSERT INTO worlds ({columns}) SELECT {columns} FROM played.worlds;
        INSERT INTO snapshots SELECT * FROM played.snapshots;
        INSERT INTO commits SELECT * FROM played.commits;
        INSERT INTO requests SELECT * FROM played.requests;
        COMMIT;
        """
    )
    db.close()
    async with opened(SQLiteStore(old)) as store:
        snapshot = await store.load("w")
        assert snapshot is not None
        assert await store.history_pending("w") == snapshot.last_event_seq
        assert await store.history_rows("w") == []
        await check_against_the_log(BridgeService(store))
        assert await store.history_pending("w") == 0
        rows = await store.history_rows("w")
        log = await store.events("w")
        assert rows == [
            r
            for r in (index_row(e.seq, EVENT_ADAPTER.validate_python(e.payload)) for e in log)
            if r is not None
        ]
