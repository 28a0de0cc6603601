"""The answer of `context` (kbase_ci.query.context): the bundle of notes to read, how
each was reached and what was cut, in full or `concise` (which notes and sections to
read, without their text), and its text form, whose lines the budget counts."""

from __future__ import annotations

from kbase_ci.query.answer import IndexInfo, Truncated
from kbase_ci.typedjson import Record, json_field


class Relation(Record):
    path: str
    relation: str
    """outlink, backlink, mutual or `tag:NAME`."""


class Section(Record):
    heading: str | None
    start_line: int
    end_line: int


class BundledNote(Record):
    path: str
    title: str
    depth: int
    primary: bool
    why: str
    linked_from: list[Relation]
    score: float
    backlinks: int
    tags: list[str]
    tokens: int
    sections: list[Section]
    omitted_sections: list[str]
    truncated: bool
    content: str


class TraversalStep(Record):
    source: str = json_field(key="from")
    to: str
    relation: str
    depth: int


class LinkTraversal(Record):
    total_links_found: int
    links_followed: int
    max_depth_reached: int
    traversal_strategy: str
    traversal_path: list[TraversalStep]
    followed_tags: list[str]


class AnalysisDepth(Record):
    preset: str
    hops: int
    max_notes: int


class IndexVersion(Record):
    commit: str | None
    date: str | None


class Metadata(Record):
    documents_analyzed: int
    primary_documents: list[str]
    linked_documents: list[str]
    analysis_depth: AnalysisDepth
    max_tokens: int
    tokens: int
    token_estimator: str
    knowledge_bank_version: IndexVersion
    limitations: list[str]


class ContextAnswer(Record):
    note: str | None = json_field(keep=True)
    query: str | None = json_field(keep=True)
    notes: list[BundledNote] = json_field(primary=True)
    link_traversal: LinkTraversal
    metadata: Metadata
    index: IndexInfo
    truncated: Truncated | None = json_field(default=None, omit=True)


class ConciseNote(Record):
    path: str
    title: str
    depth: int
    why: str
    tokens: int
    sections: list[Section]
    omitted_sections: list[str]


class ConciseMetadata(Record):
    max_tokens: int
    tokens: int
    limitations: list[str]


class ConciseContext(Record):
    """Which notes and sections to read (with their cost), without their text."""

    note: str | None = json_field(keep=True)
    query: str | None = json_field(keep=True)
    notes: list[ConciseNote] = json_field(primary=True)
    metadata: ConciseMetadata
    index: IndexInfo
    truncated: Truncated | None = json_field(default=None, omit=True)


Bundle = ContextAnswer | ConciseContext


def header_line(depth: str, strategy: str, notes: int, tokens: int, budget: int) -> str:
    """The first line of the text form (its cost is reserved in the budget)."""
    return (f"context: depth {depth}, strategy {strategy}, {notes} notes, "
            f"{tokens}/{budget} tokens")


def separator(path: str, depth: int, why: str) -> str:
    """The line above each note in the text form (its cost is part of the note's)."""
    return f"==== {path} (depth {depth}; {why}) ===="


def concise(answer: ContextAnswer) -> ConciseContext:
    """Which notes and sections to read (with their cost), without their text."""
    meta = answer.metadata
    return ConciseContext(
        answer.note, answer.query,
        [ConciseNote(n.path, n.title, n.depth, n.why, n.tokens, n.sections, n.omitted_sections)
         for n in answer.notes],
        ConciseMetadata(meta.max_tokens, meta.tokens, meta.limitations), answer.index)


def text_lines(answer: Bundle) -> list[str]:
    """The text form (`kbase context --format text`): the budget counts exactly these."""
    if isinstance(answer, ConciseContext):  # what to read, not the text
        return [f"{n.path}  {n.tokens} tokens  ({n.why}): "
                + "; ".join(str(sec.heading or "(top)") for sec in n.sections)
                for n in answer.notes]
    meta = answer.metadata
    lines = [header_line(meta.analysis_depth.preset,
                         answer.link_traversal.traversal_strategy,
                         len(answer.notes), meta.tokens, meta.max_tokens)]
    for n in answer.notes:
        lines.append(separator(n.path, n.depth, n.why))
        if n.content:
            lines.append(n.content)
    return lines
