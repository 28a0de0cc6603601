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
from typing import Any

from kbase_ci.parse.conceptmentions import name_keys, term_key
from kbase_ci.parse.outline import split_lines
from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.defining import about_the_page, defined_terms, lead
from kbase_ci.query.filters import domain_key
from kbase_ci.query.links import sentence_at
from kbase_ci.query.prose import Sentence, plain, read
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
    """The notes discussing it (as `discussed`, before `--limit`): those naming it where
    the index counts names (a concept's mentions; the unlinked mentions of the note
    documenting it) and those linking to its note or section; that note itself aside."""
    documented_by: Documented | None
    definition: list[Definition] | None = json_field(omit=True)
    discussed: list[Discussion] | None = json_field(omit=True)
    index: IndexInfo = json_field(keep=True)


def spelled_as(names: set[str]) -> re.Pattern[str]:
    """Any of the spellings, as words (the longest first)."""
    alts = "|".join(re.escape(n) for n in sorted(names, key=lambda n: (-len(n), n)) if n)
    return re.compile(rf"(?<!\w)(?:{alts})(?!\w)", re.IGNORECASE)


def _definitions(view: QueryView, key: str, doc: Documented | None, mentioning: list[str],
                 ) -> list[Definition]:
    """What defines the concept, by structure (issue 39): in the note or section
    documenting it, its frontmatter description (a whole note), then its sentences
    defining it ("X is ...", "X: ...", "... is called X"), else its lead sentence (the
    note is about X); failing those, and for an undocumented concept, the sentences
    defining it in the notes that mention it. Never an aside (a callout, a references
    section), a question, boilerplate, or a line that is only links, code or a rule."""
    if doc is not None:
        text = view.text(doc.path)
        sentences = read(text)[0]
        if doc.heading is not None:
            wanted = _heading_key(doc.heading)
            sentences = [s for s in sentences if _heading_key(s.heading) == wanted]
        # A description says what the note or section is about: a frontmatter
        # `description` (a whole note), a `description: ...` line (a property list)
        described = [s for s in sentences if not s.aside and _DESCRIBED.match(s.text)]
        fm = _description(view, doc, text) if doc.heading is None else None
        picked = [*([fm] if fm else []), *described[:1],
                  *(s for s in sentences if _defines(s, key))]
        opening = lead(sentences, section=doc.heading is not None)
        picked = picked[:LEAD] or ([opening] if opening is not None else [])
        if picked:
            return [_definition(doc.path, s) for s in picked]
    out = []
    for path, text in sorted(view.texts(p for p in mentioning
                                        if doc is None or p != doc.path).items()):
        out += [_definition(path, s) for s in read(text)[0] if _defines(s, key)]
    return out


def _definition(path: str, s: Sentence) -> Definition:
    return Definition(path, s.line, s.heading, s.text)


def _defines(s: Sentence, key: str) -> bool:
    return not s.aside and not about_the_page(s) and any(
        _same(key, k) for t in defined_terms(s) for k in name_keys(t))


def _same(key: str, other: str) -> bool:
    """One term, in either number: "expressions" is defined by "An expression is",
    "statuses" by "Status is"."""
    return key == other or bool(_numbers(key) & _numbers(other))


def _numbers(key: str) -> set[str]:
    """The key with its last word as written and without a plural ending."""
    head, _, last = key.rpartition(" ")
    forms = {last}
    if len(last) > 3 and last.endswith("s"):
        forms |= {last[:-1], last[:-2] if last.endswith("es") else last,
                  last[:-3] + "y" if last.endswith("ies") else last}
    return {f"{head} {f}" if head else f for f in forms}


_DESCRIPTION_KEYS = ("description", "desc", "summary", "excerpt", "abstract")
"""Frontmatter keys that hold a note's own one-line description (Dendron's `desc`)."""
_DESCRIBED = re.compile(rf"^(?:{'|'.join(_DESCRIPTION_KEYS)}|definition)[ \t]*:[ \t]*\S",
                        re.IGNORECASE)


def _description(view: QueryView, doc: Documented, text: str) -> Sentence | None:
    """The note's frontmatter description as a sentence (at its line), if it has one."""
    data = _frontmatter(view, doc.path)
    for name in _DESCRIPTION_KEYS:
        value = data.get(name)
        if isinstance(value, str) and len(plain(value).split()) >= 2:
            lines = split_lines(text)
            at = next((n for n, line in enumerate(lines[1:], 2)
                       if line.split(":", 1)[0].strip().casefold() == name), 1)
            return Sentence(at, plain(value), "", False)
    return None


def _frontmatter(view: QueryView, path: str) -> dict[str, Any]:
    """A note's frontmatter: the index's, or a fresh parse of a note changed since."""
    parsed = view.fresh.parsed.get(path)
    if parsed is not None:
        return parsed.frontmatter
    number = view.number.get(path)
    return view.source.reader.note_row(number).frontmatter if number is not None else {}


