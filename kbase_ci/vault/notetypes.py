"""Note types: what a handover, question, answer, discovery or decision must contain.

A type is matched by frontmatter `type:`, a tag, or a path glob, and declares
frontmatter fields, sections and conditional rules, each with a weight for the
completeness score. The built-in types below work with no configuration; the
`types:` section of `.kbase.yml` overrides or extends them (see `typeconfig`).
docs/handover.md lists every rule and weight.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, get_args

from kbase_ci.parse.anchors import normalize_heading
from kbase_ci.vault.globs import any_match
from kbase_ci.vault.yamlconfig import Section

if TYPE_CHECKING:
    from kbase_ci.parsed import ParsedNote

FieldKind = Literal["string", "integer", "number", "boolean", "date", "enum", "list",
                    "link", "issue", "ref"]
"""`link`: a wikilink to an existing note; `issue`: `#12` or `ABC-12`; `ref`: either."""
ContentKind = Literal["text", "paths", "commands"]
"""What a section body must hold beyond being non-empty: file paths, or commands run
with their outcome."""

FIELD_KINDS: tuple[str, ...] = get_args(FieldKind)
CONTENT_KINDS: tuple[str, ...] = get_args(ContentKind)


class FieldSpec(Section):
    """A frontmatter field a note type declares."""

    name: str
    kind: FieldKind = "string"
    required: bool = True
    values: tuple[str, ...] = ()
    """Allowed values (case-insensitive) for `enum`."""
    many: bool = False
    """A list of values is allowed; each is checked."""
    target: str | None = None
    """For `link`/`ref`: the type the linked note must have."""
    weight: int = 5
    help: str = ""


class SectionSpec(Section):
    """A section (heading) a note type declares."""

    name: str
    aliases: tuple[str, ...] = ()
    required: bool = True
    content: ContentKind = "text"
    values: tuple[str, ...] = ()
    """When set, the section's first word must be one of these (a Status section)."""
    field: str | None = None
    """A frontmatter key that may stand in for the whole section (`status: partial`)."""
    weight: int = 10
    help: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


class Rule(Section):
    """When every `when` key has one of its values, each `require` name (a section or a
    field) must be present and say something other than "none"."""

    when: tuple[tuple[str, tuple[str, ...]], ...]
    require: tuple[str, ...]
    weight: int = 10

    def describe(self) -> str:
        return " and ".join(f"{k} is {' or '.join(v)}" for k, v in self.when)


class Match(Section):
    """Which notes a note type applies to."""

    types: tuple[str, ...] = ()
    """Values of frontmatter `type:` (case-insensitive)."""
    tags: tuple[str, ...] = ()
    """A tag or any of its children (`handover` matches `#handover/track-3`)."""
    paths: tuple[str, ...] = ()
    """Path globs, as in `vault.exclude`."""


class NoteType(Section):
    """A note type (`.kbase.yml` `types:`): which notes, and the fields and sections they need."""

    name: str
    match: Match
    fields: tuple[FieldSpec, ...] = ()
    sections: tuple[SectionSpec, ...] = ()
    rules: tuple[Rule, ...] = ()
    folder: str | None = None
    """Where `kbase new` writes; None: `handover.folder` for handovers, else `<name>s/`."""

    def field_spec(self, name: str) -> FieldSpec | None:
        key = name.strip().lower()
        return next((f for f in self.fields if f.name.lower() == key), None)

    def section_spec(self, name: str) -> SectionSpec | None:
        key = normalize_heading(name)
        return next((s for s in self.sections
                     if key in {normalize_heading(n) for n in s.names}), None)


class NoteTypes(Section):
    """Every known type, in match order; the `types` field of Config."""

    types: tuple[NoteType, ...] = ()

    @classmethod
    def builtin(cls) -> NoteTypes:
        return cls(BUILTIN)

    def get(self, name: str) -> NoteType | None:
        key = name.strip().lower()
        return next((t for t in self.types if t.name.lower() == key), None)

    def type_of(self, note: ParsedNote) -> NoteType | None:
        """Frontmatter `type:` wins; then tags; then path globs. A note whose `type:` names
        no known type has no type (it is not guessed from its folder)."""
        declared = note.frontmatter.get("type")
        if isinstance(declared, str) and declared.strip():
            key = declared.strip().lower()
            return next((t for t in self.types if key in {v.lower() for v in t.match.types}),
                        None)
        tags = [t.name.lower() for t in note.tags]
        for t in self.types:
            for want in t.match.tags:
                w = want.lower().lstrip("#")
                if any(tag == w or tag.startswith(w + "/") for tag in tags):
                    return t
        for t in self.types:
            if t.match.paths and any_match(t.match.paths, note.path):
                return t
        return None


_STATUS = ("complete", "partial", "blocked")

