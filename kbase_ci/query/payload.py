"""The JSON an agent pays for: compact (indented only for a person: `--pretty` or a
terminal), and within `--max-tokens` when one is given.

One place for every query command, the MCP tools and any later command that prints an
answer (its JSON: `Record.to_json`): `render` measures the JSON as printed and, when it
is over the budget, trims it (`fit`): first the index's list of notes changed since it
was built (`index.stale_notes`: bookkeeping; a clone with many edits must not cost an
answer its items, and `index.stale_count` keeps the number), then every list the answer
does not name (`Marks`: the query registry names each answer's lists, the primary one
first) down to one item each, largest first, then their strings, then the named lists
down to one item each, the last named first and the primary list last (from the end: the
least relevant items, every list is ranked; lists of one name, such as every cluster's
`members`, are cut evenly), then any string, shorter and shorter. No other list that
had items is emptied. `truncated` says what went: the budget, what the answer costs now,
each list cut as `kept/total`, and the strings shortened. Tokens are
the larger of `len / 4` (what a budget is usually counted in) and the conservative
estimate of kbase_ci.query.budget (above what real tokenizers count), so the answer fits
either way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kbase_ci.errors import UsageError
from kbase_ci.query.answerlists import (
    SAMPLE,
    STALE,
    list_name,
    list_sizes,
    lists_of,
    record_cuts,
    stale_list,
)
from kbase_ci.query.choices import MAX_BUDGET

ENVELOPE = frozenset({"index", "truncated"})
"""Keys never trimmed in any answer: where it came from, and what was cut (but see
`STALE`). An answer adds its own (`Record.budget_keys`: what it is about)."""
Marks = tuple[frozenset[str], tuple[str, ...]]
"""(keys never trimmed, the answer's lists that matter, the primary one first) of one
answer: the first from `Record.budget_keys`, the second from the query registry
(`Query.lists`). A list is named by its keys joined with `.` (`clusters.members`);
naming a nested list keeps the lists holding it too."""
NO_MARKS: Marks = (frozenset(), ())


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
    """The one check of a budget's bounds (the CLI's `--max-tokens`, `.kbase.yml`'s
    `query.max_tokens`, every answer printed): None or 0 is no limit (None), else 1 to
    `MAX_BUDGET`."""
    if not max_tokens:
        return None
    if max_tokens < 0:
        raise UsageError(f"--max-tokens must be 0 (no limit) or more, not {max_tokens}")
    if max_tokens > MAX_BUDGET:
        raise UsageError(f"--max-tokens must be at most {MAX_BUDGET}, not {max_tokens}")
    return max_tokens


def render(answer: dict[str, Any], marks: Marks = NO_MARKS, *, max_tokens: int | None = None,
           pretty: bool = False) -> str:
    """The answer as printed, trimmed to `max_tokens` (None or 0: whole)."""
    max_tokens = check_budget(max_tokens)
    text = dumps(answer, pretty=pretty)
    if max_tokens is None or (len(text) // 4 <= max_tokens and cost(text) <= max_tokens):
        return text
    return dumps(fit(answer, max_tokens, marks, pretty=pretty), pretty=pretty)


def fit_text(answer: dict[str, Any], draw: Callable[[dict[str, Any]], str],
             max_tokens: int | None, note: Callable[[dict[str, Any]], str],
             marks: Marks = NO_MARKS) -> str:
    """`draw(answer)` (a text form: plain text, Mermaid, DOT) within `max_tokens`: over
    it, the answer is trimmed as its JSON would be (`fit`, the least relevant items
    first) under the largest JSON budget whose drawing fits, and ends with
    `note(truncated)`, a last line saying what went."""
    max_tokens = check_budget(max_tokens)
    text = draw(answer)
    if max_tokens is None or cost(text) <= max_tokens:
        return text

    def drawn(budget: int) -> str | bool:
        """The drawing under this JSON budget; False: the JSON cannot be cut that far,
        True: its drawing is over `max_tokens`."""
        try:
            trimmed = fit(answer, budget, marks, fields=False)
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
    items = sum(int(total) - int(kept) for name, (kept, _, total) in
                ((n, c.partition("/")) for n, c in record["lists"].items()) if name != STALE)
    what = [f"{items} item(s) cut"] if items else []
    if record["shortened"]:
        what.append(f"{len(record['shortened'])} text(s) shortened")
    return (f"{prefix}(truncated to --max-tokens {record['max_tokens']}: "
            f"{', '.join(what) or 'nothing shown cut'}; raise it for more)\n")


def fit(answer: dict[str, Any], max_tokens: int, marks: Marks = NO_MARKS, *,
        pretty: bool = False, fields: bool = True) -> dict[str, Any]:
    """A copy of `answer` whose JSON costs at most `max_tokens` (see the module). A
    `truncated` record `answer` already has (from `cut_stale`) is carried on.

    The rest gives way before what the answer is for (`Marks`): the index's list of
    changed notes, then the lists the answer does not name down to one item each, then
    their strings; only then the named lists down to one item, the last named first (the
    primary list last), then every string, shorter and shorter. No list that had items
    is emptied (but `index.stale_notes`, whose count stays). `fields`: fields that say
    nothing (null, false, empty; the index's build time) may be left out near the end
    (not for an answer read back into its record: a text form)."""
    keep, named = ENVELOPE | marks[0], marks[1]
    out: dict[str, Any] = json.loads(json.dumps(answer))
    note = out.get("truncated")
    if not (isinstance(note, dict) and isinstance(note.get("lists"), dict)):
        # (`over` measures it; the exact estimate of a 200k-link answer took seconds)
        note = {"max_tokens": max_tokens, "tokens": 0, "lists": {}, "shortened": []}
    note["max_tokens"] = max_tokens
    shortened: list[str] = note["shortened"]
    out["truncated"] = note
    said = out.get("metadata")
    if isinstance(said, dict) and isinstance(said.get("limitations"), list):
        # an answer that says what it left out (kbase_ci.query.traversalinfo) says this too
        said["limitations"].append(f"max_tokens {max_tokens}: truncated says what went")
    totals, carried = list_sizes(out, keep), dict(note["lists"])
    dropped: dict[str, int] = {}

    rough = [False]  # the last measure was `len / 4`: `_drop` guesses in that measure

    def over() -> int:
        record_cuts(note, dropped, totals, carried)
        text = dumps(out, pretty=pretty)
        # `len / 4` is a lower bound of `cost`: far over the budget it says enough, and
        # the exact estimate (a regex pass, ~1 s over a 200k-link answer) is made once
        # the answer is near the budget; the last measure, the one that fits, is exact.
        rough[0] = len(text) // 4 > max_tokens
        now = len(text) // 4 if rough[0] else cost(text)
        note["tokens"] = now
        return now - max_tokens

    def trim(spared: tuple[str, ...], excess: int) -> int:
        """Lists down to one item, largest first, but those `spared` (names, and the
        lists holding them)."""
        while excess > 0:
            group = _largest(out, keep, spared)
            if group is None:
                break
            name, lists = group
            _cut(lists, excess, name, dropped, rough=rough[0])
            excess = over()
        return excess

    excess = over()
    stale = stale_list(out)
    while excess > 0 and stale:  # an item's measured cost is a guess: measure again
        _drop(stale, excess, 0, STALE, dropped, rough=rough[0])
        excess = over()
    if excess > 0 and fields:
        compact_index(out)  # (it only shrinks the answer: `excess` stays an upper bound)
    if excess > 0 and trim(named, excess) > 0:
        shorten(out, over(), shortened, SHORT,
                skip=keep | {name.partition(".")[0] for name in named})
        excess = over()
        for last in range(len(named) - 1, -1, -1):  # the primary list (named first) last
            excess = trim(named[:last], excess)
        if excess > 0:
            if fields and unset(out, keep):
                note["unset"] = True
            for size in (SHORT, TIGHT):
                # `_shorten` guesses what a cut saves: measure and go on while it cuts
                while (excess := over()) > 0 and \
                        shorten(out, excess, shortened, size, skip=frozenset()) < excess:
                    pass
    excess = over()
    if excess > 0:
        raise UsageError(f"--max-tokens {max_tokens} is less than this answer needs with "
                         f"one item of each list ({note['tokens']} tokens): raise it")
    return out


def cut_stale(answer: dict[str, Any], max_tokens: int) -> dict[str, Any] | None:
    """Cut `answer`'s `index.stale_notes` (in place) until its compact JSON, with a
    `truncated` record saying so, fits `max_tokens` or the list is empty: for an answer
    that budgets itself (`kbase context`) before `fit` would. Returns that record (also
    set as `answer["truncated"]`), or None when nothing had to go."""
    stale = stale_list(answer)
    excess = cost(dumps(answer)) - max_tokens
    if excess <= 0 or not stale:
        return None
    note: dict[str, Any] = {"max_tokens": max_tokens, "tokens": 0, "lists": {},
                            "shortened": []}
    answer["truncated"] = note
    total, dropped = len(stale), {STALE: 0}
    excess = cost(dumps(answer)) - max_tokens
    while excess > 0 and stale:
        _drop(stale, excess, 0, STALE, dropped)
        note["lists"][STALE] = f"{total - dropped[STALE]}/{total}"
        note["tokens"] = cost(dumps(answer))
        excess = note["tokens"] - max_tokens
    return note


def _drop(lst: list[Any], excess: int, floor: int, name: str,
          dropped: dict[str, int], *, rough: bool = False) -> None:
    """Cut `lst` from its end (its least relevant items) by about `excess` tokens,
    keeping `floor` items (the caller measures again). `rough`: `excess` is in `len / 4`
    (far over the budget), not in `cost`."""
    drop, freed = 0, 0
    size = _item_len if rough else _item_cost
    if len(lst) > SAMPLE:
        # Measuring each of 200k items costs seconds: far more than printing them. The
        # mean of the last items, in the measure `excess` is in, gives the guess for most
        # of the way, and the items at the boundary are measured one by one.
        mean = max(1.0, sum(size(item) for item in lst[-SAMPLE:]) / SAMPLE)
        drop = min(len(lst) - floor, max(0, int((excess - 2 * SAMPLE * mean) / mean)))
        freed = int(drop * mean)
    while len(lst) - drop > floor and freed < excess:
        drop += 1
        freed += size(lst[-drop])
    if drop:
        del lst[len(lst) - drop:]
        dropped[name] = dropped.get(name, 0) + drop


def _item_cost(item: Any) -> int:
    return cost(dumps({"x": item}))


def _item_len(item: Any) -> int:
    """An item's `len / 4`: the measure of an answer far over its budget (`fit`)."""
    return len(dumps({"x": item})) // 4


def _largest(answer: dict[str, Any], keep: frozenset[str], spared: tuple[str, ...]
             ) -> tuple[str, list[list[Any]]] | None:
    """The lists of one name with the most JSON among those with more than one item
    (`name`, the lists), but the names `spared` and the lists holding them (cutting a
    cluster cuts its members)."""
    groups: dict[str, list[list[Any]]] = {}
    for path, lst in lists_of(answer, keep, most=SAMPLE):
        name = list_name(path)
        if len(lst) > 1 and not any(s == name or s.startswith(name + ".") for s in spared):
            groups.setdefault(name, []).append(lst)
    return max(groups.items(), key=lambda g: sum(_json_len(lst) for lst in g[1]),
               default=None)


def _cut(lists: list[list[Any]], excess: int, name: str, dropped: dict[str, int], *,
         rough: bool) -> None:
    """Cut the lists of one name by about `excess` tokens, evenly: each keeps at most
    the same number of items, the most that frees enough (so every cluster keeps its
    first members, not the small ones all and the big ones one), and at least one."""
    if len(lists) == 1:
        _drop(lists[0], excess, 1, name, dropped, rough=rough)
        return
    size = _item_len if rough else _item_cost
    costs = [[size(item) for item in lst] for lst in lists]

    def freed(most: int) -> int:
        return sum(sum(c[most:]) for c in costs)

    # The most items a list keeps that frees enough (a binary search: `freed` falls as
    # `most` grows), one item at least; then the lists keep one item more where that
    # still frees enough, the last lists (the least relevant) giving it up first.
    lo, hi = 1, max(len(c) for c in costs)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if freed(mid) >= excess:
            lo = mid
        else:
            hi = mid - 1
    need = excess - freed(lo + 1)
    keep = [lo + 1] * len(lists)
    for i in range(len(lists) - 1, -1, -1):
        if need <= 0:
            break
        if len(costs[i]) > lo:
            keep[i] = lo
            need -= costs[i][lo]
    for lst, most in zip(lists, keep, strict=True):
        if len(lst) > most:
            dropped[name] = dropped.get(name, 0) + len(lst) - most
            del lst[most:]


def _json_len(lst: list[Any]) -> int:
    """A list's JSON length; past `SAMPLE` items, guessed from its last ones (a list
    that long is the largest by far either way)."""
    if len(lst) <= SAMPLE:
        return len(dumps({"x": lst}))
    return len(dumps({"x": lst[-SAMPLE:]})) * len(lst) // SAMPLE


SHORT = 200
"""Shortened strings keep this many characters."""
ELLIPSIS = "\u2026"
TIGHT = 40
"""The last resort's string length (`fit`): a sentence's start, a notice's gist."""
COMMIT = 12
"""Hex digits of the index's commit kept under a tight budget (git's short form)."""
NAMES = frozenset({"path", "url", "note", "target", "source", "from", "to", "tag", "name"})
"""Fields that name something (a note, a URL): never shortened, a cut name names nothing."""


def compact_index(answer: dict[str, Any]) -> None:
    """The index record as small as it says what matters: its commit abbreviated (a
    40-digit hash costs ~40 tokens), its build time, a zero `stale_count` with its empty
    `stale_notes`, and a false `overlaid` left out."""
    index = answer.get("index")
    if not isinstance(index, dict):
        return
    commit = index.get("source_commit")
    if isinstance(commit, str) and len(commit) > COMMIT:
        index["source_commit"] = commit[:COMMIT]
    index.pop("built_at", None)
    if index.get("stale_count") == 0:  # (a list cut to nothing stays: it says "cut")
        del index["stale_count"]
        if index.get("stale_notes") == []:
            del index["stale_notes"]
    if index.get("overlaid") is False:
        del index["overlaid"]


def unset(node: Any, keep: frozenset[str], top: bool = True) -> bool:
    """Leave out the fields inside the answer's items that say nothing (null, false, an
    empty string or list) (a last resort before shortening text); True if any went."""
    went = False
    if isinstance(node, dict):
        for key in list(node):
            value = node[key]
            if top and key in keep:
                continue
            if not top and (value is None or value is False or value in ("", [])):
                del node[key]
                went = True
            else:
                went = unset(value, keep, False) or went
    elif isinstance(node, list):
        for item in node:
            went = unset(item, keep, False) or went
    return went


def shorten(node: Any, excess: int, shortened: list[str], size: int = SHORT, *,
             skip: frozenset[str] = frozenset()) -> int:
    """Cut the longest strings to `size` characters until about `excess` tokens are
    saved (not under the top-level keys `skip`); returns what is still to save."""
    strings: list[tuple[int, Any, Any, str]] = []

    def walk(n: Any, where: str) -> None:
        items = n.items() if isinstance(n, dict) else enumerate(n) if isinstance(n, list) \
            else ()
        for k, v in items:
            if not where and k in skip:
                continue
            here = f"{where}.{k}" if isinstance(k, str) else where
            if isinstance(v, str) and len(v) > size + 1 and k not in NAMES:
                strings.append((len(v), n, k, here.lstrip(".")))
            elif isinstance(v, dict | list):
                walk(v, here)

    walk(node, "")
    for length, parent, key, where in sorted(strings, key=lambda s: -s[0]):
        if excess <= 0:
            break
        parent[key] = parent[key][:size] + ELLIPSIS
        excess -= (length - size) // 4
        if where not in shortened:
            shortened.append(where)
    return excess
