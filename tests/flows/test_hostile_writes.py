"""Issue 22, writes: nothing outside the index is ever deleted, nothing is written outside
the repository, and no concurrent edit is lost. Real repositories with real symbolic
links, a real submodule and a real appending process; each test is one case of the
break-test (docs/security.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import git, run_kbase, write

Repo = Callable[..., Path]


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file() and ".git" not in p.parts}


def _symlink(root: Path, name: str, to: str) -> None:
    (root / name).symlink_to(to)
    git(root, "add", name)
    git(root, "commit", "-qm", f"link {name}")


def test_committed_kbase_symlink_to_parent_is_refused(make_repo: Repo) -> None:
    root = make_repo({"A.md": "# A\n\n[[B]]\n", "B.md": "# B\n"})
    (root.parent / "sibling.txt").write_text("keep me\n")
    _symlink(root, ".kbase", "..")
    before = _tree(root.parent)
    proc = run_kbase("index", cwd=root)
    assert proc.returncode == 2, proc.stderr
    assert ".kbase is a symbolic link" in proc.stderr
    assert _tree(root.parent) == before
    # Queries do not read through it either: they build a temporary index and say why.
    query = run_kbase("links", "A", cwd=root)
    assert query.returncode == 0, query.stderr
    assert "symbolic link" in query.stderr


def test_index_out_at_a_folder_of_files_is_refused(make_repo: Repo, tmp_path: Path) -> None:
    root = make_repo({"A.md": "# A\n"})
    mine = tmp_path / "mine"
    write(mine, {"thesis.tex": "years of work\n", "data/x.csv": "1,2\n"})
    proc = run_kbase("index", "--out", str(mine), cwd=root)
    assert proc.returncode == 2
    assert "is not a kbase index" in proc.stderr and "thesis.tex" in proc.stderr
    assert _tree(mine) == {"data/x.csv": b"1,2\n", "thesis.tex": b"years of work\n"}
    for where in (root, root.parent):  # the repository itself, or a folder holding it
        proc = run_kbase("index", "--out", str(where), cwd=root)
        assert proc.returncode == 2 and "cannot be the repository" in proc.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_kbase("index", "--out", str(empty), cwd=root).returncode == 0
    assert run_kbase("index", "--out", str(empty), cwd=root).returncode == 0  # replaced


def test_note_in_the_index_folder_is_never_lost(make_repo: Repo) -> None:
    root = make_repo({"A.md": "# A\n", "B.md": "# B\n\n[[A]]\n"})
    proc = run_kbase("mv", "A.md", ".kbase/A.md", cwd=root)
    assert proc.returncode == 2 and "index folder" in proc.stderr
    assert (root / "A.md").is_file() and not (root / ".kbase").exists()
    # Put there by hand (git add -f): the next build refuses to replace the folder.
    assert run_kbase("index", cwd=root).returncode == 0
    write(root, {".kbase/A.md": "# A moved here\n"})
    git(root, "add", "-f", ".kbase/A.md")
    proc = run_kbase("index", cwd=root)
    assert proc.returncode == 2 and "A.md" in proc.stderr
    assert (root / ".kbase/A.md").read_text() == "# A moved here\n"


def test_mv_through_a_tracked_symlinked_folder_is_refused(make_repo: Repo,
                                                          tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = make_repo({"A.md": "# A\n", "B.md": "[[A]]\n"})
    _symlink(root, "link", str(outside))
    proc = run_kbase("mv", "A.md", "link/A.md", cwd=root)
    assert proc.returncode == 2 and "link is a symbolic link" in proc.stderr
    assert list(outside.iterdir()) == []
    assert (root / "A.md").read_text() == "# A\n"
    assert git(root, "status", "--porcelain") == ""


def test_new_handover_into_a_tracked_symlink_is_refused(make_repo: Repo,
                                                        tmp_path: Path) -> None:
    outside = tmp_path / "home"
    outside.mkdir()
    root = make_repo({"A.md": "# A\n"})
    _symlink(root, "handovers", str(outside))
    proc = run_kbase("new", "handover", "--date", "2024-05-01", cwd=root)
    assert proc.returncode == 2 and "handovers is a symbolic link" in proc.stderr
    assert list(outside.iterdir()) == []


def test_mv_into_a_submodule_is_refused(make_repo: Repo) -> None:
    lib = make_repo({"README.md": "# lib\n"}, name="lib")
    root = make_repo({"Outer.md": "# Outer\n", "B.md": "[[Outer]]\n"})
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "sub")
    git(root, "commit", "-qm", "submodule")
    before = git(root, "ls-files", "-s")
    proc = run_kbase("mv", "Outer.md", "sub/Outer.md", cwd=root)
    assert proc.returncode == 2 and "submodule" in proc.stderr
    assert git(root, "ls-files", "-s") == before and git(root, "status", "--porcelain") == ""
    # Not checked out (`git submodule deinit`): the gitlink alone still says so.
    git(root, "submodule", "deinit", "-q", "-f", "sub")
    proc = run_kbase("mv", "Outer.md", "sub/Outer.md", cwd=root)
    assert proc.returncode == 2 and "submodule sub/" in proc.stderr
    assert git(root, "ls-files", "-s") == before


_APPENDER = """
import os, sys, time
path, stop = sys.argv[1], sys.argv[2]
n = 0
while not os.path.exists(stop) and n < 100000:
    with open(path, "a") as fh:
        fh.write(f"appended {n}\\n")
    n += 1
    if n == 1:
        print("appending", flush=True)  # the test starts its fixes now
    time.sleep(0.0002)
print(n)
"""


def test_fix_never_loses_a_concurrent_append(make_repo: Repo) -> None:
    body = "".join(f"line {i} of a long note, see [[Old]] and [[Old#Setup]]\n"
                   for i in range(400))
    root = make_repo({"Source.md": f"# Source\n\n{body}", "Old.md": "# Old\n\n## Setup\n"})
    git(root, "mv", "Old.md", "New.md")
    stop = root.parent / "stop"
    appender = subprocess.Popen([sys.executable, "-c", _APPENDER, str(root / "Source.md"),
                                 str(stop)], stdout=subprocess.PIPE, text=True)
    try:
        assert appender.stdout is not None
        assert appender.stdout.readline() == "appending\n"  # it is writing: fix now
        codes = [run_kbase("fix", "--staged", cwd=root).returncode for _ in range(5)]
    finally:
        stop.touch()
        out, _ = appender.communicate(timeout=60)
    appended = int(out.split()[-1])
    kept = {line for p in root.glob("Source.md*") for line in p.read_text().splitlines()}
    missing = [n for n in range(appended) if f"appended {n}" not in kept]
    assert not missing, f"{len(missing)} of {appended} appended lines lost"
    assert set(codes) <= {0, 1}
    assert os.listdir(root).count("Source.md") == 1
