"""Frontmatter: parser diagnostics (KB301-305), the `frontmatter:` policy of `.kbase.yml`
(required keys, value types, allowed values) and aliases that name another note.

Parsed records hold values but not the line of each key, so findings are first
collected, then located by reading the text of just the notes that have some.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kbase_ci.checks.checkcontext import CheckContext, nearest
from kbase_ci.checks.rules.valuetypes import describe, type_problem
from kbase_ci.parse.outline import note_title
from kbase_ci.parsed import Finding, ParsedNote
from kbase_ci.vault.globs import match

CODES = {
    "KB301": "frontmatter is not valid YAML",
    "KB302": "frontmatter repeats a key",
    "KB303": "frontmatter is not terminated by a `---` line",
    "KB304": "frontmatter is too large, nests too deeply or expands too far (YAML alias bomb)",
    "KB305": "frontmatter is not a mapping of properties",
    "KB310": "a key that `frontmatter.required` asks for at this path is missing or empty",
    "KB311": "a value does not have the type `frontmatter.types` gives its key",
    "KB312": "a value is not one of those `frontmatter.allowed` lists for its key",
    "KB313": "an alias is also another note's name or alias",
}
_PARSER_CODES = {"KB301", "KB302", "KB303", "KB304", "KB305"}
_ALIAS_KEYS = ("aliases", "alias")
_UNPARSED = {"KB002", "KB003"}
"""Binary or oversized notes: never parsed, so they have no frontmatter to judge."""


@dataclass(frozen=True, slots=True)
class _Problem:
    """A finding waiting for its position: at `key` (and `needle` in its value)."""

    code: str
    message: str
    key: str | None = None
    needle: str | None = None
    suggestion: str | None = None


def check(ctx: CheckContext) -> Iterator[Finding]:
    pending: list[tuple[ParsedNote, list[_Problem]]] = []
    collisions = _collisions(ctx)
    for note in ctx.focus_notes:
        diags = [d for d in note.diagnostics if d.code in _PARSER_CODES]
        for d in diags:
            yield Finding(note.path, d.line, d.col, d.code, d.message, severity=d.severity)
        if diags or any(d.code in _UNPARSED for d in note.diagnostics):
            continue  # the data is unreliable or absent; that error is what to fix first
        problems = [*_policy(ctx, note), *_alias_problems(note, collisions)]
        if problems:
            pending.append((note, problems))
    texts = _texts(ctx, [n for n, ps in pending if n.frontmatter_end and
                         any(p.key for p in ps)])
    for note, problems in pending:
        lines = texts.get(note.path)
        for p in problems:
            line, col = _locate(lines, note.frontmatter_end, p) if lines else (1, 1)
            yield Finding(note.path, line, col, p.code, p.message, suggestion=p.suggestion)


def _policy(ctx: CheckContext, note: ParsedNote) -> Iterator[_Problem]:
    cfg = ctx.config.frontmatter
    data = note.frontmatter
    for glob, keys in cfg.required.items():
        if not match(glob, note.path):
            continue
        for key in keys:
            if key not in data:
                where = "its frontmatter" if note.frontmatter_end else "frontmatter (it has none)"
                yield _Problem("KB310", f"missing frontmatter key `{key}`: notes matching "
                               f"`{glob}` must set it in {where} (frontmatter.required)")
            elif _empty(data[key]):
                yield _Problem("KB310", f"frontmatter key `{key}` is empty: notes matching "
                               f"`{glob}` must give it a value (frontmatter.required)", key)
    for key, kind in cfg.types.items():
        value = data.get(key)
        if value is None:
            continue  # absence and emptiness are `required`'s business

        why = type_problem(value, kind)
        if why is not None:
            yield _Problem("KB311", f"`{key}` {why} (frontmatter.types: {kind})", key)
    for key, allowed in cfg.allowed.items():
        value = data.get(key)
        if value is None:
            continue
        items = value if isinstance(value, list) else [value]
        bad = [v for v in items if not any(_same(v, a) for a in allowed)]
        if not bad:
            continue
        shown = ", ".join(str(a) for a in allowed)
        near = None
        if len(bad) == 1 and isinstance(bad[0], str):
            near = nearest(bad[0], [str(a) for a in allowed])
        hint = f"; did you mean `{near}`?" if near else ""
        yield _Problem("KB312", f"`{key}`: {', '.join(_value(v) for v in bad)} "
                       f"{'is' if len(bad) == 1 else 'are'} not allowed; use one of: {shown} "
                       f"(frontmatter.allowed){hint}", key,
                       needle=bad[0] if isinstance(bad[0], str) else None, suggestion=near)


def _empty(value: Any) -> bool:
    return value is None or value in ("", [], {}) or (isinstance(value, str)
                                                      and not value.strip())


def _same(value: Any, allowed: Any) -> bool:
    if isinstance(value, bool) or isinstance(allowed, bool):
        return value is allowed
    return bool(value == allowed)


def _value(v: Any) -> str:
    return f"`{v}`" if isinstance(v, str) else describe(v)


# -- aliases ------------------------------------------------------------------------

def _key(text: str) -> str:
    return unicodedata.normalize("NFC", text.strip()).lower()


def _collisions(ctx: CheckContext) -> dict[str, tuple[str, ...]]:
    """alias key -> every note claiming it (by name or alias), if any focus note has it."""
    among = [a for p in ctx.focus for a in ctx.store.summary(p).aliases]
    if not among:
        return {}
    return {_key(alias): owners for alias, owners in ctx.resolver.alias_collisions(among)}


def _alias_problems(note: ParsedNote, collisions: dict[str, tuple[str, ...]]
                    ) -> Iterator[_Problem]:
    seen: set[str] = set()
    own = _key(note_title(note.path))
    for alias in note.aliases:
        key = _key(alias)
        owners = collisions.get(key)
        # An alias equal to the note's own name adds no clash: notes sharing a name are
        # the links check's business (KB103), not this alias's.
        if owners is None or note.path not in owners or key in seen or key == own:
            continue
        seen.add(key)
        others = [p for p in owners if p != note.path]
        named = [p for p in others if _key(note_title(p)) == key]
        aliased = [p for p in others if p not in named]
        parts = []
        if named:
            parts.append(f"the name of {_paths(named)}")
        if aliased:
            parts.append(f"an alias of {_paths(aliased)}")
        yield _Problem("KB313", f"alias `{alias.strip()}` is also {' and '.join(parts)}; "
                       "a link to it cannot tell the notes apart", _ALIAS_KEYS[0],
                       needle=alias.strip())


def _paths(paths: list[str], most: int = 3) -> str:
    shown = ", ".join(f"`{p}`" for p in paths[:most])
    return shown + (f" and {len(paths) - most} more" if len(paths) > most else "")


# -- positions ----------------------------------------------------------------------

def _texts(ctx: CheckContext, notes: list[ParsedNote]) -> dict[str, list[str]]:
    vault = ctx.vault
    if vault is None or not notes:
        return {}
    # One batched read (a single `git cat-file`) warms the vault's cache for ctx.text.
    vault.read([nf for n in notes if (nf := vault.note(n.path)) is not None])
    out: dict[str, list[str]] = {}
    for n in notes:
        if vault.note(n.path) is not None:
            out[n.path] = ctx.text(n.path).split("\n")[:n.frontmatter_end]
    return out


def _locate(lines: list[str], end: int, p: _Problem) -> tuple[int, int]:
    """(line, col) of `p.key` in the frontmatter, or of `p.needle` in that key's value."""
    if p.key is None:
        return 1, 1
    keys = _ALIAS_KEYS if p.key in _ALIAS_KEYS else (p.key,)
    start = None
    for i in range(1, min(end, len(lines)) - 1):
        m = _TOP_KEY.match(lines[i])
        if m is not None and _unquote(m.group(1)).lower() in keys and (
                p.key in _ALIAS_KEYS or _unquote(m.group(1)) == p.key):
            start = i
            break
    if start is None:
        return 1, 1
    if p.needle:
        for i in range(start, min(end, len(lines)) - 1):
            if i > start and _TOP_KEY.match(lines[i]):
                break
            text = lines[i]
            key_match = _TOP_KEY.match(text) if i == start else None
            from_col = key_match.end() if key_match is not None else 0
            col = text.find(p.needle, from_col)
            if col >= 0:
                return i + 1, col + 1
    return start + 1, 1


_TOP_KEY = re.compile(r"""("[^"]*"|'[^']*'|[^\s#\-?:'"][^:]*?)[ \t]*:(?:[ \t]|$)""")


def _unquote(key: str) -> str:
    return key[1:-1] if key[:1] in "'\"" and key[-1:] == key[:1] and len(key) > 1 else key
