"""Every glob kbase matches, compiled to a linear-time matcher (RE2): the one home.

Path globs are written as in .gitignore, not fnmatch: fnmatch lets `*` cross `/`, so
`notes/*.md` would match `notes/a/b.md`; users expect `*` to stay in one folder and `**`
to cross folders, as in .gitignore and pre-commit. Wildcards (`wildcard_match`: scope
selectors on titles, domains, types, tags) are fnmatch's: `*` matches any text.

Globs are attacker input: a PR's `.kbase.yml` (`vault.exclude`, `checks.per_path`,
scopes) is read in CI report mode and a handover note lists globs. Python's `re` runs
the translation of `a*a*a*a*a*a*a*b` in time polynomial in the path (n^7: a 1,000-char
name never finishes), and `**/**/**/b` likewise in the depth. RE2 (google-re2, the
engine of `tags.pattern`) runs any of them in time linear in the path. The translation
never produces a pattern RE2 refuses (classes are rebuilt char by char, a reversed range
is a literal `[`); a glob too large for RE2's memory is a located config error (exit 2).

RE2's Python wrapper costs ~14 us a call, mostly decoding match offsets we never read;
`_Matcher` calls the compiled program directly (~1.8 us, beside 1 us for `re`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from kbase_ci.errors import ConfigError

Matcher = Callable[[str], bool]


class _Matcher:
    """fullmatch of one RE2 program against str paths."""

    __slots__ = ("_anchor", "_program", "pattern")

    def __init__(self, pattern: str, dot_all: bool) -> None:
        import re2  # a core dependency; imported on first use as the hook may match none

        options = re2.Options()
        options.log_errors = False  # RE2 would print its reason on stderr: it is raised
        options.dot_nl = dot_all
        options.max_mem = 64 << 20
        try:
            compiled: Any = re2.compile(pattern, options=options)
        except re2.error as exc:
            reason = exc.args[0] if exc.args else exc
            if isinstance(reason, bytes):
                reason = reason.decode("utf-8", "replace")
            raise ValueError(str(reason)) from None
        self.pattern = pattern
        program = getattr(compiled, "_regexp", None)
        anchor = getattr(getattr(re2, "_Anchor", None), "ANCHOR_BOTH", None)
        try:  # the private call as this wrapper version has it, tried once
            usable = program is not None and anchor is not None and \
                program.Match(anchor, b"", 0, 0)[0][0] in (-1, 0)
        except Exception:  # another shape: the public (slower) call
            usable = False
        self._program: Any = program if usable else compiled
        self._anchor = anchor if usable else None

    def __call__(self, text: str) -> bool:
        # A path git could not decode holds lone surrogates: as `?` it is matched like any
        # other name (as invalid UTF-8 RE2 matched no `*` over it: a PR could name a file
        # past `vault.exclude`), and it can never make the encoding fail.
        data = text.encode("utf-8", "replace")
        if self._anchor is None:
            return self._program.fullmatch(data.decode("utf-8")) is not None
        return bool(self._program.Match(self._anchor, data, 0, len(data))[0][0] >= 0)


def _escape(ch: str) -> str:
    """`ch` as an RE2 literal, inside a class or out."""
    return ch if ch.isascii() and (ch.isalnum() or ch == "_") else f"\\x{{{ord(ch):x}}}"


def _class(pat: str, i: int, exclude_slash: bool) -> tuple[str, int] | None:
    """The RE2 class for the `[` at `i` and the index after its `]`; None when there is
    no `]` or a range runs backwards (then `[` is a literal)."""
    end = pat.find("]", i + 2 if pat[i + 1:i + 2] in ("!", "^") else i + 1)
    if end == -1:
        return None
    body = pat[i + 1:end]
    negate = body[:1] in ("!", "^")
    if negate:
        body = body[1:]
    out: list[str] = []
    j = 0
    while j < len(body):
        if j + 2 < len(body) and body[j + 1] == "-":
            lo, hi = body[j], body[j + 2]
            if lo > hi:
                return None
            out.append(f"{_escape(lo)}-{_escape(hi)}")
            j += 3
        else:
            out.append(_escape(body[j]))
            j += 1
    if negate:
        # `[!a]` never matches `/` in a path glob (it stays in one folder).
        return f"[^{''.join(out)}{'/' if exclude_slash else ''}]", end + 1
    if not out:
        return None
    return f"[{''.join(out)}]", end + 1


def _translate(pat: str, path: bool) -> str:
    star, one = ("[^/]*", "[^/]") if path else (".*", ".")
    out: list[str] = []
    i = 0
    while i < len(pat):
        c = pat[i]
        if path and pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif path and pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append(star)
            i += 1
        elif c == "?":
            out.append(one)
            i += 1
        elif c == "[" and (got := _class(pat, i, path)) is not None:
            out.append(got[0])
            i = got[1]
        else:
            out.append(_escape(c))
            i += 1
    return "".join(out)


MAX_GLOB = 1024
"""Longest glob (characters) kbase matches. RE2's time is linear in the text but also
grows with the glob: `*a` 5,000 times against a 100k-character title took 14.6 s. A
longer one is a config error (a handover note's is not a glob: it matches nothing)."""


def _compile(pattern: str, translated: str, dot_all: bool) -> _Matcher:
    if len(pattern) > MAX_GLOB:
        raise ConfigError(f"glob `{pattern[:40]}...` is longer than {MAX_GLOB} characters")
    try:
        return _Matcher(translated, dot_all)
    except ValueError as exc:  # in practice only a glob too large for max_mem
        raise ConfigError(f"glob `{pattern[:80]}` cannot be matched: {exc}") from None


@lru_cache(maxsize=1024)
def compile_glob(pattern: str) -> Matcher:
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
    prefix = "" if anchored else "(?:.*/)?"
    # A folder pattern also matches everything below it (`notes` excludes `notes/a.md`).
    return _compile(pattern, f"{prefix}{_translate(pat, path=True)}(?:/.*)?", dot_all=False)


@lru_cache(maxsize=1024)
def compile_wildcard(pattern: str) -> Matcher:
    """fnmatch's wildcards (`*` any text, `/` included; `?`; `[..]`), case as given."""
    return _compile(pattern, _translate(pattern, path=False), dot_all=True)


def match(pattern: str, path: str) -> bool:
    return compile_glob(pattern)(path)


def any_match(patterns: Iterable[str], path: str) -> bool:
    return any(compile_glob(p)(path) for p in patterns)


def wildcard_match(pattern: str, text: str) -> bool:
    return compile_wildcard(pattern)(text)


@lru_cache(maxsize=512)
def star_matcher(pattern: str) -> Matcher:
    """`*` only (tags.allowed: `project/*` -> any tag starting `project/`), `/` included.
    Matched segment by segment, each at its first place (right for `*`-only globs, and
    linear: a regex of many `.*` backtracks polynomially on a long tag)."""
    parts = pattern.split("*")
    head, tail, middle = parts[0], parts[-1], parts[1:-1]

    def fullmatch(text: str) -> bool:
        if len(parts) == 1:
            return text == head
        end = len(text) - len(tail)
        if end < len(head) or not text.startswith(head) or not text.endswith(tail):
            return False
        pos = len(head)
        for part in middle:
            i = text.find(part, pos, end)
            if i < 0:
                return False
            pos = i + len(part)
        return True

    return fullmatch
