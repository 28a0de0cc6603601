"""Every built-in note-type rule, passing and failing (fixtures/handover/rules.txt), the
placeholder table, and the two handover fixtures (complete ~100, one line ~0)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from kbase_ci.handover.handovers import Handovers
from kbase_ci.handover.placeholders import classify, read_body
from kbase_ci.handover.scoring import NoteScore
from kbase_ci.handover.sectionitems import listed_paths
from kbase_ci.vault.notefiles import Vault
from tests import tables
from tests.conftest import FIXTURES, git

HERE = FIXTURES / "handover"
BASES = {
    "handover": "handovers/2025-03-14-track-3.md",
    "question": "questions/token-refresh.md",
    "answer": "answers/token-refresh-answer.md",
    "discovery": "discoveries/lexer-unicode.md",
    "decision": "decisions/0001-use-tree-sitter.md",
}


def _edit(text: str, edit: str) -> str:
    fm_end = text.index("\n---\n", 4) + 5  # through the closing `---` line
    head, body = text[:fm_end], text[fm_end:]
    if m := re.fullmatch(r"drop field (\S+)", edit):
        head = re.sub(rf"(?m)^{m[1]}:.*\n", "", head)
    elif m := re.fullmatch(r"field (\S+) =(?: (.*))?", edit):
        line = f"{m[1]}:{' ' + m[2] if m[2] else ''}\n"
        pat = rf"(?m)^{m[1]}:.*\n"
        head = re.sub(pat, lambda _: line, head) if re.search(pat, head) else \
            head[:-4] + line + "---\n"
    elif m := re.fullmatch(r"rename (.+?) -> (.+)", edit):
        body = re.sub(rf"(?m)^(#+) {re.escape(m[1])}$", lambda h: f"{h[1]} {m[2]}", body)
    elif m := re.fullmatch(r"(drop section|section) (.+?)(?: = (.*))?", edit):
        new = "" if m[1] == "drop section" else f"## {m[2]}\n{m[3].replace('↵', chr(10))}\n\n"
        sec = re.compile(rf"(?ms)^## {re.escape(m[2])}\n.*?(?=^## |\Z)")
        if sec.search(body):
            body = sec.sub(lambda _: new, body, count=1)
        else:
            body = body.rstrip("\n") + "\n\n" + new
    else:
        raise AssertionError(f"unknown edit: {edit}")
    return head + body


def _vault(root: Path) -> None:
    shutil.copytree(HERE / "vault", root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", "vault")


RULES = tables.cells(HERE / "rules.txt")


@pytest.fixture(scope="module")
def assessed(tmp_path_factory: pytest.TempPathFactory) -> dict[int, NoteScore | None]:
    """Every case written as cases/case-LINE.md into one vault and scored once."""
    root = tmp_path_factory.mktemp("rules") / "vault"
    _vault(root)
    paths = {}
    for no, (tname, edits, _expect) in RULES:
        text = (root / BASES[tname]).read_text(encoding="utf-8")
        for e in ([] if edits == "-" else edits.split(" && ")):
            text = _edit(text, e)
        rel = f"cases/case-{no}.md"
        (root / "cases").mkdir(exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
        paths[no] = rel
    hv = Handovers(Vault(root), list(paths.values()), use_cache=False)
    return {no: hv.score(rel) for no, rel in paths.items()}


@pytest.mark.parametrize(("no", "row"), RULES, ids=[f"line{n}" for n, _ in RULES])
def test_rule(no: int, row: list[str], assessed: dict[int, NoteScore | None]) -> None:
    tname, edits, expect = row
    score = assessed[no]
    assert score is not None and score.type == tname
    got = sorted({f"{m.code} {m.rule}" for m in score.missing})
    if expect == "ok":
        assert got == [], f"{edits}: {[m.message for m in score.missing]}"
        assert score.score == 100
    else:
        want = sorted(set(expect.split(", ")))
        assert got == want, f"{edits}: {[m.message for m in score.missing]}"
        if any(m.severity == "error" for m in score.missing):
            assert score.score < 100


PLACEHOLDERS = tables.arrows(HERE / "placeholders.txt")


@pytest.mark.parametrize(("no", "raw", "kind"), PLACEHOLDERS,
                         ids=[f"line{n}" for n, _, _ in PLACEHOLDERS])
def test_placeholder_table(no: int, raw: str, kind: str) -> None:
    # `raw` as written, trailing spaces kept: `-  ` is still an empty bullet.
    assert classify(raw, "Changes Made") == kind, raw


def test_complete_handover_scores_near_100(tmp_path: Path) -> None:
    root = tmp_path / "v"
    _vault(root)
    hv = Handovers(Vault(root), use_cache=False)
    s = hv.score("handovers/2025-03-14-track-3.md")
    assert s is not None
    assert s.score >= 95, [m.message for m in s.missing]
    assert s.status == "complete"
    assert [p.path for p in s.paths] == ["src/app/parser.py", "src/app/lexer.py",
                                         "tests/test_parser.py", "pyproject.toml"]


def test_one_line_handover_scores_near_0_and_names_every_missing_section(
        tmp_path: Path) -> None:
    root = tmp_path / "v"
    _vault(root)
    hv = Handovers(Vault(root), use_cache=False)
    s = hv.score("handovers/track-3-done.md")
    assert s is not None and s.type == "handover"
    assert s.score <= 10
    missing_sections = {m.rule.removeprefix("section ") for m in s.missing if m.code == "KB401"}
    assert missing_sections == {"Status", "Changes Made", "Build Verification",
                                "Discovered Issues", "Key Decisions", "Next Steps"}
    assert {m.rule for m in s.missing if m.code == "KB403"} == {
        "field completes", "field track", "field date"}
    deflect = [m for m in s.missing if m.code == "KB402"]
    assert [(m.line, m.col, m.severity) for m in deflect] == [(1, 20, "warning")]
    assert "Check the code" in deflect[0].message
    # every lost point is accounted for by a named item
    assert round(sum(m.points for m in s.missing)) == 100 - s.score


LISTED = tables.arrows(HERE / "paths.txt")


@pytest.mark.parametrize(("no", "line", "expected"), LISTED,
                         ids=[f"line{n}" for n, _, _ in LISTED])
def test_changes_made_paths_table(no: int, line: str, expected: str) -> None:
    body = read_body(["## Changes Made", line], 2, 2, "Changes Made")
    assert [p.path for p in listed_paths(body)] == tables.items(expected), line
