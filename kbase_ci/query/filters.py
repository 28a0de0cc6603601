"""The filters query commands share: domains and tags, matched case-insensitively, and an
unknown one is a usage error naming the close ones (a typo must not read as "the vault
has nothing on this": exit 2, not 1); limits are at least 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kbase_ci.errors import UsageError
from kbase_ci.query.view import QueryView


def _close(word: str, choices: Iterable[str], what: str, blank: str = "") -> str:
    """The close names, else the names (the empty one last, as `blank` says what it is:
    a bare `""` leading the list read as a slip)."""
    from rapidfuzz import fuzz, process  # only for an error message

    names = sorted(set(choices) - {""})
    near = [c for c, _, _ in process.extract(word, names, scorer=fuzz.WRatio, limit=3,
                                             score_cutoff=60)]
    if near:
        return f"; did you mean {', '.join(near)}?"
    shown = ", ".join(names[:12])
    more = f" and {len(names) - 12} more" if len(names) > 12 else ""
    empty = f'"" ({blank})' if blank and "" in set(choices) else ""
    if empty:
        more += f", and {empty}" if names else empty
    return f"; the {what} are {shown}{more}" if names or empty else f"; there are no {what}"


def domains(view: QueryView) -> set[str]:
    """Every domain of the vault now (the index's, and those of notes changed since)."""
    got = {str(d) for _, d in view.source.reader.core().groups}
    return got | {view.notes[p].domain for p in (*view.fresh.changed, *view.fresh.added)
                  if p in view.notes}


def domain_key(view: QueryView, domain: str | None) -> str | None:
    """`domain` as the notes spell it (matched case-insensitively), or None for none;
    UsageError naming close domains when no note has it."""
    if domain is None:
        return None
    known = domains(view)
    if domain in known:
        return domain
    folded = {d.casefold(): d for d in sorted(known)}
    got = folded.get(domain.strip().casefold())
    if got is not None:
        return got
    blank = ("the notes at the vault root" if view.vault.config.index.domain == "folder"
             else "the notes without a value")
    raise UsageError(f"no domain {domain!r}{_close(domain, known, 'domains', blank)}")


def tag_key(tag: str) -> str:
    return tag.strip().lstrip("#").casefold()


def has_tag(tags: Sequence[str], want: str) -> bool:
    """A note with `tags` has the (casefolded) tag `want` or a tag below it."""
    return any(t.casefold() == want or t.casefold().startswith(want + "/") for t in tags)


def check_tags(view: QueryView, tags: Sequence[str]) -> list[str]:
    """The tags casefolded, without `#`; UsageError naming close tags when a tag (and
    every tag below it) is on no note. Reads every note's tags: call it when a filter
    found nothing, where it decides between "none" and "no such tag"."""
    wanted = [tag_key(t) for t in tags if tag_key(t)]
    if not wanted:
        return wanted
    known: set[str] = set()
    for info in view.notes.values():
        known.update(t.casefold() for t in info.tags)
    for w in wanted:
        if not any(k == w or k.startswith(w + "/") for k in known):
            raise UsageError(f"no note has the tag #{w}{_close(w, known, 'tags')}")
    return wanted
