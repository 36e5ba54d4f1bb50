"""Indexes of a world's state that cards and the scene panel read, kept cheap as a scene
grows: aspects as lists show them, and the open actions.

Boosts alike in name, place and holder are one entry with a count ("Hero's momentum x3"):
a table that never spends its boosts would otherwise list each on every card, and every
card, scene panel and emit would grow with the scene. Each
entry's representative is the aspect an invoke of it spends.

Building an index is linear in its map; deriving it from the previous state's index
(states share every record an event did not replace) costs the work for the ids the
commit's events touched (or, without them, one identity scan of the map). ``ByIdentity``
is the one cache by an immutable object's identity that these and the card views use.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Generic, TypeVar

from bridge.rules.state import Action, Aspect

Record = TypeVar("Record")
Key = TypeVar("Key")
Value = TypeVar("Value")
Index = TypeVar("Index")

# What makes two aspects one entry: boosts by (name, place, holders); anything else
# is its own entry (keyed by its id).
EntryKey = tuple[str, str, str | None, tuple[tuple[str, int], ...]]


@dataclass(frozen=True)
class Diff(Generic[Record]):
    """How a map differs from an earlier one: records new or replaced (``changed``, the
    new ones), and the old records replaced or gone (``left``)."""

    changed: list[Record]
    left: list[Record]
    gone: bool  # some id of the old map is in the new one no more


def diff(
    old: Mapping[str, Record],
    new: Mapping[str, Record],
    touched: Iterable[str] | None = None,
) -> Diff[Record]:
    """``new`` against ``old``. With ``touched`` (every id an event put or dropped: the
    reducer changes a map by those alone), only those are looked at; else every id."""
    changed: list[Record] = []
    left: list[Record] = []
    gone = False
    if touched is not None:
        for key in dict.fromkeys(touched):
            before, after = old.get(key), new.get(key)
            if before is after:
                continue
            if after is not None:
                changed.append(after)
            if before is not None:
                left.append(before)
                gone = gone or after is None
        return Diff(changed, left, gone)
    changed = [r for key, r in new.items() if old.get(key) is not r]
    replaced = [old[key] for key, r in new.items() if key in old and old[key] is not r]
    # Ids of the old map neither kept nor replaced are gone: looked for only if some are.
    kept = len(new) - len(changed)
    if kept + len(replaced) < len(old):
        return Diff(changed, [*replaced, *(r for k, r in old.items() if k not in new)], True)
    return Diff(changed, replaced, False)


def entry_key(aspect: Aspect) -> EntryKey:
    if aspect.kind == "boost":
        holders = tuple(sorted(aspect.free_invokes.items()))
        return ("boost", aspect.name, aspect.attached_to, holders)
    return (aspect.kind, aspect.id, None, ())


@dataclass(frozen=True)
class Entry:
    """One line of an aspect list: ``aspect`` stands for ``count`` alike aspects."""

    aspect: Aspect
    count: int


class AspectIndex:
    """The entries of one aspect map, with each character's count of held boosts.

    Guarantees: ``entries()`` holds every aspect of the map exactly once (counted in
    its entry), in card order (kind, name, then id); ``held_boosts(c)`` is the number
    of boosts on which ``c`` holds a free invoke. Both equal what building from
    scratch gives, however the index was derived."""

    __slots__ = ("_aspects", "_groups", "_held", "_sorted")

    def __init__(self, aspects: Mapping[str, Aspect]) -> None:
        self._aspects = aspects
        # Each entry's aspects by id, and the id standing for them (the least).
        self._groups: dict[EntryKey, tuple[dict[str, Aspect], str]] = {}
        self._held: dict[str, int] = {}
        self._sorted: list[Entry] | None = None
        self._add(aspects.values())

    @classmethod
    def derived(
        cls,
        base: AspectIndex,
        aspects: Mapping[str, Aspect],
        touched: Iterable[str] | None = None,
    ) -> AspectIndex:
        """The index of ``aspects``, from the index of an earlier map of the same world."""
        change = diff(base._aspects, aspects, touched)
        index = cls.__new__(cls)
        index._aspects = aspects
        index._groups = dict(base._groups)
        index._held = dict(base._held)
        index._sorted = None
        index._remove(change.left)
        index._add(change.changed)
        return index

    def _add(self, aspects: Iterable[Aspect]) -> None:
        for aspect in aspects:
            key = entry_key(aspect)
            group = self._groups.get(key)
            # Groups are copied before their first change: derived indexes share them.
            if group is None:
                self._groups[key] = ({aspect.id: aspect}, aspect.id)
            else:
                members, lead = group
                self._groups[key] = ({**members, aspect.id: aspect}, min(lead, aspect.id))
            if aspect.kind == "boost":
                for holder, count in aspect.free_invokes.items():
                    if count:
                        self._held[holder] = self._held.get(holder, 0) + 1

    def _remove(self, aspects: Iterable[Aspect]) -> None:
        for aspect in aspects:
            # Records never change, so the old record's key is the one it was added by.
            key = entry_key(aspect)
            members, lead = self._groups[key]
            members = dict(members)
            del members[aspect.id]
            if members:
                self._groups[key] = (members, min(members) if lead == aspect.id else lead)
            else:
                del self._groups[key]
            if aspect.kind == "boost":
                for holder, count in aspect.free_invokes.items():
                    if count:
                        left = self._held[holder] - 1
                        if left:
                            self._held[holder] = left
                        else:
                            del self._held[holder]

    def entries(self) -> list[Entry]:
        """Every entry, in card order: by kind, name, then the representative's id."""
        if self._sorted is None:
            entries = [
                Entry(members[lead], len(members)) for members, lead in self._groups.values()
            ]
            entries.sort(key=lambda e: (e.aspect.kind, e.aspect.name, e.aspect.id))
            self._sorted = entries
        return self._sorted

    def held_boosts(self, character_id: str) -> int:
        return self._held.get(character_id, 0)


