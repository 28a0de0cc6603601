"""Issue 28: globs are attacker input (a PR's `.kbase.yml`, a handover note) and were run
on Python's `re`: `a*a*a*a*a*a*a*b` against a long name is polynomial of degree 7 and
`**/**/**/b` against a deep path likewise; every glob now runs on RE2, linear in the path."""

from __future__ import annotations

import pytest

from kbase_ci.vault.globs import match, star_matcher, wildcard_match
from tests.complexity import assert_linear

STARS = "a*a*a*a*a*a*a*b"


def _deep(n: int) -> str:
    return "/".join(["aaaa"] * (n // 5)) + "/" + "a" * n + ".md"


@pytest.mark.parametrize("pattern", [STARS, f"**/{STARS}", "**/a*/**/a*/**/a*/**/a*/**/b",
                                     "**/**/**/**/**/**/**/b", "[a]*[a]*[a]*?*?*?*b/**"])
def test_a_path_glob_is_linear_in_the_path(pattern: str) -> None:
    def run(paths: list[str]) -> int:
        return sum(match(pattern, p) for p in paths)

    assert assert_linear(lambda n: [_deep(n)] * 200, run, 4000, budget=60) == 0


def test_wildcards_are_linear_in_the_text() -> None:
    def run(texts: list[str]) -> int:
        return sum(wildcard_match(STARS, t) + star_matcher(STARS.replace("b", "c"))(t)
                   for t in texts)

    assert assert_linear(lambda n: ["a" * n] * 200, run, 4000, budget=60) == 0


@pytest.mark.parametrize(("pattern", "path", "want"), [
    ("[z-a].md", "[z-a].md", True),  # a reversed range is literal text, not an error
    ("a[]b", "a[]b", True),
    ("notes/é*.md", "notes/été.md", True),
    ("a\\b", "a\\b", True),
    ("(x)+$", "(x)+$", True),  # regex syntax in a glob is literal
    ("(x)+$", "xx", False),
    ("[!a]", "b/c", True),  # a name at any depth, and `[!a]` never matches `/`
    ("x[!a]y", "x/y", False),
])
def test_glob_text_is_never_regex_syntax(pattern: str, path: str, want: bool) -> None:
    assert match(pattern, path) is want


def test_wildcards_are_fnmatch_like() -> None:
    assert wildcard_match("rust/*", "rust/a/b") and wildcard_match("r?st", "rust")
    assert not wildcard_match("r[!u]st", "rust") and wildcard_match("*.*", "a.b")


def test_a_glob_longer_than_the_cap_is_a_config_error() -> None:
    from kbase_ci.errors import ConfigError
    from kbase_ci.vault.globs import MAX_GLOB

    assert not match("*a" * (MAX_GLOB // 2 - 1) + "b", "a" * 4000)  # under the cap
    with pytest.raises(ConfigError, match="longer than 1024"):
        match("*" * (MAX_GLOB + 1), "x")


@pytest.mark.parametrize(("glob", "path"), [("private/", "private/\udc80.md"),
                                            ("private/**", "private/a/\udcff\udc80.md"),
                                            ("*.md", "\udc80.md"), ("a/?.md", "a/\udc80.md")])
def test_a_path_git_could_not_decode_is_matched_like_any_other(glob: str, path: str) -> None:
    """git paths are decoded with surrogateescape; as invalid UTF-8 RE2 matched no `*`
    over them, so a PR could name a file past `vault.exclude`."""
    assert match(glob, path)
    assert not match("other/**", path)
