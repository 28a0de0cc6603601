"""`Record`: the one base of kbase's frozen records: every query answer and its items, a
query's parameters, the index manifest and its blocks, the CI report and the GitHub event
payload. A record is declared by its annotations, `class Shard(Record): domain: str;
notes: int = 0`, and gets an `__init__` (positional, or keyword only with `class
X(Record, kw_only=True)`), equality, a hash, a repr and `_replace`, as a frozen dataclass
would (type checkers are told so: `dataclass_transform`).

Its JSON is made at the edge by `to_json()`: keys in field order (or as the class keyword
`json` orders them, properties among them: `Shape`), and per field, through
`json_field(...)` as its default: `key=` where the JSON key is no Python name (`from`),
`omit=True` to leave it out while None (and read it as None when absent), `hidden=True`
for one only the text form uses, and for budgets (kbase_ci.query.payload, through
`budget_keys`) `keep=True` for what is never cut (which lists an answer is for, and so
are cut last, the query registry says: `Query.lists`). `from_json` reads an answer's JSON
back (one trimmed to a token budget, drawn as text); JSON written elsewhere is validated
by `typedjson.decode` instead.

Why no dataclasses: a query makes tens of answer classes and the manifest's ~20 record
classes in a fresh process, and a frozen dataclass compiles six methods per class at
import (~1 ms each class here: 22 frozen dataclasses of 8 fields took 12-14 times what
these records take, docs/index-format.md). This base reads the annotations and the
`json_field`s once per class and generates no code; the methods are the base's. A class
compiles its own `__init__` and `to_json` only once it is used often (`COMPILE_AFTER`),
as in a 10k-note `notes` answer. Before this base there were two, one for answers (a
non-frozen dataclass made of each class) and one for decoded JSON; making all 160
record classes took 19 ms of CPU with them and 13 ms with this one, and a query's CPU
did not move (docs/development.md, "Records").
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Self, TypeVar

from kbase_ci.typedjson.compiled import (
    PLAIN,
    compile_init,
    compile_row_codec,
    compile_to_json,
    field_types,
    jsonable,
    read_back,
)

COMPILE_AFTER = 32
"""Instances of one record class built (or written as JSON) the generic way before it
compiles its own `__init__` (or `to_json`)."""


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""No default (`json_field`; `fields_of` gives it for a required parameter)."""
R = TypeVar("R", bound="Record")
_ABSENT = object()
"""An argument not given (MISSING may be one: `fields_of` passes it on)."""


class Field:
    """A field's options (`json_field`); the class keeps them in `_options`."""

    __slots__ = ("as_json", "compare", "default", "factory", "flatten", "hidden", "keep", "key",
                 "omit", "within")

    def __init__(self, default: Any, factory: Any, key: str | None, omit: bool, keep: bool,
                 hidden: bool, within: str | None = None, flatten: bool = False,
                 as_json: Callable[[Any], Any] | None = None, compare: bool = True) -> None:
        self.default, self.factory, self.key, self.omit = default, factory, key, omit
        self.keep, self.hidden = keep, hidden
        self.within, self.flatten, self.as_json, self.compare = within, flatten, as_json, compare


def json_field(*, default: Any = MISSING, default_factory: Callable[[], Any] = MISSING,
               key: str | None = None, omit: bool = False, keep: bool = False,
               hidden: bool = False, within: str | None = None, flatten: bool = False,
               as_json: Callable[[Any], Any] | None = None, compare: bool = True) -> Any:
    """A record field as its JSON has it: under `key` (default: its name), left out while
    None (`omit`), never cut for a budget (`keep`), or not in the JSON at all (`hidden`:
    for the text form only). The JSON may also be shaped other than the fields are
    (`shape`): `within="orphans"` puts the key in the object `orphans` beside the others
    that say so (`{"orphans": {"total": ..., "new": ...}}`); `flatten=True` writes a
    record-valued field's keys into this record's object; `as_json` writes the value as
    it returns (a record whose field has one is written, never read). `compare=False`
    leaves the field out of equality and the hash (as a dataclass field's)."""
    return Field(default, default_factory, key, omit, keep, hidden, within, flatten, as_json,
                 compare)


