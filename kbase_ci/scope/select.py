"""Evaluate a scope's selectors on notes: the main index's notes table, or a fresh parse
(the query overlay asks whether a note added since belongs to the scope)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kbase_ci.index.layout import NoteRow
from kbase_ci.parsed import ParsedNote
from kbase_ci.typedjson import Record, json_field
from kbase_ci.vault.globs import match as glob_match
from kbase_ci.vault.globs import wildcard_match
from kbase_ci.vault.scopeconfig import ScopeSpec, Selector
from kbase_ci.vault.yamlconfig import close_matches


@dataclass(frozen=True, slots=True)
class NoteFacts:
    """What selectors look at."""

    path: str
    title: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    domain: str
    type: str

    @classmethod
    def from_row(cls, row: NoteRow) -> NoteFacts:
        fm = row.frontmatter or {}
        kind = fm.get("type") if isinstance(fm, dict) else None
        return cls(row.path, row.title, tuple(row.aliases), tuple(row.tags), row.domain,
                   kind if isinstance(kind, str) else "")

    @classmethod
    def from_parsed(cls, note: ParsedNote, domain: str) -> NoteFacts:
        kind = note.frontmatter.get("type")
        return cls(note.path, note.title, note.aliases,
                   tuple(sorted({t.name for t in note.tags})), domain,
                   kind if isinstance(kind, str) else "")


def _wild(pattern: str, text: str) -> bool:
    return wildcard_match(pattern.casefold(), text.casefold())


def _tag(pattern: str, tag: str) -> bool:
    """`rust` matches `rust` and `rust/async`; `rust/*` matches below `rust` only."""
    p, t = pattern.casefold(), tag.casefold()
    return wildcard_match(p, t) or wildcard_match(p + "/*", t)


def matches(sel: Selector, note: NoteFacts) -> bool:
    kind, value = sel
    if kind == "domain":
        return _wild(value, note.domain)
    if kind == "path":
        return glob_match(value, note.path)
    if kind == "tag":
        return any(_tag(value, t) for t in note.tags)
    if kind == "type":
        return bool(note.type) and _wild(value, note.type)
    stem = note.path.rsplit("/", 1)[-1].removesuffix(".md")
    return any(_wild(value, n) for n in (note.title, *note.aliases, stem, note.path))


def selected(spec: ScopeSpec, note: NoteFacts) -> bool:
    return (any(matches(s, note) for s in spec.include)
            and not any(matches(s, note) for s in spec.exclude))


class Unmatched(Record):
    """A selector that matched no note."""

    side: str
    """include or exclude."""
    selector: str
    """`kind: value`."""
    hint: str


class Selection(Record):
    paths: tuple[str, ...] = json_field(key="notes")
    """Selected notes, sorted."""
    unmatched: tuple[Unmatched, ...]


def select(spec: ScopeSpec, notes: Iterable[NoteFacts]) -> Selection:
    facts = list(notes)
    used: set[tuple[str, Selector]] = set()
    paths: list[str] = []
    for n in facts:
        hits_in = [s for s in spec.include if matches(s, n)]
        hits_out = [s for s in spec.exclude if matches(s, n)]
        used.update(("include", s) for s in hits_in)
        used.update(("exclude", s) for s in hits_out)
        if hits_in and not hits_out:
            paths.append(n.path)
    unmatched = tuple(Unmatched(side, f"{s[0]}: {s[1]}", hint(s, facts))
                      for side, sels in (("include", spec.include), ("exclude", spec.exclude))
                      for s in sels if (side, s) not in used)
    return Selection(tuple(sorted(paths)), unmatched)


def hint(sel: Selector, facts: Sequence[NoteFacts]) -> str:
    """The nearest existing value, or what the kind expects."""
    kind, value = sel
    pool: set[str] = set()
    if kind == "domain":
        pool = {n.domain for n in facts}
    elif kind == "tag":
        pool = {t for n in facts for t in n.tags}
    elif kind == "type":
        pool = {n.type for n in facts if n.type}
    elif kind == "note":
        pool = {n.title for n in facts}
    elif kind == "path":
        pool = {n.path.rsplit("/", 1)[0] + "/**" for n in facts if "/" in n.path}
    near = close_matches(value, sorted(pool), n=3, cutoff=50)
    if near:
        return "did you mean " + ", ".join(f"`{kind}: {v}`" for v in near) + "?"
    if kind == "path":
        return "path globs are relative to the vault root; `*` stays in one folder, `**` " \
               "crosses folders"
    known = ", ".join(sorted(pool)[:8])
    return f"known {kind} values: {known}" if known else f"no note has a {kind}"
