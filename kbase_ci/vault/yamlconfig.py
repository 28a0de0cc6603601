"""YAML settings into frozen records, every error located at file, line and key.

`build_section` reads a `Section`'s (or a frozen dataclass's) type hints, so declaring a
class declares a section of `.kbase.yml`; the `*_pos` helpers give the 1-based line and
column of a key, a value or a list item of ruamel's round-trip nodes (plain data has
none: (1, 1) or the fallback). Used by `config` and by the sections that parse
themselves (`typeconfig`, `scopeconfig`).
"""

from __future__ import annotations

import dataclasses
import re
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


MAX_CONFIG_BYTES = 1 << 20
"""Largest `.kbase.yml` read: a real one is a few KB."""
MAX_DEPTH = 64
"""Deepest nesting of a `.kbase.yml` (flow `[`/`{`, indented blocks, `- - -` items); the
deepest real setting is 4 levels. ruamel's scanner is quadratic in flow depth: 3,000
levels took 11 s to refuse (issue 38)."""
MAX_VALUES = 10_000
"""Most values (lines, flow items) in a `.kbase.yml`: ruamel's round-trip loader takes
~50 us a value, and 200k `vault.exclude` globs ran for over a minute (issue 38)."""
MAX_ITEMS = 1_000
"""Most items of one list or mapping setting (globs, tags, paths, types)."""


def check_shape(text: str, display: str) -> None:
    """ConfigError at the first place where `text` is larger, deeper or holds more values
    than a kbase config may (`MAX_CONFIG_BYTES`, `MAX_DEPTH`, `MAX_VALUES`): one linear
    pass, before the YAML parser sees it (`_Shape`)."""
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(f"larger than {MAX_CONFIG_BYTES} characters: not a kbase config",
                          display)
    shape = _Shape(display)
    for row, line in enumerate(text.split("\n"), 1):
        shape.line(row, line)


# Patterns as text, compiled on first use (re caches them): every hook run imports this
# module, and only a config being parsed needs them.
_SPECIAL = r"""[][{},:'"#!&*?-]"""
_DOUBLE_END = r'["\\]'
_PROPERTY_END = r"[ \t,\[\]{}]|$"
# `key: |`, `- >-`, `- key: |2`, `? |`, with a tag or anchor: the lines below it that are
# indented more are its text. (Matched from each `:`, `?` or `-`: one with nested
# repeats, `(?:-[ \t]+)*...`, backtracked quadratically on a line of `- - - -`.)
_BLOCK_SCALAR = (r"(?:^|[:?-][ \t]+)(?:[!&][^ \t]*[ \t]+)*[|>][0-9+-]*[ \t]*"
                 r"(?:#.*)?$")


def _quote_end(line: str, i: int, quote: str) -> int:
    """Where a quoted scalar open at `line[i]` ends (after its closing quote), or -1
    when it goes on past the line: `''` is a quote inside single quotes, a backslash
    escapes the next character inside double ones."""
    if quote == "'":
        while (j := line.find("'", i)) >= 0:
            if line[j + 1:j + 2] != "'":
                return j + 1
            i = j + 2
        return -1
    double_end = re.compile(_DOUBLE_END)
    while (m := double_end.search(line, i)) is not None:
        if m.group() == '"':
            return m.end()
        i = m.end() + 1  # the escaped character
    return -1


