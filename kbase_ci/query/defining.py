"""Which sentences of a note define a term, and which one opens it (`concept
--definition`, `summarize --extract facts`): rules on the sentences `query.prose` reads,
by their structure, never their position alone (issue 39).

A defining sentence reads "X is/are/means/refers to ...", "X: ..." (an item or a short
line), or "... is called X"; "X is not ..." and what release notes and page furniture
say ("X was introduced in 4.0", "This page is long.") define nothing. A note's lead is
its opening sentence when it opens with prose: not after a table or code, not a list
of entries, not a question.
"""

from __future__ import annotations

import re

from kbase_ci.query.prose import Sentence

_COPULA = re.compile(
    r"^(?P<term>[^.!?:;,]{1,80}?)\s+(?:is|are|was|were|means|refers to|denotes|stands for"
    r"|describes|defines)\s+(?P<next>\S+)", re.IGNORECASE)
_COLON = re.compile(r"^(?P<term>[^.!?:;]{1,60}?)\s*(?::|\s[-\u2013\u2014]\s)\s*\S")
_CALLED = re.compile(
    r"\s(?:is|are)\s+(?:also\s+|often\s+|commonly\s+|usually\s+|sometimes\s+)?"
    r"(?:called|known as|termed|referred to as)\s+(?P<term>[^.!?,;:()]{1,60})",
    re.IGNORECASE)
_OPENERS = frozenset({"it", "this", "that", "there", "these", "those", "they", "he", "she",
                      "we", "you", "i", "which", "what", "here", "each", "all", "some"})
_NOT_DEFINING = frozenset({
    # "X is not ...", and what release notes and page furniture say of X
    "not", "no", "never", "introduced", "added", "released", "deprecated", "removed",
    "renamed", "fixed", "changed", "updated", "moved", "disabled", "enabled", "required",
    "shown", "listed", "covered", "discussed", "explained", "mentioned", "below", "above"})
_BOILERPLATE = re.compile(
    r"^(?:uncomment|click|tap|scroll|press|hover|subscribe|sign up|log in|edit (?:this|in)"
    r"|was this page helpful|please don't edit|copy this note"
    r"|this (?:page|section|note|document|article|guide|tutorial)|these (?:samples|examples)"
    r"|here (?:is|are)|the following|see below|as follows)\b"
    r"|\b(?:editor|widget|playground|console|terminal|cell|button|form|video|exercise)"
    r" (?:below|above)\b", re.IGNORECASE)
"""Prose about the page, not about its subject: an interactive editor's instructions
("Uncomment the code blocks in the editor below ..."), a wiki's footer, what the page or
its samples show ("This page is long.", "Here is an example ...", "The following ...")."""


def _article(term: str) -> str:
    for article in ("the ", "a ", "an "):
        if term.casefold().startswith(article):
            return term[len(article):]
    return term


def defined_terms(s: Sentence) -> tuple[str, ...]:
    """The terms a defining sentence defines: "X is ...", "X means ...", "X refers to
    ...", an item or a short line `X: ...` / `X - ...`, and "... is called X" (also
    "known as", "termed"); none for "X is not ...", "X was introduced in ..." and other
    sentences about the page or a release."""
    out = []
    m = _COPULA.match(s.text)
    if m is not None and m.group("next").casefold().strip(",;:") in _NOT_DEFINING:
        m = None
    if m is None and (s.item or len(s.text) < 200):
        m = _COLON.match(s.text)
        if m is not None and len(m.group("term").split()) > 6:
            m = None
    if m is not None:
        term = _article(m.group("term").strip().strip("\"'`"))
        words = term.split()
        if words and words[0].casefold() not in _OPENERS and len(words) <= 8:
            out.append(term)
    called = _CALLED.search(s.text)
    if called is not None:
        term = _article(called.group("term").strip().strip("\"'`"))
        if 0 < len(term.split()) <= 6:
            out.append(term)
    return tuple(out)


def defined_term(s: Sentence) -> str | None:
    """The term a defining sentence defines (the first, `defined_terms`), else None."""
    terms = defined_terms(s)
    return terms[0] if terms else None


def about_the_page(s: Sentence) -> bool:
    """Prose that cannot define anything: a question, a label (`Examples:`), or
    boilerplate about the page itself (`_BOILERPLATE`)."""
    text = s.text
    return (text.endswith("?") or (text.endswith(":") and len(text.split()) <= 3)
            or _BOILERPLATE.search(text) is not None)


_EXISTENTIAL = re.compile(r"there (?:is|are|was|were)\b", re.IGNORECASE)


def lead(sentences: list[Sentence], *, section: bool = False) -> Sentence | None:
    """The opening sentence of a note (or of a section), when it opens with prose: the
    first sentence of its first block that is not an aside, a label or boilerplate, and
    not a question nor "There is ...". A table or code block before it opens the note
    instead: no lead. A list that opens it has a lead only when its first item is a
    sentence (four words or more, ending `.`, `!` or `:`): `- kde5` or `- They have spin
    1/2` is an entry, not a lead."""
    skipped = -1  # a block of page furniture: passed over whole
    for s in sentences:
        if s.block == skipped:
            continue
        if s.aside or (s.text.endswith(":") and len(s.text.split()) <= 3) \
                or _BOILERPLATE.search(s.text):
            skipped = s.block
            continue
        if not s.first or s.text.endswith("?") or s.figured[section] \
                or _EXISTENTIAL.match(s.text):
            return None
        if s.item and not (s.text.endswith((".", "!", ":")) and len(s.text.split()) >= 4):
            return None
        return s
    return None
