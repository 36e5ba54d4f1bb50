"""The roll history (read by the history index in pages) and the GM's undo.

Who sees what (a decision, in README and MACROS.md): every card at a Fate table is a
public chat message, so a player's history holds every roll the GM's does, resolved
or cancelled by the GM after its dice were rolled (bridge.rules.history.entry_of),
except the rolls the GM took back: those are out of the story. The GM sees them
too, marked undone. Dice statistics count the rolls of the history the viewer sees.

Each reader pays for what it reads: a page reads the index rows and the events
of the entries it returns, never the log (bridge.store.base.HistoryQuery), and the dice
statistics are kept as the log grows (history_index.DiceTally). Each answer carries its
cost in rate tokens (``Reply.cost``): one, plus the entries built and the rows looked at,
which the server charges the reader's own connection.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import TYPE_CHECKING

from bridge.rules import history
from bridge.rules.events import EVENT_ADAPTER, Event, HistoryUndone
from bridge.rules.ruleset import Ruleset, get_ruleset
from bridge.rules.state import WorldState
from bridge.service import cards, protocol
from bridge.service.core import Committed, ServiceCore, Turn
from bridge.service.emits import card_id
from bridge.service.history_index import DiceTally, index_rows
from bridge.service.session import (
    IntentError,
    Reply,
    Role,
    Session,
    ok,
)
from bridge.store.base import EventRow, HistoryQuery

if TYPE_CHECKING:
    from bridge.service import BridgeService

# Events read per store call when indexing a log written before the index existed.
CHUNK = 1000
UNDO_ATTEMPTS = 3
# What a read costs in rate tokens, a token being about a cheap intent's work: an entry
# built (its card view), an entry whose view was built already for this
# version of the world, an index row looked at, an event read to index an old log or a
# row folded into the dice statistics.
ENTRY_COST = 0.5
CACHED_ENTRY_COST = 0.05
ROW_COST = 1 / 200
EVENT_COST = 1 / 200
# Entries built between two turns of the event loop: a page never holds other worlds up
# for longer than a few entries take.
YIELD_EVERY = 4
# Entry views kept (by world, version, seq, undone): a page read again before the world
# changes costs what serialising it does.
ENTRY_VIEWS = 1024


class HistoryReader:
    """The roll history's pages and dice statistics of one service, with what it keeps
    between reads: entry views built, and each world's dice tally."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core
        # Entry views built, by (world, version, seq, undone), least recently used first.
        self._entry_views: OrderedDict[tuple[str, int, int, bool], protocol.HistoryEntry] = (
            OrderedDict()
        )
        # Per world: its dice tally, the lock its updates take turns on, and the indexing
        # of its old log under way (every reader meanwhile waits on it).
        self._tallies: dict[str, DiceTally] = {}
        self._tally_locks: dict[str, asyncio.Lock] = {}
        self._indexing: dict[str, asyncio.Task[float]] = {}

    async def page(
        self, world_id: str, viewer: Role, request: protocol.HistoryRead
    ) -> tuple[protocol.HistoryPage, float]:
        """One page of history entries (resolutions and cancelled rolls), newest first,
        as ``viewer`` may see them, from before ``request.before`` (exclusive), and what
        it cost (rate tokens); ``next_before`` continues where this page stopped."""
        snapshot, state = await self.core.current(world_id)
        cost = 1.0 + await self._indexed(world_id)
        ruleset = get_ruleset(state.ruleset)
        # Not past the state's last event: the page and the state agree.
        before = snapshot.last_event_seq + 1
        if request.before is not None:
            before = min(before, request.before)
        found = await self.core.store.history_page(
            world_id,
            HistoryQuery(
                limit=request.limit,
                before=before,
                scene=request.scene,
                character=request.character,
                kind=request.kind,
                cancelled=request.cancelled,
                skip=frozenset() if viewer == "gm" else frozenset(state.undone),
            ),
        )
        cost += found.examined * ROW_COST
        entries: list[protocol.HistoryEntry] = []
        built = 0
        for row in found.events:
            undone = row.seq in state.undone
            key = (world_id, snapshot.version, row.seq, undone)
            view = self._entry_views.get(key)
            if view is None:
                if built and built % YIELD_EVERY == 0:
                    await asyncio.sleep(0)  # let other connections' work in
                view = self._entry_view(world_id, row, state, ruleset, undone)
                built += 1
                if view is None:
                    continue
                self._entry_views[key] = view
                if len(self._entry_views) > ENTRY_VIEWS:
                    self._entry_views.popitem(last=False)
            else:
                self._entry_views.move_to_end(key)
            entries.append(view)
        cost += built * ENTRY_COST + max(0, len(entries) - built) * CACHED_ENTRY_COST
        if len(entries) == request.limit:
            next_before: int | None = entries[-1].seq
        elif found.exhausted or found.lowest is None or found.lowest <= 1:
            next_before = None
        else:
            next_before = found.lowest
        page = protocol.HistoryPage(
            entries=entries, next_before=next_before, last_seq=snapshot.last_event_seq
        )
        return page, cost

    @staticmethod
    def _entry_view(
        world_id: str, row: EventRow, state: WorldState, ruleset: Ruleset, undone: bool
    ) -> protocol.HistoryEntry | None:
        event = history.entry_of(EVENT_ADAPTER.validate_python(row.payload))
        if event is None:  # the index names entries only; a forged store might not
            return None
        return cards.history_entry(
            event,
            row.seq,
            row.hash,
            row.created_at,
            card_id(world_id, event.action.id),
            state,
            ruleset,
            undone,
        )

    async def _indexed(self, world_id: str) -> float:
        """Make sure the index holds every entry of the world's log: a log written before
        the index existed is indexed now, once (callers meanwhile share the work). Returns
        what this caller's share cost (rate tokens)."""
        running = self._indexing.get(world_id)
        if running is not None:
            return await asyncio.shield(running)
        pending = await self.core.store.history_pending(world_id)
        if not pending:
            return 0.0
        running = self._indexing.get(world_id)
        if running is None:
            running = asyncio.ensure_future(self._index_old_log(world_id, pending))
            self._indexing[world_id] = running
            running.add_done_callback(lambda _t: self._indexing.pop(world_id, None))
        return await asyncio.shield(running)

    async def _index_old_log(self, world_id: str, pending: int) -> float:
        rows = []
        first = 1
        while first <= pending:
            last = min(first + CHUNK - 1, pending)
            rows += index_rows(await self.core.store.events_between(world_id, first, last))
            first = last + 1
            await asyncio.sleep(0)
        await self.core.store.index_history(world_id, rows, pending)
        return pending * EVENT_COST

    async def stats(
        self, world_id: str, viewer: Role, request: protocol.HistoryStats
    ) -> tuple[protocol.HistoryStatsData, float]:
        """R1.1: every 4dF sum the viewer's history shows, per character and for the
        world, from the tally kept as the log grows.

        The dice of cancelled rolls count, like any roll (and are also counted apart in
        ``cancelled``): they were rolled, and a chart that dropped the rolls the GM called
        off would show the dice as luckier than they fell, which is what fishing for
        rolls by cancelling looks like; R1.1 is about every roll made. With what it cost
        (rate tokens)."""
        snapshot, state = await self.core.current(world_id)
        cost = 1.0 + await self._indexed(world_id)
        cost += await self._tally_up(world_id, snapshot.last_event_seq, frozenset(state.undone))
        counts = self._tallies[world_id].counts(viewer == "gm", request.scene)
        data = protocol.HistoryStatsData(
            world=cards.dice_distribution(list(counts.world), counts.cancelled),
            characters={
                cid: cards.dice_distribution(list(c), counts.per_cancelled.get(cid, 0))
                for cid, c in sorted(counts.per.items())
                if any(c)
            },
            names={
                cid: state.characters[cid].name if cid in state.characters else cid
                for cid, c in counts.per.items()
                if any(c)
            },
        )
        return data, cost

    async def _tally_up(self, world_id: str, upto: int, undone: frozenset[int]) -> float:
        """Bring the world's dice tally to event ``upto`` with ``undone`` entries taken
        back: only the rows since, and the entries undone since, are read. Returns what
        that cost (rate tokens)."""
        async with self._tally_locks.setdefault(world_id, asyncio.Lock()):
            tally = self._tallies.get(world_id)
            if tally is not None and tally.seq >= upto:
                return 0.0  # as of this state already (an undo is an event: seq moves)
            if tally is None or not tally.undone <= undone:
                tally = self._tallies[world_id] = DiceTally()
            rows = [
                r
                for r in await self.core.store.history_rows(world_id, after=tally.seq)
                if r.seq <= upto
            ]
            counted_to = tally.seq
            newly = undone - tally.undone
            tally.add(rows, undone)
            read = len(rows)
            # Entries counted before and undone since leave what players see.
            taken = [seq for seq in newly if seq <= counted_to]
            if taken:
                back = await self.core.store.history_rows(world_id, seqs=taken)
                tally.take_back(back)
                read += len(back)
            tally.seq, tally.undone = upto, undone
            return read * EVENT_COST