class _Shape:
    """YAML's nesting, read as its scanner reads it but without building anything
    (state: the flow depth, the block indentation stack, an open quoted scalar).

    A bracket counts where YAML opens a collection (anywhere in a flow; in a block only
    where a node starts, not inside `key: plain [text`), a quote opens only where a node
    starts (after `[`, `{`, `,`, `: `, a line's `- `, a tag or an anchor), comments and
    block scalars' text count as values only. What it cannot tell makes it count more,
    never less: no bracket YAML nests on hides inside what the pass takes for a string."""

    def __init__(self, display: str) -> None:
        self.display = display
        self.depth = self.values = 0
        self.indents: list[int] = []
        self.quote = ""
        self.start = True
        """Whether a node may start here (a quote or bracket opens one)."""
        self.closed = False
        """Whether the last token closed a quoted scalar or a flow (`"k":v` is a key)."""
        self.literal: int | None = None
        """Indentation of the line of an open block scalar (`key: |`)."""
        self._special, self._property_end, self._block_scalar = (
            re.compile(_SPECIAL), re.compile(_PROPERTY_END), re.compile(_BLOCK_SCALAR))

    def line(self, row: int, line: str) -> None:
        body = line.lstrip(" ")
        indent = len(line) - len(body)
        if self.literal is not None:
            if not body.strip() or indent > self.literal:
                self.values += bool(body.strip())
                self._limit(0, row, indent + 1)
                return
            self.literal = None
        if not self.quote and self.depth == 0:
            if not body.strip() or body.startswith("#"):
                return
            while self.indents and self.indents[-1] > indent:
                self.indents.pop()
            if not self.indents or self.indents[-1] < indent:
                self.indents.append(indent)
            self.start = True
            if self._block_scalar.search(body):
                self.literal = indent
        self._scan(row, line)
        self.values += 1
        self._limit(0, row, 1)
        if self.depth == 0:
            self.quote = ""  # block context: a quote is not followed past its line

    def _scan(self, row: int, line: str) -> None:
        i, n, levels = 0, len(line), 0
        while i < n:
            if self.quote:
                i = _quote_end(line, i, self.quote)
                if i < 0:
                    return
                self.quote, self.start, self.closed = "", False, True
                continue
            m = self._special.search(line, i)
            at = m.start() if m is not None else n
            if line[i:at].strip():  # plain text: no node starts inside it
                self.start = self.closed = False
            if m is None:
                return
            c, i = m.group(), at + 1
            spaced = line[i:i + 1] in ("", " ", "\t")
            if c == "#" and (at == 0 or line[at - 1] in " \t"):
                return
            if c in "'\"" and self.start:
                self.quote = c
            elif c in "[{" and (self.start or self.depth):
                self.depth += 1
                self.values += 1
                self.start, self.closed = True, False
                self._limit(levels, row, at + 1)
            elif c in "]}" and self.depth:
                self.depth -= 1
                self.start, self.closed = False, True
            elif c == "," and self.depth:
                self.values += 1
                self.start, self.closed = True, False
                self._limit(levels, row, at + 1)
            elif c == ":" and (spaced or self.closed):
                self.start, self.closed = True, False
                if not self.depth:  # `a: b: c`, `: :`: a mapping in the value
                    levels += 1
                    self._limit(levels, row, at + 1)
            elif c in "-?" and spaced and not self.depth and self.start:
                levels += 1  # `- - - x`, `? ? x`: each item a level of its own
                self._limit(levels, row, at + 1)
            elif c in "!&*" and self.start:  # a tag, an anchor, an alias: one word
                end = self._property_end.search(line, i)
                i = end.start() if end is not None else n
                self.start = c != "*"
            elif not (c == "?" and spaced and self.start):  # `? ` in a flow: a key
                self.start = self.closed = False

    def _limit(self, levels: int, line: int, col: int) -> None:
        """`levels`: those the line opened in block context (`- - x`, `a: b: c`)."""
        if self.depth + len(self.indents) + levels > MAX_DEPTH:
            raise ConfigError(f"nested more than {MAX_DEPTH} levels deep: not a kbase "
                              "config", self.display, line, col)
        if self.values > MAX_VALUES:
            raise ConfigError(f"more than {MAX_VALUES} values: not a kbase config",
                              self.display, line, col)


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
        too_many(value, display, where, pos)
        return tuple(
            convert(args[0], v, display, f"{where}[{i}]", item_pos(value, i, pos))
            for i, v in enumerate(value)
        )
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"`{where}` must be a mapping", display, *pos)
        too_many(value, display, where, pos)
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


def too_many(value: list[Any] | dict[Any, Any], display: str, where: str, pos: Pos) -> None:
    """ConfigError at the first item past `MAX_ITEMS` of a list or mapping setting."""
    if len(value) <= MAX_ITEMS:
        return
    at = item_pos(value, MAX_ITEMS, pos) if isinstance(value, list) else \
        key_pos(value, list(value)[MAX_ITEMS])
    raise ConfigError(f"`{where}` has {len(value)} items, more than the {MAX_ITEMS} a "
                      "setting may have", display, *at)


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
