"""The one record codec: a frozen dataclass to its stored JSON and back, driven by its fields.

Pure, no I/O, on the bottom floor, so every record family uses it: the evidence records,
grades (``grading.results``) and usage. The model is pytest's one converter pair for its
report family (``_report_to_json``/``_report_kwargs_from_json``): one walk over the record
instead of a hand-written ``to_json``/``from_json`` per class.

What is stored follows from ``dataclasses.fields``:

* the key order is the field order, or the record's declared :class:`Layout` ``order`` (which
  may also name a property: written, never read back, such as ``VariantUsage.total``);
* values convert by what they are: a nested record becomes its object, a tuple an array, a
  mapping an object (keys kept in order), anything else (raw JSON) is stored as it is;
* a record whose layout is an ``array`` is stored as the array of its fields' values, in field
  order (a :class:`~pytest_skill_eval.stats.Interval` is ``[low, high]``);
* reading converts by the field's type: ``tuple[X, ...]``, ``Mapping[K, X]``, nested records,
  ``Literal`` choices, ``X | None``; a value of the wrong type is a located error
  (``expectations/0/id: expected a string, found null``) of the layout's ``error`` class;
* an absent key reads as the field's ``absent`` value, else its default, else ``None`` for an
  optional field, else it is an error (``found nothing``).

A field's exceptions are declared in its metadata (:func:`meta`): a renamed key, a value left
out (``omit``), what ``None`` is stored as, sorted mapping keys, a nested record stored inline
in its parent's object, a value stored in a nested object of its record's (``aggregate.json``'s
``trials: {planned, ran}``), a lenient reader for values older evidence wrote, or a value
taken from the enclosing object on read (a tool call's turn index).

The JSON Schemas (``schemas/evidence-*``) stay the check on read; the codec's own checks are
the located errors of the grade family and a second line behind the schemas.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, Self, TypeVar, get_args, get_origin

from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.typehints import SCALARS, found, is_scalar, is_union, literal_choices, nullable

__all__ = ["META", "Encodable", "Layout", "Stored", "found", "from_json", "if_empty", "if_none", "meta", "stored_keys", "to_json"]

META = "pytest_skill_eval.codec"


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


def if_none(value: Any) -> bool:
    """``omit`` predicate: leave the key out when the value is ``None``."""
    return value is None


def if_empty(value: Any) -> bool:
    """``omit`` predicate: leave the key out when the value is empty (or ``None``)."""
    return not value


@dataclass(frozen=True, slots=True)
class Spec:
    """How one field is stored (see :func:`meta`)."""

    key: str | None = None
    omit: Callable[[Any], bool] | None = None
    none_as: Any = UNSET
    sort: bool = False
    inline: str | None = None
    absent: Any = UNSET
    read: Callable[[Any], Any] | None = None
    parent: str | None = None
    whole: bool = False
    within: str | None = None


def meta(*, key: str | None = None, omit: Callable[[Any], bool] | None = None, none_as: Any = UNSET,
         sort: bool = False, inline: str | None = None, absent: Any = UNSET, read: Callable[[Any], Any] | None = None,
         parent: str | None = None, whole: bool = False, within: str | None = None) -> dict[str, Spec]:
    """Field metadata for the codec (``field(metadata=meta(...))``).

    *key*: the stored name. *omit*: a predicate on the value that leaves the key out
    (:func:`if_none`, :func:`if_empty`). *none_as*: what ``None`` is stored as (and reads
    back as ``None``). *sort*: a mapping is stored with sorted keys. *inline*: a nested
    record whose keys are stored in this object, present on read when the key *inline* is.
    *absent*: the value of an absent key. *read*: a lenient reader of the stored value
    (no type check). *parent*: not stored; read from the enclosing object's key *parent*.
    *whole*: the record is stored as this one field's value (an array document). *within*:
    stored as key *key* of the nested object *within* of the record's, which is written where
    its first member falls in the order and read as ``{}`` when absent.
    """
    return {META: Spec(key, omit, none_as, sort, inline, absent, read, parent, whole, within)}


@dataclass(frozen=True, slots=True)
class Layout:
    """A record's declared storage: key *order* (attribute names, properties allowed), the
    *error* raised for bad stored data, the *name* a message gives the whole document,
    whether reading checks every value's type (*strict*), and whether the record is stored as
    the *array* of its fields' values (in field order) instead of an object."""

    order: tuple[str, ...] = ()
    error: type[Exception] = EvidenceError
    name: str = "document"
    #: whether a stored value of the wrong type is an error (a family whose from_json is
    #: its only check); else it is kept as stored, since the file's schema checked it first
    strict: bool = False
    #: stored as ``[field1, field2, …]``, read back from an array of exactly that many items
    array: bool = False


