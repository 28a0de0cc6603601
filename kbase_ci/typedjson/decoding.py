"""The decoder: JSON values walked against a record's declared types (`decode`), and
back (`encode`); see the package's docstring."""

from __future__ import annotations

import json
import math
import re
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

from kbase_ci.typedjson.compiled import field_types, jsonable
from kbase_ci.typedjson.record import Record

T = TypeVar("T")
Decoder = Callable[[Any], Any]


class ShapeError(ValueError):
    """A JSON value that does not have the declared shape: where (`path`) and what is
    wrong with it (`problem`, a phrase such as `should be a whole number, not "x"`)."""

    def __init__(self, problem: str, *, of_type: bool = False) -> None:
        super().__init__(problem)
        self.problem = problem
        self.of_type = of_type
        """The value is of another type altogether (not: out of range)."""
        self.steps: list[str] = []
        """Path steps, innermost first (`.name` for a record field, `[3]`, `["key"]`)."""

    def at(self, step: str) -> ShapeError:
        self.steps.append(step)
        return self

    @property
    def path(self) -> str:
        return "".join(reversed(self.steps)).removeprefix(".")

    def __str__(self) -> str:
        return f"`{self.path}` {self.problem}" if self.steps else f"the document {self.problem}"


class Check(Record):
    """A rule for `Annotated[T, Check(...)]`: the decoded value must pass `test`;
    otherwise it is refused as `should be {what}`."""

    test: Callable[[Any], bool]
    what: str


def at_least(low: int | float) -> Check:
    return Check(lambda v: v >= low, f"at least {low}")


def between(low: int | float, high: int | float) -> Check:
    return Check(lambda v: low <= v <= high, f"from {low} to {high}")


def matching(pattern: str, what: str) -> Check:
    rx = re.compile(pattern)
    return Check(lambda v: rx.fullmatch(v) is not None, what)


def decode(kind: type[T], data: Any) -> T:
    """`data` (parsed JSON) as a `kind` record; ShapeError naming the first bad key."""
    out: T = decoder(kind)(data)
    return out


def encode(value: Any) -> Any:
    """A record (and what it holds) as JSON values: the records' `to_json()`."""
    return jsonable(value)


_CACHE: dict[Any, Decoder] = {}


def decoder(kind: Any) -> Decoder:
    """The decoding function of a type (made once per type)."""
    got = _CACHE.get(kind)
    if got is None:
        got = _CACHE[kind] = _make(kind)
    return got


