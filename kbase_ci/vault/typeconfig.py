"""The `types:` section of `.kbase.yml`: note types merged over the built-ins.

```yaml
types:
  handover:                      # a built-in name: override it
    fields: {reviewer: {type: string}, completes: {required: false}}
    sections: {Risks: {weight: 5}, Key Decisions: {aliases: [Choices]}}
    drop: [Discovered Issues]
  incident:                      # a new type
    extends: discovery           # optional: start from another type
    match: {type: [incident], paths: ["incidents/**"]}
```

A field or section entry changes only the keys it names; `rules:` and `match:` replace
the base's. Every error names file, line and key, like the rest of config.py: key
types are checked by `yamlconfig.build_section`; the cross-references (a rule naming a
section the type lacks, an enum without values) are checked here, on the YAML nodes,
which still carry their positions.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from kbase_ci.errors import ConfigError
from kbase_ci.parse.anchors import normalize_heading
from kbase_ci.vault.notetypes import (
    ContentKind,
    FieldKind,
    FieldSpec,
    Match,
    NoteType,
    Rule,
    SectionSpec,
)
from kbase_ci.vault.yamlconfig import build_section

Pos = tuple[int, int]


@dataclass(frozen=True)
class FieldConfig:
    type: FieldKind | None = None
    required: bool | None = None
    values: tuple[str, ...] | None = None
    many: bool | None = None
    target: str | None = None
    weight: int | None = None
    help: str | None = None


@dataclass(frozen=True)
class SectionConfig:
    aliases: tuple[str, ...] | None = None
    required: bool | None = None
    content: ContentKind | None = None
    values: tuple[str, ...] | None = None
    field: str | None = None
    weight: int | None = None
    help: str | None = None


@dataclass(frozen=True)
class RuleConfig:
    when: dict[str, tuple[str, ...]] = field(default_factory=dict)
    require: tuple[str, ...] = ()
    weight: int = 10


@dataclass(frozen=True)
class MatchConfig:
    type: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class TypeConfig:
    extends: str | None = None
    enabled: bool = True
    match: MatchConfig | None = None
    folder: str | None = None
    fields: dict[str, Any] | None = None
    sections: dict[str, Any] | None = None
    drop: tuple[str, ...] = ()
    rules: tuple[RuleConfig, ...] | None = None


def parse_types(value: Any, display: str, where: str, pos: Pos,
                builtin: tuple[NoteType, ...]) -> tuple[NoteType, ...]:
    if value is None:
        return builtin
    if not isinstance(value, dict):
        raise ConfigError(f"`{where}` must be a mapping of type names", display, *pos)
    types = {t.name: t for t in builtin}
    targets: list[tuple[str, str, Pos]] = []
    for name, raw in value.items():
        name = str(name)
        tw = f"{where}.{name}"
        raw = {} if raw is None else raw
        cfg = build_section(TypeConfig, raw, display, tw, at(value, name))
        if not cfg.enabled:
            types.pop(name, None)
            continue
        base = _base(types, name, cfg.extends, display, tw, at(raw, "extends"))
        merged = _merge(base, cfg, raw, display, tw, targets)
        _validate(merged, raw, display, tw)
        types[name] = merged
    for tname, target, tpos in targets:
        if target not in types:
            known = ", ".join(types)
            raise ConfigError(f"`{tname}`: no note type `{target}`; known: {known}",
                              display, *tpos)
    return tuple(types.values())


def _base(types: dict[str, NoteType], name: str, extends: str | None, display: str,
          tw: str, pos: Pos) -> NoteType:
    if extends is not None:
        src = types.get(extends)
        if src is None:
            raise ConfigError(f"`{tw}.extends`: no note type `{extends}`; known: "
                              f"{', '.join(types)}", display, *pos)
        return src._replace(name=name, match=Match(types=(name,)), folder=None)
    return types.get(name) or NoteType(name, Match(types=(name,)))


def _merge(base: NoteType, cfg: TypeConfig, raw: Any, display: str, tw: str,
           targets: list[tuple[str, str, Pos]]) -> NoteType:
    fields = {f.name: f for f in base.fields}
    sections = list(base.sections)
    for i, name in enumerate(cfg.drop):
        key = normalize_heading(name)
        hit = [s for s in sections if key in {normalize_heading(n) for n in s.names}]
        if hit:
            sections.remove(hit[0])
        elif name in fields:
            del fields[name]
        else:
            raise ConfigError(f"`{tw}.drop[{i}]`: `{base.name}` has no field or section "
                              f"`{name}`", display, *at(raw, "drop", i))
    for fname, fraw in _entries(raw, "fields", display, tw):
        fw = f"{tw}.fields.{fname}"
        fc = build_section(FieldConfig, {} if fraw is None else fraw, display, fw,
                           at(raw, "fields", fname))
        changes = _set(fc, {"type": "kind"})
        if fc.values and fc.type is None:
            changes["kind"] = "enum"
        spec = (fields.get(fname) or FieldSpec(fname))._replace(**changes)
        if spec.kind == "enum" and not spec.values:
            raise ConfigError(f"`{fw}`: an enum field needs `values`", display,
                              *at(raw, "fields", fname, key=True))
        if fc.weight is not None and fc.weight < 0:
            raise ConfigError(f"`{fw}.weight` must not be negative", display,
                              *at(raw, "fields", fname, "weight"))
        if fc.target is not None:
            targets.append((f"{fw}.target", fc.target, at(raw, "fields", fname, "target")))
        fields[fname] = spec
    for sname, sraw in _entries(raw, "sections", display, tw):
        sw = f"{tw}.sections.{sname}"
        sc = build_section(SectionConfig, {} if sraw is None else sraw, display, sw,
                           at(raw, "sections", sname))
        if sc.weight is not None and sc.weight < 0:
            raise ConfigError(f"`{sw}.weight` must not be negative", display,
                              *at(raw, "sections", sname, "weight"))
        key = normalize_heading(sname)
        idx = next((i for i, s in enumerate(sections)
                    if key in {normalize_heading(n) for n in s.names}), None)
        if idx is None:
            sections.append(SectionSpec(sname)._replace(**_set(sc, {})))
        else:
            sections[idx] = sections[idx]._replace(**_set(sc, {}))
    rules = base.rules
    if cfg.rules is not None:
        rules = tuple(Rule(tuple((k, tuple(v.lower() for v in vals))
                                 for k, vals in r.when.items()), r.require, r.weight)
                      for r in cfg.rules)
    match = base.match
    if cfg.match is not None:
        m = cfg.match
        match = Match(m.type, m.tags, m.paths)
        if not (m.type or m.tags or m.paths):
            raise ConfigError(f"`{tw}.match` needs `type`, `tags` or `paths`", display,
                              *at(raw, "match", key=True))
    folder = cfg.folder if cfg.folder is not None else base.folder
    return NoteType(base.name, match, tuple(fields.values()), tuple(sections), rules, folder)


def _validate(t: NoteType, raw: Any, display: str, tw: str) -> None:
    """Rules must name the type's own fields and sections, and only values they can take."""
    for i, rule in enumerate(t.rules):
        rw = f"{tw}.rules[{i}]"
        if not rule.when or not rule.require:
            raise ConfigError(f"`{rw}` needs both `when` and `require`", display,
                              *at(raw, "rules", i))
        for key, vals in rule.when:
            allowed = _values_of(t, key)
            if allowed is None:
                raise ConfigError(f"`{rw}.when.{key}`: `{t.name}` has no field or section "
                                  f"`{key}`", display, *at(raw, "rules", i, "when", key,
                                                            key=True))
            bad = [v for v in vals if allowed and v not in allowed]
            if bad:
                raise ConfigError(f"`{rw}.when.{key}`: `{bad[0]}` is not one of "
                                  f"{' | '.join(allowed)}", display,
                                  *at(raw, "rules", i, "when", key))
        for j, name in enumerate(rule.require):
            if t.field_spec(name) is None and t.section_spec(name) is None:
                raise ConfigError(f"`{rw}.require[{j}]`: `{t.name}` has no field or section "
                                  f"`{name}`", display, *at(raw, "rules", i, "require", j))


