"""A note cut into the sections the budget takes or leaves, each with its token cost."""

from __future__ import annotations

from dataclasses import dataclass

from kbase_ci.parse.frontmatter import split as split_frontmatter
from kbase_ci.parse.outline import sections, split_lines
from kbase_ci.parsed import Heading, ParsedNote
from kbase_ci.query.budget import estimate_tokens
from kbase_ci.query.traverse import Reached
from kbase_ci.query.view import QueryView

JOIN_TOKENS = 2
"""Charged per section and per note header: the newlines that join them in the output."""


@dataclass
class NoteSections:
    reached: Reached
    pieces: list[tuple[str | None, int, int, str]]
    """(heading path, first line, last line, text) per section, document order; the
    lines are those of the text (blank lines around it left out)."""
    costs: list[int]


def outline_note(view: QueryView, path: str, text: str) -> ParsedNote:
    """What `outline.sections` needs (headings with parents, where the frontmatter ends),
    from the index's heading table instead of a full parse: an unchanged note's headings
    are the index's. Notes changed since the index were parsed by the overlay."""
    parsed = view.fresh.parsed.get(path)
    if parsed is not None:
        return parsed
    info = view.notes[path]
    _, fm_end, _, _ = split_frontmatter(text.replace("\r\n", "\n").replace("\r", "\n"))
    heads: list[Heading] = []
    stack: list[tuple[int, str]] = []
    for level, title, line in info.headings:
        while stack and stack[-1][0] >= level:
            stack.pop()
        heads.append(Heading(level, title, line, tuple(t for _, t in stack)))
        stack.append((level, title))
    return ParsedNote(path, info.title, headings=tuple(heads), frontmatter_end=fm_end)


def load_sections(view: QueryView, r: Reached) -> NoteSections:
    text = view.text(r.path)
    parsed = outline_note(view, r.path, text)
    lines = split_lines(text)
    pieces: list[tuple[str | None, int, int, str]] = []
    for sec in sections(parsed, text):
        raw = lines[sec.start_line - 1:sec.end_line]
        start, end = sec.start_line, sec.end_line
        while raw and not raw[0].strip():  # the lines an agent cites are the text's own
            raw, start = raw[1:], start + 1
        while raw and not raw[-1].strip():
            raw, end = raw[:-1], end - 1
        if not raw:
            continue
        if pieces and _heading_only(pieces[-1][3]) and pieces[-1][2] < start:
            # A heading with nothing under it before its first subheading: the two are
            # one piece (a heading alone tells the agent nothing).
            head = pieces.pop()
            raw = [*head[3].split("\n"), *[""] * (start - head[2] - 1), *raw]
            start = head[1]
        pieces.append((" > ".join(sec.path) or None, start, end, "\n".join(raw)))
    return NoteSections(r, pieces, [estimate_tokens(p[3]) + JOIN_TOKENS for p in pieces])


def _heading_only(text: str) -> bool:
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.split("\n"))


def cut(piece: tuple[str | None, int, int, str], budget: int) -> tuple[int, str] | None:
    """The longest opening of `piece` in whole paragraphs (never inside a code fence)
    costing at most `budget` tokens with its join: (its last line, its text), or None
    when not even its first paragraph fits."""
    lines = piece[3].split("\n")
    best: tuple[int, str] | None = None
    spent, start, fenced = JOIN_TOKENS, 0, False
    for i, line in enumerate([*lines, ""]):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if fenced or line.strip() or i == 0 or not lines[i - 1].strip():
            continue  # a paragraph ends at the blank line after it
        # Paragraph by paragraph: a sum of the parts' estimates is at least the whole's.
        spent += estimate_tokens("\n".join(lines[start:i])) + 1
        if spent > budget:
            break
        text, start = "\n".join(lines[:i]).rstrip("\n"), i
        if not _heading_only(text):  # a heading alone tells the agent nothing
            best = (piece[1] + i - 1, text)
    return best


def section_title(heading: str | None) -> str:
    """A section as `read NOTE#heading` takes it: its own heading."""
    return heading.rsplit(" > ", 1)[-1] if heading else "(before the first heading)"


def chosen_text(n: NoteSections, picks: list[int], partial: tuple[int, int, str] | None
                ) -> tuple[str, str]:
    """The line ranges of the chosen sections `picks` (sorted; consecutive ones merged)
    and their text; `partial`: (section, its last line, its text) of the one cut short."""
    ranges: list[list[int]] = []
    texts = []
    for i in picks:
        _, start, end, text = n.pieces[i]
        if partial is not None and partial[0] == i:
            end, text = partial[1], partial[2]
        if ranges and i - 1 in picks:
            ranges[-1][1] = end
        else:
            ranges.append([start, end])
        texts.append(text)
    return ", ".join(f"{a}-{b}" for a, b in ranges), "\n\n".join(texts)


OMITTED_MAX = 6
"""Sections left out a note names (the most relevant; then how many more): the outline
of a long note is `read`'s, not worth the text it would push out."""


def most_relevant(labels: list[str], prio: list[float]) -> list[str]:
    """The `OMITTED_MAX` labels of highest `prio` (ties: in order), then how many more."""
    order = sorted(range(len(labels)), key=lambda i: (-prio[i], i))
    out = [labels[i] for i in order[:OMITTED_MAX]]
    if len(labels) > OMITTED_MAX:
        out.append(f"(+{len(labels) - OMITTED_MAX} more)")
    return out
