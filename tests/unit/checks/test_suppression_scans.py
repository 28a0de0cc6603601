"""Issue 38, item 7: inline suppressions were matched against every finding of their
note (`Policy._silencer` scanned each suppression for each finding, expanding its codes
every time): 20k / 40k `<!-- kbase-ignore KB101 -->` + `[[Ghost]]` pairs in one note
took `check --all` 21 s / 95 s. Each note's suppressions are indexed by the line they
silence; twice the pairs must cost at most 2.5x the CPU (tests/complexity), and which
suppression silences a finding (the first in the note) is unchanged."""

from __future__ import annotations

from kbase_ci.checks.checkregistry import make_policy
from kbase_ci.parse.parser import parse_note
from kbase_ci.parsed import Finding, ParsedNote
from kbase_ci.vault.config import Config
from tests.complexity import assert_linear

CODES = frozenset(("KB101", "KB901"))


def _pairs(n: int) -> tuple[ParsedNote, list[Finding]]:
    text = "# N\n\n" + "".join(f"<!-- kbase-ignore KB10{i % 3 + 1} -->\n[[Ghost{i}]]\n"
                               for i in range(n))
    note = parse_note("N.md", text.encode())
    findings = [Finding("N.md", ln.line, ln.col, "KB101", "unresolved", check="links")
                for ln in note.links]
    return note, findings


def _apply(made: tuple[ParsedNote, list[Finding]]) -> list[tuple[int, str]]:
    note, findings = made
    kept = make_policy(Config()).apply(findings, lambda path: note, [note], CODES, CODES)
    return [(f.line, f.code) for f in kept]


def test_suppressions_silence_findings_in_linear_time() -> None:
    kept = assert_linear(_pairs, _apply, 4000)
    # `KB101` comments silence their link; each `KB102` and `KB103` one silences
    # nothing: its link's KB101 stays, and the comment is a KB901
    unsilenced = sum(1 for i in range(8000) if i % 3)
    assert sorted(code for _line, code in kept) == ["KB101"] * unsilenced + \
        ["KB901"] * unsilenced


def test_the_first_suppression_in_the_note_is_the_one_used() -> None:
    """A line comment and a file comment both silence a finding: the earlier one counts
    as used, the other is reported unused (KB901), as before the index."""
    text = ("# N\n\n<!-- kbase-ignore-file KB101 -->\n\n<!-- kbase-ignore KB101 -->\n"
            "[[Ghost]]\n\n<!-- kbase-ignore links -->\n[[Other]]\n")
    note = parse_note("N.md", text.encode())
    findings = [Finding("N.md", ln.line, ln.col, "KB101", "unresolved", check="links")
                for ln in note.links]
    kept = make_policy(Config()).apply(findings, lambda path: note, [note], CODES, CODES)
    assert [(f.line, f.code) for f in kept] == [(5, "KB901"), (8, "KB901")]