HANDOVER = NoteType(
    name="handover",
    match=Match(types=("handover",), tags=("handover",), paths=("handovers/**",)),
    fields=(
        FieldSpec("completes", "ref", help='issue or plan this work completes: "#12" or '
                  '"[[Plan]]"'),
        FieldSpec("track", help="the work track this handover belongs to"),
        FieldSpec("date", "date", help="YYYY-MM-DD"),
    ),
    sections=(
        SectionSpec("Status", ("State",), values=_STATUS, field="status", weight=15,
                    help="one of: complete | partial | blocked"),
        SectionSpec("Changes Made", ("Changes", "Files Changed", "Changed Files"),
                    content="paths", weight=20,
                    help="one bullet per file: `path/to/file` - what changed"),
        SectionSpec("Build Verification", ("Verification", "Build", "Tests", "Testing",
                                           "Build and Test"),
                    content="commands", weight=15,
                    help="one bullet per command: `command` - outcome (passed, 3 failed)"),
        SectionSpec("Discovered Issues", ("Issues", "Issues Found", "Known Issues"),
                    help='problems found on the way, linked; "None" if there were none'),
        SectionSpec("Key Decisions", ("Decisions",),
                    help="what was decided and why"),
        SectionSpec("Next Steps", ("Next", "Follow-up", "Follow-ups"),
                    help="what the next agent should do first"),
        SectionSpec("Blockers", ("Impediments", "Blocked By"), required=False,
                    help="what stops the work, and who can unblock it"),
    ),
    rules=(Rule((("status", ("partial", "blocked")),), ("Next Steps", "Blockers")),),
)

QUESTION = NoteType(
    name="question",
    match=Match(types=("question",), paths=("questions/**",)),
    fields=(
        FieldSpec("blocking", "ref", help='the task this blocks: "#12" or "[[Plan]]"'),
        FieldSpec("category", help="architecture, requirements, tooling, ..."),
        FieldSpec("urgency", "enum", values=("low", "medium", "high", "blocking"),
                  help="low | medium | high | blocking"),
        FieldSpec("track", required=False, weight=0),
    ),
    sections=(
        SectionSpec("Question", ("Problem",), weight=20, help="the question, in one sentence"),
        SectionSpec("Context", ("Background",), weight=15,
                    help="what is known, what was tried, what depends on the answer"),
    ),
)

ANSWER = NoteType(
    name="answer",
    match=Match(types=("answer",), paths=("answers/**",)),
    fields=(
        FieldSpec("answers", "link", target="question", weight=15,
                  help='the question answered: "[[Question]]"'),
    ),
    sections=(
        SectionSpec("Decision", ("Answer",), weight=20, help="the answer"),
        SectionSpec("Rationale", ("Why", "Reasoning"), weight=15, help="why"),
    ),
)

DISCOVERY = NoteType(
    name="discovery",
    match=Match(types=("discovery",), paths=("discoveries/**",)),
    fields=(
        FieldSpec("relevant_to", "ref", many=True,
                  help='tracks, issues or notes this matters to: ["#12", "[[Plan]]"]'),
        FieldSpec("action_needed", "boolean", help="true | false"),
    ),
    sections=(
        SectionSpec("Finding", ("Discovery", "Summary", "What"), weight=20,
                    help="what was found"),
        SectionSpec("Evidence", ("Details",), required=False, help="how it shows"),
        SectionSpec("Action", ("Recommended Action", "Next Steps"), required=False,
                    help="what should be done"),
    ),
    rules=(Rule((("action_needed", ("true",)),), ("Action",)),),
)

DECISION = NoteType(
    name="decision",
    match=Match(types=("decision", "adr"), paths=("decisions/**",)),
    fields=(
        FieldSpec("status", "enum", values=("proposed", "accepted", "rejected", "deprecated",
                                            "superseded"),
                  help="proposed | accepted | rejected | deprecated | superseded"),
        FieldSpec("date", "date", help="YYYY-MM-DD"),
        FieldSpec("superseded_by", "link", required=False, target="decision",
                  help='the replacing decision: "[[Decision]]"'),
    ),
    sections=(
        SectionSpec("Context", ("Background", "Problem"), weight=15),
        SectionSpec("Decision", (), weight=20),
        SectionSpec("Consequences", ("Consequence", "Implications"), weight=15),
    ),
    rules=(Rule((("status", ("superseded",)),), ("superseded_by",)),),
)

BUILTIN: tuple[NoteType, ...] = (HANDOVER, QUESTION, ANSWER, DISCOVERY, DECISION)


def default_folder(ntype: NoteType, handover_folder: str) -> str:
    if ntype.folder is not None:
        return ntype.folder
    if ntype.name == "handover":
        return handover_folder
    plural = {"discovery": "discoveries"}.get(ntype.name, f"{ntype.name}s")
    return f"{plural}/"


__all__ = ["BUILTIN", "CONTENT_KINDS", "FIELD_KINDS", "FieldSpec", "Match", "NoteType",
           "NoteTypes", "Rule", "SectionSpec", "default_folder"]
