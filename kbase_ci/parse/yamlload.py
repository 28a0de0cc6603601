"""Loading frontmatter YAML safely: size, depth and alias-expansion limits, a JSON-safe
copy of what ruamel loads, located diagnostics, and a memo of loads by content.

Frontmatter in the shapes kbase_ci.parse.plainyaml reads (nearly all of it) never
reaches ruamel. ruamel.yaml is imported on the first load of anything else, not with this
module: a hook re-parsing a note whose frontmatter did not change takes that load from a
`YamlMemo` and never needs it (~10 ms of a commit).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kbase_ci.parse.plainyaml import load_plain
from kbase_ci.parsed import Diagnostic

if TYPE_CHECKING:
    from ruamel.yaml import YAML

MAX_FRONTMATTER_CHARS = 1_000_000
MAX_NODES = 100_000
MAX_DEPTH = 200
"""The deepest frontmatter kbase reads, in every form of YAML nesting (indented blocks,
compact `- - x` and `? x` on one line, flow brackets, alias chains). Deeper data breaks
its readers: ruamel's C composer recurses in C (100k levels of `- - -` in 200 KB: a
segfault) and is superlinear in depth (20k levels: 2 s), and `json.dumps` of the parse
cache's records recurses in Python (1,000 levels: RecursionError)."""
_BRACKETS = re.compile(r"[\[\]{}]")

_yaml: YAML | None = None
_pure_yaml: YAML | None = None


def _loader() -> YAML:
    global _yaml
    if _yaml is None:
        from ruamel.yaml import YAML

        _yaml = YAML(typ="safe")
    return _yaml


def _pure_loader() -> YAML:
    global _pure_yaml
    if _pure_yaml is None:
        from ruamel.yaml import YAML

        _pure_yaml = YAML(typ="safe", pure=True)
    return _pure_yaml


def has_clib() -> bool:
    """True when ruamel.yaml uses its C parser (about 3x faster than pure Python)."""
    # ruamel picks CParser only when the ruamel.yaml.clib extension imports.
    return _loader().Parser.__name__ == "CParser"


class _TooLarge(Exception):
    pass


class _TooDeep(Exception):
    pass


