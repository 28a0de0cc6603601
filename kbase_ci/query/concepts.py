"""`kbase concepts` and `kbase concept "X"`: the vault's recurring terms, documented or
not, and one term's definition and discussion. Model-free, from the index's
`concepts.json` with the overlay applied (`query.undocumented.Counts`).

A concept is *documented* by the note whose title or alias names it (also as one of the
names of `Trap Interrupt (陷入)`), else by the first note with a heading naming it.
Its definition is the first defining sentence ("X is ...", "X: ...") of that note or
section, else its lead sentences; an undocumented concept's definitions are the
defining sentences of the notes that mention it. Where it is discussed: the notes that
mention it, link to the note documenting it or name that note's title or an alias in
prose (its unlinked mentions: a plain lower-case "data lake" too), ranked by how often
they do.
"""

from __future__ import annotations

import re

from kbase_ci.parse.mentions import name_keys, term_key
from kbase_ci.parse.outline import split_lines
from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.filters import domain_key
from kbase_ci.query.links import sentence_at
from kbase_ci.query.prose import Sentence, defined_term, read
from kbase_ci.query.undocumented import Counts
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, json_field

MENTIONED = 3
"""Notes named per undocumented concept in `concepts` (`more` counts the rest)."""
LEAD = 2
"""Sentences a definition takes when the documenting note defines nothing in words."""


class Documented(Record):
    path: str
    heading: str | None
    """None: the note's title or an alias names it; else the section naming it."""

    @property
    def place(self) -> str:
        """`path#heading`, or the path when the note itself documents it (text forms)."""
        return f"{self.path}#{self.heading}" if self.heading else self.path


class ConceptItem(Record):
    name: str
    key: str
    notes: int
    """Notes that mention it (in the domain, when one is asked)."""
    documented_by: Documented | None
    mentioned_in: list[str]
    """Undocumented: the first notes (by path) that mention it."""


class ConceptsAnswer(Record):
    domain: str | None
    min_notes: int
    documented: int
    undocumented: int
    concepts: list[ConceptItem]
    index: IndexInfo


def _domain(view: QueryView, domain: str | None) -> dict[str, bool] | None:
    return None if domain is None else {p: i.domain == domain for p, i in view.notes.items()}


def concepts_answer(view: QueryView, *, domain: str | None = None, min_notes: int = 2,
                    limit: int = 50) -> ConceptsAnswer:
    """Concepts in at least `min_notes` notes, widest spread first (then by key)."""
    domain = domain_key(view, domain)
    counts = Counts(view, _domain(view, domain))
    wanted = counts.wanted(min_notes)
    docs = counts.documents(wanted)
    ranked = sorted(wanted, key=lambda k: (-counts.total[k], k))
    shown = ranked[:limit]
    places = counts.places(set(shown), MENTIONED)
    items = [ConceptItem(places[k][0][1], k, counts.total[k],
                         Documented(*docs[k]) if k in docs else None,
                         [] if k in docs else [p[0].path for p in places[k]])
             for k in shown]
    return ConceptsAnswer(domain, min_notes, len(wanted & set(docs)),
                          len(wanted - set(docs)), items, view.index_info())


class Definition(Record):
    path: str
    line: int
    heading: str
    text: str


class Discussion(Record):
    path: str
    line: int
    mentions: int
    """Times the note writes the concept's name, plus its links to the documenting note."""
    snippet: str


class ConceptAnswer(Record):
    concept: str
    key: str
    notes: int
    """Notes that mention it in words (links aside)."""
    documented_by: Documented | None
    definition: list[Definition] | None = json_field(omit=True)
    discussed: list[Discussion] | None = json_field(omit=True)
    index: IndexInfo = json_field(keep=True)


def spelled_as(names: set[str]) -> re.Pattern[str]:
    """Any of the spellings, as words (the longest first)."""
    alts = "|".join(re.escape(n) for n in sorted(names, key=lambda n: (-len(n), n)) if n)
    return re.compile(rf"(?<!\w)(?:{alts})(?!\w)", re.IGNORECASE)