async def history_read(
    service: BridgeService, session: Session, intent: protocol.HistoryRead
) -> Reply:
    page, cost = await service.history.page(session.world_id, session.role, intent)
    return Reply(ok(page), cost=cost)


async def history_stats(
    service: BridgeService, session: Session, intent: protocol.HistoryStats
) -> Reply:
    data, cost = await service.history.stats(session.world_id, session.role, intent)
    return Reply(ok(data), cost=cost)


async def history_undo(core: ServiceCore, session: Session, intent: protocol.HistoryUndo) -> Reply:
    """GM: the undo is itself events (restoring upserts and a marker), appended to
    the log; the state is the reducer's, the chain stays whole."""
    core.require_gm(session)
    if intent.back_to is not None and intent.resolution is not None:
        raise IntentError("invalid", "Give back_to or resolution, not both.", "resolution")
    for _ in range(UNDO_ATTEMPTS):
        try:
            return await _undo_once(core, session, intent)
        except _StaleLog:
            # The cached state may be the stale side: the retry reads both afresh.
            core.forget(session.world_id)
            continue
    raise IntentError("conflict", "The world is busy; try the undo again.")


async def _undo_once(core: ServiceCore, session: Session, intent: protocol.HistoryUndo) -> Reply:
    # Undo is rare and the GM's: it replays the log from its start (the state as of
    # any event is the reducer's fold of the events up to it).
    world_id = session.world_id
    rows = await core.store.events(world_id)
    log = [
        history.Logged(r.seq, r.created_at, EVENT_ADAPTER.validate_python(r.payload)) for r in rows
    ]
    logged_to = rows[-1].seq if rows else 0
    initial = WorldState(ruleset=(await core.snapshot(world_id)).world.ruleset)

    def decide(state: WorldState, intent: protocol.HistoryUndo, _turn: Turn) -> list[Event]:
        # The log must end where the state does; another writer may have moved on.
        if core.states[world_id][0].last_event_seq != logged_to:
            raise _StaleLog
        return history.plan_undo(log, initial, state, intent.back_to, intent.resolution)

    def answer(done: Committed) -> protocol.UndoData:
        marker = done.rows[-1]
        undone = EVENT_ADAPTER.validate_python(marker.payload)
        assert isinstance(undone, HistoryUndone)
        return protocol.UndoData(
            back_to=undone.back_to,
            seq=marker.seq,
            hash=marker.hash,
            resolutions=list(undone.resolutions),
            action_ids=list(undone.action_ids),
            card_ids=[card_id(world_id, a) for a in undone.action_ids],
        )

    return await core.mutate(session, intent, decide, answer)


class _StaleLog(Exception):
    """Another writer committed between reading the log and taking the world's lock."""
