"""The roll history (read from the event log in bounded pages) and the GM's undo.

Who sees what (a decision, in README and MACROS.md): every card at a Fate table is a
public chat message, so a player's history holds every roll the GM's does, resolved
or cancelled by the GM after its dice were rolled (bridge.rules.history.entry_of),
except the rolls the GM took back: those are out of the story. The GM sees them
too, marked undone. Dice statistics count the rolls of the history the viewer sees.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from bridge import cards, protocol
from bridge.rules import history
from bridge.rules.dice import DiceSource
from bridge.rules.events import EVENT_ADAPTER, ActionCancelled, Event, HistoryUndone
from bridge.rules.ruleset import Ruleset, get_ruleset
from bridge.rules.state import WorldState
from bridge.service.core import ServiceCore
from bridge.service.emits import card_id
from bridge.service.session import IntentError, Reply, Role, Session, ok, request_key
from bridge.store.base import EmitRow, EventRow

# Events read per store call, and at most per history page: a page costs the same
# however long the world's log has grown.
CHUNK = 200
MAX_SCAN = 2000
UNDO_ATTEMPTS = 3


class HistoryIntents(ServiceCore):
    """``history.read``, ``history.stats`` and ``history.undo``."""

    async def read_history(
        self, world_id: str, viewer: Role, request: protocol.HistoryRead
    ) -> protocol.HistoryPage:
        """One page of history entries (resolutions and cancelled rolls), newest first,
        as ``viewer`` may see them.

        Reads at most ``MAX_SCAN`` events of the log, backwards from ``request.before``
        (exclusive); ``next_before`` continues where this page stopped."""
        snapshot, state = await self._current(world_id)
        ruleset = get_ruleset(snapshot.world.ruleset)
        top = snapshot.last_event_seq
        if request.before is not None:
            top = min(top, request.before - 1)
        entries: list[protocol.HistoryEntry] = []
        lowest = top + 1
        async for row in self._backwards(world_id, top):
            lowest = row.seq
            event = self._entry(row)
            if event is None:
                continue
            undone = row.seq in state.undone
            if undone and viewer != "gm":
                continue
            if not history.matches(
                event,
                scene=request.scene,
                character=request.character,
                kind=request.kind,
                cancelled=request.cancelled,
            ):
                continue
            entries.append(
                cards.history_entry(
                    event,
                    row.seq,
                    row.hash,
                    row.created_at,
                    card_id(world_id, event.action.id),
                    state,
                    ruleset,
                    undone,
                )
            )
            if len(entries) == request.limit:
                break
        if len(entries) == request.limit:
            next_before: int | None = entries[-1].seq
        else:
            next_before = lowest if lowest > 1 else None
        return protocol.HistoryPage(
            entries=entries, next_before=next_before, last_seq=snapshot.last_event_seq
        )

    @staticmethod
    def _entry(row: EventRow) -> history.Entry | None:
        """The row's event as a history entry, or None; rows of other types are not
        decoded (most of a log is none)."""
        if row.type not in history.ENTRY_TYPES:
            return None
        return history.entry_of(EVENT_ADAPTER.validate_python(row.payload))

    async def _backwards(self, world_id: str, top: int) -> AsyncIterator[EventRow]:
        """The log read backwards from ``top`` in chunks, at most ``MAX_SCAN`` events."""
        last, budget = top, MAX_SCAN
        while last >= 1 and budget > 0:
            first = max(1, last - min(CHUNK, budget) + 1)
            for row in reversed(await self.store.events_between(world_id, first, last)):
                yield row
            budget -= last - first + 1
            last = first - 1

    async def history_stats(
        self, world_id: str, viewer: Role, request: protocol.HistoryStats
    ) -> protocol.HistoryStatsData:
        """R1.1: every 4dF sum the viewer's history shows, per character and for the
        world. Reads the whole log in bounded chunks (one pass, nothing kept).

        The dice of cancelled rolls count, like any roll (and are also counted apart in
        ``cancelled``): they were rolled, and a chart that dropped the rolls the GM called
        off would show the dice as luckier than they fell, which is what fishing for
        rolls by cancelling looks like; R1.1 is about every roll made."""
        snapshot, state = await self._current(world_id)
        world = [0] * 9
        per: dict[str, list[int]] = {}
        world_cancelled, per_cancelled = 0, dict[str, int]()
        first = 1
        while first <= snapshot.last_event_seq:
            last = min(first + CHUNK * 5 - 1, snapshot.last_event_seq)
            for row in await self.store.events_between(world_id, first, last):
                if viewer != "gm" and row.seq in state.undone:
                    continue
                event = self._entry(row)
                if event is None or (request.scene is not None and event.scene != request.scene):
                    continue
                called_off = isinstance(event, ActionCancelled)
                for roll in history.rolls_of(event.action):
                    world[sum(roll.dice) + 4] += 1
                    world_cancelled += called_off
                    if roll.character is not None:
                        per.setdefault(roll.character, [0] * 9)[sum(roll.dice) + 4] += 1
                        if called_off:
                            per_cancelled[roll.character] = per_cancelled.get(roll.character, 0) + 1
            first = last + 1
        return protocol.HistoryStatsData(
            world=cards.dice_distribution(world, world_cancelled),
            characters={
                cid: cards.dice_distribution(c, per_cancelled.get(cid, 0))
                for cid, c in sorted(per.items())
            },
            names={
                cid: state.characters[cid].name if cid in state.characters else cid for cid in per
            },
        )

    async def _history_read(self, session: Session, intent: protocol.HistoryRead) -> Reply:
        return Reply(ok(await self.read_history(session.world_id, session.role, intent)))

    async def _history_stats(self, session: Session, intent: protocol.HistoryStats) -> Reply:
        return Reply(ok(await self.history_stats(session.world_id, session.role, intent)))

    async def _history_undo(self, session: Session, intent: protocol.HistoryUndo) -> Reply:
        """GM: the undo is itself events (restoring upserts and a marker), appended to
        the log; the state is the reducer's, the chain stays whole."""
        self._require_gm(session)
        if intent.back_to is not None and intent.resolution is not None:
            raise IntentError("invalid", "Give back_to or resolution, not both.", "resolution")
        for _ in range(UNDO_ATTEMPTS):
            try:
                return await self._undo_once(session, intent)
            except _StaleLog:
                # The cached state may be the stale side: the retry reads both afresh.
                self._forget(session.world_id)
                continue
        raise IntentError("conflict", "The world is busy; try the undo again.")

    async def _undo_once(self, session: Session, intent: protocol.HistoryUndo) -> Reply:
        # Undo is rare and the GM's: it replays the log from its start (the state as of
        # any event is the reducer's fold of the events up to it).
        world_id = session.world_id
        rows = await self.store.events(world_id)
        log = [
            history.Logged(r.seq, r.created_at, EVENT_ADAPTER.validate_python(r.payload))
            for r in rows
        ]
        logged_to = rows[-1].seq if rows else 0
        initial = WorldState(ruleset=(await self._snapshot(world_id)).world.ruleset)

        def decide(state: WorldState, _ruleset: Ruleset, _dice: DiceSource) -> list[Event]:
            # The log must end where the state does; another writer may have moved on.
            if self._states[world_id][0].last_event_seq != logged_to:
                raise _StaleLog
            if intent.back_to is not None and intent.resolution is not None:
                raise IntentError("invalid", "Give back_to or resolution, not both.", "resolution")
            return history.plan_undo(log, initial, state, intent.back_to, intent.resolution)

        def answer(
            _state: WorldState, event_rows: list[EventRow], _emits: list[EmitRow]
        ) -> protocol.UndoData:
            marker = event_rows[-1]
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

        return await self._mutate(session, request_key(intent), decide, answer)


class _StaleLog(Exception):
    """Another writer committed between reading the log and taking the world's lock."""