def shown(value: Any) -> str:
    """A JSON value in a message: short, and never the whole of a huge one."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 40 else text[:37] + "..."


_NAMES = {str: "a string", bool: "true or false", int: "a whole number", float: "a number",
          type(None): "null"}


def _describe(kind: Any) -> str:
    base = typing.get_origin(kind)
    if base is typing.Annotated:
        return _describe(typing.get_args(kind)[0])
    if kind in _NAMES:
        return _NAMES[kind]
    if base is typing.Literal:
        return " or ".join(shown(a) for a in typing.get_args(kind))
    if base in (types.UnionType, typing.Union):
        return " or ".join(_describe(a) for a in typing.get_args(kind))
    if base in (list, tuple):
        return "a list"
    return "an object"


def _wrong(kind: Any, value: Any) -> ShapeError:
    return ShapeError(f"should be {_describe(kind)}, not {shown(value)}", of_type=True)


def _make(kind: Any) -> Decoder:
    if kind is Any:
        return lambda v: v
    base, args = typing.get_origin(kind), typing.get_args(kind)
    if base is typing.Annotated:
        return _annotated(decoder(args[0]), [m for m in kind.__metadata__
                                             if isinstance(m, Check)])
    if kind in (str, bool, int, type(None)):
        return _exact(kind)
    if kind is float:
        return _float
    if base is typing.Literal:
        return _literal(kind, args)
    if base in (types.UnionType, typing.Union):
        return _union(kind, args)
    if base is list or (base is tuple and len(args) == 2 and args[1] is Ellipsis):
        return _sequence(kind, decoder(args[0]), args[0], list if base is list else tuple)
    if base is tuple:
        return _fixed(kind, [decoder(a) for a in args])
    if base is dict:
        return _mapping(decoder(args[0]), decoder(args[1]), args[0], args[1])
    if isinstance(kind, type) and issubclass(kind, Record):
        return _record(kind)
    raise TypeError(f"typedjson cannot decode {kind!r}")


def _exact(kind: type) -> Decoder:
    def check(value: Any) -> Any:
        if type(value) is not kind:
            raise _wrong(kind, value)
        return value
    return check


def _float(value: Any) -> float:
    if type(value) is float or type(value) is int:
        if not math.isfinite(value):
            raise ShapeError(f"should be a finite number, not {shown(value)}")
        return float(value)
    raise _wrong(float, value)


def _annotated(inner: Decoder, checks: list[Check]) -> Decoder:
    if len(checks) == 1:  # the usual case, without a loop per value
        test, what = checks[0].test, checks[0].what

        def one(value: Any) -> Any:
            got = inner(value)
            if not test(got):
                raise ShapeError(f"should be {what}, not {shown(value)}")
            return got
        return one

    def check(value: Any) -> Any:
        got = inner(value)
        for rule in checks:
            if not rule.test(got):
                raise ShapeError(f"should be {rule.what}, not {shown(value)}")
        return got
    return check


def _literal(kind: Any, allowed: tuple[Any, ...]) -> Decoder:
    def check(value: Any) -> Any:
        for a in allowed:  # `True == 1`: the type must match too
            if value == a and type(value) is type(a):
                return a
        raise _wrong(kind, value)
    return check


def _union(kind: Any, options: tuple[Any, ...]) -> Decoder:
    if len(options) == 2 and type(None) in options:  # `X | None`, the usual case
        inner = decoder(next(a for a in options if a is not type(None)))

        def nullable(value: Any) -> Any:
            if value is None:
                return None
            try:
                return inner(value)
            except ShapeError as exc:
                if exc.steps or not exc.of_type:
                    raise
                raise _wrong(kind, value) from None  # "... or null"
        return nullable
    parts = [decoder(a) for a in options]

    def either(value: Any) -> Any:
        for part in parts:
            try:
                return part(value)
            except ShapeError:
                continue
        raise _wrong(kind, value)
    return either


_PLAIN = (str, int, bool)


def _sequence(kind: Any, item: Decoder, item_kind: Any, make: type) -> Decoder:
    plain = item_kind if item_kind in _PLAIN else None

    def check(value: Any) -> Any:
        if type(value) is not list:
            raise _wrong(kind, value)
        if plain is not None and all(type(v) is plain for v in value):
            return value if make is list else tuple(value)
        if item_kind is float and all(type(v) is float for v in value) \
                and all(map(math.isfinite, value)):
            return value if make is list else tuple(value)
        out = []
        for i, v in enumerate(value):  # a try per item costs nothing until one fails
            try:
                out.append(item(v))
            except ShapeError as exc:
                raise exc.at(f"[{i}]") from None
        return out if make is list else tuple(out)
    return check


def _fixed(kind: Any, items: list[Decoder]) -> Decoder:
    def check(value: Any) -> Any:
        if type(value) is not list or len(value) != len(items):
            raise ShapeError(f"should be a list of {len(items)}, not {shown(value)}")
        out = []
        for i, (item, v) in enumerate(zip(items, value, strict=True)):
            try:
                out.append(item(v))
            except ShapeError as exc:
                raise exc.at(f"[{i}]") from None
        return tuple(out)
    return check


def _mapping(key: Decoder, item: Decoder, key_kind: Any, item_kind: Any) -> Decoder:
    plain = item_kind if item_kind in _PLAIN and key_kind is str else None

    def check(value: Any) -> Any:
        if type(value) is not dict:
            raise ShapeError(f"should be an object, not {shown(value)}")
        if plain is not None and all(type(v) is plain for v in value.values()):
            return value
        out = {}
        for k, v in value.items():
            try:
                out[key(k)] = item(v)
            except ShapeError as exc:
                raise exc.at(f"[{json.dumps(k, ensure_ascii=True)}]") from None
        return out
    return check


def _record(kind: type[Record]) -> Decoder:
    """A record's decoder: a reader per key (`_readers`), then its `_problem` rule."""
    types = field_types(kind)
    readers = _readers(kind, kind._shape, types) if kind._shape is not None else \
        [_field(kind, name, key, omit, decoder(types[name])) for name, key, omit in kind._out]
    rule = getattr(kind, "_problem", None)

    def check(value: Any) -> Any:
        if type(value) is not dict:
            raise ShapeError(f"should be an object, not {shown(value)}")
        got: dict[str, Any] = {}
        for read in readers:
            read(value, got)
        made = kind(**got)
        why = rule(made) if rule is not None else None  # a rule between fields
        if why is not None:
            raise ShapeError(why)
        return made
    return check


Reader = Callable[[dict[str, Any], dict[str, Any]], None]
"""Reads its part of a record's JSON object into the record's arguments (a field, a
group of fields, a flattened record: `record.Shape`)."""


def _readers(kind: type[Record], shape: Any, types: dict[str, Any]) -> list[Reader]:
    out: list[Reader] = []
    for part, key, what in shape.entries:
        if part == "field":
            name, omit, as_json = what
            if as_json is not None:
                raise TypeError(f"{kind.__name__}.{name} is written as it computes: "
                                "typedjson cannot read it back")
            out.append(_field(kind, name, key, omit, decoder(types[name])))
        elif part == "group":
            out.append(_group(key, _readers(kind, what, types)))
        elif part == "flat":
            out.append(_flat(what, decoder(types[what])))
    return out


def _field(kind: type[Record], name: str, key: str, omit: bool, read: Decoder) -> Reader:
    optional = omit or name in kind._defaults or name in kind._factories

    def one(value: dict[str, Any], got: dict[str, Any]) -> None:
        if key in value:
            try:
                got[name] = read(value[key])
            except ShapeError as exc:
                raise exc.at(f".{key}") from None
        elif not optional:
            raise ShapeError("is missing").at(f".{key}")
        elif omit and name not in kind._defaults:
            got[name] = None
    return one


def _group(key: str, readers: list[Reader]) -> Reader:
    """An object of some of the record's fields: absent, they take their defaults."""
    def group(value: dict[str, Any], got: dict[str, Any]) -> None:
        inner = value.get(key, {})
        if type(inner) is not dict:
            raise ShapeError(f"should be an object, not {shown(inner)}").at(f".{key}")
        try:
            for read in readers:
                read(inner, got)
        except ShapeError as exc:
            raise exc.at(f".{key}") from None
    return group


def _flat(name: str, read: Decoder) -> Reader:
    """A record field whose keys are the record's own."""
    def flat(value: dict[str, Any], got: dict[str, Any]) -> None:
        got[name] = read(value)
    return flat
