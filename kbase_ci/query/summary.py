"""`kbase summarize NOTE`: an extractive summary, model-free (no LLM call).

- `lead`: the first sentences of the note's body (frontmatter, rules, embeds, code and
  lines that are only links are no sentences; callouts and references sections are
  asides, left out: `query.prose`);
- `outline`: its headings (level, text, line);
- `key_sentences`: the sentences carrying the most of the note's own vocabulary: each
  word (3+ letters, stop words aside) weighs 1 + log of how often the note uses it; a
  sentence scores the sum over its distinct words divided by sqrt(its word count + 4)
  (so neither a one-word line nor a run-on paragraph wins), the best `KEY` in document
  order, lead sentences and asides aside.

`--extract facts` returns the defining sentences instead ("X is ...", "X: ...", a
definition list's `: ...`), each with the term and its heading; `--extract
code-snippets` the fenced code blocks with their language and heading.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Annotated

from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.defining import about_the_page, defined_term
from kbase_ci.query.prose import Sentence, read
from kbase_ci.query.spec import Note, Param, Query, Session
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, json_field

LEAD = 2
KEY = 5
_WORD = re.compile(r"[^\W\d_][\w'-]{2,}")
_STOP = frozenset(re.findall(r"\w+", """
the and for are but not you all any can had her was one our out has
him his how its may new now old see two way who did get let put say she too use with this
that from they will have been were what when your which their there them then than these
those some into more also such only other over most very just each both does about after
before while where would could should might must here because being using used like make
made many much same well back even still first through between under again once"""))


class Line(Record):
    line: int
    heading: str
    text: str


class Heading(Record):
    level: int
    text: str
    line: int


class Fact(Record):
    term: str
    line: int
    heading: str
    text: str


class Snippet(Record):
    line: int
    language: str
    heading: str
    code: str


class SummaryAnswer(Record):
    path: str
    title: str
    extract: str = json_field(keep=True)
    lead: list[Line] | None = json_field(default=None, omit=True)
    outline: list[Heading] | None = json_field(default=None, omit=True)
    key_sentences: list[Line] | None = json_field(default=None, omit=True)
    facts: list[Fact] | None = json_field(default=None, omit=True)
    code_snippets: list[Snippet] | None = json_field(default=None, omit=True)
    index: IndexInfo | None = json_field(default=None, keep=True)


def _words(text: str) -> list[str]:
    return [w for w in (m.group(0).casefold() for m in _WORD.finditer(text))
            if w not in _STOP]


def key_sentences(sentences: list[Sentence], skip: int, count: int = KEY) -> list[Sentence]:
    """The `count` sentences past the first `skip` weighing most, in document order."""
    freq = Counter(w for s in sentences for w in _words(s.text))
    weight = {w: 1 + math.log(c) for w, c in freq.items()}
    scored = []
    for n, s in enumerate(sentences[skip:], skip):
        words = _words(s.text)
        if len(words) >= 3:
            score = sum(weight[w] for w in set(words)) / math.sqrt(len(words) + 4)
            scored.append((-score, n))
    return [sentences[n] for n in sorted(n for _, n in sorted(scored)[:count])]


def summary_answer(view: QueryView, path: str, *, extract: str = "summary") -> SummaryAnswer:
    sentences, blocks, headings = read(view.text(path))
    title = view.notes[path].title
    if extract == "facts":
        facts = [Fact(t, s.line, s.heading, s.text) for s in sentences
                 if not s.aside and not about_the_page(s)
                 and (t := defined_term(s)) is not None]
        return SummaryAnswer(path, title, extract, facts=facts, index=view.index_info())
    if extract == "code-snippets":
        snippets = [Snippet(b.line, b.language, b.heading, b.code) for b in blocks]
        return SummaryAnswer(path, title, extract, code_snippets=snippets,
                             index=view.index_info())
    # The lead is the note's own opening: callouts and references sections are asides
    # (rules, embeds, link-only lines and frontmatter are no sentences at all)
    own = [s for s in sentences if not s.aside]
    lead = own[:LEAD]
    return SummaryAnswer(
        path, title, extract, [Line(s.line, s.heading, s.text) for s in lead],
        [Heading(lv, text, ln) for lv, text, ln in headings],
        [Line(s.line, s.heading, s.text) for s in key_sentences(own, len(lead))],
        index=view.index_info())


EXTRACTS = ("summary", "facts", "code-snippets")


class SummarizeParams(Record):
    note: Note
    extract: Annotated[str, Param(choices=EXTRACTS,
                                  help="what to extract (default: %(default)s)",
                                  tool="summary, facts (defining sentences) or "
                                       "code-snippets.")] = "summary"


def _run(s: Session, p: SummarizeParams) -> SummaryAnswer:
    view = s.view()
    return summary_answer(view, view.lookup(p.note), extract=p.extract)


def _lines(a: SummaryAnswer) -> list[str]:
    lines = [f"{a.path} ({a.extract})"]
    if a.lead is not None:
        lines += [f"  {x.line}: {x.text}" for x in a.lead]
    if a.outline:
        lines.append("outline:")
        lines += [f"  {'  ' * (h.level - 1)}{h.text} (line {h.line})" for h in a.outline]
    if a.key_sentences:
        lines.append("key sentences:")
        lines += [f"  {x.line}: {x.text}" for x in a.key_sentences]
    for f in a.facts or []:
        lines.append(f"  {f.line}: [{f.term}] {f.text}")
    for c in a.code_snippets or []:
        lines += [f"  {c.line}: ```{c.language}  ({c.heading or 'top'})", c.code, "  ```"]
    return lines


def _found(a: SummaryAnswer) -> bool:
    return bool(a.lead or a.outline or a.key_sentences or a.facts or a.code_snippets)


QUERIES = [Query(
    "summarize", ("summarize",), help="an extractive summary of a note, its facts or code",
    description="Lead sentences, section outline and key sentences (by the note's own term "
                "weights); --extract facts: defining sentences with their headings; "
                "--extract code-snippets: fenced code with language and heading. No "
                "model. Exit 0 found, 1 nothing to extract, 2 no such note.",
    fold=("digest", "summarize"),
    params=SummarizeParams, run=_run, text=_lines, found=_found,
    lists=("lead", "facts", "code_snippets", "key_sentences", "outline"))]
