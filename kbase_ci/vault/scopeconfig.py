"""What a scope selects: normalised selectors from `.kbase.yml` or the command line.

A scope is `include` minus `exclude`; each is a set of (kind, value) selectors. Values
may come as lists or as comma/newline separated strings; they are trimmed,
deduplicated and sorted, so the same declaration always gives the same selectors (and
the same bytes in the scope's manifest).
"""

from __future__ import annotations

import re
from typing import Any

from kbase_ci.errors import ConfigError, UsageError
from kbase_ci.typedjson import Record, json_field
from kbase_ci.vault.yamlconfig import item_pos, key_pos, value_pos

KINDS = ("domain", "path", "tag", "type", "note")
"""domain (shard domain), path (glob, `**` crosses folders), tag (hierarchical: `rust`
matches `rust/async`), type (frontmatter `type`), note (title, alias or file name);
`*` is a wildcard in every kind."""
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")

Selector = tuple[str, str]


def split_values(value: Any) -> list[str]:
    """Comma/newline separated strings and lists of them -> trimmed, non-empty values."""
    items = value if isinstance(value, list | tuple) else [value]
    out: list[str] = []
    for item in items:
        out.extend(v.strip() for v in re.split(r"[,\n]", str(item)) if v.strip())
    return out


def normalise(kind: str, value: str) -> str:
    value = value.strip()
    if kind == "tag":
        value = value.lstrip("#")
    return value.rstrip("/") if kind in ("tag", "domain") else value


def _grouped(pairs: tuple[Selector, ...]) -> dict[str, list[str]]:
    """{kind: [values]}: what the manifest records."""
    out: dict[str, list[str]] = {}
    for kind, value in pairs:
        out.setdefault(kind, []).append(value)
    return out


class ScopeSpec(Record):
    include: tuple[Selector, ...] = json_field(default=(), as_json=_grouped)
    exclude: tuple[Selector, ...] = json_field(default=(), as_json=_grouped)

    @classmethod
    def from_pairs(cls, include: list[Selector], exclude: list[Selector]) -> ScopeSpec:
        def tidy(pairs: list[Selector]) -> tuple[Selector, ...]:
            return tuple(sorted({(k, normalise(k, v)) for k, v in pairs if normalise(k, v)}))
        return cls(tidy(include), tidy(exclude))

    @property
    def empty(self) -> bool:
        return not self.include and not self.exclude


def check_name(name: str) -> str:
    if not NAME_RE.fullmatch(name):
        raise UsageError(f"scope name {name!r} is not valid: use letters, digits, `.`, `_` "
                         "and `-` (at most 64, starting with a letter or digit)")
    return name


def _pairs(value: Any, display: str, where: str, pos: tuple[int, int]) -> list[Selector]:
    if value is None:
        return []
    out: list[Selector] = []
    if isinstance(value, dict):
        for kind, values in value.items():
            if kind not in KINDS:
                raise ConfigError(f"`{where}.{kind}`: unknown selector kind; use one of "
                                  f"{', '.join(KINDS)}", display, *key_pos(value, kind))
            if values is None or isinstance(values, dict) or (
                    isinstance(values, list) and any(isinstance(v, dict | list)
                                                     for v in values)):
                raise ConfigError(f"`{where}.{kind}` must be a string or a list of strings",
                                  display, *value_pos(value, kind, pos))
            out.extend((str(kind), v) for v in split_values(values))
        return out
    if isinstance(value, str | list):  # ["domain: rust", "tag: rust/*"]
        items = value if isinstance(value, list) else [value]
        for i, item in enumerate(items):
            at = item_pos(value, i, pos) if isinstance(value, list) else pos
            for text in split_values(item):
                kind, sep, rest = text.partition(":")
                if not sep or kind.strip() not in KINDS:
                    raise ConfigError(f"`{where}`: {text!r} is not `KIND: VALUE` with KIND "
                                      f"one of {', '.join(KINDS)}", display, *at)
                out.append((kind.strip(), rest.strip()))
        return out
    raise ConfigError(f"`{where}` must be a mapping of selector kinds to values",
                      display, *pos)


def parse_scopes(value: Any, display: str, where: str,
                 pos: tuple[int, int]) -> dict[str, ScopeSpec]:
    """`scopes:` -> {name: ScopeSpec}, every error located."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"`{where}` must be a mapping of scope names", display, *pos)
    out: dict[str, ScopeSpec] = {}
    for name, body in value.items():
        kpos = key_pos(value, name)
        if not NAME_RE.fullmatch(str(name)):
            raise ConfigError(f"`{where}.{name}`: scope names use letters, digits, `.`, `_` "
                              "and `-`", display, *kpos)
        vpos = value_pos(value, name, kpos)
        if not isinstance(body, dict):
            raise ConfigError(f"`{where}.{name}` must be a mapping with `include` and/or "
                              "`exclude`", display, *vpos)
        for key in body:
            if key not in ("include", "exclude"):
                raise ConfigError(f"unknown key `{where}.{name}.{key}`; known keys: include, "
                                  "exclude", display, *key_pos(body, key))
        inc = _pairs(body.get("include"), display, f"{where}.{name}.include",
                     value_pos(body, "include", vpos))
        exc = _pairs(body.get("exclude"), display, f"{where}.{name}.exclude",
                     value_pos(body, "exclude", vpos))
        spec = ScopeSpec.from_pairs(inc, exc)
        if not spec.include:
            raise ConfigError(f"`{where}.{name}` selects nothing: give it an `include`",
                              display, *vpos)
        out[str(name)] = spec
    return dict(sorted(out.items()))
