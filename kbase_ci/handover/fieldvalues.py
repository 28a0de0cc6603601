"""Frontmatter field values judged against a `FieldSpec`: present, right type, allowed
value, and for links and issue ids, pointing at something that exists.

YAML shapes values in ways writers do not expect, and the messages say so: an unquoted
`completes: #12` is a comment (the value is null), an unquoted `answers: [[Q]]` is a
list holding a list (accepted as the link it was meant to be).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any

from kbase_ci.handover.placeholders import classify
from kbase_ci.handover.scoring import Missing
from kbase_ci.vault.notetypes import FieldSpec

ISSUE_ID = re.compile(r"^(?:#\d+|[A-Za-z][A-Za-z0-9_]*-\d+|[\w.-]+/[\w.-]+#\d+"
                      r"|https?://\S+/(?:issues|pull|pulls|merge_requests)/\d+)$")
_KIND_WORDS = {"integer": "a whole number", "number": "a number",
               "boolean": "true or false", "date": "a date (YYYY-MM-DD)"}

Resolve = Callable[[str, bool], "str | None"]
"""(text, is a bare `[[name]]`) -> the note it links, or None."""
TypeName = Callable[[str], "str | None"]
"""note path -> the name of its type, or None."""


def judge_field(spec: FieldSpec, present: bool, value: Any, line: int, resolve: Resolve,
                type_name: TypeName) -> tuple[float, list[Missing]] | None:
    """(fraction earned, problems); None when the field does not count (optional, absent)."""
    rule = f"field {spec.name}"
    if is_empty(value):
        if not spec.required:
            return None
        hint = ""
        if present and value is None and spec.kind in ("issue", "ref"):
            hint = ' (an unquoted #12 is a YAML comment: write "#12")'
        return 0.0, [Missing("KB403", rule, f"missing frontmatter field `{spec.name}`{hint}",
                             line)]
    bare = bare_wikilink(value)
    if isinstance(value, list) and not bare and not (spec.many or spec.kind == "list"):
        return 0.0, [Missing("KB404", rule, f"`{spec.name}` takes one value, not a list", line)]
    items = value if isinstance(value, list) and not bare else [value]
    problems = [p for v in items
                if (p := _judge(spec, v, line, resolve, type_name)) is not None]
    return (len(items) - len(problems)) / len(items), problems


def _judge(spec: FieldSpec, v: Any, line: int, resolve: Resolve,
           type_name: TypeName) -> Missing | None:
    rule, name = f"field {spec.name}", spec.name
    if isinstance(v, str) and classify(v) == "placeholder":
        return Missing("KB402", rule, f"`{name}` is a placeholder (`{v.strip()}`)", line)
    kind = spec.kind
    if kind in ("string", "list"):
        ok = not isinstance(v, dict | list)
        return None if ok else Missing("KB404", rule, f"`{name}` must be text", line)
    if kind == "enum":
        if str(v).lower() in {a.lower() for a in spec.values}:
            return None
        return Missing("KB404", rule, f"`{name}` must be one of {' | '.join(spec.values)}, "
                       f"not `{v}`", line)
    if kind in _KIND_WORDS:
        return None if _scalar_ok(kind, v) else Missing(
            "KB404", rule, f"`{name}` must be {_KIND_WORDS[kind]}, not `{v}`", line)
    return _reference(spec, v, line, resolve, type_name)


def _reference(spec: FieldSpec, v: Any, line: int, resolve: Resolve,
               type_name: TypeName) -> Missing | None:
    """`link`, `issue` and `ref` (either) fields."""
    rule, name = f"field {spec.name}", spec.name
    bare = bare_wikilink(v)
    s = str(v[0][0] if bare else v).strip()
    if spec.kind in ("issue", "ref") and ISSUE_ID.match(s):
        return None
    if spec.kind == "issue":
        return Missing("KB405", rule, f"`{name}` must be an issue id (#12, ABC-12), not `{s}`",
                       line)
    target = resolve(s, bare)
    code = "KB409" if spec.target else "KB405"
    want = f"an existing {spec.target}" if spec.target else "an existing note"
    if spec.kind == "ref":
        want += " or an issue id (#12, ABC-12)"
    if target is None:
        return Missing(code, rule, f"`{name}`: `{s}` is not {want}", line)
    if spec.target:
        got = type_name(target)
        if got is None or got.lower() != spec.target.lower():
            kind = f"a {got}" if got else "an untyped note"
            return Missing(code, rule, f"`{name}`: `{s}` is {kind} ({target}), not {want}",
                           line)
    return None


def _scalar_ok(kind: str, v: Any) -> bool:
    if kind == "boolean":
        return isinstance(v, bool)
    if kind == "integer":
        return isinstance(v, int) and not isinstance(v, bool)
    if kind == "number":
        return isinstance(v, int | float) and not isinstance(v, bool)
    s = str(v)  # dates arrive as ISO strings (the parser keeps frontmatter JSON-safe)
    try:
        dt.date.fromisoformat(s[:10])
    except ValueError:
        return False
    return len(s) == 10 or s[10] in "T "


def is_empty(v: Any) -> bool:
    return v is None or (isinstance(v, str | list | dict) and not v) or (
        isinstance(v, str) and not v.strip())


def bare_wikilink(v: Any) -> bool:
    """`answers: [[Q]]` unquoted: YAML reads a list holding a list of one name."""
    return (isinstance(v, list) and len(v) == 1 and isinstance(v[0], list)
            and len(v[0]) == 1 and isinstance(v[0][0], str))
