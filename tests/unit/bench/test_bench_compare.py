"""The `compare` bench group: which note it renames and asks for, and how the page shows
both sides of a run (the measuring itself is `python -m bench.compare`)."""

from __future__ import annotations

from pathlib import Path

from bench.compare import WORKLOADS, most_linked
from bench.report import HAND, render


def test_the_most_linked_note_is_what_a_rename_breaks_most(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "Hub.md").write_text("# Hub\n", encoding="utf-8")
    (tmp_path / "Leaf.md").write_text("[[Hub]] and [[sub/Hub#x|y]] and [[Leaf]]\n",
                                      encoding="utf-8")
    (tmp_path / "Other.md").write_text("[[hub.md]] [[Missing]] [[Missing]] [[Missing]]\n",
                                       encoding="utf-8")
    assert most_linked(tmp_path) == ("sub/Hub.md", "Hub")


def test_queries_run_before_the_workloads_that_commit(tmp_path: Path) -> None:
    # The hook commits its edits: a query after it would answer from a stale index.
    assert WORKLOADS.index("search") < WORKLOADS.index("hook")
    assert WORKLOADS.index("backlinks") < WORKLOADS.index("hook")


def test_the_page_shows_both_sides_and_the_ratio(tmp_path: Path) -> None:
    fig = {"name": "backlinks", "workload": "dnd-5e-srd", "unit": "s", "median": 0.3,
           "against": 0.25, "ratio": 1.2, "min": 0.29, "max": 0.31, "n": 3,
           "ref": "3360284", "command": "python -m bench.compare --against 3360284"}
    results = {"command": "python -m bench --only compare", "plan": {"repeat": 3},
               "machine": {"cpu": "x", "cores": 2, "os": "linux", "python": "3.11",
                           "date": "d", "commit": "c", "load_start": [0.1],
                           "load_end": [0.2]},
               "groups": {"compare": {"status": "ok", "notes": [], "figures": [fig]}}}
    doc = render(results, tmp_path / "b.md", tmp_path / "img")
    row = next(line for line in doc.read_text(encoding="utf-8").splitlines()
               if line.startswith("| backlinks"))
    assert "`3360284`: 0.25 s" in row and "| 1.2 |" in row and "0.3 s" in row


def test_a_re_render_keeps_what_was_written_by_hand_below_the_marker(tmp_path: Path
                                                                       ) -> None:
    results = {"command": "python -m bench", "plan": {"repeat": 1},
               "machine": {"cpu": "x", "cores": 2, "os": "linux", "python": "3.11",
                           "date": "d1", "commit": "c", "load_start": [0.1],
                           "load_end": [0.2]},
               "groups": {"compare": {"status": "skipped", "notes": ["n"], "figures": []}}}
    doc = render(results, tmp_path / "b.md", tmp_path / "img")
    hand = f"{HAND}\n\n## An issue's figures\n\nMeasured once, by hand.\n"
    doc.write_text(doc.read_text(encoding="utf-8") + "\n" + hand, encoding="utf-8")
    results["machine"]["date"] = "d2"
    text = render(results, doc, tmp_path / "img").read_text(encoding="utf-8")
    assert "Date d2" in text and "Date d1" not in text
    assert text.endswith(hand) and text.count(HAND) == 1
