"""The answer of `context` (kbase_ci.query.context): the bundle of notes to read, how
each was reached and what was cut, in full or `concise` (which notes and sections to
read, without their text), and its text form, whose lines the budget counts.

Compact on purpose (issue 31): the JSON is mostly note text. Each note says only what an
agent acts on (its path, why it is there, the lines it shows, the headings it leaves
out); the traversal is summed up in counts (`link_traversal`, `metadata`:
kbase_ci.query.traversalinfo), never a list of steps."""

from __future__ import annotations

from kbase_ci.query.answer import IndexInfo, Truncated
from kbase_ci.query.budget import estimate_tokens
from kbase_ci.query.traversalinfo import LinkTraversal, Metadata
from kbase_ci.typedjson import Record, json_field


class BundledNote(Record):
    """One note of the bundle: where it is, why it is there, and the text to read."""

    path: str
    depth: int
    """Links from the nearest seed (0: a seed)."""
    why: str
    """A seed's reason (`search hit #1`, `the note asked for`) or the note it was reached
    from (`linked from A.md`, `links to A.md`, `shares #tag with A.md`)."""
    lines: str
    """The line ranges of `text` in the note (`1-12, 30-41`): whole sections, the last
    one possibly cut at a paragraph."""
    omitted: list[str]
    """Headings of the sections left out (`read NOTE#heading` reads one)."""
    text: str


class ContextAnswer(Record):
    note: str | None = json_field(keep=True, omit=True)
    query: str | None = json_field(keep=True, omit=True)
    notes: list[BundledNote]
    tokens: int
    """What the text form costs (the JSON: at most `max_tokens`)."""
    max_tokens: int
    left_out: list[str]
    """Notes the traversal reached that did not fit, most relevant first."""
    link_traversal: LinkTraversal = json_field(keep=True)
    metadata: Metadata = json_field(keep=True)
    index: IndexInfo
    followed_tags: list[str] | None = json_field(default=None, omit=True)
    truncated: Truncated | None = json_field(default=None, omit=True)


class ConciseNote(Record):
    path: str
    depth: int
    why: str
    tokens: int
    lines: str
    omitted: list[str]


class ConciseContext(Record):
    """Which notes and sections to read (with their cost), without their text."""

    note: str | None = json_field(keep=True, omit=True)
    query: str | None = json_field(keep=True, omit=True)
    notes: list[ConciseNote]
    tokens: int
    max_tokens: int
    left_out: list[str]
    link_traversal: LinkTraversal = json_field(keep=True)
    metadata: Metadata = json_field(keep=True)
    index: IndexInfo
    truncated: Truncated | None = json_field(default=None, omit=True)


Bundle = ContextAnswer | ConciseContext


def header_line(notes: int, tokens: int, budget: int) -> str:
    """The first line of the text form (its cost is reserved in the budget)."""
    return f"context: {notes} notes, {tokens}/{budget} tokens"


def separator(path: str, depth: int, why: str) -> str:
    """The line above each note in the text form (its cost is part of the note's)."""
    return f"==== {path} (depth {depth}; {why}) ===="


def concise(answer: ContextAnswer) -> ConciseContext:
    """Which notes and sections to read (with their cost), without their text."""

    return ConciseContext(
        answer.note, answer.query,
        [ConciseNote(n.path, n.depth, n.why,
                     estimate_tokens(separator(n.path, n.depth, n.why) + "\n" + n.text),
                     n.lines, n.omitted) for n in answer.notes],
        answer.tokens, answer.max_tokens, answer.left_out, answer.link_traversal,
        answer.metadata, answer.index, answer.truncated)


def text_lines(answer: Bundle) -> list[str]:
    """The text form (`kbase context --format text`): the budget counts exactly these."""
    if isinstance(answer, ConciseContext):  # what to read, not the text
        return [f"{n.path}  {n.tokens} tokens  ({n.why}): lines {n.lines}"
                for n in answer.notes]
    lines = [header_line(len(answer.notes), answer.tokens, answer.max_tokens)]
    for n in answer.notes:
        lines.append(separator(n.path, n.depth, n.why))
        if n.text:
            lines.append(n.text)
    return lines