class OpenActions:
    """The ids of a map's actions that are not closed, in the map's order."""

    __slots__ = ("_actions", "_open")

    def __init__(self, actions: Mapping[str, Action]) -> None:
        self._actions = actions
        self._open = {a_id: None for a_id, a in actions.items() if not a.closed}

    @classmethod
    def derived(
        cls,
        base: OpenActions,
        actions: Mapping[str, Action],
        touched: Iterable[str] | None = None,
    ) -> OpenActions:
        """The open actions of ``actions``, from an earlier map of the same world: built
        afresh when some action left the map (a dropped record, an undo). An action id is
        never reused once dropped (ids come from the world's counter), so a kept or
        replaced action keeps its place, and a new one is last, as in the map."""
        change = diff(base._actions, actions, touched)
        if change.gone:
            return cls(actions)
        index = cls.__new__(cls)
        index._actions = actions
        index._open = dict(base._open)
        old = base._actions
        added: set[str] = set()
        for action in change.changed:
            if action.id not in old:
                added.add(action.id)
            elif action.closed:
                index._open.pop(action.id, None)
            elif action.id not in index._open:  # reopened (undo): its place is the map's
                return cls(actions)
        # New ids are the map's last ones (a dict keeps insertion order): open in that order,
        # read from the end (listing every key would grow with the scene).
        if not isinstance(actions, dict):
            return cls(actions)
        newest = list(islice(reversed(actions), len(added)))[::-1]
        if set(newest) != added:
            return cls(actions)
        for action_id in newest:
            if not actions[action_id].closed:
                index._open[action_id] = None
        return index

    def ids(self) -> list[str]:
        return list(self._open)


class ByIdentity(Generic[Key, Value]):
    """Values computed from recent immutable objects, by the object's identity: states
    share every record an event did not replace, so what was computed from one is
    found again. Each entry keeps its object alive, so the id cannot be reused while
    cached; the least recently used entry goes first past ``size``."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._known: OrderedDict[int, tuple[Key, Value]] = OrderedDict()

    def get(self, obj: Key) -> Value | None:
        known = self._known.get(id(obj))
        if known is None or known[0] is not obj:
            return None
        self._known.move_to_end(id(obj))
        return known[1]

    def put(self, obj: Key, value: Value) -> Value:
        self._known[id(obj)] = (obj, value)
        if len(self._known) > self._size:
            self._known.popitem(last=False)
        return value


class IdentityCache(Generic[Record, Index]):
    """Indexes of recent maps by the map's identity. A commit asks for the state before
    it (the previous commit's after, so cached) and derives the state after it from that;
    or, for an index seldom read, only notes where the state after came from
    (:meth:`note`), and the index is derived along those notes when it is asked for."""

    def __init__(
        self,
        build: Callable[[Mapping[str, Record]], Index],
        derive: Callable[[Index, Mapping[str, Record], Iterable[str] | None], Index],
        size: int = 512,
    ) -> None:
        self._build = build
        self._derive = derive
        self._size = size
        self._known: ByIdentity[Mapping[str, Record], Index] = ByIdentity(size)
        # Maps noted and not derived yet: the earlier map each comes from, and its touched ids.
        self._noted: ByIdentity[
            Mapping[str, Record], tuple[Mapping[str, Record], tuple[str, ...] | None]
        ] = ByIdentity(size)

    def note(
        self,
        records: Mapping[str, Record],
        base: Mapping[str, Record],
        touched: Iterable[str] | None = None,
    ) -> None:
        """Remember that ``records`` is ``base`` changed at ``touched`` (as for
        :meth:`__call__`), deriving nothing now: asking for ``records`` later gives what
        asking now would have given, and costs the derivations then (one per noted map
        since the last index known), however many commits were noted in between."""
        if self._known.get(records) is None:
            self._noted.put(records, (base, tuple(touched) if touched is not None else None))

    def __call__(
        self,
        records: Mapping[str, Record],
        base: Mapping[str, Record] | None = None,
        touched: Iterable[str] | None = None,
    ) -> Index:
        """The index of ``records``: cached, else derived from ``base``'s index (an
        earlier map of the same world; ``touched``, if given, names every id that differs
        between the two) or along the maps noted before it back to one whose index is
        cached, else built."""
        known = self._known.get(records)
        if known is not None:
            return known
        # Newest first: (map, the map it comes from, touched ids), back to a known index.
        steps: list[tuple[Mapping[str, Record], Mapping[str, Record], Iterable[str] | None]] = []
        target = records
        link: tuple[Mapping[str, Record], Iterable[str] | None] | None = (
            (base, touched) if base is not None else self._noted.get(records)
        )
        base_index: Index | None = None
        while link is not None and len(steps) <= self._size:
            steps.append((target, *link))
            base_index = self._known.get(link[0])
            if base_index is not None:
                break
            target = link[0]
            link = self._noted.get(target)
        if base_index is None:
            return self._known.put(records, self._build(records))
        index = base_index
        for mapping, _base, changed in reversed(steps):
            index = self._known.put(mapping, self._derive(index, mapping, changed))
        return index


aspect_index: IdentityCache[Aspect, AspectIndex] = IdentityCache(AspectIndex, AspectIndex.derived)
open_actions: IdentityCache[Action, OpenActions] = IdentityCache(OpenActions, OpenActions.derived)
