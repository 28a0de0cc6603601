"""The PR report: every finding, orphan and gap of a PR lands in the right bucket."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.ci.cireport import CiReport, from_json
from kbase_ci.ci.prreport import Context, compare, match_findings, match_key, snapshot
from kbase_ci.errors import UsageError
from kbase_ci.parse.parser import parse_note
from kbase_ci.parsed import Finding
from kbase_ci.vault.linkgraph import link_graph
from tests.ci_support import SCENARIO, event_file, run_ci, runner_env, scenario_repo, step_outputs
from tests.conftest import git, write


def _expected() -> list[tuple[str, str, str, str]]:
    rows = []
    for line in (SCENARIO / "expected.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            bucket, code, path, what = line.split(None, 3)
            rows.append((bucket, code, path, what))
    return rows


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> tuple[CiReport, str, str]:
    root, base, head = scenario_repo(tmp_path_factory.mktemp("ci") / "vault")
    return compare(root, base, head, Context()), base, head


@pytest.mark.parametrize("row", _expected(), ids=lambda r: f"{r[0]}-{r[2]}-{r[3]}")
def test_each_change_lands_in_its_bucket(scenario: tuple[CiReport, str, str],
                                         row: tuple[str, str, str, str]) -> None:
    report, _, _ = scenario
    bucket, code, path, what = row
    if bucket in ("new", "fixed", "pre-existing"):
        hits = [m.status for m in report.findings
                if m.finding.code == code and m.finding.path == path and what in m.finding.message]
        assert hits == [bucket], [(m.status, m.finding) for m in report.findings]
    elif bucket == "new-orphan":
        assert path in [o.path for o in report.new_orphans]
    elif bucket == "closed-gap":
        assert what in report.closed_gaps
    else:
        raise AssertionError(f"unknown bucket {bucket}")


def test_nothing_else_is_new_in_links(scenario: tuple[CiReport, str, str]) -> None:
    report, _, _ = scenario
    new_links = [m.finding for m in report.findings
                 if m.status == "new" and m.finding.code.startswith("KB1")]
    assert [(f.path, f.code) for f in new_links] == [("Alpha.md", "KB111")]
    # The renamed note is not an orphan or a fixed one: it moved, nothing else.
    assert "Archive/Gamma.md" not in [o.path for o in report.new_orphans]
    assert report.fixed_orphans == ()
    assert report.new_gaps == ()


def test_report_knows_the_rename_and_the_graph(scenario: tuple[CiReport, str, str]) -> None:
    report, base, head = scenario
    assert (report.base, report.head) == (base, head)
    renamed = [(c.old_path, c.path) for c in report.changes if c.kind == "renamed"]
    assert renamed == [("Gamma.md", "Archive/Gamma.md")]
    assert {"Beta.md", "Home.md", "Lonely.md"} <= set(report.graph.changed)
    assert "Alpha.md" in report.graph.nodes  # a neighbour, not changed
    assert "Alpha.md" not in report.graph.changed
    assert ("Alpha.md", "Beta.md") in report.graph.edges


def test_handover_of_the_pr_is_assessed(scenario: tuple[CiReport, str, str]) -> None:
    report, _, _ = scenario
    assert report.handover is not None, report.notices
    assert [n.path for n in report.handover.notes] == ["handovers/2024-05-01-beta.md"]
    # Changes Made lists Beta.md and Home.md; the rest of the diff is unmentioned.
    subjects = " ".join(i.message for i in report.handover.items)
    assert "Lonely.md" in subjects and "`Beta.md`" not in subjects


def test_json_round_trip(scenario: tuple[CiReport, str, str]) -> None:
    report, _, _ = scenario
    data = json.loads(json.dumps(report.to_json()))
    assert from_json(data) == report


@pytest.mark.parametrize(("field", "value"), [
    ("head", "not-a-sha"),
    ("fail_on", "sometimes"),
    ("vault_prefix", "../elsewhere/"),
    ("notes", -1),
    ("findings", [{"status": "new", "path": "../../etc/passwd", "line": 1, "col": 1,
                   "code": "KB101", "check": "links", "severity": "error", "message": "x",
                   "suggestion": None}]),
    ("findings", [{"status": "new", "path": "/abs.md", "line": 1, "col": 1, "code": "KB101",
                   "check": "links", "severity": "error", "message": "x",
                   "suggestion": None}]),
    ("findings", [{"status": "bogus", "path": "a.md", "line": 1, "col": 1, "code": "KB101",
                   "check": "links", "severity": "error", "message": "x",
                   "suggestion": None}]),
    ("graph", {"nodes": ["a.md"], "changed": [], "edges": [["a.md", "b/../../c"]]}),
])
def test_from_json_refuses_bad_fields(scenario: tuple[CiReport, str, str], field: str,
                                      value: object) -> None:
    data = scenario[0].to_json()
    data[field] = value
    with pytest.raises(UsageError, match=field.split("_")[0]):
        from_json(data)


def _f(path: str, line: int, code: str, message: str) -> Finding:
    return Finding(path, line, 1, code, message)


def test_match_follows_renames_and_ignores_positions() -> None:
    base = [_f("Old.md", 3, "KB101", "[[X]]: no note named `X`; did you mean [[Y]]?"),
            _f("Old.md", 9, "KB999", "see line 9 and col 4")]
    head = [_f("New.md", 30, "KB101", "[[X]]: no note named `X`; did you mean [[Z]]?"),
            _f("New.md", 40, "KB999", "see line 40 and col 7")]
    marked = match_findings(base, head, {"Old.md": "New.md"})
    assert [(m.status, m.finding.path) for m in marked] == [
        ("pre-existing", "New.md"), ("pre-existing", "New.md")]
    assert match_key(base[1], {"Old.md": "New.md"}) == match_key(head[1])


def test_identical_findings_new_one_is_on_a_touched_line() -> None:
    base = [_f("A.md", 2, "KB101", "[[X]]: no note named `X`"),
            _f("A.md", 8, "KB101", "[[X]]: no note named `X`")]
    head = [_f("A.md", 2, "KB101", "[[X]]: no note named `X`"),
            _f("A.md", 5, "KB101", "[[X]]: no note named `X`"),
            _f("A.md", 9, "KB101", "[[X]]: no note named `X`")]
    marked = match_findings(base, head, {}, lambda path: frozenset({5}))
    assert [(m.status, m.finding.line) for m in marked] == [
        ("new", 5), ("pre-existing", 2), ("pre-existing", 9)]
    fewer = match_findings(head, base, {})
    assert [m.status for m in fewer].count("fixed") == 1


def test_snapshot_has_no_base_and_nothing_new(tmp_path: Path) -> None:
    root, _, head = scenario_repo(tmp_path / "v")
    report = snapshot(root, head, Context(fail_on="all"))
    assert report.base is None and report.findings
    assert {m.status for m in report.findings} == {"present"}
    assert report.failing == len(report.findings)


def test_link_graph_orphans_and_gaps() -> None:
    notes = [parse_note("A.md", b"[[B]] [[Ghost]] [[ghost.md]] ![[pic.png]]\n"),
             parse_note("B.md", b"# B\n"),
             parse_note("C.md", b"[[C#Self]] alone\n")]
    graph = link_graph(notes, ["A.md", "B.md", "C.md"])
    orphans = {o.path: o.isolated for o in graph.orphans()}
    assert orphans == {"A.md": False, "C.md": True}
    gaps = {g.key: (g.kind, len(g.sources)) for g in graph.gaps()}
    assert gaps == {"ghost": ("note", 2), "pic.png": ("file", 1)}
    nodes, edges = graph.neighbourhood(["B.md"])
    assert nodes == ["B.md", "A.md"] and edges == [("A.md", "B.md")]


def test_a_pr_adding_a_note_whose_name_is_not_utf8(make_repo: Callable[..., Path],
                                                    tmp_path: Path) -> None:
    # git names it with a surrogate escape: the report folder, the step summary and the
    # file links must still be written (as `\udcff` text and a %FF URL), not crash.
    root = make_repo({"a.md": "x\n"})
    base = git(root, "rev-parse", "HEAD").strip()
    write(root, {"b\udcff.md": "[[nope]]\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "odd name")
    head = git(root, "rev-parse", "HEAD").strip()
    env = runner_env(tmp_path, "pull_request",
                     event_file(tmp_path, "pull_request", head=head, base=base), sha=head)
    env["PYTHONIOENCODING"] = "utf-8:strict"
    proc = run_ci(root, env, "--fail-on", "none", "--no-comment")
    assert proc.returncode == 0, proc.stderr
    out = Path(step_outputs(env)["report-dir"])
    assert json.loads((out / "report.json").read_text(encoding="utf-8"))["findings"][0][
        "path"] == "b\udcff.md"
    assert "/blob/" + head + "/b%FF.md#L1" in (out / "comment.md").read_text(encoding="utf-8")
    assert "b\\udcff.md" in Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
