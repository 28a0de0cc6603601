"""YAML settings into frozen records, every error located at file, line and key.

`build_section` reads a `Section`'s (or a frozen dataclass's) type hints, so declaring a
class declares a section of `.kbase.yml`; the `*_pos` helpers give the 1-based line and
column of a key, a value or a list item of ruamel's round-trip nodes (plain data has
none: (1, 1) or the fallback). Used by `config` and by the sections that parse
themselves (`typeconfig`, `scopeconfig`).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from kbase_ci.errors import ConfigError
from kbase_ci.typedjson.record import Record

Pos = tuple[int, int]
SectionParser = Callable[[Any, str, str, Pos], Any]
"""(value, display, dotted key, position) -> the field's value: a field a `Section`
names in `parsers` (a dataclass: in `metadata["parse"]`) is built by it instead of by its
annotation."""


class Section(Record):
    """A `.kbase.yml` section, or a part of one: a frozen `Record`, not a dataclass,
    because every query loads the config and the ~17 config classes cost ~1 ms each as
    frozen dataclasses at import (~0.04 ms as records; docs/benchmarks.md, issue 32)."""

    parsers: ClassVar[dict[str, SectionParser]] = {}
    """field -> the parser that builds it from its YAML value (see `SectionParser`)."""
    code_only: ClassVar[frozenset[str]] = frozenset()
    """Fields filled in by code, never from YAML (unknown keys there)."""


def section_keys(cls: type[Any]) -> dict[str, SectionParser | None]:
    """The keys `.kbase.yml` may give section class `cls`, each with its own parser."""
    if issubclass(cls, Section):
        return {n: cls.parsers.get(n) for n in cls._fields if n not in cls.code_only}
    # Fields marked `metadata={"config": False}` are filled in by code, never from YAML.
    return {f.name: f.metadata.get("parse") for f in dataclasses.fields(cls)
            if f.metadata.get("config", True)}


def is_section(tp: Any) -> bool:
    """Whether annotation `tp` is a section class `build_section` builds."""
    return isinstance(tp, type) and (issubclass(tp, Section) or dataclasses.is_dataclass(tp))


def build_section(cls: type[Any], data: Any, display: str, where: str,
                  pos: Pos = (1, 1)) -> Any:
    """An instance of section class `cls` from the mapping `data` (`where`: its dotted
    key)."""
    if not isinstance(data, dict):
        raise ConfigError(f"`{where or 'top level'}` must be a mapping", display, *pos)
    hints = typing.get_type_hints(cls)
    fields = section_keys(cls)
    names = list(fields)
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        kpos = key_pos(data, key)
        dotted = f"{where}.{key}" if where else str(key)
        if key not in names:
            near = close_matches(str(key), names)
            hint = f"; did you mean `{near[0]}`?" if near else f"; known keys: {', '.join(names)}"
            raise ConfigError(f"unknown key `{dotted}`{hint}", display, *kpos)
        vpos = value_pos(data, key, kpos)
        parse = fields[key]
        kwargs[key] = (parse(value, display, dotted, vpos) if parse is not None
                       else convert(hints[key], value, display, dotted, vpos))
    return cls(**kwargs)


def close_matches(wanted: str, choices: Sequence[str], n: int = 1, cutoff: float = 60
                  ) -> list[str]:
    """Up to `n` of `choices` most like `wanted` (rapidfuzz `ratio` >= `cutoff`, best
    first): the one "did you mean" for short closed lists (config keys, scope values,
    tag vocabularies). rapidfuzz, not difflib: the same picks here (963 of 963 one-slip
    spellings of the config keys), ~300x faster on long lists (docs/checks.md)."""
    from rapidfuzz import fuzz, process  # only an error message needs a suggestion

    return [hit[0] for hit in process.extract(wanted, choices, scorer=fuzz.ratio, limit=n,
                                              score_cutoff=cutoff)]


def convert(tp: Any, value: Any, display: str, where: str, pos: Pos) -> Any:
    """Check `value` against the annotation `tp` and convert it (lists become tuples)."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return plain(value)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return convert(inner[0], value, display, where, pos)
    if origin is typing.Literal:
        if value not in args:
            allowed = " | ".join(str(a) for a in args)
            raise ConfigError(f"`{where}` must be one of {allowed}, not {value!r}", display, *pos)
        return value
    hook = getattr(tp, "from_config", None)
    if hook is not None:  # a section that parses itself (it needs the YAML positions)
        return hook(value, display, where, pos)
    if is_section(tp):
        return build_section(tp, value, display, where, pos)
    if origin is tuple:
        if isinstance(value, str):  # a single value where a list is expected
            value = [value]
        if not isinstance(value, list):
            raise ConfigError(f"`{where}` must be a list", display, *pos)
        return tuple(
            convert(args[0], v, display, f"{where}[{i}]", item_pos(value, i, pos))
            for i, v in enumerate(value)
        )
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"`{where}` must be a mapping", display, *pos)
        return {
            str(k): convert(args[1], v, display, f"{where}.{k}", value_pos(value, k, pos))
            for k, v in value.items()
        }
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"`{where}` must be true or false, not {value!r}", display, *pos)
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"`{where}` must be an integer, not {value!r}", display, *pos)
        return int(value)
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"`{where}` must be a number, not {value!r}", display, *pos)
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"`{where}` must be a string, not {value!r}", display, *pos)
        return str(value)
    raise TypeError(f"unsupported config annotation {tp!r}")  # a bug in a section class


def plain(value: Any) -> Any:
    """ruamel's nodes as plain dicts, lists and strings."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


def key_pos(data: Any, key: Any) -> Pos:
    try:
        line, col = data.lc.key(key)
        return line + 1, col + 1
    except (AttributeError, KeyError, TypeError):
        return (1, 1)


def value_pos(data: Any, key: Any, fallback: Pos) -> Pos:
    try:
        line, col = data.lc.value(key)
        return line + 1, col + 1
    except (AttributeError, KeyError, TypeError):
        return fallback


def item_pos(seq: Any, i: int, fallback: Pos) -> Pos:
    try:
        line, col = seq.lc.item(i)
        return line + 1, col + 1
    except (AttributeError, KeyError, TypeError, IndexError):
        return fallback
