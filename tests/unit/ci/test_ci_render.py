"""Rendering the CI report: limits, truncation, verdicts, and inert untrusted text."""

from __future__ import annotations

import io
import re

import pytest
from markdown_it import MarkdownIt  # comes with rich

from kbase_ci.ci.cireport import CiReport, GraphView, MarkedFinding
from kbase_ci.ci.render import (
    COMMENT_LIMIT,
    MARKER,
    SUMMARY_LIMIT,
    annotation_lines,
    comment_body,
    render,
    step_summary,
    verdict,
)
from kbase_ci.parsed import Finding
from kbase_ci.report.escape import ZWJ, log_text, md_text, mermaid_label, stop_commands
from kbase_ci.vault.linkgraph import Gap, GapSource, Orphan
from tests.conftest import FIXTURES

HEAD, BASE = "a" * 40, "b" * 40
HOSTILE = [ln for ln in (FIXTURES / "ci" / "hostile.txt").read_text(encoding="utf-8")
           .splitlines() if ln and not ln.startswith("#")] + ["two\nlines", "cr\r::error::x"]


def _report(findings: list[MarkedFinding], **kw: object) -> CiReport:
    base: dict[str, object] = dict(event="pull_request", repository="octo/vault",
                                   server_url="https://github.example", head=HEAD, base=BASE,
                                   pr_number=7, vault_prefix="notes/", fail_on="new",
                                   notes=100, findings=tuple(findings))
    base.update(kw)
    return CiReport(**base)  # type: ignore[arg-type]


def _mf(status: str, i: int, message: str = "[[X]]: no note named `X`",
        path: str | None = None, severity: str = "error") -> MarkedFinding:
    return MarkedFinding(status, Finding(path or f"Folder/Note {i}.md", i + 1, 3, "KB101",  # type: ignore[arg-type]
                                         message, severity, "links"))  # type: ignore[arg-type]


def test_comment_layout_order_and_links() -> None:
    r = _report([_mf("new", 1), _mf("fixed", 2), _mf("pre-existing", 3)],
                graph=GraphView(("a.md", "b.md"), ("a.md",), (("a.md", "b.md"),)))
    body = comment_body(r, None)
    assert body.startswith(MARKER + "\n❌ **kbase: 1 new problem in this PR**")
    positions = [body.index(s) for s in ("| | new | fixed | pre-existing |",
                                         "### New in this PR", "<details><summary>Pre-existing",
                                         "```mermaid")]
    assert positions == sorted(positions)
    assert (f"(https://github.example/octo/vault/blob/{HEAD}/notes/Folder/Note%201.md#L2)"
            in body)
    # A fixed finding links to where it was: the base commit.
    assert f"/blob/{BASE}/notes/Folder/Note%202.md#L3" in body
    assert "| broken links | 1 | 1 | 1 |" in body


@pytest.mark.parametrize(("findings", "fail_on", "start"), [
    ([], "new", "✅ **kbase: no new problems**"),
    (["fixed", "pre-existing"], "new", "✅ **kbase: no new problems** (1 fixed, 1 pre-existing)"),
    (["new", "new"], "new", "❌ **kbase: 2 new problems in this PR**"),
    (["new"], "none", "ℹ️ **kbase: 1 new problem** (fail-on: none)"),
    (["pre-existing"], "all", "❌ **kbase: 1 problem**"),
])
def test_verdict(findings: list[str], fail_on: str, start: str) -> None:
    r = _report([_mf(s, i) for i, s in enumerate(findings)], fail_on=fail_on)
    assert verdict(r).startswith(start)


