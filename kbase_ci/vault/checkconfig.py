"""The `.kbase.yml` sections the checks read: `checks:` (which run, how much each finding
weighs, where each word was written), `tags:` and `frontmatter:` (the policies), and the
`Level` a finding weighs. Built from YAML as every section is (`yamlconfig`); `config`
holds them in `Config`.
"""

from __future__ import annotations

import typing
from typing import Any

from kbase_ci.errors import ConfigError
from kbase_ci.typedjson.record import json_field
from kbase_ci.vault.userregex import compile_pattern
from kbase_ci.vault.yamlconfig import Pos, Section, build_section, item_pos, key_pos, value_pos

Level = typing.Literal["error", "warning", "off"]
"""How much a finding weighs: fails a check, is reported, or is not reported."""


class ChecksConfig(Section):
    """`checks:` in `.kbase.yml`: which checks run, and how much each finding weighs."""

    select: tuple[str, ...] = ()
    """Codes or check names to run (empty: all)."""
    ignore: tuple[str, ...] = ()
    """Codes or check names to skip."""
    severity: dict[str, Level] = json_field(default_factory=dict)
    """Code, code prefix or check name -> `error`, `warning` or `off` (not run)."""
    per_path: dict[str, tuple[str, ...]] = json_field(default_factory=dict)
    """path glob -> codes, code prefixes or check names not reported in matching notes."""
    where: dict[str, Pos] = json_field(default_factory=dict)
    """(line, col) of each word above, by `select[i]`, `severity.WORD`, `per_path.GLOB[i]`,
    so the checks can place an unknown code (they know the codes; this layer does not).
    Empty when the settings came from the config memo: `load_config` again to place.
    Filled in by code (`code_only`), and neither compared nor shown."""

    code_only = frozenset({"where"})

    def _values(self) -> tuple[Any, ...]:  # equality and hash: all but `where`
        return (self.select, self.ignore, self.severity, self.per_path)

    def __repr__(self) -> str:
        return (f"ChecksConfig(select={self.select!r}, ignore={self.ignore!r}, "
                f"severity={self.severity!r}, per_path={self.per_path!r})")

    def words(self) -> list[tuple[str, str]]:
        """(word, its key in `where`) for every code or check name these settings name."""
        return [*((w, f"select[{i}]") for i, w in enumerate(self.select)),
                *((w, f"ignore[{i}]") for i, w in enumerate(self.ignore)),
                *((w, f"severity.{w}") for w in self.severity),
                *((w, f"per_path.{g}[{i}]") for g, ws in self.per_path.items()
                  for i, w in enumerate(ws))]

    @classmethod
    def from_config(cls, value: Any, display: str, where: str, pos: Pos) -> ChecksConfig:
        section: ChecksConfig = build_section(cls, value, display, where, pos)
        if not hasattr(value, "lc"):  # plain data (the config memo): no positions
            return section
        found: dict[str, Pos] = {}
        for name in ("select", "ignore"):
            seq = value.get(name)
            at = value_pos(value, name, pos)
            for i in range(len(getattr(section, name))):
                found[f"{name}[{i}]"] = item_pos(seq, i, at) if isinstance(seq, list) else at
        sev = value.get("severity")
        for word in section.severity:
            found[f"severity.{word}"] = key_pos(sev, word)
        paths = value.get("per_path")
        for glob, words in section.per_path.items():
            seq = paths.get(glob) if isinstance(paths, dict) else None
            at = value_pos(paths, glob, pos)
            for i in range(len(words)):
                found[f"per_path.{glob}[{i}]"] = (item_pos(seq, i, at) if isinstance(seq, list)
                                                  else at)
        return section._replace(where=found)



ValueType = typing.Literal["string", "number", "integer", "boolean", "date", "list", "mapping",
                           "link", "list[string]", "list[link]"]


class TagsConfig(Section):
    """`tags:` in `.kbase.yml`: the tag policy."""

    allowed: tuple[str, ...] = ()
    """Tag names every tag must be (case-insensitive; `*` matches any text: `project/*`)."""
    pattern: str | None = None
    """Regular expression every tag name (without `#`) must match in full."""
    vocabularies: dict[str, tuple[str, ...]] = json_field(default_factory=dict)
    """prefix -> values: `status: [active, done]` allows `#status/active`, not `#status/x`."""
    required: dict[str, tuple[str, ...]] = json_field(default_factory=dict)
    """path glob -> tags each matching note carries (`project` is met by `project/alpha`)."""
    case_duplicates: bool = True
    """Report a tag spelled in another case elsewhere in the vault (`#Rust` vs `#rust`)."""

    @classmethod
    def from_config(cls, value: Any, display: str, where: str,
                    pos: Pos) -> TagsConfig:
        section: TagsConfig = build_section(cls, value, display, where, pos)
        if section.pattern is not None:
            try:  # run on RE2, in linear time: a PR's config must not hang CI
                compile_pattern(section.pattern)
            except ValueError as exc:
                raise ConfigError(f"`{where}.pattern` is not a regular expression kbase can "
                                  f"match in linear time (RE2 syntax: no backreferences or "
                                  f"lookaround): {exc}", display,
                                  *value_pos(value, "pattern", pos)) from None
        return section


class FrontmatterConfig(Section):
    """`frontmatter:` in `.kbase.yml`: required keys and value types."""

    required: dict[str, tuple[str, ...]] = json_field(default_factory=dict)
    """path glob -> keys each matching note's frontmatter must have (non-empty)."""
    types: dict[str, ValueType] = json_field(default_factory=dict)
    """key -> type its value must have, wherever the key appears."""
    allowed: dict[str, tuple[Any, ...]] = json_field(default_factory=dict)
    """key -> the values it may take (each item, for a list value)."""

    @classmethod
    def from_config(cls, value: Any, display: str, where: str,
                    pos: Pos) -> FrontmatterConfig:
        section: FrontmatterConfig = build_section(cls, value, display, where, pos)
        raw = value.get("allowed") if isinstance(value, dict) else None
        for key, values in section.allowed.items():
            for i, v in enumerate(values):
                if v is None or isinstance(v, dict | list):
                    seq = raw.get(key) if isinstance(raw, dict) else None
                    at = item_pos(seq, i, value_pos(raw, key, pos))
                    raise ConfigError(f"`{where}.allowed.{key}[{i}]` must be a string, number "
                                      f"or boolean, not {v!r}", display, *at)
        return section