def _definitions(view: QueryView, key: str, doc: Documented | None, mentioning: list[str],
                 spelled: re.Pattern[str]) -> list[Definition]:
    """The documenting note's (or section's) sentences defining the concept, else those
    naming it, else its lead; undocumented: the defining sentences of the notes."""
    if doc is not None:
        sentences, _, _ = read(view.text(doc.path))
        if doc.heading is not None:
            sentences = [s for s in sentences if s.heading == doc.heading]
        own = [s for s in sentences if (t := defined_term(s)) and key in name_keys(t)]
        named = [s for s in sentences if spelled.search(s.text)]
        picked = own[:LEAD] or named[:LEAD] or sentences[:LEAD]
        return [_definition(doc.path, s) for s in picked]
    out = []
    for path, text in sorted(view.texts(mentioning).items()):
        for s in read(text)[0]:
            if (t := defined_term(s)) and key in name_keys(t):
                out.append(_definition(path, s))
    return out


def _definition(path: str, s: Sentence) -> Definition:
    return Definition(path, s.line, s.heading, s.text)


def _discussed(view: QueryView, found: re.Pattern[str], doc: Documented | None,
               mentioning: list[str], limit: int) -> list[Discussion]:
    links: dict[str, list[int]] = {}
    if doc is not None:
        for lk in view.backlinks(doc.path):
            # A section documents it: only links to that section speak of it
            if lk.source != doc.path and (doc.heading is None or term_key(
                    lk.subpath.lstrip("#").split("#")[-1]) == term_key(doc.heading)):
                links.setdefault(lk.source, []).append(lk.line)
    rows = []
    for path, text in sorted(view.texts({*mentioning, *links}).items()):
        lines = split_lines(text)
        hits = [(n, m.start()) for n, line in enumerate(lines, 1)
                for m in found.finditer(line)]
        count = len(hits) + len(links.get(path, ()))
        if not count:
            continue
        line, col = hits[0] if hits else (min(links[path]), 0)
        snippet = sentence_at(lines[line - 1] if line <= len(lines) else "", col + 1)
        rows.append(Discussion(path, line, count, snippet))
    rows.sort(key=lambda d: (-d.mentions, d.path))
    return rows[:limit]


def _variants(key: str) -> list[str]:
    """The key, then its other number (a one-word key keeps its plural `s`)."""
    return [key, key[:-1] if key.endswith("s") and len(key) > 3 else key + "s"]


def concept_answer(view: QueryView, name: str, *, definition: bool = True,
                   notes: bool = True, limit: int = 20) -> ConceptAnswer:
    """One concept: who documents it, its definition, where it is discussed."""
    counts = Counts(view)
    variants = _variants(term_key(name))
    docs = counts.documents(set(variants))
    # "cantrip" finds the section "Cantrips": the key as asked, else its other number
    key = next((k for k in variants if k in counts.total or k in docs), variants[0])
    doc = Documented(*docs[key]) if key in docs else None
    places = counts.places({key}, 10**9)[key] if key in counts.total else []
    mentioning = [p[0].path for p in places]
    if doc is not None and doc.heading is None:  # also for the count `--definition` gives
        # The concept counts only capitalised or backticked terms; prose writes a
        # documented term in lower case too ("a data lake"): the notes naming the
        # documenting note's title or an alias as words (its unlinked mentions) say it
        # as well (with its backlinks, in `_discussed`).
        from kbase_ci.query.mentions import unlinked_mentions

        named = {m.path for m in unlinked_mentions(view, doc.path)[0]}
        mentioning += sorted(named.difference(mentioning, (doc.path,)))
    shown = places[0][1] if places else (name.strip() if doc is None or doc.heading is None
                                         else doc.heading)
    spelled = spelled_as({name.strip(), *(p[1] for p in places)}
                     | ({doc.heading} if doc is not None and doc.heading else set()))
    return ConceptAnswer(
        shown, key, len(mentioning), doc,
        _definitions(view, key, doc, mentioning, spelled) if definition else None,
        _discussed(view, spelled, doc, mentioning, limit) if notes else None,
        view.index_info())
