"""The records the rules' state and events are made of: frozen, keyword-only stdlib
dataclasses, built by their class call, read and written as JSON only at the edges.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import (
    Any,
    ClassVar,
    Literal,
    Self,
    dataclass_transform,
)

import orjson
from pydantic import ConfigDict, Field, TypeAdapter

from bridge.rules.shared_map import SharedMap


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(field,))
class Frozen:
    """Immutable and closed: every subclass is a frozen, keyword-only stdlib dataclass,
    built by the one ``__init__`` below (see :meth:`__init__`).

    What the rules build is not validated (mypy checks the rules' types); what comes
    from outside (logs, snapshots) comes in through :meth:`model_validate`, and goes out
    through :meth:`model_dump`, in the names and JSON every log and snapshot was written
    in (byte for byte: see tests/test_rules_records.py)."""

    # Read by pydantic when it validates the dataclass: unknown keys are refused.
    __pydantic_config__: ClassVar[ConfigDict] = ConfigDict(extra="forbid")
    # Fields added after records of the class were written, left out of the record's JSON
    # while empty (each annotated ``LEFT_OUT_WHEN_EMPTY`` for pydantic's dumps too): a
    # record written before them dumps byte for byte as it was written (the hash chain,
    # and snapshots compared with the replay of their log, see tests/test_rules_records.py).
    __left_out_when_empty__: ClassVar[tuple[str, ...]] = ()
    # The class's fields as __init__ fills them, worked out once per class.
    __record_fields__: ClassVar[_Fields]

    def __init__(self, **given: Any) -> None:
        """Every field from ``given``, else its default (a factory's value is the
        record's own), in the fields' order: the record the stdlib dataclass ``__init__``
        builds from the same keywords, refused with its ``TypeError`` when a keyword is
        unknown or a required field is missing. Fills the record's ``__dict__`` (frozen:
        nothing sets a field after this)."""
        spec = self.__record_fields__
        values = self.__dict__
        values.update(spec.defaults)
        values.update(given)
        if len(values) != spec.count or not given.keys() >= spec.required:
            _refuse(type(self), given)
        for name, factory in spec.factories:
            if values[name] is MISSING:
                values[name] = factory()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__post_init__" in cls.__dict__:
            raise TypeError(
                f"{cls.__name__}: records are checked by model_validate, not __post_init__"
            )
        dataclass(frozen=True, kw_only=True, init=False)(cls)
        cls.__record_fields__ = _Fields(cls)
        left_out = cls.__left_out_when_empty__
        if left_out:
            names = {spec.name for spec in fields(cls)}  # type: ignore[arg-type]
            if not set(left_out) <= names:
                raise TypeError(f"{cls.__name__}: __left_out_when_empty__ names a non-field")
            _LEFT_OUT[cls] = left_out

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A shallow copy with ``update`` applied. Like pydantic's, the update is not
        validated: callers pass values of the fields' types (mypy checks the rules)."""
        copied = object.__new__(self.__class__)
        # A copy of a record's fields is a record: its dict holds them and nothing else.
        values = copied.__dict__
        values.update(self.__dict__)
        if update:
            values.update(update)
        return copied

    def model_dump(self, *, mode: Literal["json", "python"] = "python") -> dict[str, Any]:
        """The record as plain data (``mode="json"``: JSON types), fields in order."""
        dumped: dict[str, Any] = _adapter(type(self)).dump_python(self, mode=mode)
        return dumped

    def sorted_json(self) -> bytes:
        """``orjson.dumps(self.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS)``,
        the same bytes, without building the dump: orjson reads each record's fields
        from its ``__dict__``, which holds exactly its fields, and their values are
        JSON's own types or records (checked on every event type in
        tests/test_rules_records.py, on arbitrary play in tests/test_chain.py). Raises
        ``TypeError`` for what orjson refuses."""
        return orjson.dumps(self, default=_fields_of, option=_SORTED_RECORDS)

    @classmethod
    def model_validate(cls, value: object) -> Self:
        """A record from plain data, validated (a ``pydantic.ValidationError`` if not)."""
        validated: Self = _adapter(cls).validate_python(value)
        return validated


_ADAPTERS: dict[type[Frozen], TypeAdapter[Any]] = {}
# Records reach orjson's hook (they are dataclasses), which gives their fields as a map,
# so that sorting the keys applies to them too.
_SORTED_RECORDS = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS


# The record classes with fields left out of their JSON while empty, and those fields:
# looked up by type, as the few classes that have any are, rather than read from every
# record the hash chain encodes.
_LEFT_OUT: dict[type, tuple[str, ...]] = {}


def _fields_of(value: object) -> dict[str, Any]:
    if isinstance(value, Frozen):
        fields = value.__dict__
        left_out = _LEFT_OUT.get(type(value))
        if left_out is None:
            return fields
        own = fields
        for name in left_out:
            if not fields[name]:
                # A copy without it; the record's own dict is never changed.
                if fields is own:
                    fields = dict(own)
                del fields[name]
        return fields
    if isinstance(value, SharedMap):
        return value.as_dict()
    raise TypeError(f"not a record: {type(value).__name__}")


def _empty(value: object) -> bool:
    return not value


LEFT_OUT_WHEN_EMPTY = Field(exclude_if=_empty)
"""A field's pydantic annotation, for a field named in ``__left_out_when_empty__``."""


def _adapter(cls: type[Frozen]) -> TypeAdapter[Any]:
    """One TypeAdapter per record class, built on its first use."""
    adapter = _ADAPTERS.get(cls)
    if adapter is None:
        adapter = _ADAPTERS[cls] = TypeAdapter(cls)
    return adapter


class _Fields:
    """A record class's fields as :meth:`Frozen.__init__` fills them: every field in
    order at its default (``MISSING`` for a required or a factory field), their count,
    the set of the required fields' names and the factories."""

    __slots__ = ("count", "defaults", "factories", "required")

    def __init__(self, cls: type[Frozen]) -> None:
        specs = fields(cls)  # type: ignore[arg-type]
        self.defaults: dict[str, Any] = {}
        required: list[str] = []
        factories: list[tuple[str, Callable[[], Any]]] = []
        for spec in specs:
            self.defaults[spec.name] = spec.default
            if spec.default_factory is not MISSING:
                factories.append((spec.name, spec.default_factory))
            elif spec.default is MISSING:
                required.append(spec.name)
        self.count = len(specs)
        self.required = frozenset(required)
        self.factories = tuple(factories)


def _refuse(cls: type[Frozen], given: Mapping[str, Any]) -> None:
    """The ``TypeError`` the stdlib dataclass ``__init__`` raises for these keywords, in
    its words."""
    specs = fields(cls)  # type: ignore[arg-type]
    names = {spec.name for spec in specs}
    unknown = [name for name in given if name not in names]
    if unknown:
        raise TypeError(
            f"{cls.__qualname__}.__init__() got an unexpected keyword argument {unknown[0]!r}"
        )
    missing = [
        repr(spec.name)
        for spec in specs
        if spec.name not in given and spec.default is MISSING and spec.default_factory is MISSING
    ]
    if len(missing) == 1:
        listed, plural = missing[0], ""
    elif len(missing) == 2:
        listed, plural = " and ".join(missing), "s"
    else:
        listed, plural = ", ".join(missing[:-1]) + ", and " + missing[-1], "s"
    raise TypeError(
        f"{cls.__qualname__}.__init__() missing {len(missing)} required keyword-only "
        f"argument{plural}: {listed}"
    )
