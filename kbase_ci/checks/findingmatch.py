"""Which findings a change introduced: the findings after it matched with those before.

One matcher for the PR report (`ci.prreport`: head against merge base) and the hook
(`kbase check --staged`: the staged state against HEAD). A finding after the change is
*new* unless the state before has the same finding, matched by (path after the change's
renames, code, message with positions and "did you mean" stripped): moving a paragraph
or renaming a note does not turn old problems into new ones. Of several identical
findings in one note, those on lines the change touched are the new ones. Findings
before it left unmatched were *fixed* by it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal

from kbase_ci.parsed import Finding

Status = Literal["new", "fixed", "pre-existing"]
AddedLines = Callable[[str], frozenset[int]]
"""Lines (after-side) the change added or rewrote in a note, by path."""
_POSITIONS = re.compile(r"\b(lines?|col(?:umn)?s?)\s+\d+(?:\s*[-–]\s*\d+)?|:\d+(?::\d+)?\b")
_SUGGESTION = re.compile(r";?\s*did you mean .*$", re.IGNORECASE | re.DOTALL)
_ORDER: dict[Status, int] = {"new": 0, "fixed": 1, "pre-existing": 2}


def match_key(f: Finding, renames: Mapping[str, str] | None = None) -> tuple[str, str, str]:
    """(path, code, message) with the before-side's renamed paths mapped to the after
    side's, and line and column numbers and suggestions dropped from the message."""
    renames = renames or {}
    message = f.message
    for old, new in renames.items():
        if old in message:
            message = message.replace(old, new)
    message = _POSITIONS.sub(lambda m: m.group(1) or "", _SUGGESTION.sub("", message))
    return renames.get(f.path, f.path), f.code, " ".join(message.split())


def mark(before: Iterable[Finding], after: Iterable[Finding], renames: Mapping[str, str],
         added: AddedLines | None = None) -> list[tuple[Status, Finding]]:
    """Every after-side finding as new or pre-existing, every unmatched before-side
    finding as fixed; new first, then fixed, then pre-existing, each in path order."""
    was_by_key: dict[tuple[str, str, str], list[Finding]] = {}
    for f in before:
        was_by_key.setdefault(match_key(f, renames), []).append(f)
    now_by_key: dict[tuple[str, str, str], list[Finding]] = {}
    for f in after:
        now_by_key.setdefault(match_key(f), []).append(f)
    out: list[tuple[Status, Finding]] = []
    for key, now in now_by_key.items():
        was = was_by_key.pop(key, [])
        extra = len(now) - len(was)
        if extra <= 0:
            out += [("pre-existing", f) for f in now]
            out += [("fixed", f) for f in _last(was, -extra)]
            continue
        touched = added(key[0]) if added is not None and was else frozenset()
        # The ones on lines this change wrote are the new ones; ties go to the later lines.
        ranked = sorted(now, key=lambda f: (f.line in touched, f.line, f.col), reverse=True)
        fresh = set(map(id, ranked[:extra]))
        out += [("new" if id(f) in fresh else "pre-existing", f) for f in now]
    for was in was_by_key.values():
        out += [("fixed", f) for f in was]
    return sorted(out, key=lambda m: (_ORDER[m[0]], m[1].sort_key()))


def _last(was: Sequence[Finding], n: int) -> list[Finding]:
    return sorted(was, key=lambda f: (f.line, f.col))[len(was) - n:] if n > 0 else []