def _text(s: str) -> str:
    """`s` with lone surrogates (YAML's `"\\udcff"` escape) as U+FFFD, as the note body's
    bad bytes are: nothing downstream (cache, JSON, terminal) can encode them."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        # Through UTF-16, an escaped pair (`"\\ud83d\\ude00"`) becomes its one character.
        return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return s


def _json_key(key: Any) -> str:
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    return _text(key) if isinstance(key, str) else str(_json_scalar(key))


def _json_scalar(value: Any) -> Any:
    if isinstance(value, str):
        return _text(value)
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return str(value)


def to_json_safe(root: Any, budget: int = MAX_NODES) -> Any:
    """JSON-safe copy of loaded YAML, visiting at most `budget` values.

    Iterative, and a shared (aliased) object is copied each time it is reached,
    so the budget is what stops a "billion laughs" document. Deeper than MAX_DEPTH
    raises _TooDeep: an alias chain (`b: &b [*a]`, `c: &c [*b]`, ...) nests one level a
    line, which no bound on the text sees.
    """
    out: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(root, out, 0, 0)]
    seen = 1
    while stack:
        value, parent, slot, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _TooDeep
        if isinstance(value, dict):
            d: dict[str, Any] = {}
            parent[slot] = d
            seen += len(value)
            if seen > budget:
                raise _TooLarge
            for k, v in value.items():
                key = _json_key(k)
                d[key] = None
                stack.append((v, d, key, depth + 1))
        elif isinstance(value, (list, tuple, set, frozenset)):
            items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
            seen += len(items)
            if seen > budget:
                raise _TooLarge
            lst: list[Any] = [None] * len(items)
            parent[slot] = lst
            stack.extend((v, lst, i, depth + 1) for i, v in enumerate(items))
        else:
            parent[slot] = _json_scalar(value)
    return out[0]


def _yaml_diagnostic(exc: Exception) -> Diagnostic:
    from ruamel.yaml.constructor import DuplicateKeyError
    from ruamel.yaml.error import MarkedYAMLError

    if isinstance(exc, MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 2, mark.column + 1) if mark is not None else (1, 1)
        if isinstance(exc, DuplicateKeyError):
            problem = (exc.problem or "duplicate key").split(" with value")[0]
            return Diagnostic("KB302", f"frontmatter: {problem}", line, col, "error")
        return Diagnostic("KB301", f"invalid YAML in frontmatter: {exc.problem or exc}",
                          line, col, "error")
    return Diagnostic("KB301", f"invalid YAML in frontmatter: {exc}", 1, 1, "error")


def too_deep(raw: str) -> int | None:
    """The 0-based line of `raw` from which its nodes may nest deeper than MAX_DEPTH, or
    None: a bound read off the text before any YAML reader sees it, for every form of
    nesting a line can hold.

    Block nodes nest by indentation and by indicators at the start of a line (`- `,
    `? `, `: `: `- - - x` is three sequences deep on one line). The columns where a node
    may start form a stack (a deeper line pushes, a shallower one pops); each column
    holds at most two levels (a mapping and a sequence written at its key's column),
    and a line adds at most two more (`key: value`). Flow brackets are counted
    wherever they are, quoted text and comments included: the sum of the deepest
    bracket nesting and the deepest block nesting bounds every node, a flow collection
    that runs over lines of any indentation included."""
    stack: list[int] = []
    block = flow = deepest = 0
    for row, line in enumerate(raw.split("\n")):
        for m in _BRACKETS.finditer(line):
            flow = flow + 1 if m.group() in "[{" else max(flow - 1, 0)
            deepest = max(deepest, flow)
        col = len(line) - len(line.lstrip(" "))
        if col < len(line) and line[col] != "#":
            while stack and stack[-1] > col:
                stack.pop()
            if not stack or stack[-1] < col:
                stack.append(col)
            while line[col:col + 1] in ("-", "?", ":") and line[col + 1:col + 2] in ("", " "):
                col += 1
                while line[col:col + 1] == " ":
                    col += 1
                stack.append(col)
            block = max(block, 2 * len(stack) + 2)
        if block + deepest > MAX_DEPTH:
            return row
    return None


def load_yaml(raw: str) -> tuple[dict[str, Any], Diagnostic | None]:
    plain = _plain(raw)
    if plain is not None:
        return plain, None
    return _load_other(raw)


def _plain(raw: str) -> dict[str, Any] | None:
    """`raw`'s data when kbase_ci.parse.plainyaml reads it (nearly all real frontmatter),
    else None. Its shapes nest at most 32 levels and it recurses no deeper, so it needs
    no depth bound first (`too_deep` counts brackets in quoted text too: it would refuse
    a plain block holding 200 `[` in a string, which this reads as ruamel would)."""
    if len(raw) > MAX_FRONTMATTER_CHARS:
        return None
    return load_plain(raw)


def _load_other(raw: str) -> tuple[dict[str, Any], Diagnostic | None]:
    """What ruamel makes of YAML the plain reader leaves, bounded and located."""
    if len(raw) > MAX_FRONTMATTER_CHARS:
        return {}, Diagnostic("KB304", "frontmatter larger than 1 MB; ignored", 2, 1, "error")
    deep = too_deep(raw)
    if deep is not None:
        return {}, _too_deep(deep)
    try:
        loaded = _loader().load(raw)
    except Exception:
        # The C parser (libyaml) rejects some valid YAML 1.2 that Obsidian reads, e.g.
        # `[Is it?, Yes]`; the pure-Python parser has the final word, and only on failure.
        try:
            loaded = _pure_loader().load(raw)
        except Exception as exc:  # any YAML problem is the note's, not ours: report it
            return {}, _yaml_diagnostic(exc)
    if loaded is None:
        return {}, None
    if not isinstance(loaded, dict):
        kind = "a list" if isinstance(loaded, list) else "a scalar"
        return {}, Diagnostic("KB305", f"frontmatter is {kind}, not a mapping", 2, 1, "error")
    try:
        data = to_json_safe(loaded)
    except _TooLarge:
        return {}, Diagnostic("KB304", f"frontmatter expands to more than {MAX_NODES} values "
                              "(YAML alias bomb?); ignored", 2, 1, "error")
    except _TooDeep:  # aliases nesting one another: no line of the text is that deep
        return {}, _too_deep(0)
    return data, None


def _too_deep(row: int) -> Diagnostic:
    return Diagnostic("KB304", f"frontmatter nested too deeply (limit: {MAX_DEPTH} levels); "
                      "ignored", row + 2, 1, "error")


class YamlMemo:
    """Frontmatter already loaded, by the sha256 of its YAML text (state: the lookups
    made and the loads to remember). Loading is a pure function of that text, so a hit
    is exactly what a load would give. `lookup` answers from storage (the parse cache);
    `fresh` holds what was loaded here, for the caller to store."""

    def __init__(self, lookup: Callable[[list[str]], dict[str, str]] | None = None) -> None:
        self._lookup = lookup
        self.fresh: dict[str, str] = {}

    def load(self, raw: str) -> tuple[dict[str, Any], Diagnostic | None]:
        plain = _plain(raw)
        if plain is not None:  # as cheap as a lookup: neither looked up nor remembered
            return plain, None
        import hashlib
        import json

        digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()
        saved = self._lookup([digest]).get(digest) if self._lookup is not None else None
        if saved is not None:
            try:
                data, diag = json.loads(saved)
                if isinstance(data, dict) and (diag is None or isinstance(diag, list)):
                    return data, Diagnostic(*diag) if diag is not None else None
            except (ValueError, TypeError):
                pass  # a damaged row: load again and overwrite it
        data, problem = _load_other(raw)
        diag = None if problem is None else [problem.code, problem.message, problem.line,
                                            problem.col, problem.severity]
        # The data is JSON-safe already (to_json_safe), so it reads back equal.
        self.fresh[digest] = json.dumps([data, diag], ensure_ascii=False,
                                        separators=(",", ":"))
        return data, problem
