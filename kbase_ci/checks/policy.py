"""How much each finding weighs, and which are silenced, the way linters do it.

- `checks.severity` in `.kbase.yml`: code, code prefix or check name -> `error`,
  `warning` or `off`; the most specific word wins (a code over a prefix over a name).
  Without one, a code has its registry default, and a rule may still report a weaker
  case of an error code as a warning (KB402's "check the code" phrases in free text).
- `checks.per_path`: path glob -> codes not reported in the notes it matches.
- Inline suppressions (`kbase_ci.parse.suppressions`): `<!-- kbase-ignore KB101 -->`,
  `%% kbase-ignore %%`, `<!-- kbase-ignore-file KB103 -->`.
- A suppression that silenced nothing is reported (KB901, like ruff's RUF100), but only
  when this run checked every code it names that the config enables: `--select tags`
  cannot tell whether a `kbase-ignore KB101` is still needed.

Words in the config that name no check or code are a config error at their line; words
in a suppression comment that name none are KB901 at the comment.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from pathlib import Path

from kbase_ci.errors import ConfigError
from kbase_ci.parsed import Finding, ParsedNote, Severity, Suppression
from kbase_ci.vault.checkconfig import ChecksConfig, Level
from kbase_ci.vault.config import Config, load_config
from kbase_ci.vault.globs import match

UNUSED = "KB901"
CODES = {UNUSED: "a `kbase-ignore` comment names no check or code, or silenced nothing"}
WARNINGS = frozenset(CODES)

Matcher = Callable[[str, str], bool]
"""(word, code) -> whether the word (a code, a code prefix or a check name) names it."""


class Policy:
    """The weighing rules of one config (state: none after construction)."""

    def __init__(self, cfg: Config, codes: Mapping[str, str], defaults: Mapping[str, Severity],
                 names: Matcher, root: Path | None = None) -> None:
        """`codes`: code -> its check's name; `defaults`: code -> registry severity;
        `names`: the registry's word matcher; `root`: where the config file is, to place
        an unknown word when the settings came from the memo (no positions)."""
        checks = cfg.checks
        self._codes = codes
        self._defaults = defaults
        self._names = names
        _validate(cfg, checks, codes, names, root)
        self.levels: dict[str, Level] = {}
        for code in codes:
            best = max(((_specificity(w, code, codes[code]), level)
                        for w, level in checks.severity.items() if names(w, code)),
                       default=None)
            if best is not None:
                self.levels[code] = best[1]
        self.off = frozenset(c for c, level in self.levels.items() if level == "off")
        self._expanded: dict[tuple[str, ...], frozenset[str]] = {}
        self._per_path = [(glob, self.expand(words)) for glob, words in checks.per_path.items()]

    def expand(self, words: Iterable[str]) -> frozenset[str]:
        """The codes `words` name (every code for no words at all); remembered per
        spelling, as one note may repeat a suppression thousands of times."""
        ws = tuple(words)
        got = self._expanded.get(ws)
        if got is None:
            got = frozenset(self._codes) if not ws else frozenset(
                c for c in self._codes if any(self._names(w, c) for w in ws))
            if len(self._expanded) < _EXPANDED_MAX:
                self._expanded[ws] = got
        return got

    def unknown(self, words: Iterable[str]) -> list[str]:
        return [w for w in words if not any(self._names(w, c) for c in self._codes)]

    def weigh(self, f: Finding) -> Finding:
        level = self.levels.get(f.code)
        sev: Severity = (level if level in ("error", "warning") else
                         "warning" if self._defaults.get(f.code) == "warning" else f.severity)
        return f if sev == f.severity else f._replace(severity=sev)

    def apply(self, findings: Iterable[Finding], note: Callable[[str], ParsedNote | None],
              focus: Iterable[ParsedNote], enabled: Collection[str],
              configured: Collection[str]) -> list[Finding]:
        """`findings` weighed, minus the ignored and silenced ones, plus KB901 for the
        unused suppressions of `focus` notes. `enabled`: codes this run checked;
        `configured`: codes the config alone would check."""
        out: list[Finding] = []
        used: set[tuple[str, int, int]] = set()
        notes: dict[str, _Silencers | None] = {}
        for f in findings:
            if any(f.code in codes and match(glob, f.path) for glob, codes in self._per_path):
                continue
            if f.path not in notes:
                parsed = note(f.path)
                notes[f.path] = _Silencers(parsed.suppressions, self.expand) \
                    if parsed is not None and parsed.suppressions else None
            silencers = notes[f.path]
            quiet = silencers.first(f.line, f.code) if silencers is not None else None
            if quiet is not None:
                used.add((f.path, quiet.line, quiet.col))
                continue
            out.append(self.weigh(f))
        if UNUSED in enabled and UNUSED not in self.off:
            out.extend(self._unused(focus, used, enabled, configured))
        return out

    def _unused(self, focus: Iterable[ParsedNote], used: set[tuple[str, int, int]],
                enabled: Collection[str], configured: Collection[str]) -> Iterator[Finding]:
        for note in focus:
            for s in note.suppressions:
                if (note.path, s.line, s.col) in used:
                    continue
                known = [w for w in s.codes if not self.unknown([w])]
                if s.codes and not known:
                    continue  # only unknown words: reported as such by `unknown_words`
                judged = self.expand(known) & frozenset(configured)
                if not judged <= frozenset(enabled):
                    continue  # this run did not check them all: it cannot tell
                f = Finding(note.path, s.line, s.col, UNUSED, _unused_message(s),
                            check="suppressions", severity="warning")
                if not any(f.code in codes and match(glob, f.path)
                           for glob, codes in self._per_path):
                    yield self.weigh(f)

    def unknown_words(self, notes: Iterable[ParsedNote]) -> Iterator[Finding]:
        """KB901 for each word of a suppression comment that names no check or code."""
        for note in notes:
            for s in note.suppressions:
                for word in self.unknown(s.codes):
                    yield Finding(note.path, s.line, s.col, UNUSED,
                                  f"kbase-ignore names `{word}`, which is no check, code or "
                                  f"code prefix{_near(word, self._codes)}",
                                  severity="warning")


_EXPANDED_MAX = 4096
"""Spellings of code lists `Policy.expand` remembers (each a frozenset of codes)."""


class _Silencers:
    """One note's suppressions indexed by the line they silence (state: per line, the
    first suppression of each code, built the first time a finding there asks). A
    finding was matched against every suppression of its note: 40k suppressions and
    findings in one note took 95 s (issue 38); now a finding costs two lookups."""

    def __init__(self, suppressions: Iterable[Suppression],
                 expand: Callable[[tuple[str, ...]], frozenset[str]]) -> None:
        self._expand = expand
        self._by_line: dict[int, list[tuple[int, Suppression]]] = {}
        for i, s in enumerate(suppressions):
            self._by_line.setdefault(s.target, []).append((i, s))
        self._firsts: dict[int, dict[str, tuple[int, Suppression]]] = {}

    def first(self, line: int, code: str) -> Suppression | None:
        """The first suppression (in note order) silencing `code` on `line`: one for
        that line or one for the whole note."""
        here = self._first(line).get(code) if line else None
        whole = self._first(0).get(code)
        best = min((c for c in (here, whole) if c is not None), default=None,
                   key=lambda c: c[0])
        return best[1] if best is not None else None

    def _first(self, line: int) -> dict[str, tuple[int, Suppression]]:
        got = self._firsts.get(line)
        if got is None:
            got = {}
            spelled: set[tuple[str, ...]] = set()
            for i, s in self._by_line.get(line, ()):
                if s.codes in spelled:
                    continue  # a later copy silences nothing an earlier one does not
                spelled.add(s.codes)
                for code in self._expand(s.codes):
                    got.setdefault(code, (i, s))
            self._firsts[line] = got
        return got


def _unused_message(s: Suppression) -> str:
    what = " ".join(s.codes) if s.codes else "(every code)"
    where = "in this note" if s.target == 0 else "on the line it covers"
    return (f"kbase-ignore {what} silenced nothing {where} (unused suppression); "
            "remove it")


def _specificity(word: str, code: str, name: str) -> int:
    """A code beats a longer prefix beats a shorter one beats a check name."""
    return 0 if word.strip() == name else len(word.strip())


def _validate(cfg: Config, checks: ChecksConfig, codes: Mapping[str, str], names: Matcher,
              root: Path | None) -> None:
    """A config error at the first word of `checks:` that names no check or code."""
    for word, key in checks.words():
        if any(names(word, c) for c in codes):
            continue
        where = checks.where or _positions(cfg, root)
        line, col = where.get(key, (1, 1))
        raise ConfigError(f"`checks.{key.split('[')[0]}` names `{word}`, which is no check, "
                          f"code or code prefix{_near(word, codes)} (checks: "
                          f"{', '.join(dict.fromkeys(codes.values()))}; codes: docs/checks.md)",
                          cfg.source or ".kbase.yml", line, col)


def _near(word: str, codes: Mapping[str, str]) -> str:
    """`; did you mean X?` for the one code or check name within two edits of `word`."""
    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    wanted = word.strip().upper() if word.strip()[:2].upper() == "KB" else word.strip()
    near = process.extract(wanted, [*codes, *dict.fromkeys(codes.values())],
                           scorer=Levenshtein.distance, score_cutoff=2, limit=2)
    if not near or (len(near) > 1 and near[1][1] == near[0][1]):
        return ""
    return f"; did you mean `{near[0][0]}`?"


def _positions(cfg: Config, root: Path | None) -> dict[str, tuple[int, int]]:
    """Positions of `checks:` words, parsed again (the memo keeps no positions)."""
    if root is None or cfg.source is None:
        return {}
    try:
        return load_config(root, root / cfg.source).checks.where
    except (ConfigError, OSError):
        return {}