class Encodable(Protocol):
    """What a writer takes: a record whose stored JSON is its ``to_json()``."""

    def to_json(self) -> Any: ...


class Stored:
    """Mixin giving a record dataclass ``to_json`` and ``from_json`` through the codec."""

    __slots__ = ()
    STORED: ClassVar[Layout] = Layout()

    def to_json(self) -> Any:
        return to_json(self)

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return from_json(cls, data)


# ----------------------------------------------------------------------------- the plan


@dataclass(frozen=True, slots=True)
class _Slot:
    name: str
    key: str
    spec: Spec
    hint: Any
    has_default: bool


@dataclass(frozen=True, slots=True)
class _Plan:
    entries: tuple[_Slot, ...]  # stored order
    fields: tuple[_Slot, ...]  # field order (reading)
    layout: Layout
    whole: _Slot | None
    reads: dict[bool, tuple[tuple[_Slot, Any], ...]]  # per strictness: each field with its reader


_NO_SPEC = Spec()
_PLANS: dict[type, _Plan] = {}


def _plan(kind: type) -> _Plan:
    plan = _PLANS.get(kind)
    if plan is None:
        plan = _PLANS[kind] = _make_plan(kind)
    return plan


def _make_plan(kind: type) -> _Plan:
    layout: Layout = getattr(kind, "STORED", None) or Layout()
    hints = typing.get_type_hints(kind)
    entries: dict[str, _Slot] = {}
    for f in dataclasses.fields(kind):
        spec = f.metadata.get(META, _NO_SPEC)
        has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        entries[f.name] = _Slot(f.name, spec.key or f.name, spec, hints[f.name], has_default)
    in_order = list(entries.values())
    if layout.order:
        missing = [e.name for e in in_order if e.name not in layout.order and e.spec.parent is None]
        if missing:
            raise TypeError(f"{kind.__name__}: STORED order leaves out {', '.join(missing)}")
        in_order = [entries.get(name) or _Slot(name, name, _NO_SPEC, Any, False) for name in layout.order]
    whole = next((e for e in entries.values() if e.spec.whole), None)
    return _Plan(tuple(in_order), tuple(entries.values()), layout, whole, {})


def stored_keys(kind: type, within: str | None = None) -> tuple[str, ...]:
    """The keys a record of *kind* can store, in order (inline records' keys included, a
    nested object's name once); with *within*, the keys stored in that nested object."""
    keys: list[str] = []
    for e in _plan(kind).entries:
        if e.spec.parent is not None:
            continue
        if within is not None:
            if e.spec.within == within:
                keys.append(e.key)
        elif e.spec.within is not None:
            if e.spec.within not in keys:
                keys.append(e.spec.within)
        elif e.spec.inline is not None:
            keys.extend(stored_keys(_record_type(e.hint)))
        else:
            keys.append(e.key)
    return tuple(keys)


def _record_type(hint: Any) -> type:
    """The dataclass in *hint* (``X`` or ``X | None``)."""
    for arg in (hint, *get_args(hint)):
        if isinstance(arg, type) and dataclasses.is_dataclass(arg):
            return arg
    raise TypeError(f"no record type in {hint!r}")


# ----------------------------------------------------------------------------- writing


def to_json(record: Any) -> Any:
    """The stored JSON value of *record* (a dict, or for a ``whole`` record its one value)."""
    plan = _plan(type(record))
    if plan.whole is not None:
        return _write(getattr(record, plan.whole.name))
    if plan.layout.array:
        return [_write(getattr(record, e.name)) for e in plan.fields]
    out: dict[str, Any] = {}
    _write_into(record, plan, out)
    return out


def _write_into(record: Any, plan: _Plan, out: dict[str, Any]) -> None:
    for e in plan.entries:
        spec = e.spec
        if spec.parent is not None:
            continue
        value = getattr(record, e.name)
        if spec.omit is not None and spec.omit(value):
            continue
        into = out if spec.within is None else out.setdefault(spec.within, {})
        if spec.inline is not None:
            if value is not None:
                _write_into(value, _plan(type(value)), into)
        elif value is None and spec.none_as is not UNSET:
            into[e.key] = _write(spec.none_as)
        else:
            if spec.sort:
                value = dict(sorted(value.items()))
            into[e.key] = _write(value)


