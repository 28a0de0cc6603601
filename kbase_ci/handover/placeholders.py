"""Whether a section says something: placeholders, "none", and real content, line by line.

A handover that reads "TODO", "- ", "see above" or "Check the code." under a heading
hands nothing over, so such lines count as missing. "None" is different: it is an
explicit answer ("no blockers"), accepted where a section is merely required and
rejected where a rule demands content. Comments (`<!-- -->`, `%% %%`) are guidance
for the writer (skeletons use them) and never count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from kbase_ci.parse.anchors import normalize_heading

LineKind = Literal["content", "placeholder", "nil"]

_COMMENTS = (("<!--", "-->"), ("%%", "%%"))
_MARKER = re.compile(r"^\s*(?:>\s*)*(?:(?:[-*+]|\d+[.)])(?:\s+|$))?(?:\[[ xX]?\]\s*)?")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(?:\s|$)")
_RULE = re.compile(r"^\s*(?:[-*_]\s*){3,}$|^\s*=+\s*$")
# Leading and trailing whitespace and punctuation. Stripped from each end with an anchored
# pattern (from the end on the reversed text): `[...]+$` searched from every place of a
# long run of spaces and dots was quadratic.
_EDGE_RUN = re.compile(r"[\s*_~`.:;,!?\-–—]+")
# Phrases that point elsewhere instead of saying anything.
_DEFLECT = (r"(?:please )?(?:check|see|read|look at|refer to) (?:the )?(?:code|source|diff|"
            r"commits?|pr|pull request|git log|changes|repo(?:sitory)?)"
            r"|see (?:above|below)|(?:same )?as above|ditto|self[- ]explanatory|obvious")
_FILLER = (r"todo|tbd|tbc|fixme|xxx|wip|\?+|…|placeholder|lorem ipsum\b.*|coming soon"
           r"|to be (?:determined|decided|done|written|added|filled(?: in)?|confirmed)"
           r"|fill (?:this |me )?in(?: later)?|(?:add|write|describe|insert) "
           r"(?:details?|here|this|something|(?:the )?\w+ here)(?: later)?|<[^<>]*>")
_PLACEHOLDER = re.compile(rf"^(?:(?:{_FILLER})|(?:{_DEFLECT}))$", re.IGNORECASE)
_TODO_PREFIX = re.compile(r"^(?:todo|tbd|fixme|xxx)\b\s*[:\-–—]?\s*", re.IGNORECASE)
# A deflection is a whole sentence: "Done. Check the code." but not "check the code paths".
_DEFLECT_SENTENCE = re.compile(rf"(?:^|(?<=[.!?;]\s)|(?<=^[-*+]\s))(?:{_DEFLECT})"
                               rf"(?:[.!]?\s*$|[.!]\s)", re.IGNORECASE)
_NIL = re.compile(r"^(?:none|nothing|nil|n/?a|not applicable|no)(?:\b[\w\s/'-]*)?$",
                  re.IGNORECASE)


def _edges(text: str) -> str:
    """`text` without leading and trailing whitespace and punctuation."""
    m = _EDGE_RUN.match(text)
    text = text[m.end():] if m else text
    m = _EDGE_RUN.match(text[::-1])
    return text[:len(text) - m.end()] if m else text


def _without_comments(text: str) -> str:
    """`<!-- -->` and `%% %%` comments (leftmost first, as a `<!--.*?-->|%%.*?%%` regex)
    replaced by their newlines only, so line numbers stay true. Linear: once an opener
    has no closer after it, no later one of its kind has (a 1 MB line of `<!--` retried
    the search to the end from each: minutes)."""
    out: list[str] = []
    pos = 0
    ahead = {a: -1 for a, _ in _COMMENTS}  # next place of each opener (-2: none left)
    while True:
        for a in ahead:
            if ahead[a] != -2 and ahead[a] < pos:  # each opener is searched for once
                at = text.find(a, pos)
                ahead[a] = at if at >= 0 else -2
        found = [(ahead[a], a, b) for a, b in _COMMENTS if ahead[a] >= 0]
        if not found:
            break
        i, opener, closer = min(found)
        j = text.find(closer, i + len(opener))
        if j < 0:
            ahead[opener] = -2
            continue
        out += [text[pos:i], "\n" * text.count("\n", i, j)]
        pos = j + len(closer)
    return "".join([*out, text[pos:]])


@dataclass(frozen=True, slots=True)
class BodyLine:
    line: int
    """1-based line in the note."""
    text: str
    """The line as written, comments removed."""
    kind: LineKind
    fence: int = 0
    """n-th fenced code block of the section this line is inside (0: not in one)."""

    @property
    def code(self) -> bool:
        return self.fence > 0


@dataclass(frozen=True, slots=True)
class Body:
    lines: tuple[BodyLine, ...]

    @property
    def content(self) -> list[BodyLine]:
        return [ln for ln in self.lines if ln.kind == "content"]

    @property
    def placeholders(self) -> list[BodyLine]:
        return [ln for ln in self.lines if ln.kind == "placeholder"]

    @property
    def substantive(self) -> bool:
        """Says something: content, or an explicit "none"."""
        return any(ln.kind != "placeholder" for ln in self.lines)

    @property
    def nil(self) -> bool:
        """Says only "none" (or "n/a", "no blockers")."""
        return bool(self.lines) and not self.content and any(
            ln.kind == "nil" for ln in self.lines)

    def first_word(self) -> str:
        for ln in self.lines:
            if ln.kind != "placeholder" and not ln.code:
                words = _edges(strip_marker(ln.text)).split()
                if words:
                    return _edges(words[0]).lower()
        return ""


def strip_marker(text: str) -> str:
    """The line without its list marker, checkbox or quote prefix."""
    return text[_MARKER.match(text).end():]  # type: ignore[union-attr]  # always matches


def classify(text: str, heading: str = "") -> LineKind:
    """One line of prose (list marker allowed): placeholder, nil, or content."""
    bare = _edges(strip_marker(text)).strip()
    bare = " ".join(bare.split())
    if not bare:
        return "placeholder"  # an empty bullet or a lone marker
    if heading and normalize_heading(bare) == normalize_heading(heading):
        return "placeholder"  # repeats the heading
    if _PLACEHOLDER.match(bare):
        return "placeholder"
    rest = _TODO_PREFIX.sub("", bare, count=1)
    if rest != bare and (not rest or _PLACEHOLDER.match(_edges(rest))):
        return "placeholder"  # `TODO: fill in`
    if _NIL.match(bare) and len(bare.split()) <= 4:
        return "nil"
    return "content"


def deflections(text: str) -> list[tuple[int, str]]:
    """(0-based column, phrase) of "check the code"-style sentences inside a line."""
    return [(m.start(), m.group().strip().rstrip(".!"))
            for m in _DEFLECT_SENTENCE.finditer(text)]


def read_body(lines: list[str], first: int, last: int, heading: str = "") -> Body:
    """Judge note lines `first..last` (1-based, inclusive): the body of one section."""
    text = "\n".join(lines[first - 1:last])
    # Blank out comments but keep their newlines, so line numbers stay true.
    text = _without_comments(text)
    out: list[BodyLine] = []
    fence = ""
    fences = 0
    for i, raw in enumerate(text.split("\n")):
        no = first + i
        m = _FENCE.match(raw)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
            elif raw.strip():
                out.append(BodyLine(no, raw, "content", fences))
            continue
        if m:
            fence = m.group(1)
            fences += 1
            continue
        if not raw.strip() or _HEADING.match(raw) or _RULE.match(raw):
            continue
        out.append(BodyLine(no, raw, classify(raw, heading)))
    return Body(tuple(out))
