"""Tags against the `tags:` policy of `.kbase.yml`, and tags spelled in several cases.

Tags compare case-insensitively (Obsidian treats `#Rust` and `#rust` as one tag), except
for `pattern`, which is the user's own regular expression. Inline and frontmatter tags
are judged alike; each finding sits at the tag itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from kbase_ci.checks.checkcontext import CheckContext, nearest
from kbase_ci.errors import ConfigError
from kbase_ci.parsed import Finding, ParsedNote, Tag
from kbase_ci.vault.checkconfig import TagsConfig
from kbase_ci.vault.globs import match, star_matcher
from kbase_ci.vault.userregex import compile_pattern

CODES = {
    "KB201": "tag is not in `tags.allowed`",
    "KB202": "tag does not match `tags.pattern`",
    "KB203": "tag under a `tags.vocabularies` prefix has a value not in its vocabulary",
    "KB204": "note lacks a tag that `tags.required` asks for at its path",
    "KB205": "tag is spelled in another case in other notes (`#Rust` vs `#rust`)",
}
WARNINGS = frozenset({"KB205"})
"""Codes reported as warnings by default (the registry's severity)."""

_UNPARSED = {"KB002", "KB003"}
"""Binary or oversized notes: never parsed, so their tags are unknown, not missing."""


def check(ctx: CheckContext) -> Iterator[Finding]:
    cfg = ctx.config.tags
    policy = _Policy(cfg)
    notes = ctx.focus_notes
    spellings: dict[str, Counter[str]] = {}
    if cfg.case_duplicates:
        spellings = _spellings(ctx, {t.name.lower() for n in notes for t in n.tags})
    for note in notes:
        for tag in note.tags:
            yield from policy.judge(note.path, tag)
            if spellings:
                found = _case_duplicate(note.path, tag, spellings)
                if found is not None:
                    yield found
        if not any(d.code in _UNPARSED for d in note.diagnostics):
            yield from policy.required(note)


class _Policy:
    """The configured rules, compiled once per run."""

    def __init__(self, cfg: TagsConfig) -> None:
        self.allowed = [star_matcher(a.lower()) for a in _names(cfg.allowed)]
        self.literals = [a for a in _names(cfg.allowed) if "*" not in a]
        # RE2: linear time whatever the pattern (`(a+)+$` in a PR's config)
        try:
            self.pattern = compile_pattern(cfg.pattern) if cfg.pattern is not None else None
        except ValueError as exc:  # validated with the config; a stale memo is no excuse
            raise ConfigError(f"`tags.pattern` cannot be matched in linear time: {exc}"
                              ) from None
        self._source = cfg.pattern
        self.vocab = {_prefix(k): tuple(_names(v)) for k, v in cfg.vocabularies.items()}
        self.vocab_tags = [f"{p}/{v}" for p, vals in self.vocab.items() for v in vals]
        self.requirements = [(glob, tuple(_names(tags))) for glob, tags in cfg.required.items()]

    def judge(self, path: str, tag: Tag) -> Iterator[Finding]:
        name = tag.name
        key = name.lower()
        where = (path, tag.line, tag.col)
        if self.pattern is not None and self.pattern.fullmatch(name) is None:
            yield Finding(*where, "KB202", f"{_shown(tag)} does not match the tag pattern "
                          f"`{self._source}` (tags.pattern)")
        prefix = next((p for p in self.vocab if key.startswith(p + "/")), None)
        if prefix is not None:
            # A vocabulary both restricts and allows: its tags need no `allowed` entry.
            value = name[len(prefix) + 1:]
            values = self.vocab[prefix]
            if value.lower() not in {v.lower() for v in values}:
                near = nearest(value, values)
                fix = f"{name[:len(prefix)]}/{near}" if near else None
                yield Finding(*where, "KB203", f"{_shown(tag)}: `{value}` is not a "
                              f"`{prefix}/` value (tags.vocabularies: {', '.join(values)})"
                              + _hint(tag, fix), suggestion=_replacement(tag, fix))
        elif self.allowed and not any(fits(key) for fits in self.allowed):
            near = nearest(name, self.literals + self.vocab_tags)
            yield Finding(*where, "KB201", f"{_shown(tag)} is not an allowed tag (tags.allowed)"
                          + _hint(tag, near), suggestion=_replacement(tag, near))

    def required(self, note: ParsedNote) -> Iterator[Finding]:
        have = {t.name.lower() for t in note.tags}
        for glob, wanted in self.requirements:
            if not match(glob, note.path):
                continue
            for want in wanted:
                w = want.lower()
                if not any(h == w or h.startswith(w + "/") for h in have):
                    yield Finding(note.path, 1, 1, "KB204",
                                  f"notes matching `{glob}` must have the tag #{want} "
                                  "(inline or in frontmatter `tags:`; a nested tag "
                                  f"#{want}/... counts) (tags.required)")


def _spellings(ctx: CheckContext, wanted: set[str]) -> dict[str, Counter[str]]:
    """lower-cased tag -> spelling -> notes using it, for `wanted` tags spelled several ways.

    Counts every note of the vault, looking up only the `wanted` tags (an index lookup in
    the parse cache, no record decoding)."""
    if not wanted:
        return {}
    return ctx.store.tag_variants(wanted)


def _case_duplicate(path: str, tag: Tag, spellings: dict[str, Counter[str]]) -> Finding | None:
    counts = spellings.get(tag.name.lower())
    if counts is None:
        return None
    # Most notes wins; on a tie, the all-lower-case spelling, then the first in order.
    best = min(counts, key=lambda s: (-counts[s], s != s.lower(), s))
    if tag.name == best:
        return None
    others = ", ".join(f"#{s} ({_notes(counts[s])})"
                       for s in sorted(counts, key=lambda s: (-counts[s], s))
                       if s != tag.name)
    # One wording with the code's (docs/checks.md): "spelled in another case in other
    # notes", the spellings counted, the most used one suggested
    return Finding(path, tag.line, tag.col, "KB205",
                   f"{_shown(tag)} is spelled in another case in other notes: {others}"
                   + _hint(tag, best),
                   severity="warning", suggestion=_replacement(tag, best))


def _names(values: tuple[str, ...]) -> list[str]:
    return [v.strip().lstrip("#") for v in values if v.strip().lstrip("#")]


def _prefix(key: str) -> str:
    p = key.strip().lstrip("#").lower()
    p = p.removesuffix("/*")
    return p.rstrip("/")


def _notes(n: int) -> str:
    return f"{n} note" if n == 1 else f"{n} notes"


def _shown(tag: Tag) -> str:
    return f"#{tag.name}" if tag.source == "inline" else f"tag `{tag.name}`"


def _replacement(tag: Tag, name: str | None) -> str | None:
    """What to write at the finding's column: inline tags start at `#`."""
    if name is None:
        return None
    return f"#{name}" if tag.source == "inline" else name


def _hint(tag: Tag, name: str | None) -> str:
    return f"; did you mean {_replacement(tag, name)}?" if name else ""