class Shape:
    """How a class's JSON differs from its fields in order: the keys in JSON order, each
    a field (`name`), a group of fields (`within`: their `Shape`), a flattened record
    field, or a property (computed: written, never read)."""

    __slots__ = ("entries",)

    def __init__(self, entries: tuple[tuple[str, str, Any], ...]) -> None:
        self.entries = entries
        """(kind, JSON key, what): kind `field` (what: (name, omit, as_json)), `group`
        (what: a Shape), `flat` (what: the field's name), `computed` (what: the
        attribute)."""


JsonOrder = tuple[str | tuple[str, ...], ...]
"""The class keyword `json`: the keys in order; a group's keys in order as `(group,
key, ...)`."""


def _shape(cls: Any, order: JsonOrder | None) -> Shape | None:
    """The class's `Shape`, or None when its JSON is its fields in order (`_out`)."""
    options: dict[str, Field] = cls._options
    if order is None and not any(o.within or o.flatten or o.as_json
                                 for o in options.values()):
        return None
    groups: dict[str, list[tuple[str, str, Any]]] = {}
    top: dict[str, tuple[str, str, Any]] = {}
    for name in cls._fields:
        o = options.get(name)
        if o is not None and o.hidden:
            continue
        key = (o.key if o else None) or name
        if o is not None and o.flatten:
            top[key] = ("flat", key, name)
            continue
        entry = ("field", key, (name, bool(o and o.omit), o.as_json if o else None))
        if o is not None and o.within:
            if o.within not in groups:
                top[o.within] = ("group", o.within, None)
            groups.setdefault(o.within, []).append(entry)
        else:
            top[key] = entry
    keys = order if order is not None else tuple(top)
    named = {k if isinstance(k, str) else k[0] for k in keys}
    unknown = set(top) - named
    if unknown:
        raise TypeError(f"{cls.__name__}: its JSON order leaves out {sorted(unknown)}")
    entries = []
    for item in keys:
        key = item if isinstance(item, str) else item[0]
        kind, _, what = top.get(key, ("computed", key, key))
        if kind == "computed" and not isinstance(getattr(cls, key, None), property):
            raise TypeError(f"{cls.__name__}: JSON key {key!r} is no field or property")
        if kind == "group":
            members = groups[key]
            if not isinstance(item, str):  # (group, its keys in order)
                at = {e[1]: e for e in members}
                if set(item[1:]) != set(at):
                    raise TypeError(f"{cls.__name__}: {key!r} holds {sorted(at)}")
                members = [at[k] for k in item[1:]]
            what = Shape(tuple(members))
        entries.append((kind, key, what))
    return Shape(tuple(entries))


