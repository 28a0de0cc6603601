"""The code behind `record.Record` that works on any record class: its values as JSON
(`jsonable`), its field types, the `__init__` and `to_json` a class compiles once it has
built (or written) `COMPILE_AFTER` instances (a line per field, no loop over a plan: on a
10k-note `notes` answer the generic methods cost 3 times as much), and `from_json`'s
reader. Below `record` (which imports it), so a record class is told here by what it
declares (`_out`), not by its base."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from types import NoneType, UnionType
from typing import Annotated, Any, Union, get_args, get_origin

PLAIN = (str, int, float, bool, NoneType)
"""Values that are their own JSON."""


def jsonable(value: Any) -> Any:
    """`value` (a record, or what a record holds) as JSON values."""
    if isinstance(value, PLAIN):
        return value
    if isinstance(value, list | tuple):
        return [v if isinstance(v, PLAIN) else jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: v if isinstance(v, PLAIN) else jsonable(v) for k, v in value.items()}
    to_json = getattr(value, "to_json", None)  # a record, or one of a layer below's
    if to_json is not None:
        return to_json()
    if isinstance(value, Mapping):
        return {k: jsonable(v) for k, v in value.items()}
    raise TypeError(f"no JSON for {type(value).__name__}")


_TYPES: dict[type, dict[str, Any]] = {}


def field_types(kind: Any) -> dict[str, Any]:
    """The field types of a record class, `Annotated` kept: its classes' annotations as
    evaluated when the class was made; `typing.get_type_hints` (which compiles and
    evaluates each one again) only for a module that keeps them as strings (`from
    __future__ import annotations`), and once per class."""
    got = _TYPES.get(kind)
    if got is None:
        got = {}
        for klass in reversed(kind.__mro__):
            got.update(inspect.get_annotations(klass))
        if any(isinstance(got[n], str) for n in kind._fields):
            got = typing.get_type_hints(kind, include_extras=True)
        _TYPES[kind] = got
    return got


def _is_record(tp: Any) -> bool:
    return isinstance(tp, type) and hasattr(tp, "_out")


def compile_init(cls: Any, generic: Callable[..., None]) -> Callable[..., None]:
    """The `__init__` a frozen dataclass would have: one call sets each field."""
    params: list[str] = []
    body: list[str] = []
    ns: dict[str, Any] = {"_set": object.__setattr__, "_ABSENT": object()}
    after_default = False
    for name in cls._fields:
        if name in cls._defaults:
            ns[f"_d_{name}"] = cls._defaults[name]
            params.append(f"{name}=_d_{name}")
        elif name in cls._factories:
            ns[f"_f_{name}"] = cls._factories[name]
            params.append(f"{name}=_ABSENT")
            body.append(f"if {name} is _ABSENT: {name} = _f_{name}()")
        else:
            if after_default and not cls._kw_only:  # no such `def`: stay generic
                cls._made = -(1 << 62)  # never again
                return generic
            params.append(name)
            continue
        after_default = True
    body += [f"_set(self, {n!r}, {n})" for n in cls._fields]
    code = "".join(f"\n    {line}" for line in body) or "\n    pass"
    star = "*, " if cls._kw_only and params else ""
    exec(f"def __init__(self, {star}{', '.join(params)}):{code}", ns)
    init: Callable[..., None] = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.compiled = True  # type: ignore[attr-defined]
    return init


def _bare(tp: Any) -> Any:
    return get_args(tp)[0] if get_origin(tp) is Annotated else tp


def _plain(tp: Any) -> bool:
    """Whether values of type `tp` are their own JSON."""
    tp = _bare(tp)
    if get_origin(tp) in (Union, UnionType):
        return all(_plain(a) for a in get_args(tp))
    return tp in PLAIN


def compile_to_json(cls: Any) -> Callable[[Any], dict[str, Any]]:
    """`to_json` for one record class: a line per field, as its type needs (a string
    as it is, a list of strings copied)."""
    try:
        types = field_types(cls)
    except NameError:  # a type imported for type checkers only: no type-wise lines
        types = {}
    lines = ["def to_json(self):", "    out = {}"]
    for name, key, omit in cls._out:
        tp = _bare(types.get(name, Any))
        items = get_args(tp)[:1] if get_origin(tp) in (list, tuple) else ()
        if _plain(tp):
            value = "v"
        elif items and _plain(items[0]):
            value = "list(v)"
        elif items and _is_record(items[0]):
            value = "[x.to_json() for x in v]"
        else:
            value = "v if isinstance(v, _PLAIN) else _json(v)"
        lines.append(f"    v = self.{name}")
        put = f"out[{key!r}] = {value}"
        lines.append(f"    if v is not None: {put}" if omit else f"    {put}")
    lines.append("    return out")
    ns: dict[str, Any] = {"_PLAIN": PLAIN, "_json": jsonable}
    exec("\n".join(lines), ns)
    fn: Callable[[Any], dict[str, Any]] = ns["to_json"]
    fn.__qualname__ = f"{cls.__qualname__}.to_json"
    fn.compiled = True  # type: ignore[attr-defined]
    return fn


def read_back(kind: Any, data: Mapping[str, Any], hidden: Mapping[str, Any]) -> Any:
    """`kind.from_json(data, **hidden)`: our own JSON, so the types pick the union's
    branch and nothing is validated (`typedjson.decode` validates JSON from elsewhere);
    `hidden`: the fields its JSON leaves out."""
    return _record(kind, data, hidden) if hidden else _decode(kind, data)


def _keys(tp: Any) -> tuple[set[str], set[str]]:
    """(keys its JSON may have, keys it must have)."""
    out = {key: name for name, key, _ in tp._out}
    omitted = {key for _, key, omit in tp._out if omit}
    need = {key for key, name in out.items() if key not in omitted
            and name not in tp._defaults and name not in tp._factories}
    return set(out), need


def _fits(tp: Any, value: Any) -> bool:
    """Whether `value` (JSON) can be read as `tp` (one branch of a union)."""
    tp = _bare(tp)
    origin = get_origin(tp)
    if tp is Any:
        return True
    if tp is NoneType:
        return value is None
    if origin in (list, tuple):
        args = get_args(tp)
        return isinstance(value, list) and (not value or _fits(args[0], value[0]))
    if origin in (dict, Mapping) or tp in (dict, Mapping):
        return isinstance(value, dict)
    if origin in (Union, UnionType):
        return any(_fits(a, value) for a in get_args(tp))
    if _is_record(tp):
        if not isinstance(value, dict):
            return False
        keys, need = _keys(tp)
        return need <= value.keys() <= keys
    if tp is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(tp, type) and isinstance(value, tp)


def _decode(tp: Any, value: Any) -> Any:
    tp = _bare(tp)
    origin = get_origin(tp)
    if origin in (Union, UnionType):
        for arg in get_args(tp):
            if _fits(arg, value):
                return _decode(arg, value)
        raise TypeError(f"{value!r} is none of {tp}")
    if origin in (list, tuple):
        args = get_args(tp)
        items = [_decode(args[0], v) for v in value]
        return tuple(items) if origin is tuple else items
    if origin in (dict, Mapping):
        return {k: _decode(get_args(tp)[1], v) for k, v in value.items()}
    if _is_record(tp):
        return _record(tp, value, {})
    return value


def _record(tp: Any, value: Mapping[str, Any], hidden: Mapping[str, Any]) -> Any:
    types = field_types(tp)
    given = dict(hidden)
    if tp._shape is not None:
        _shaped(tp._shape, types, value, given)
        return tp(**given)
    for name, key, omit in tp._out:
        if key in value:
            given[name] = _decode(types[name], value[key])
        elif omit:
            given[name] = None
    return tp(**given)



def _shaped(shape: Any, types: dict[str, Any], value: Mapping[str, Any],
            given: dict[str, Any]) -> None:
    """The fields of a record whose JSON is shaped (`record.Shape`) into `given`."""
    for part, key, what in shape.entries:
        if part == "field" and key in value:
            given[what[0]] = _decode(types[what[0]], value[key])
        elif part == "field" and what[1]:
            given[what[0]] = None
        elif part == "group":
            _shaped(what, types, value.get(key, {}), given)
        elif part == "flat":
            given[what] = _decode(types[what], value)


def _row_item(tp: Any) -> Any:
    """The record class a row field holds a sequence of, or None."""
    items = get_args(tp)[:1] if get_origin(tp) in (list, tuple) else ()
    return items[0] if items and _is_record(items[0]) else None


def compile_row_codec(cls: Any) -> tuple[Callable[[Any], list[Any]], Callable[[Any], Any]]:
    """(`to_json`, `from_json`) of a `record.Row` class: its fields' values in order, a
    line per field as its type needs (a nested row record by its own codec), so reading
    10k cached notes costs what hand-written code did."""
    types = field_types(cls)
    put, get = [], []
    ns: dict[str, Any] = {"_cls": cls, "_json": jsonable, "_PLAIN": PLAIN}
    for i, name in enumerate(cls._fields):
        tp = _bare(types[name])
        origin = get_origin(tp)
        item = _row_item(tp)
        if item is not None:
            ns[f"_t{i}"] = item
            put.append(f"[x.to_json() for x in self.{name}]")
            get.append(f"tuple(_t{i}.from_json(x) for x in row[{i}])" if origin is tuple
                       else f"[_t{i}.from_json(x) for x in row[{i}]]")
        elif origin in (list, tuple) and _plain(get_args(tp)[0]):
            put.append(f"list(self.{name})")
            get.append(f"tuple(row[{i}])" if origin is tuple else f"list(row[{i}])")
        elif _plain(tp) or origin is dict or tp is dict:  # a dict of JSON values: as it is
            put.append(f"self.{name}")
            get.append(f"row[{i}]")
        else:
            put.append(f"_json(self.{name})")
            get.append(f"row[{i}]")
    exec(f"def to_json(self):\n    return [{', '.join(put)}]\n"
         f"def from_json(row):\n    return _cls({', '.join(get)})\n", ns)
    return ns["to_json"], ns["from_json"]
