"""The history index's rows: which logged events are roll-history entries and what the
index keeps of each (:class:`bridge.store.base.HistoryRow`), as the rules say
(:mod:`bridge.rules.history`). A commit writes its entries' rows with its events; a log
written before the index existed is indexed once, the first time its history is read.

Also the dice statistics kept as the log grows (:class:`DiceTally`): per scene, the
4dF sums of every roll in the index, and of the rolls a player may see (undone entries
left out), updated by the rows committed since and the entries undone since, never by
reading the log again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bridge.rules import history
from bridge.rules.events import EVENT_ADAPTER, ActionCancelled, Event
from bridge.store.base import EventRow, HistoryRow


def index_row(seq: int, event: Event) -> HistoryRow | None:
    """The index row of event ``seq``, or None when the event is no history entry."""
    entry = history.entry_of(event)
    if entry is None:
        return None
    action = entry.action
    return HistoryRow(
        seq=seq,
        scene=entry.scene,
        kind=history.kind_of(action),
        cancelled=isinstance(entry, ActionCancelled),
        characters=tuple(sorted(history.participants(action))),
        rolls=tuple((roll.character, sum(roll.dice)) for roll in history.rolls_of(action)),
    )


def index_rows(rows: Sequence[EventRow], events: Sequence[Event] | None = None) -> list[HistoryRow]:
    """The index rows of logged events; ``events``: the rows' events already decoded (a
    commit's own), else only the rows of an entry's type are decoded."""
    out: list[HistoryRow] = []
    for n, row in enumerate(rows):
        if row.type not in history.ENTRY_TYPES:
            continue
        event = events[n] if events is not None else EVENT_ADAPTER.validate_python(row.payload)
        found = index_row(row.seq, event)
        if found is not None:
            out.append(found)
    return out


@dataclass
class DiceCounts:
    """The 4dF sums rolled (index 0 is -4), in all and per character, and how many of them
    were on rolls the GM cancelled afterwards."""

    world: list[int] = field(default_factory=lambda: [0] * 9)
    cancelled: int = 0
    per: dict[str, list[int]] = field(default_factory=dict)
    per_cancelled: dict[str, int] = field(default_factory=dict)

    def add(self, row: HistoryRow, sign: int = 1) -> None:
        for who, total in row.rolls:
            self.world[total + 4] += sign
            self.cancelled += sign * row.cancelled
            if who is not None:
                self.per.setdefault(who, [0] * 9)[total + 4] += sign
                if row.cancelled:
                    self.per_cancelled[who] = self.per_cancelled.get(who, 0) + sign


@dataclass
class DiceTally:
    """One world's dice statistics as of event ``seq``: ``every`` counts every entry (the
    GM's view), ``seen`` leaves out the entries in ``undone`` (a player's); each per
    scene, None for all scenes."""

    seq: int = 0
    undone: frozenset[int] = frozenset()
    every: dict[int | None, DiceCounts] = field(default_factory=dict)
    seen: dict[int | None, DiceCounts] = field(default_factory=dict)

    def _counts(self, view: dict[int | None, DiceCounts], scene: int | None) -> DiceCounts:
        counts = view.get(scene)
        if counts is None:
            counts = view[scene] = DiceCounts()
        return counts

    def add(self, rows: Iterable[HistoryRow], undone: frozenset[int]) -> None:
        """Rows logged after ``seq`` (their entries undone already are not ``seen``)."""
        for row in rows:
            for view in (self.every, *(() if row.seq in undone else (self.seen,))):
                self._counts(view, row.scene).add(row)
                self._counts(view, None).add(row)
            self.seq = max(self.seq, row.seq)

    def take_back(self, rows: Iterable[HistoryRow]) -> None:
        """Rows already counted whose entries were undone since: no longer ``seen``."""
        for row in rows:
            self._counts(self.seen, row.scene).add(row, -1)
            self._counts(self.seen, None).add(row, -1)

    def counts(self, viewer_is_gm: bool, scene: int | None) -> DiceCounts:
        return (self.every if viewer_is_gm else self.seen).get(scene) or DiceCounts()
