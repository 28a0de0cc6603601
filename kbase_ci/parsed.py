"""Records for the parse stage: what one note says, before anything is resolved.

Names follow the pipeline (zk's habit): a `Link` is what the text says, a
`ResolvedLink` (in `resolver`) is what it points at. Every position is 1-based;
columns count Unicode code points, as editors and `path:line:col` readers do.
All records are frozen and JSON round-trippable (`to_json`/`from_json`) because
the parse cache and the index store them: as `typedjson.Row`s, a list of values per
record (compact, and fast to decode for 10k cached notes).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from kbase_ci.typedjson import Check, Record, Row, between, json_field

# Bump whenever parser output changes for the same input: it keys the parse cache.
PARSER_VERSION = 3

LinkStyle = Literal["wiki", "markdown"]
AnchorKind = Literal["none", "heading", "block"]
Severity = Literal["error", "warning"]


def repo_path(value: str) -> bool:
    """A path git could have named: relative, no empty, `.`, `..` or `.git` part, no
    NUL. Anything else git allows (a tab, a backslash, a newline) is a real file name
    kbase itself reports, so it is accepted: every sink escapes it (report.escape), and
    a link to it is percent-encoded, so it cannot steer a link elsewhere."""
    parts = value.split("/")
    return not (not value or value.startswith("/") or "\0" in value
                or any(p in ("", ".", "..") or p.lower() == ".git" for p in parts))


# What JSON written elsewhere (a fork's report.json) is checked against when a record
# that declares them is decoded (`typedjson.decode`); kbase's own values pass.
Text = Annotated[str, Check(lambda v: len(v) <= 100_000, "at most 100000 characters")]
Count = Annotated[int, between(0, 2**53 - 1)]
RepoPath = Annotated[Text, Check(repo_path, "a relative path inside the repository")]
MAX_ITEMS = 500_000
T = TypeVar("T")
Many = Annotated[tuple[T, ...], Check(lambda v: len(v) <= MAX_ITEMS,
                                      f"at most {MAX_ITEMS} items")]


class Heading(Row):
    """A Markdown heading of a note (ATX or setext)."""

    level: int
    text: str
    """Heading text as written, trimmed (closing `#`s of ATX headings removed)."""
    line: int
    parents: tuple[str, ...] = ()
    """Texts of the enclosing headings, outermost first."""


class BlockId(Row):
    """A `^id` block marker, the target of `[[note#^id]]`."""

    id: str
    line: int
    """Line of the `^id` marker."""


class Tag(Row):
    """A `#tag` in the text or a tag listed in the frontmatter."""

    name: str
    """Without the leading `#`, case preserved (`Project/Alpha`)."""
    line: int
    col: int
    source: Literal["inline", "frontmatter"] = "inline"


class Link(Row):
    """A link as written in a note (wiki or Markdown, link or embed), before resolution."""

    style: LinkStyle
    embed: bool
    raw: str
    """The link exactly as written, `![[a#b|c]]` or `[text](a.md#b)`."""
    target: str
    """Path part, decoded (percent-decoding for Markdown links); "" for `[[#h]]`."""
    subpath: str
    """Everything after the first `#`, decoded; "" when absent."""
    alias: str | None
    """Wiki alias or Markdown link text; None when absent."""
    line: int
    col: int
    external: bool = False
    """A `scheme:` URL; never followed or resolved."""
    frontmatter_key: str | None = None
    """Set for wikilinks inside frontmatter property values (`up: "[[Index]]"`)."""

    @property
    def anchor_kind(self) -> AnchorKind:
        if not self.subpath:
            return "none"
        return "block" if self.subpath.startswith("^") else "heading"

    @property
    def heading_path(self) -> tuple[str, ...]:
        """`[[t#h1#h2]]` -> ("h1", "h2"); empty for block or no anchor."""
        if self.anchor_kind != "heading":
            return ()
        return tuple(p for p in self.subpath.split("#") if p)

    @property
    def block_id(self) -> str | None:
        return self.subpath[1:] if self.anchor_kind == "block" else None


class Diagnostic(Row):
    """A problem found while parsing one note (bad UTF-8, bad YAML, ...)."""

    code: str
    message: str
    line: int = 1
    col: int = 1
    severity: Severity = "warning"


class Suppression(Row):
    """An inline `<!-- kbase-ignore CODES -->` or `%% kbase-ignore CODES %%` comment."""

    line: int
    col: int
    """Where the comment starts."""
    codes: tuple[str, ...]
    """Codes, code prefixes or check names as written; empty: every code."""
    target: int
    """The line it silences: its own when it shares the line with text, else the next
    non-blank line; 0 for `kbase-ignore-file` (the whole note)."""


class ParsedNote(Row):
    """Everything the parse stage knows about one note."""

    path: str
    """Repository-relative POSIX path."""
    title: str
    """File name without extension (Obsidian's note name)."""
    aliases: tuple[str, ...] = ()
    tags: tuple[Tag, ...] = ()
    frontmatter: dict[str, Any] = json_field(default_factory=dict)
    """JSON-safe values only (dates become ISO strings)."""
    frontmatter_end: int = 0
    """Last line of the frontmatter block (0 when there is none)."""
    headings: tuple[Heading, ...] = ()
    block_ids: tuple[BlockId, ...] = ()
    links: tuple[Link, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    size: int = 0
    """Size in bytes of the source."""
    lines: int = 0
    suppressions: tuple[Suppression, ...] = ()

    def __hash__(self) -> int:  # frontmatter is a dict; identity by path suffices
        return hash(self.path)


class Finding(Record, json=("path", "line", "col", "code", "check", "severity", "message",
                            "suggestion")):
    """One reported problem, at `path:line:col`. The only thing checks return."""

    path: RepoPath
    line: Count
    col: Count
    code: Text
    message: Text
    severity: Severity = "error"
    check: Text = ""
    """Name of the registry entry that produced it (`links`, `tags`, ...)."""
    suggestion: Text | None = None
    """A replacement the user probably meant (`[[New]]`), when there is one."""

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.line, self.col, self.code, self.message)
