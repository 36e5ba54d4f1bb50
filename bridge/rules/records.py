"""The records the rules' state and events are made of: frozen, keyword-only stdlib
dataclasses, read and written as JSON only at the edges.

A record class subclasses :class:`Frozen`. Built by its class call, a record is what
``dataclasses`` builds (the standard library's own ``__init__``). The records every intent
builds are built by a maker (:func:`record_maker`) or filled in place
(:func:`blank_record`): the same record, refused for the same keywords, filled from a
template of the class's fields in their order. No code is generated per class.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import (
    Any,
    ClassVar,
    Literal,
    ParamSpec,
    Self,
    TypeVar,
    cast,
    dataclass_transform,
)

import orjson
from pydantic import ConfigDict, Field, TypeAdapter

from bridge.rules.shared_map import SharedMap

# A record built by a maker is created without its __init__ and filled in place.
_new = object.__new__


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(field,))
class Frozen:
    """Immutable and closed: every subclass is a frozen, keyword-only stdlib dataclass.

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

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__post_init__" in cls.__dict__:
            raise TypeError(
                f"{cls.__name__}: records are checked by model_validate, not __post_init__"
            )
        dataclass(frozen=True, kw_only=True)(cls)
        left_out = cls.__left_out_when_empty__
        if left_out:
            names = {spec.name for spec in fields(cls)}  # type: ignore[arg-type]
            if not set(left_out) <= names:
                raise TypeError(f"{cls.__name__}: __left_out_when_empty__ names a non-field")
            _LEFT_OUT[cls] = left_out

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A shallow copy with ``update`` applied. Like pydantic's, the update is not
        validated: callers pass values of the fields' types (mypy checks the rules)."""
        copied = _new(self.__class__)
        # Filled in place: the copy's dict shares its class's keys (see _Template).
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


_R = TypeVar("_R")
_P = ParamSpec("_P")
_F = TypeVar("_F", bound=Frozen)


def _adapter(cls: type[Frozen]) -> TypeAdapter[Any]:
    """One TypeAdapter per record class, built on its first use."""
    adapter = _ADAPTERS.get(cls)
    if adapter is None:
        adapter = _ADAPTERS[cls] = TypeAdapter(cls)
    return adapter


# CPython shares one key table among a class's instance dicts only up to 30 keys; a wider
# record's dict is its own whatever fills it.
_SHARED_KEYS_MAX = 30


class _Template:
    """What filling a record of one class needs, worked out once from its fields: every
    field in order at its default (``MISSING`` for a required or a factory field), the
    field count, the required fields' names, the factories, and the field to seed a
    key-sharing dict with (None: the class is too wide to share keys)."""

    __slots__ = ("count", "factories", "required", "seed", "values")

    def __init__(self, cls: type[Frozen]) -> None:
        specs = fields(cls)  # type: ignore[arg-type]
        self.values: dict[str, Any] = {}
        required: list[str] = []
        factories: list[tuple[str, Callable[[], Any]]] = []
        for spec in specs:
            if spec.default is not MISSING:
                self.values[spec.name] = spec.default
            elif spec.default_factory is not MISSING:
                self.values[spec.name] = MISSING
                factories.append((spec.name, spec.default_factory))
            else:
                self.values[spec.name] = MISSING
                required.append(spec.name)
        self.count = len(specs)
        self.required = tuple(required)
        self.factories = tuple(factories)
        self.seed = specs[0].name if specs and len(specs) <= _SHARED_KEYS_MAX else None


def record_maker(cls: Callable[_P, _R]) -> Callable[_P, _R]:
    """A function building ``cls`` from the same keywords as ``cls(...)`` (typed as its
    constructor), refusing what it refuses, into an equal record with its fields in the
    same order: for the records built on every intent, without the class call's own
    steps (looking ``__new__`` and ``__init__`` up, passing the keywords on again, and
    the frozen ``__init__`` setting each field through ``object.__setattr__``).

    The new record's own ``__dict__`` is filled from the class's template, then the
    keywords given: it then shares its keys with every other record of the class
    (CPython's key-sharing dicts, up to 30 fields), as one filled field by field does.
    Merging into an empty dict would clone the merged dict's key table instead, so one
    field is seeded first. One more key than fields is an unknown keyword; a required
    field left ``MISSING`` a missing one; a factory field left ``MISSING`` gets its
    factory's value."""
    record = cast(type[Frozen], cls)
    template = _Template(record)
    defaults, count, required = template.values, template.count, template.required
    factories, seed, new = template.factories, template.seed, _new

    def make(**given: Any) -> Any:
        made = new(record)
        values = made.__dict__
        if seed is not None:
            values[seed] = MISSING
        values |= defaults
        values |= given
        if len(values) != count:
            _refuse(record, given)
        for name in required:
            if values[name] is MISSING:
                _refuse(record, given)
        for name, factory in factories:
            if values[name] is MISSING:
                values[name] = factory()
        return made

    make.__qualname__ = f"{record.__qualname__}.make"
    return cast(Callable[_P, _R], make)


def _refuse(cls: type[Frozen], given: Mapping[str, Any]) -> None:
    """The ``TypeError`` the class call would raise for these keywords, in its words."""
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


_DEFAULTS: dict[type[Frozen], dict[str, Any]] = {}


def blank_record(cls: type[_F]) -> tuple[_F, dict[str, Any]]:
    """A new ``cls`` record and its own ``__dict__``, holding every field in the fields'
    order at its default (``dataclasses.MISSING`` for a required or factory field): for
    a caller that builds a wide record from more fields than a call passes cheaply (a
    call of more than 15 keywords builds, unpacks and rebuilds a dict), and which sets
    every required and factory field in the dict before the record is seen."""
    defaults = _DEFAULTS.get(cls)
    if defaults is None:
        defaults = _DEFAULTS[cls] = {spec.name: spec.default for spec in fields(cls)}  # type: ignore[arg-type]
    record = _new(cls)
    values: dict[str, Any] = record.__dict__
    values.update(defaults)
    return record, values
