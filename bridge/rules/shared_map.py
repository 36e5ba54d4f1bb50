"""The state's maps of records: immutable, and sharing what a new version did not change.

A world's maps grow with its play (every action of a scene stays in ``actions``), while
an intent changes one or two of their entries; a new version of a map shares the
unchanged entries with the version it came from instead of copying them, so what an
intent costs does not grow with the world.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Annotated, Any, Generic, TypeVar, overload

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

_V = TypeVar("_V")
_D = TypeVar("_D")

# An entry of the base that a version removed.
_GONE: Any = object()
# What a lookup finds for a key a version's changes do not name.
_ABSENT: Any = object()
# Changes kept beside the base before they are merged into a new base (at least).
_MERGE_AFTER = 16


class SharedMap(Mapping[str, _V], Generic[_V]):
    """An immutable map from ids to records that reads, iterates, compares and serialises
    as the dict holding the same entries: keys in the order they were first set, a key
    set again keeps its place, a key removed and set again goes last.

    :meth:`set` and :meth:`remove` give a new map and leave this one as it was. A map is
    a base dict that no version ever changes and the changes made since it was built; a
    new version copies only those changes (merged into a new base once they outnumber
    the square root of the base's size), so it costs about the square root of the
    map's size, not its size. Reading an entry is a lookup in the changes, then in the
    base; iterating a map with changes first merges them (a full pass costs its size)."""

    __slots__ = ("_base", "_changes", "_size")

    _base: dict[str, _V]
    # Keys of the base with their new value or _GONE, then new keys in the order set.
    _changes: dict[str, Any]
    _size: int

    def __init__(self, entries: Mapping[str, _V] | None = None) -> None:
        self._base = dict(entries) if entries else {}
        self._changes = {}
        self._size = len(self._base)

    @classmethod
    def of(cls, entries: Mapping[str, _V]) -> SharedMap[_V]:
        """``entries`` as a SharedMap: itself if it is one, else a copy."""
        if isinstance(entries, SharedMap):
            return entries
        return cls(entries)

    @classmethod
    def _version(cls, base: dict[str, _V], changes: dict[str, Any], size: int) -> SharedMap[_V]:
        made: SharedMap[_V] = object.__new__(cls)
        made._base, made._changes, made._size = base, changes, size
        return made

    # --- new versions -------------------------------------------------------------

    def set(self, key: str, value: _V) -> SharedMap[_V]:
        """This map with ``key`` holding ``value``."""
        base, changes = self._base, self._changes
        was = changes.get(key, _ABSENT)
        if was is _GONE:
            # Removed from the base and set again: it goes last, as in a dict.
            merged = self._merged()
            merged[key] = value
            return self._version(merged, {}, len(merged))
        grown = was is _ABSENT and key not in base
        changes = dict(changes)
        changes[key] = value
        return self._settled(changes, self._size + grown)

    def remove(self, key: str) -> SharedMap[_V]:
        """This map without ``key`` (itself when it has no such key)."""
        if key not in self:
            return self
        changes = dict(self._changes)
        if key in self._base:
            changes[key] = _GONE
        else:
            del changes[key]
        return self._settled(changes, self._size - 1)

    def _settled(self, changes: dict[str, Any], size: int) -> SharedMap[_V]:
        count = len(changes)
        if count > _MERGE_AFTER and count * count > len(self._base):
            return self._version(_merge(self._base, changes), {}, size)
        return self._version(self._base, changes, size)

    def _merged(self) -> dict[str, _V]:
        """A new dict of this map's entries, in order."""
        if not self._changes:
            return dict(self._base)
        return _merge(self._base, self._changes)

    # --- reads --------------------------------------------------------------------

    def __getitem__(self, key: str) -> _V:
        changes = self._changes
        if changes:
            value = changes.get(key, _ABSENT)
            if value is not _ABSENT:
                if value is _GONE:
                    raise KeyError(key)
                return value  # type: ignore[no-any-return]
        return self._base[key]

    @overload
    def get(self, key: str, /) -> _V | None: ...
    @overload
    def get(self, key: str, default: _V | _D, /) -> _V | _D: ...
    def get(self, key: str, default: Any = None) -> Any:
        changes = self._changes
        if changes:
            value = changes.get(key, _ABSENT)
            if value is not _ABSENT:
                return default if value is _GONE else value
        return self._base.get(key, default)

    def __contains__(self, key: object) -> bool:
        changes = self._changes
        if changes:
            value = changes.get(key, _ABSENT)  # type: ignore[call-overload]
            if value is not _ABSENT:
                return value is not _GONE
        return key in self._base

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[str]:
        return iter(self.as_dict())

    def keys(self) -> KeysView[str]:
        return self.as_dict().keys()

    def values(self) -> ValuesView[_V]:
        return self.as_dict().values()

    def items(self) -> ItemsView[str, _V]:
        return self.as_dict().items()

    def as_dict(self) -> dict[str, _V]:
        """A dict of this map's entries in order, for reading only: it may be the map's
        own base."""
        return _merge(self._base, self._changes) if self._changes else self._base

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SharedMap):
            if other._base is self._base and other._changes == self._changes:
                return True
            return self.as_dict() == other.as_dict()
        if isinstance(other, dict):
            return self.as_dict() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SharedMap({self.as_dict()!r})"


class _Validated:
    """pydantic's schema of a :data:`Records` field: validated from, and written as, the
    JSON object of its entries (as a dict field is), held as a :class:`SharedMap`."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        (_key, value_type) = getattr(source, "__args__", (str, Any))
        entries = handler.generate_schema(dict[str, value_type])  # type: ignore[valid-type]
        return core_schema.no_info_after_validator_function(
            _held,
            entries,
            serialization=core_schema.plain_serializer_function_ser_schema(
                _entries_of, return_schema=entries
            ),
        )


Records = Annotated[Mapping[str, _V], _Validated()]
"""A state's map of records by id: any Mapping to the rules (a dict built by hand reads
the same), a :class:`SharedMap` once validated or changed by the rules."""


def _held(entries: dict[str, Any]) -> SharedMap[Any]:
    # A dict pydantic just built, which nothing else holds: the new map's base as it is.
    return SharedMap._version(entries, {}, len(entries))


def _entries_of(records: Mapping[str, Any]) -> Mapping[str, Any]:
    return records.as_dict() if isinstance(records, SharedMap) else records


def _merge(base: dict[str, _V], changes: dict[str, Any]) -> dict[str, _V]:
    merged = dict(base)
    for key, value in changes.items():
        if value is _GONE:
            del merged[key]
        else:
            merged[key] = value
    return merged
