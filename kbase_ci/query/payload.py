"""The JSON an agent pays for: compact (indented only for a person: `--pretty` or a
terminal), and within `--max-tokens` when one is given.

One place for every query command, the MCP tools and any later command that prints an
answer (its JSON: `Record.to_json`): `render` measures the JSON as printed and, when it
is over the budget, trims the answer's lists from the end (the least relevant items:
every list is ranked), largest first, then shortens its longest strings, and says so in
`truncated`: the budget, what the answer costs now, and how many items each list lost.
A list keeps at least its first item while anything else can go (an answer's main lists,
`Marks`, their first item longest). Before all that, the index's list of notes changed since
it was built (`index.stale_notes`) is cut: it is bookkeeping, a clone with many edits
must not cost an answer its items, and `index.stale_count` keeps the number. Tokens are
the larger of `len / 4` (what a budget is usually counted in) and the conservative
estimate of kbase_ci.query.budget (above what real tokenizers count), so the answer fits
either way.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from kbase_ci.errors import UsageError

ENVELOPE = frozenset({"index", "truncated"})
"""Keys never trimmed in any answer: where it came from, and what was cut (but see
`STALE`). An answer adds its own (`Record.budget_keys`: what it is about)."""
STALE = "index.stale_notes"
"""The one list under a kept key that can go, and goes first (see `cut_stale`)."""
Marks = tuple[frozenset[str], frozenset[str]]
"""(keys never trimmed, the answer's main lists) of one answer: its main lists keep
their first item while any other list (traversal paths, limitations, ...) can be
emptied (`Record.budget_keys`)."""
NO_MARKS: Marks = (frozenset(), frozenset())
SHORT = 200
"""Shortened strings keep this many characters."""
ELLIPSIS = "\u2026"


def cost(text: str) -> int:
    """What `text` costs in tokens (see the module docstring)."""
    # Lazy: its patterns take ~15 ms to compile, and only a budget needs them.
    from kbase_ci.query.budget import estimate_tokens

    return max(-(-len(text) // 4), estimate_tokens(text))


def dumps(answer: dict[str, Any], *, pretty: bool = False) -> str:
    if pretty:
        return json.dumps(answer, ensure_ascii=False, indent=2)
    return json.dumps(answer, ensure_ascii=False, separators=(",", ":"))


def check_budget(max_tokens: int | None) -> int | None:
    from kbase_ci.query.tools.spec import MAX_BUDGET  # the one declaration of the cap

    if max_tokens is not None and max_tokens < 1:
        raise UsageError(f"--max-tokens must be at least 1, not {max_tokens}")
    if max_tokens is not None and max_tokens > MAX_BUDGET:
        raise UsageError(f"--max-tokens must be at most {MAX_BUDGET}, not {max_tokens}")
    return max_tokens


def render(answer: dict[str, Any], marks: Marks = NO_MARKS, *, max_tokens: int | None = None,
           pretty: bool = False) -> str:
    """The answer as printed, trimmed to `max_tokens` (None: whole)."""
    check_budget(max_tokens)
    text = dumps(answer, pretty=pretty)
    if max_tokens is None or cost(text) <= max_tokens:
        return text
    return dumps(fit(answer, max_tokens, marks, pretty=pretty), pretty=pretty)


def fit_text(answer: dict[str, Any], draw: Callable[[dict[str, Any]], str],
             max_tokens: int | None, note: Callable[[dict[str, Any]], str],
             marks: Marks = NO_MARKS) -> str:
    """`draw(answer)` (a text form: plain text, Mermaid, DOT) within `max_tokens`: over
    it, the answer is trimmed as its JSON would be (`fit`, the least relevant items
    first) under the largest JSON budget whose drawing fits, and ends with
    `note(truncated)`, a last line saying what went."""
    check_budget(max_tokens)
    text = draw(answer)
    if max_tokens is None or cost(text) <= max_tokens:
        return text

    def drawn(budget: int) -> str | bool:
        """The drawing under this JSON budget; False: the JSON cannot be cut that far,
        True: its drawing is over `max_tokens`."""
        try:
            trimmed = fit(answer, budget, marks)
        except UsageError:
            return False
        record = trimmed.pop("truncated")
        record["max_tokens"] = max_tokens
        if "truncated" in answer:  # the answer's own flag (more than --limit), not ours
            trimmed["truncated"] = answer["truncated"]
        out = draw(trimmed) + note(record)
        return out if cost(out) <= max_tokens else True

    # A text form is not its JSON (the index's bookkeeping, say, is in one only): search
    # the JSON budgets for the largest whose drawing fits (a larger one draws more).
    lo, hi, best = 1, cost(dumps(answer)) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        got = drawn(mid)
        if got is True:
            hi = mid - 1
        else:
            lo = mid + 1
            best = got or best
    if best is None:
        raise UsageError(f"--max-tokens {max_tokens} is less than this answer's text "
                         "needs without any of its items: raise it")
    return best


def cut_note(record: dict[str, Any], prefix: str = "") -> str:
    """The last line of a trimmed text form: how much `fit` cut (`prefix` makes it a
    comment of the format). Counts, not names: the line must be cheap, and a text form
    shows only some of the JSON's lists."""
    # The index's list of changed notes is in the JSON only: no text form shows it.
    items = sum(n for name, n in record["dropped"].items() if name != STALE)
    what = [f"{items} item(s) cut"] if items else []
    if record["shortened"]:
        what.append(f"{len(record['shortened'])} text(s) shortened")
    return (f"{prefix}(truncated to --max-tokens {record['max_tokens']}: "
            f"{', '.join(what) or 'nothing shown cut'}; raise it for more)\n")


def _lists(node: Any, keep: frozenset[str], path: tuple[Any, ...] = ()
           ) -> Iterator[tuple[tuple[Any, ...], list[Any]]]:
    """Every list of dicts or strings below the top-level keys not in `keep`, outermost
    first (a list inside a list's items too)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if not path and key in keep:
                continue
            yield from _lists(value, keep, (*path, key))
    elif isinstance(node, list):
        if node and path:
            yield path, node
        for i, item in enumerate(node):
            if isinstance(item, dict | list):
                yield from _lists(item, keep, (*path, i))


def _name(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path if not isinstance(p, int)) or "answer"


def fit(answer: dict[str, Any], max_tokens: int, marks: Marks = NO_MARKS, *,
        pretty: bool = False) -> dict[str, Any]:
    """A copy of `answer` whose JSON costs at most `max_tokens` (see the module). A
    `truncated` record `answer` already has (from `cut_stale`) is carried on."""
    keep, primary = ENVELOPE | marks[0], marks[1]
    out: dict[str, Any] = json.loads(json.dumps(answer))
    note = out.get("truncated")
    if not (isinstance(note, dict) and isinstance(note.get("dropped"), dict)):
        note = {"max_tokens": max_tokens, "tokens": cost(dumps(answer, pretty=pretty)),
                "dropped": {}, "shortened": []}
    note["max_tokens"] = max_tokens
    dropped: dict[str, int] = note["dropped"]
    shortened: list[str] = note["shortened"]
    out["truncated"] = note

    def over() -> int:
        now = cost(dumps(out, pretty=pretty))
        note["tokens"] = now
        return now - max_tokens

    excess = over()
    stale = _stale(out)
    while excess > 0 and stale:  # an item's measured cost is a guess: measure again
        _drop(stale, excess, 0, STALE, dropped)
        excess = over()
    for keep_one in (True, False):  # a list keeps its first item while others can shrink
        while excess > 0:
            target = _largest(out, 1 if keep_one else 0, keep, primary)
            if target is None:
                break
            path, lst = target
            floor = 1 if keep_one or (path[0] in primary and len(path) == 1) else 0
            _drop(lst, excess, floor, _name(path), dropped)
            excess = over()
        if excess > 0 and keep_one:
            _shorten(out, excess, shortened)
            excess = over()
    if excess > 0:
        raise UsageError(f"--max-tokens {max_tokens} is less than this answer needs without "
                         f"any of its items ({note['tokens']} tokens): raise it")
    return out


def cut_stale(answer: dict[str, Any], max_tokens: int) -> dict[str, Any] | None:
    """Cut `answer`'s `index.stale_notes` (in place) until its compact JSON, with a
    `truncated` record saying so, fits `max_tokens` or the list is empty: for an answer
    that budgets itself (`kbase context`) before `fit` would. Returns that record (also
    set as `answer["truncated"]`), or None when nothing had to go."""
    stale = _stale(answer)
    excess = cost(dumps(answer)) - max_tokens
    if excess <= 0 or not stale:
        return None
    note: dict[str, Any] = {"max_tokens": max_tokens, "tokens": 0, "dropped": {},
                            "shortened": []}
    answer["truncated"] = note
    excess = cost(dumps(answer)) - max_tokens
    while excess > 0 and stale:
        _drop(stale, excess, 0, STALE, note["dropped"])
        note["tokens"] = cost(dumps(answer))
        excess = note["tokens"] - max_tokens
    return note


def _stale(answer: dict[str, Any]) -> list[Any] | None:
    index = answer.get("index")
    stale = index.get("stale_notes") if isinstance(index, dict) else None
    return stale if isinstance(stale, list) else None


def _drop(lst: list[Any], excess: int, floor: int, name: str,
          dropped: dict[str, int]) -> None:
    """Cut `lst` from its end (its least relevant items) by about `excess` tokens,
    keeping `floor` items."""
    sizes = [cost(dumps({"x": item})) for item in lst]
    drop, freed = 0, 0
    while len(lst) - drop > floor and freed < excess:
        drop += 1
        freed += sizes[-drop]
    if drop:
        del lst[len(lst) - drop:]
        dropped[name] = dropped.get(name, 0) + drop


def _largest(answer: dict[str, Any], floor: int, keep: frozenset[str],
             primary: frozenset[str]) -> tuple[tuple[Any, ...], list[Any]] | None:
    """The list with the most JSON that has more than `floor` items (more than one, for
    an answer's primary list)."""
    lists = [(p, lst) for p, lst in _lists(answer, keep)
             if len(lst) > max(floor, 1 if p[0] in primary and len(p) == 1 else 0)]
    return max(lists, key=lambda pl: len(dumps({"x": pl[1]})), default=None)


def _shorten(node: Any, excess: int, shortened: list[str], path: str = "") -> int:
    """Cut the longest strings to `SHORT` characters until about `excess` tokens are
    saved; returns what is still to save."""
    strings: list[tuple[int, Any, Any, str]] = []

    def walk(n: Any, where: str) -> None:
        items = n.items() if isinstance(n, dict) else enumerate(n) if isinstance(n, list) \
            else ()
        for k, v in items:
            here = f"{where}.{k}" if isinstance(k, str) else where
            if isinstance(v, str) and len(v) > SHORT:
                strings.append((len(v), n, k, here.lstrip(".")))
            elif isinstance(v, dict | list):
                walk(v, here)

    walk(node, path)
    for size, parent, key, where in sorted(strings, key=lambda s: -s[0]):
        if excess <= 0:
            break
        parent[key] = parent[key][:SHORT] + ELLIPSIS
        excess -= (size - SHORT) // 4
        if where not in shortened:
            shortened.append(where)
    return excess