def _values_of(t: NoteType, key: str) -> tuple[str, ...] | None:
    """Values `key` can take (() when free text); None when the type has no such key."""
    f = t.field_spec(key)
    if f is not None:
        return ("true", "false") if f.kind == "boolean" else tuple(v.lower() for v in f.values)
    s = next((s for s in t.sections if s.field and s.field.lower() == key.lower()), None)
    s = s or t.section_spec(key)
    if s is not None:
        return tuple(v.lower() for v in s.values)
    return None


def _entries(raw: Any, key: str, display: str, tw: str) -> list[tuple[str, Any]]:
    value = raw.get(key) if isinstance(raw, dict) else None
    if value is None:
        return []
    if not isinstance(value, dict):  # build_section already let only mappings through
        raise ConfigError(f"`{tw}.{key}` must be a mapping", display, *at(raw, key))
    return [(str(k), v) for k, v in value.items()]


def _set(cfg: Any, rename: dict[str, str]) -> dict[str, Any]:
    """The keys a user wrote (non-None), renamed to the spec's attribute names."""
    return {rename.get(f.name, f.name): getattr(cfg, f.name)
            for f in dataclasses.fields(cfg) if getattr(cfg, f.name) is not None}


def at(node: Any, *path: str | int, key: bool = False) -> Pos:
    """1-based line and column of the value at `path` in ruamel YAML nodes (of the last
    key itself with key=True); the deepest position found when the path is cut short."""
    found: Pos = (1, 1)
    cur = node
    for i, step in enumerate(path):
        try:
            if isinstance(step, int):
                line, col = cur.lc.item(step)
            elif key and i == len(path) - 1:
                line, col = cur.lc.key(step)
            else:
                line, col = cur.lc.value(step)
            found = (line + 1, col + 1)
            cur = cur[step]
        except (AttributeError, KeyError, TypeError, IndexError):
            break
    return found