def test_huge_report_is_truncated_under_the_limits() -> None:
    long = "x" * 300
    findings = [_mf("new", i, long) for i in range(3000)]
    findings += [_mf("pre-existing", i + 3000, long) for i in range(6000)]
    r = _report(findings, graph=GraphView(tuple(f"n{i}.md" for i in range(40))))
    more = "https://github.example/octo/vault/actions/runs/101"
    body = comment_body(r, more)
    assert len(body) <= COMMENT_LIMIT and body.startswith(MARKER)
    assert re.search(r"… and \d+ more new problems\. The full list is in the "
                     r"\[report artifact\]\(https://github\.example/octo/vault/actions/runs/101\)",
                     body)
    summary = step_summary(r, more)
    assert len(summary.encode()) <= SUMMARY_LIMIT
    assert summary.count("\n- ❌") > body.count("\n- ❌")  # the summary shows more
    full = render(r)
    assert full.count("KB101") == 9000  # report.md is never truncated


def test_comment_is_deterministic() -> None:
    r = _report([_mf("new", 1)])
    assert comment_body(r, "u") == comment_body(r, "u")


@pytest.mark.parametrize("text", HOSTILE)
def test_untrusted_text_is_inert_in_the_comment(text: str) -> None:
    gap = Gap(text.lower(), text, "note", (GapSource("A.md", 1, 1, f"[[{text}]]"),))
    r = _report([_mf("new", 1, f"[[{text}]]: no note named `{text}`")],
                new_orphans=(Orphan("B.md", True, 0),), new_gaps=(gap,),
                graph=GraphView(("A.md", "B.md"), ("A.md",), ()))
    body = comment_body(r, None)
    for bad in ("<img", "<script", "</details><", "](https://evil", "<!-- kbase-ci:report -->\n"
                "<!--"):
        assert bad not in body
    assert body.count(MARKER) == 1
    assert not re.search(r"@everyone|#1\b|vault#2", body)
    assert "\u202e" not in body
    rows = [ln for ln in body.splitlines() if ln.startswith("- ❌")]
    assert len(rows) == 1  # a newline or a pipe in the text did not add lines


@pytest.mark.parametrize("text", HOSTILE)
def test_untrusted_text_is_inert_in_mermaid_and_logs(text: str) -> None:
    label = mermaid_label(text)
    assert not set(label) & set('"[]`<>|{}()\n\r')
    line = log_text(text)
    assert "::" not in line and "\n" not in line and "\r" not in line
    out = io.StringIO()
    with stop_commands(out):
        out.write(line + "\n")
    lines = out.getvalue().splitlines()
    token = lines[0].removeprefix("::stop-commands::")
    assert len(token) == 32 and lines[-1] == f"::{token}::"


def test_md_text_neutralises_mentions_and_html() -> None:
    assert md_text("@bob") == f"@{ZWJ}bob"
    assert md_text("<b>&") == "&lt;b&gt;&amp;"
    assert md_text("a|b") == "a\\|b"


def test_annotations_are_capped_per_level_and_escaped() -> None:
    findings = [_mf("new", i, f"bad%\n::error::x {i}") for i in range(15)]
    findings += [_mf("new", 100 + i, "warn", severity="warning") for i in range(3)]
    findings += [_mf("pre-existing", 200)]
    lines = annotation_lines(_report(findings), lambda p: "notes/" + p)
    errors = [ln for ln in lines if ln.startswith("::error ")]
    assert len(errors) == 10
    assert len([ln for ln in lines if ln.startswith("::warning ")]) == 3
    assert any(ln.startswith("::notice ") and "5 more errors" in ln for ln in lines)
    first = errors[0]
    assert first.startswith("::error file=notes/Folder/Note 0.md,line=1,col=3,"
                            "title=KB101 new in this PR::")
    assert first.endswith("bad%25%0A::error::x 0") and "\n" not in first


def test_gap_names_render_as_written() -> None:
    # Inside a code span backslash escapes are literal: `my\_note` would show the
    # backslash. The rendered text must say exactly what the link said.
    gap = Gap("my_note (draft)", "my_note (draft)", "note",
              (GapSource("A.md", 1, 1, "[[my_note (draft)]]"),))
    html = MarkdownIt("commonmark").render(render(_report([], new_gaps=(gap,))))
    assert "no note `my_note (draft)`, linked from" in html.replace("&quot;", '"')
