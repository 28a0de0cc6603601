"""`kbase compare A B [--concept C]`: two notes or two domains side by side, model-free.

A side is a note (a path, title or alias) or, when no note has that name, a domain.
For each side: where it discusses the concept (every line naming one of its spellings,
with a snippet; the spellings are the name given and those `concepts.json` holds for
its key), and its links and tags; then the links and tags both sides share and those
only one has. A link is its target note's path (a target not written yet: the key of
its target as written).
"""

from __future__ import annotations

import re

from kbase_ci.errors import UsageError
from kbase_ci.parse.conceptmentions import term_key
from kbase_ci.parse.linksyntax import link_from_raw
from kbase_ci.parse.outline import split_lines
from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.concepts import spelled_as
from kbase_ci.query.filters import domain_key
from kbase_ci.query.links import sentence_at
from kbase_ci.query.undocumented import Counts
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, json_field
from kbase_ci.vault.notestore import target_key


class Passage(Record):
    path: str
    line: int
    snippet: str


class Side(Record):
    name: str
    kind: str
    """`note` or `domain`."""
    notes: int
    mentions: int
    """Lines naming the concept (0 without `--concept`)."""
    passages: list[Passage]
    links: int
    tags: list[str]


class CompareAnswer(Record):
    concept: str | None
    a: Side
    b: Side
    shared_links: list[str]
    only_a_links: list[str]
    only_b_links: list[str]
    shared_tags: list[str]
    only_a_tags: list[str]
    only_b_tags: list[str]
    index: IndexInfo = json_field(keep=True)


def side_notes(view: QueryView, name: str) -> tuple[str, str, list[str]]:
    """(shown name, `note` or `domain`, its notes by path) for a side named `name`."""
    try:
        path = view.lookup(name)
        return path, "note", [path]
    except UsageError as note_error:
        try:
            domain = domain_key(view, name.strip())
        except UsageError:
            raise UsageError(f"{note_error}; nor is there a domain {name.strip()!r}") from None
        assert domain is not None
        return domain, "domain", sorted(p for p, i in view.notes.items() if i.domain == domain)


def spellings(view: QueryView, concept: str) -> re.Pattern[str]:
    """The concept's spellings as words (the longest first)."""
    key = term_key(concept)
    names = {concept.strip()}
    counts = Counts(view)
    if key in counts.total:
        names |= {p[1] for p in counts.places({key}, 10**9)[key]}
    return spelled_as(names)


def _side(view: QueryView, name: str, found: re.Pattern[str] | None, limit: int
          ) -> tuple[Side, set[str], set[str]]:
    shown, kind, paths = side_notes(view, name)
    passages: list[Passage] = []
    mentions = 0
    if found is not None:
        for path, text in sorted(view.texts(paths).items()):
            for n, line in enumerate(split_lines(text), 1):
                m = found.search(line)
                if m:
                    mentions += 1
                    if len(passages) < limit:
                        passages.append(Passage(path, n, sentence_at(line, m.start() + 1)))
    links = set()
    for p in paths:
        for lk in view.outgoing(p):
            target = lk.target or target_key(link_from_raw(lk.raw).target)
            if target and "://" not in target and target not in paths:
                links.add(target)
    tags = {t for p in paths for t in view.notes[p].tags}
    return Side(shown, kind, len(paths), mentions, passages, len(links), sorted(tags)), \
        links, tags


def compare_answer(view: QueryView, a: str, b: str, *, concept: str | None = None,
                   limit: int = 10) -> CompareAnswer:
    found = spellings(view, concept) if concept and concept.strip() else None
    side_a, links_a, tags_a = _side(view, a, found, limit)
    side_b, links_b, tags_b = _side(view, b, found, limit)
    return CompareAnswer(concept.strip() if found is not None and concept else None,
                         side_a, side_b, sorted(links_a & links_b), sorted(links_a - links_b),
                         sorted(links_b - links_a), sorted(tags_a & tags_b),
                         sorted(tags_a - tags_b), sorted(tags_b - tags_a), view.index_info())
