"""The freshness overlay of a scope answers as the scope rebuilt from the work tree would:
links the overlay resolves again still resolve against the whole vault, so one landing
outside the scope stays `out_of_scope` (not "not yet written"), and notes added, changed
or deleted outside the scope move links the way a rebuild moves them."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import git, write
from scopekit import answer, kbase, scope_repo

SCOPE_NOTES = ("Ownership", "Borrowing", "Tokio", "Segments")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("scope-overlay")
    root = scope_repo(base / "vault", base / "model")
    kbase(root, "scope", "build", "rust")
    return root


def _edit(work: Path) -> None:
    """Work-tree changes, none committed: an untracked note in the scope whose name is in
    an out-of-scope link's text, a note outside deleted, one outside added that an edited
    scope note now links to."""
    write(work, {
        "rust/Segments.md": "# Segments\n\nsegword\n",
        "python/Trio.md": "# Trio\n\nstructured concurrency\n",
        "rust/Borrowing.md": (work / "rust/Borrowing.md").read_text(encoding="utf-8")
        + "\nAlso [[Trio]] and [[Never Written]].\n",
    })
    (work / "python" / "Python GIL.md").unlink()


def _links(work: Path) -> dict[str, list[tuple[Any, ...]]]:
    out = {}
    for note in SCOPE_NOTES:
        got = answer(work, "links", note, "--scope", "rust", ok=(0, 1))
        out[note] = [(lk["line"], lk["col"], lk["raw"], lk["path"], lk["status"])
                     for lk in got["links"]]
    return out


def _gaps(work: Path) -> list[str]:
    got = answer(work, "gaps", "--scope", "rust", "--kind", "note", "--min-notes", "1",
                 ok=(0, 1))
    return sorted(g["target"] for g in got["unwritten"])


def test_overlay_links_equal_a_rebuilt_scope(repo: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    shutil.copytree(repo, work)  # with .kbase/ and its scope, built before the edits
    _edit(work)
    overlaid = _links(work)
    own = {raw: status for _l, _c, raw, _p, status in overlaid["Ownership"]}
    # relinked (the new note's name is in its text): still outside, or gone now
    assert own["[[Lucene Segments#Merging]]"] == "out_of_scope"
    assert own["[[Python GIL]]"] == "unresolved"  # deleted from the vault
    borrow = {raw: status for _l, _c, raw, _p, status in overlaid["Borrowing"]}
    assert borrow["[[Trio]]"] == "out_of_scope"
    assert borrow["[[Never Written]]"] == "unresolved"
    assert not any(p for links in overlaid.values() for _l, _c, _r, p, _s in links
                   if p and not p.startswith("rust/"))
    gaps = _gaps(work)
    assert gaps == ["Never Written", "Python GIL"]  # not Trio, Lucene Segments, Asyncio

    rebuilt = tmp_path / "rebuilt"
    shutil.copytree(work, rebuilt)
    git(rebuilt, "add", "-A")
    git(rebuilt, "commit", "-q", "-m", "edits")
    kbase(rebuilt, "index", "--model", str(repo.parent / "model"))  # rebuilds the scope
    assert answer(rebuilt, "status", "--scope", "rust")["index"]["overlaid"] is False
    assert _links(rebuilt) == overlaid
    assert _gaps(rebuilt) == gaps


def test_untracked_scope_note_keeps_out_of_scope_links(repo: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    shutil.copytree(repo, work)
    before = answer(work, "links", "Ownership", "--scope", "rust")["links"]
    write(work, {"rust/Segments.md": "# Segments\n\nsegword\n"})
    after = answer(work, "links", "Ownership", "--scope", "rust")
    assert after["index"]["overlaid"] is True
    assert [lk["status"] for lk in after["links"]] == [lk["status"] for lk in before] \
        == ["ok", "out_of_scope", "out_of_scope"]
    assert _gaps(work) == []