def _write(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_json(value)
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return {k: _write(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_write(v) for v in value]
    return value


# ----------------------------------------------------------------------------- reading


class _BadValueError(Exception):
    def __init__(self, at: _At, message: str) -> None:
        super().__init__(message)
        self.path = _keys(at)
        self.message = message


# Where a value is in the document: None (the top) or (where its parent is, its key or index),
# spelled out as keys only when an error names it; building it costs one tuple per value.
_At = tuple[Any, str | int] | None


def _keys(at: _At) -> list[str]:
    keys: list[str] = []
    while at is not None:
        at, key = at
        keys.append(str(key))
    keys.reverse()
    return keys


_R = TypeVar("_R")


def from_json(kind: type[_R], data: Any, source: object = None) -> _R:
    """The record of *kind* stored as *data*; the layout's error (naming *source*, when given,
    and the place in the document) when a value is not of its field's type."""
    try:
        record: _R = _record(kind, data, None, None, _plan(kind).layout.strict)
        return record
    except _BadValueError as bad:
        layout = _plan(kind).layout
        where = "/".join(bad.path) or layout.name
        prefix = f"{source}: " if source is not None else ""
        raise layout.error(f"{prefix}{where}: {bad.message}") from None


def _describe(hint: Any) -> str:
    """``a string``, ``a string or null``, ``one of a, b``, ``an array of objects``…"""
    choices = literal_choices(hint)
    if choices is not None:
        return "one of " + ", ".join(str(c) for c in choices)
    if is_union(hint):
        rest = [a for a in get_args(hint) if a is not type(None)]
        text = " or ".join(_describe(a) for a in rest)
        return f"{text} or null" if len(rest) < len(get_args(hint)) else text
    if hint in SCALARS:
        return SCALARS[hint]
    if _is_array_record(hint):
        return f"an array of {len(_plan(hint).fields)} items"
    origin, args = get_origin(hint), get_args(hint)
    if origin is tuple:
        item = args[0] if len(args) == 2 and args[1] is Ellipsis else None
        if item is str:
            return "an array of strings"
        if item is not None and _is_array_record(item):
            return "an array of arrays"
        if item is not None and (dataclasses.is_dataclass(item) or get_origin(item) in (dict, Mapping)):
            return "an array of objects"
        return "an array"
    if hint is type(None):
        return "null"
    return "an object"


def _is_array_record(hint: Any) -> bool:
    return isinstance(hint, type) and dataclasses.is_dataclass(hint) and _plan(hint).layout.array


# A value's reader, made once per (type, strict) and kept: ``(value, at, parent) -> value``.
# *strict*: a value of the wrong type is an error; else (a record its schema checked first) it
# is kept as it was stored, as a hand-written reader kept it, and only a shape the record
# cannot be built from is an error. A reader that keeps every value as it is, is ``_same``:
# containers and records then take the value without a call.
_Conv = Callable[[Any, _At, Any], Any]
_CONVS: dict[tuple[Any, bool], _Conv] = {}


def _same(value: Any, at: _At, parent: Any) -> Any:
    return value


def _conv(hint: Any, strict: bool) -> _Conv:
    conv = _CONVS.get((hint, strict))
    if conv is None:
        conv = _CONVS[(hint, strict)] = _make_conv(hint, strict)
    return conv


def _refuse(strict: bool, at: _At, message: str, value: Any) -> Any:
    if strict:
        raise _BadValueError(at, message)
    return value


def _checked(ok: Callable[[Any], bool], message: Callable[[Any], str]) -> _Conv:
    def conv(value: Any, at: _At, parent: Any) -> Any:
        if not ok(value):
            raise _BadValueError(at, message(value))
        return value
    return conv


def _make_conv(hint: Any, strict: bool) -> _Conv:
    """The reader of *hint*, by the same cases in the same order as :func:`_describe`."""
    if hint is Any:
        return _same
    if (choices := literal_choices(hint)) is not None:
        valid = ", ".join(str(c) for c in choices)
        return _checked(lambda v: isinstance(v, str | int | type(None)) and not isinstance(v, bool) and v in choices,
                        lambda v: f"{v!r} is not valid. Valid values: {valid}") if strict else _same
    if is_union(hint):
        return _union_conv(hint, strict)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return lambda value, at, parent: _record(hint, value, at, parent, strict)
    if hint in SCALARS:
        return _checked(lambda v: is_scalar(hint, v),
                        lambda v: f"expected {_describe(hint)}, found {found(v)}") if strict else _same
    if hint is type(None):
        return _checked(lambda v: v is None, lambda v: f"expected null, found {found(v)}") if strict else _same
    origin, args = get_origin(hint), get_args(hint)
    if origin is tuple:
        return _tuple_conv(hint, args, strict)
    if origin in (dict, Mapping):
        return _mapping_conv(_conv(args[1] if args else Any, strict), strict)

    def unreadable(value: Any, at: _At, parent: Any) -> Any:
        raise TypeError(f"the codec cannot read a field of type {hint!r}")
    return unreadable


def _union_conv(hint: Any, strict: bool) -> _Conv:
    args = get_args(hint)
    nullable, rest = type(None) in args, [a for a in args if a is not type(None)]
    convs = [_conv(a, strict) for a in rest]
    if convs[0] is _same:  # the first choice keeps every value (and None stays None)
        return _same
    optional = len(rest) == 1 and nullable

    def conv(value: Any, at: _At, parent: Any) -> Any:
        if value is None and nullable:
            return None
        if len(convs) == 1:
            try:
                return convs[0](value, at, parent)
            except _BadValueError as bad:
                if optional and bad.path == _keys(at):
                    raise _BadValueError(at, f"expected {_describe(hint)}, found {found(value)}") from None
                raise
        for each in convs:
            try:
                return each(value, at, parent)
            except _BadValueError:
                continue
        return _refuse(strict, at, f"expected {_describe(hint)}, found {found(value)}", value)
    return conv


def _tuple_conv(hint: Any, args: tuple[Any, ...], strict: bool) -> _Conv:
    variadic = len(args) == 2 and args[1] is Ellipsis
    convs = [_conv(a, strict) for a in args[:1 if variadic else len(args)]]

    def conv(value: Any, at: _At, parent: Any) -> Any:
        if not isinstance(value, list):
            return _refuse(strict, at, f"expected {_describe(hint)}, found {found(value)}", value)
        if variadic:
            item = convs[0]
            return tuple(value) if item is _same else tuple([item(v, (at, i), parent) for i, v in enumerate(value)])
        if len(value) != len(args):
            return _refuse(strict, at, f"expected an array of {len(args)} items, found {found(value)}", value)
        return tuple([c(v, (at, i), parent) for i, (c, v) in enumerate(zip(convs, value, strict=True))])
    return conv


def _mapping_conv(item: _Conv, strict: bool) -> _Conv:
    def conv(value: Any, at: _At, parent: Any) -> Any:
        if not isinstance(value, Mapping):
            return _refuse(strict, at, f"expected an object, found {found(value)}", value)
        if item is _same:
            return {k: v for k, v in value.items()}
        return {k: item(v, (at, k), parent) for k, v in value.items()}
    return conv


def _record(kind: type, data: Any, at: _At, parent: Any, strict: bool) -> Any:
    plan = _plan(kind)
    if plan.whole is not None:
        return kind(**{plan.whole.name: _conv(plan.whole.hint, strict)(data, at, parent)})
    if plan.layout.array:
        return _array_record(kind, plan, data, at, parent, strict)
    if not isinstance(data, Mapping):
        raise _BadValueError(at, f"expected an object, found {found(data)}")
    values: dict[str, Any] = {}
    steps = plan.reads.get(strict) or plan.reads.setdefault(strict, tuple((e, _conv(e.hint, strict)) for e in plan.fields))
    for e, conv in steps:
        spec, key = e.spec, e.key
        source, where = (data, at) if spec.within is None else _within(data, spec.within, at)
        if spec.parent is not None:
            values[e.name] = parent.get(spec.parent) if isinstance(parent, Mapping) else None
        elif spec.inline is not None:
            values[e.name] = _record(_record_type(e.hint), source, where, parent, strict) if spec.inline in source else None
        elif key in source:
            value = source[key]
            if spec.read is not None:
                values[e.name] = spec.read(value)
            elif spec.none_as is not UNSET and value == spec.none_as:
                values[e.name] = None
            else:
                values[e.name] = value if conv is _same else conv(value, (where, key), source)
        elif spec.absent is not UNSET:
            values[e.name] = spec.absent
        elif not e.has_default:
            if not nullable(e.hint):
                raise _BadValueError((where, key), f"expected {_describe(e.hint)}, found nothing")
            values[e.name] = None
    return kind(**values)


def _within(data: Mapping[str, Any], name: str, at: _At) -> tuple[Mapping[str, Any], _At]:
    """The nested object *name* of *data* (``{}`` when absent) and where it is."""
    inner = data.get(name, {})
    if not isinstance(inner, Mapping):
        raise _BadValueError((at, name), f"expected an object, found {found(inner)}")
    return inner, (at, name)


def _array_record(kind: type, plan: _Plan, data: Any, at: _At, parent: Any, strict: bool) -> Any:
    """An ``array`` record: exactly one item per field, each read by its field's type."""
    if not isinstance(data, list) or len(data) != len(plan.fields):
        raise _BadValueError(at, f"expected an array of {len(plan.fields)} items, found {found(data)}")
    return kind(**{e.name: _conv(e.hint, strict)(item, (at, i), parent)
                   for i, (e, item) in enumerate(zip(plan.fields, data, strict=True))})
