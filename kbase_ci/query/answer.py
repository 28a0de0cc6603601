"""Typed answers: every query answer is a `Record` (nested records for its items), and
its JSON (what the CLI prints and the MCP tools return) is made once, at the edge, by
`to_json()`: keys in field order, a field marked `json_field(omit=True)` left out while
it is None, `key=` where the JSON key is no Python name (`from`). `from_json` reads such
JSON back (an answer trimmed to a token budget, drawn as text).

Records are dataclasses that behave as frozen ones do (immutable, compared and hashed
by their fields), but made without the code a frozen dataclass compiles at import
(`__init__`, `__repr__`, `__eq__`, `__hash__`, `__setattr__`, `__delattr__`: together
~1 ms per class on the dev machine, and a query loads tens of record classes before it
answers; the query package's other frozen records use this base too, so a query's
start-up did not grow with its typed answers): the base class gives the behaviour, and
a class compiles its own `__init__` and `to_json` only once it is used often
(`COMPILE_AFTER`), as in a 10k-note `notes` answer (~1.6 µs a note for both, against
~0.5 µs for the dict the answer was before). For budgets an answer marks the fields
`payload` never cuts (`keep`) and the lists it is for (`primary`), which keep their
first item longest.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import MISSING
from types import NoneType, UnionType
from typing import Any, ClassVar, TypeVar, Union, dataclass_transform, get_args, get_origin

COMPILE_AFTER = 32
"""Instances of one record class built (or written as JSON) the generic way before it
compiles its own `__init__` (or `to_json`)."""

R = TypeVar("R", bound="Record")
_PLAIN = (str, int, float, bool, NoneType)
_SEQUENCES = (list, tuple)


def json_field(*, default: Any = MISSING, key: str | None = None, omit: bool = False,
               keep: bool = False, primary: bool = False, hidden: bool = False) -> Any:
    """A record field as its JSON has it: under `key` (default: its name), left out while
    None (`omit`), never cut for a budget (`keep`), the answer's main list (`primary`), or
    not in the JSON at all (`hidden`: for the text form only)."""
    meta = {"key": key, "omit": omit, "keep": keep, "primary": primary, "hidden": hidden}
    return dataclasses.field(default=default, metadata=meta)


class _Plan:
    """What a record class's methods need, worked out on first use (state: instances
    built so far, for `COMPILE_AFTER`)."""

    def __init__(self, cls: type) -> None:
        fields = dataclasses.fields(cls)
        self.names = tuple(f.name for f in fields)
        self.defaults = {f.name: f.default for f in fields if f.default is not MISSING}
        self.factories = {f.name: f.default_factory for f in fields
                          if f.default_factory is not MISSING}
        self.out = tuple((f.name, f.metadata.get("key") or f.name, bool(f.metadata.get("omit")))
                         for f in fields if not f.metadata.get("hidden"))
        self.keep = frozenset(k for f in fields if f.metadata.get("keep")
                              for k in [f.metadata.get("key") or f.name])
        self.primary = frozenset(k for f in fields if f.metadata.get("primary")
                                 for k in [f.metadata.get("key") or f.name])
        self.made = 0
        self.jsoned = 0


def _plan(cls: type) -> _Plan:
    plan: _Plan | None = cls.__dict__.get("_plan_")
    if plan is None:
        plan = _Plan(cls)
        type.__setattr__(cls, "_plan_", plan)
    return plan


def _compile_init(cls: type, plan: _Plan) -> Callable[..., None]:
    """The `__init__` a frozen dataclass would have: one call sets each field."""
    params: list[str] = []
    body: list[str] = []
    ns: dict[str, Any] = {"_set": object.__setattr__, "_MISSING": MISSING}
    for name in plan.names:
        if name in plan.defaults:
            ns[f"_d_{name}"] = plan.defaults[name]
            params.append(f"{name}=_d_{name}")
        elif name in plan.factories:
            ns[f"_f_{name}"] = plan.factories[name]
            params.append(f"{name}=_MISSING")
            body.append(f"if {name} is _MISSING: {name} = _f_{name}()")
        else:
            params.append(name)
    body += [f"_set(self, {n!r}, {n})" for n in plan.names]
    code = "".join(f"\n    {line}" for line in body) or "\n    pass"
    exec(f"def __init__(self, {', '.join(params)}):{code}", ns)
    init: Callable[..., None] = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _first_init(self: Record, *args: Any, **kwargs: Any) -> None:
    cls = type(self)
    plan = _plan(cls)
    plan.made += 1
    if plan.made >= COMPILE_AFTER:
        type.__setattr__(cls, "__init__", _compile_init(cls, plan))
    names = plan.names
    if len(args) > len(names):
        raise TypeError(f"{cls.__name__}() takes {len(names)} arguments, not {len(args)}")
    values = dict(zip(names, args, strict=False))
    for name, value in kwargs.items():
        if name not in names or name in values:
            raise TypeError(f"{cls.__name__}() got an unexpected or repeated argument {name!r}")
        values[name] = value
    for name in names:
        if name in values:
            value = values[name]
        elif name in plan.defaults:
            value = plan.defaults[name]
        elif name in plan.factories:
            value = plan.factories[name]()
        else:
            raise TypeError(f"{cls.__name__}() missing argument {name!r}")
        object.__setattr__(self, name, value)


def _json(value: Any) -> Any:
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, Record):
        return value.to_json()
    if isinstance(value, _SEQUENCES):
        if value and isinstance(value[0], Record):  # an answer's list of items
            return [v.to_json() if isinstance(v, Record) else _json(v) for v in value]
        return [v if isinstance(v, _PLAIN) else _json(v) for v in value]
    if isinstance(value, dict):
        return {k: v if isinstance(v, _PLAIN) else _json(v) for k, v in value.items()}
    to_json = getattr(value, "to_json", None)  # a record of a layer below (a handover's)
    if to_json is not None:
        return to_json()
    if isinstance(value, Mapping):
        return {k: _json(v) for k, v in value.items()}
    raise TypeError(f"no JSON for {type(value).__name__}")


def _plain(tp: Any) -> bool:
    """Whether values of type `tp` are their own JSON."""
    if get_origin(tp) in (Union, UnionType):
        return all(_plain(a) for a in get_args(tp))
    return tp in _PLAIN


def _compile_to_json(cls: type, plan: _Plan) -> Callable[[Any], dict[str, Any]]:
    """`to_json` for one record class: a line per field, as its type needs (a string
    as it is, a list of strings copied), no loop over a plan."""
    hints = _hints(cls)
    lines = ["def to_json(self):", "    out = {}"]
    for name, key, omit in plan.out:
        tp = hints[name]
        items = get_args(tp)[:1] if get_origin(tp) in (list, tuple) else ()
        if _plain(tp):
            value = "v"
        elif items and _plain(items[0]):
            value = "list(v)"
        elif items and isinstance(items[0], type) and issubclass(items[0], Record):
            value = "[x.to_json() for x in v]"
        else:
            value = "v if isinstance(v, _PLAIN) else _json(v)"
        lines.append(f"    v = self.{name}")
        put = f"out[{key!r}] = {value}"
        lines.append(f"    if v is not None: {put}" if omit else f"    {put}")
    lines.append("    return out")
    ns: dict[str, Any] = {"_PLAIN": _PLAIN, "_json": _json}
    exec("\n".join(lines), ns)
    fn: Callable[[Any], dict[str, Any]] = ns["to_json"]
    fn.__qualname__ = f"{cls.__qualname__}.to_json"
    return fn


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, json_field))
class Record:
    """Base of every answer and answer item (see the module docstring)."""

    _plan_: ClassVar[_Plan]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # A class without a docstring would get one made from `inspect.signature`.
        cls.__doc__ = cls.__doc__ or cls.__name__
        dataclasses.dataclass(init=False, repr=False, eq=False)(cls)
        # Each class its own: a subclass must not use its parent's compiled methods.
        type.__setattr__(cls, "__init__", _first_init)
        if "to_json" not in cls.__dict__:
            type.__setattr__(cls, "to_json", Record.to_json)

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in _plan(type(self)).names)
        return f"{type(self).__name__}({shown})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in _plan(type(self)).names)

    def __hash__(self) -> int:  # as a frozen dataclass's: of its fields
        return hash(tuple(getattr(self, n) for n in _plan(type(self)).names))

    def to_json(self) -> dict[str, Any]:
        plan = _plan(type(self))
        plan.jsoned += 1
        if plan.jsoned >= COMPILE_AFTER:
            type.__setattr__(type(self), "to_json", _compile_to_json(type(self), plan))
        out: dict[str, Any] = {}
        for name, key, omit in plan.out:
            value = getattr(self, name)
            if omit and value is None:
                continue
            out[key] = value if isinstance(value, _PLAIN) else _json(value)
        return out

    @classmethod
    def budget_keys(cls) -> tuple[frozenset[str], frozenset[str]]:
        """(keys never cut, the answer's main lists) for kbase_ci.query.payload."""
        plan = _plan(cls)
        return plan.keep, plan.primary

    @classmethod
    def from_json(cls: type[R], data: Mapping[str, Any]) -> R:
        """The record whose `to_json()` is `data` (a key left out: its default)."""
        return _decode(cls, data)  # type: ignore[no-any-return]


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    got = _HINTS.get(cls)
    if got is None:
        import typing  # the annotations are strings: resolved only when decoding

        got = typing.get_type_hints(cls)
        _HINTS[cls] = got
    return got


def _fits(tp: Any, value: Any) -> bool:
    """Whether `value` (JSON) can be read as `tp` (one branch of a union)."""
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
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(value, dict):
            return False
        fields = dataclasses.fields(tp)
        keys = {f.metadata.get("key") or f.name for f in fields
                if not f.metadata.get("hidden")}
        need = {f.metadata.get("key") or f.name for f in fields
                if not f.metadata.get("omit") and not f.metadata.get("hidden")
                and f.default is MISSING and f.default_factory is MISSING}
        return need <= value.keys() <= keys
    if tp is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(tp, type) and isinstance(value, tp)


def _decode(tp: Any, value: Any) -> Any:
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
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        hints = _hints(tp)
        given = {}
        for f in dataclasses.fields(tp):
            key = f.metadata.get("key") or f.name
            if key in value:
                given[f.name] = _decode(hints[f.name], value[key])
            elif f.metadata.get("omit"):
                given[f.name] = None
        return tp(**given)
    return value


class ScopeRef(Record):
    """The scoped index an answer comes from (`--scope`)."""

    name: str
    stale: bool
    reason: str | None


class IndexInfo(Record):
    """Where every answer comes from: the index's commit and what changed since."""

    source_commit: str | None
    built_at: str | None
    stale_count: int
    """Notes changed since the index: survives a budget, the list is cut first."""
    stale_notes: tuple[str, ...]
    overlaid: bool
    origin: str
    scope: ScopeRef | None = json_field(default=None, omit=True)


class Truncated(Record):
    """What `payload.fit` cut to keep an answer within its budget."""

    max_tokens: int
    tokens: int
    dropped: dict[str, int]
    shortened: list[str]
