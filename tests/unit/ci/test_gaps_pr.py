"""The PR report's concept gaps: a concept that crosses the spread threshold in the PR is
new, one a new note documents is closed, one that was already a gap is neither."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from conftest import git, write

from kbase_ci.ci.cireport import from_json
from kbase_ci.ci.prreport import Context, compare
from kbase_ci.ci.render import render

BASE = {
    "A.md": "# A\n\nWe use Change Data Capture here. Apache Flink runs jobs. `old_knob` too.\n"
            "Rows land in a Data Vault.\n",
    "B.md": "# B\n\nChange Data Capture again. Apache Flink as well, with `old_knob`.\n",
    "C.md": "# C\n\nApache Flink once more. The `old_knob` setting.\n",
    "D.md": "# D\n\nNothing to see. Links [[A]] [[B]] [[C]].\n",
    "E.md": "# E\n\nSee [[A]].\n\n## Data Vault\n\nHubs and links, as A and B use a Data Vault.\n",
}


def _repo(make_repo: Callable[..., Path]) -> tuple[Path, str, str]:
    root = make_repo(BASE)
    base = git(root, "rev-parse", "HEAD").strip()
    write(root, {
        # a third note mentions Change Data Capture: it becomes a gap
        "D.md": "# D\n\nNothing to see but Change Data Capture and `old_knob`. "
                "Links [[A]] [[B]] [[C]]. Also a Data Vault.\n",
        # a note now documents Apache Flink: that gap is closed
        "Apache Flink.md": "# Apache Flink\n\nStream processor. See [[A]].\n",
    })
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "pr")
    return root, base, git(root, "rev-parse", "HEAD").strip()


def test_new_and_closed_concepts(make_repo: Callable[..., Path]) -> None:
    root, base, head = _repo(make_repo)
    report = compare(root, base, head, Context())
    assert [(c.name, c.notes) for c in report.new_concepts] == [("Change Data Capture", 3)]
    places = report.new_concepts[0].places
    assert (places[0].path, places[0].line) == ("D.md", 3)  # the PR's note first, then the others
    assert sorted((p.path, p.line) for p in places[1:]) == [("A.md", 3), ("B.md", 3)]
    # `old_knob` was already in 3 notes: a pre-existing gap the PR mentions is not new;
    # Data Vault now recurs in 3 notes, but a heading of E (unchanged) documents it
    assert report.closed_concepts == ("Apache Flink",)
    again = from_json(json.loads(json.dumps(report.to_json())))
    assert again.new_concepts == report.new_concepts
    assert again.closed_concepts == report.closed_concepts
    text = render(report)
    assert "### New undocumented concepts (1)" in text
    assert "- Change Data Capture: in 3 notes" in text
    assert "Concepts this PR documents: Apache Flink" in text


def test_no_concept_news_when_notes_are_unchanged(make_repo: Callable[..., Path]) -> None:
    root = make_repo(BASE)
    base = git(root, "rev-parse", "HEAD").strip()
    write(root, {"notes.txt": "not a note\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "no notes")
    report = compare(root, base, git(root, "rev-parse", "HEAD").strip(), Context())
    assert report.new_concepts == () and report.closed_concepts == ()
    assert "undocumented concepts" not in render(report)