@typing.dataclass_transform(frozen_default=True, field_specifiers=(json_field,))
class Record:
    """The base of every frozen record (see the module docstring)."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _compared: ClassVar[tuple[str, ...]] = ()
    """The fields equality and the hash compare (all but `json_field(compare=False)`)."""
    _defaults: ClassVar[dict[str, Any]] = {}
    _factories: ClassVar[dict[str, Callable[[], Any]]] = {}
    _options: ClassVar[dict[str, Field]] = {}
    _out: ClassVar[tuple[tuple[str, str, bool], ...]] = ()
    """(field, JSON key, omitted while None) of each field in the JSON."""
    _shape: ClassVar[Shape | None] = None
    """Set when the JSON is shaped other than the fields in order (`json_field`'s
    `within`, `flatten`, `as_json`; the class keyword `json`: the keys in order)."""
    _rows: ClassVar[bool] = False
    """A `Row`: its JSON is its values in order."""
    _kw_only: ClassVar[bool] = False
    _made: ClassVar[int] = 0
    _jsoned: ClassVar[int] = 0

    def __init_subclass__(cls, *, kw_only: bool | None = None,
                          json: JsonOrder | None = None, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        ns = cls.__dict__
        fields = list(cls._fields)
        defaults, factories, options = dict(cls._defaults), dict(cls._factories), \
            dict(cls._options)
        for name, note in inspect.get_annotations(cls).items():
            if str(note).startswith(("ClassVar", "typing.ClassVar")):
                continue
            if name not in fields:
                fields.append(name)
            value = ns.get(name, MISSING)
            if type(value) is Field:
                options[name] = value
                value, factory = value.default, value.factory
                if factory is not MISSING:
                    factories[name] = factory
                if value is MISSING:
                    delattr(cls, name)
                else:
                    type.__setattr__(cls, name, value)
            elif isinstance(value, dataclasses.Field):  # would be taken for a default
                raise TypeError(f"{cls.__name__}.{name}: a Record's field takes "
                                "json_field(...), not dataclasses.field(...)")
            if value is not MISSING:
                defaults[name] = value
        cls._fields, cls._defaults, cls._factories, cls._options = \
            tuple(fields), defaults, factories, options
        cls._out = tuple((n, o.key or n, o.omit) if (o := options.get(n)) else (n, n, False)
                         for n in fields if not (n in options and options[n].hidden))
        cls._compared = tuple(n for n in fields if n not in options or options[n].compare)
        cls._shape = _shape(cls, json)
        if cls._shape and all(k == "field" and not w[2] for k, _, w in cls._shape.entries):
            # Fields in another order only: the plain (compiled) writer in that order.
            cls._out = tuple((w[0], key, w[1]) for _, key, w in cls._shape.entries)
            cls._shape = None
        cls._made = cls._jsoned = 0
        if kw_only is not None:
            cls._kw_only = kw_only
        # Each class its own: a subclass must not use its parent's compiled methods (they
        # set the parent's fields), nor one its parent compiles later.
        if "__init__" not in ns:
            type.__setattr__(cls, "__init__", Record.__init__)
        if "to_json" not in ns:
            type.__setattr__(cls, "to_json", Row.to_json if cls._rows else Record.to_json
                             if cls._shape is None else _shaped_to_json)
        if cls._rows and "from_json" not in ns:
            type.__setattr__(cls, "from_json", Row.__dict__["from_json"])

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        cls._made += 1
        if cls._made >= COMPILE_AFTER:
            type.__setattr__(cls, "__init__", compile_init(cls, Record.__init__))
        names = cls._fields
        if args:
            if cls._kw_only or len(args) > len(names):
                most = 0 if cls._kw_only else len(names)
                raise TypeError(f"{cls.__name__}() takes {most} positional arguments")
            for name, value in zip(names, args, strict=False):
                if name in kwargs:
                    raise TypeError(f"{cls.__name__}() got {name!r} twice")
                kwargs[name] = value
        for name in names:
            value = kwargs.pop(name, _ABSENT)
            if value is _ABSENT:
                value = cls._defaults.get(name, _ABSENT)
                if value is _ABSENT:
                    factory = cls._factories.get(name)
                    if factory is None:
                        raise TypeError(f"{cls.__name__}() lacks {name}")
                    value = factory()
            object.__setattr__(self, name, value)
        if kwargs:
            raise TypeError(f"{cls.__name__}() has no field {next(iter(kwargs))}")

    def _values(self) -> tuple[Any, ...]:
        """What equality and the hash compare."""
        return tuple(getattr(self, n) for n in self._compared)

    def _replace(self, **changes: Any) -> Self:
        return type(self)(**{**{n: getattr(self, n) for n in self._fields}, **changes})

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot assign {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot delete {name}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
        return f"{type(self).__name__}({shown})"

    def to_json(self) -> dict[str, Any]:
        """The record as JSON values: keys in field order, as `json_field` says."""
        cls = type(self)
        cls._jsoned += 1
        if cls._jsoned >= COMPILE_AFTER:
            type.__setattr__(cls, "to_json", compile_to_json(cls))
        out: dict[str, Any] = {}
        for name, key, omit in cls._out:
            value = getattr(self, name)
            if omit and value is None:
                continue
            out[key] = value if isinstance(value, PLAIN) else jsonable(value)
        return out

    @classmethod
    def budget_keys(cls) -> frozenset[str]:
        """The keys never cut for a budget (kbase_ci.query.payload)."""
        return frozenset(o.key or n for n, o in cls._options.items() if o.keep)

    @classmethod
    def from_json(cls: type[R], data: Mapping[str, Any], **hidden: Any) -> R:
        """The record whose `to_json()` is `data` (a key left out: its default, or None
        for an `omit` field); `hidden`: its fields the JSON leaves out."""
        out: R = read_back(cls, data, hidden)
        return out

    def _hidden(self) -> dict[str, Any]:
        """Its fields the JSON leaves out (`json_field(hidden=True)`): what reading its
        JSON back needs besides (`from_json`)."""
        return {n: getattr(self, n) for n, o in type(self)._options.items() if o.hidden}


class Row(Record):
    """A record whose JSON is a list: its fields' values in order, a nested `Row` as its
    own list (`[path, title, [[tag, line, col, source], ...], ...]`). For what is stored
    many times and read back by kbase alone (the parse cache's notes), where keys would
    be most of the bytes; `from_json` reads it back without checking it."""

    __slots__ = ()
    _rows = True

    def to_json(self) -> list[Any]:  # type: ignore[override]  # a list, not an object
        cls = type(self)
        write, read = compile_row_codec(cls)
        type.__setattr__(cls, "to_json", write)
        type.__setattr__(cls, "from_json", staticmethod(read))
        return write(self)

    @classmethod
    def from_json(cls, data: Any, **hidden: Any) -> Self:
        """The record whose `to_json()` is `data` (a list)."""
        write, read = compile_row_codec(cls)
        type.__setattr__(cls, "to_json", write)
        type.__setattr__(cls, "from_json", staticmethod(read))
        out: Self = read(data)
        return out


def _shaped_to_json(self: Record) -> dict[str, Any]:
    """`to_json` of a class whose JSON is shaped (`Shape`); never compiled (none is
    written thousands of times)."""
    shape = type(self)._shape
    assert shape is not None
    return _write(self, shape)


def _write(record: Any, shape: Shape) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind, key, what in shape.entries:
        if kind == "field":
            name, omit, as_json = what
            value = getattr(record, name)
            if omit and value is None:
                continue
            out[key] = jsonable(as_json(value) if as_json is not None else value)
        elif kind == "group":
            out[key] = _write(record, what)
        elif kind == "flat":
            out.update(getattr(record, what).to_json())
        else:
            out[key] = jsonable(getattr(record, what))
    return out


def json_keys(kind: type[Record]) -> list[tuple[str, Any]]:
    """The keys a record class's JSON may have, in order, each with the type of its value
    (`Any` where the class does not say): what `to_json` writes, its shape followed (a
    group's keys as `group.key`, a flattened record's keys as this one's, a computed key
    by its property's return type), hidden fields left out. docs/json-schema.md is
    checked against it (kbase_ci.query.docs)."""
    types = field_types(kind)
    if kind._shape is None:
        return [(key, types.get(name, Any)) for name, key, _ in kind._out]
    return _shape_keys(kind, kind._shape, types)


def _shape_keys(kind: Any, shape: Shape, types: dict[str, Any]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for part, key, what in shape.entries:
        if part == "field":  # written as `as_json` returns it, when it says
            out.append((key, types.get(what[0], Any) if what[2] is None else _returns(what[2])))
        elif part == "group":
            out.extend((f"{key}.{k}", tp) for k, tp in _shape_keys(kind, what, types))
        elif part == "flat":
            out.extend(json_keys(types[what]))
        else:
            out.append((key, _returns(getattr(kind, what).fget)))
    return out


def _returns(fn: Callable[..., Any]) -> Any:
    """What `fn` says it returns (`Any` when it does not: a builtin such as `str`)."""
    if not inspect.isfunction(fn):
        return Any
    return typing.get_type_hints(fn).get("return", Any)
