"""Path globs as users write them in `.kbase.yml` (gitignore-like, not fnmatch).

fnmatch lets `*` cross `/`, so `notes/*.md` would match `notes/a/b.md`; users expect
`*` to stay in one folder and `**` to cross folders, as in .gitignore and pre-commit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache


@lru_cache(maxsize=1024)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """`*` = within one segment, `**` = any depth, `?` = one char, `[..]` = class.

    A pattern with no `/` matches the name at any depth (`*.png`); a trailing `/`
    (or `/**`) matches everything under a folder.
    """
    pat = pattern.strip()
    if pat.startswith("./"):
        pat = pat[2:]
    anchored = "/" in pat.rstrip("/")
    if pat.endswith("/"):
        pat += "**"
    pat = pat.lstrip("/")
    out: list[str] = []
    i = 0
    while i < len(pat):
        c = pat[i]
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = pat.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
                i += 1
            else:
                body = pat[i + 1:end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    body = "".join(out)
    prefix = "" if anchored else "(?:.*/)?"
    # A folder pattern also matches everything below it (`notes` excludes `notes/a.md`).
    return re.compile(f"{prefix}{body}(?:/.*)?")


def match(pattern: str, path: str) -> bool:
    return compile_glob(pattern).fullmatch(path) is not None


def any_match(patterns: Iterable[str], path: str) -> bool:
    return any(compile_glob(p).fullmatch(path) for p in patterns)