def _discussed(view: QueryView, found: re.Pattern[str], doc: Documented | None,
               mentioning: list[str], links: dict[str, list[int]], limit: int
               ) -> list[Discussion]:
    rows = []
    own = {doc.path} if doc is not None else set()
    for path, text in sorted(view.texts({*mentioning, *links}.difference(own)).items()):
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
    if not any(docs[k][1] is None for k in variants if k in docs):
        # No title or alias names it: a frontmatter `title` comes before a heading, and
        # a heading read as text is a name too (`_named`)
        titles, sections = _named(view, variants, name)
        docs.update(titles)
        for key, place in sections.items():
            docs.setdefault(key, place)
    # "cantrip" finds the section "Cantrips": the key as asked, else its other number
    key = next((k for k in variants if k in counts.total or k in docs), variants[0])
    doc = Documented(*docs[key]) if key in docs else None
    places = counts.places({key}, 10**9)[key] if key in counts.total else []
    mentioning = [p[0].path for p in places]
    if doc is not None and doc.heading is None:  # also for the count `--definition` gives
        # The concept counts only capitalised or backticked terms; prose writes a
        # documented term in lower case too ("a data lake"): the notes naming the
        # documenting note's title or an alias as words (its unlinked mentions, and the
        # notes it links to or that link to it) say it as well.
        from kbase_ci.query.mentions import unlinked_mentions

        named = {m.path for m in unlinked_mentions(view, doc.path, linked_too=True)[0]}
        mentioning += sorted(named.difference(mentioning))
    linking = _linking(view, doc)
    shown = places[0][1] if places else (name.strip() if doc is None or doc.heading is None
                                         else doc.heading)
    spelled = spelled_as({name.strip(), *(p[1] for p in places)}
                     | ({doc.heading} if doc is not None and doc.heading else set()))
    discussing = {*mentioning, *linking}.difference([doc.path] if doc is not None else [])
    return ConceptAnswer(
        shown, key, len(discussing), doc,
        _definitions(view, key, doc, mentioning) if definition else None,
        _discussed(view, spelled, doc, mentioning, linking, limit) if notes else None,
        view.index_info())


def _named(view: QueryView, keys: list[str], asked: str
           ) -> tuple[dict[str, tuple[str, None]], dict[str, tuple[str, str]]]:
    """What documents `keys` where the index's name tables cannot tell, from one pass
    over the notes: (key -> (the note whose frontmatter `title` names it, None); key ->
    (the first note with a heading naming it read as text, that heading)). Dendron names
    notes by their hierarchy (`dendron.topic.lookup`) and titles them in frontmatter; a
    heading may be a link or open with an emoji (`## [[Batch Data Processing|Batch
    Ingestion]]`, `### 🥉 Bronze`). A note titled exactly as `asked` comes first
    (`Meeting Note` before `Meeting Notes`), then by path."""
    wanted = set(keys)
    fresh = view.fresh
    gone = {*fresh.changed, *fresh.deleted}
    rows = [(row.path, row.frontmatter.get("title"), [h[1] for h in row.headings])
            for row in view.source.reader.notes() if row.path not in gone]
    rows += [(path, fresh.parsed[path].frontmatter.get("title"),
              [h.text for h in fresh.parsed[path].headings])
             for path in (*fresh.changed, *fresh.added) if path in fresh.parsed]
    exact = asked.strip().casefold()
    titles: dict[str, tuple[str, None]] = {}
    for _, path, title in sorted((t.strip().casefold() != exact, path, t)
                                 for path, t, _ in rows if isinstance(t, str)):
        for key in name_keys(title) & wanted:
            titles.setdefault(key, (path, None))
    sections: dict[str, tuple[str, str]] = {}
    for path, _, headings in sorted(rows, key=lambda r: r[0]):
        for heading in headings:
            for key in name_keys(_as_text(heading)) & wanted:
                sections.setdefault(key, (path, heading))
    return titles, sections


def _as_text(heading: str) -> str:
    """A heading read as text: links as their text, symbols before the words (an
    emoji) left out."""
    return _LEADING_SYMBOLS.sub("", plain(heading))


def _heading_key(heading: str) -> str:
    """A heading's key as a name: `### 🥉 Bronze` is `bronze`."""
    return term_key(_as_text(heading))


_LEADING_SYMBOLS = re.compile(r"^[^\w(\[`\"']+")


def _linking(view: QueryView, doc: Documented | None) -> dict[str, list[int]]:
    """Notes linking to the documenting note (to its section, when a section documents
    the concept) -> the lines of those links."""
    links: dict[str, list[int]] = {}
    if doc is not None:
        for lk in view.backlinks(doc.path):
            # A section documents it: only links to that section speak of it
            if lk.source != doc.path and (doc.heading is None or term_key(
                    lk.subpath.lstrip("#").split("#")[-1]) == term_key(doc.heading)):
                links.setdefault(lk.source, []).append(lk.line)
    return links
