"""Issue 38: every read of bytes kbase did not write goes through one bounded reader
(kbase_ci.state.bounded): a regular file only, no link out of its tree, a size cap.
Cases that hung or read outside the repository on e1fd72d, run as real processes under
a timeout (a hang fails the test instead of the suite):

- item 3: a committed model folder whose `config.json` is a link to `/dev/zero`, named by
  `.kbase.yml` `embeddings.model`: `kbase index`, `search` and `status` read for ever;
- a model file linked out of the repository is read (and hashed, and loaded);
- item 10: a FIFO where a note was, after `kbase fix --staged` left its memo, blocked
  `kbase check --staged` (checks/fixmemo read the note with `read_bytes()`);
- a `.kbase.yml` linked to a file outside the repository was obeyed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import GIT_ENV, REPO, git, run_kbase
from indexkit import make_tiny_model

NOTES: dict[str, str | bytes] = {
    ".kbase.yml": "embeddings:\n  model: models/tiny\n",
    ".gitignore": ".kbase/\n",
    "Soil.md": "# Soil\n\ngarden compost soil water\n",
    "Sql.md": "# Sql\n\ndatabase query table sql postgres\n",
}


def kbase(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m kbase_ci ARGS` in `root`, offline, failing the test after 120 s."""
    env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV, "KBASE_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "kbase_ci", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def indexed(make_repo: Callable[..., Path]) -> Path:
    """A vault indexed with its committed static model `models/tiny`."""
    root = make_repo(NOTES)
    make_tiny_model(root / "models" / "tiny")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "model")
    proc = run_kbase("index", cwd=root)
    assert proc.returncode == 0, proc.stderr
    return root


def _commit_link(root: Path, rel: str, target: str) -> None:
    (root / rel).unlink()
    (root / rel).symlink_to(target)
    git(root, "add", "-A")
    git(root, "commit", "-qm", f"{rel} -> {target}")


@pytest.mark.parametrize("target", ["/dev/zero", "OUTSIDE"])
def test_a_model_file_that_is_no_file_of_the_folder_is_refused(indexed: Path, tmp_path: Path,
                                                               target: str) -> None:
    """`config.json -> /dev/zero` read for ever; `tokenizer.json` linked to a file out of
    the repository was read, hashed and loaded. Either is refused, named: `index` exits
    2, `status` says why the model is not available, `search` ranks by BM25 with a
    notice naming the file (`--mode semantic`: exit 2)."""
    rel = "models/tiny/config.json"
    if target == "OUTSIDE":
        rel = "models/tiny/tokenizer.json"
        outside = tmp_path / "elsewhere" / "tokenizer.json"
        outside.parent.mkdir()
        outside.write_bytes((indexed / rel).read_bytes())
        target = str(outside)
    _commit_link(indexed, rel, target)
    named = f"{rel}: " if target == "/dev/zero" else f"{rel}: a symbolic link out of"

    status = kbase(indexed, "status")
    assert status.returncode == 0, status.stderr
    model = json.loads(status.stdout)["model"]
    assert model["available"] is False and named in model["why"], model

    search = kbase(indexed, "search", "compost soil")
    assert search.returncode == 0, search.stderr
    ans = json.loads(search.stdout)
    assert ans["results"][0]["path"] == "Soil.md"
    # The one model notice (issue 37: "BM25 only: no model (why; fix)") names the file.
    assert any(named in n and n.startswith("BM25 only: no model") for n in ans["notices"]), \
        ans["notices"]
    # The model is the repository's own folder, never downloaded: the fix names that
    # folder, not a network the query would not use.
    assert "folder models/tiny/ is not the index's model" in ans["notices"][0], ans
    assert "network" not in ans["notices"][0], ans

    semantic = kbase(indexed, "search", "compost soil", "--mode", "semantic")
    assert semantic.returncode == 2 and named in semantic.stderr, semantic.stderr

    build = kbase(indexed, "index")
    assert build.returncode == 2, build.stderr
    assert named in build.stderr and "Traceback" not in build.stderr, build.stderr


def test_a_huge_model_setting_file_is_refused_before_it_is_read(indexed: Path) -> None:
    """A regular `config.json` past the 1 MiB a model's settings may have (git stores
    gigabytes of zeros in kilobytes) is refused by its size, not read whole."""
    with (indexed / "models/tiny/config.json").open("r+b") as fh:
        fh.truncate(3 << 30)  # sparse: 3 GiB of zeros, no disk
    git(indexed, "add", "-A")
    git(indexed, "commit", "-qm", "3 GiB config")
    build = kbase(indexed, "index")
    assert build.returncode == 2, build.stderr
    assert "models/tiny/config.json: 3221225472 bytes, more than the 1048576" in build.stderr


def test_a_fifo_where_a_fixed_note_was_does_not_block_the_check(
        make_repo: Callable[..., Path]) -> None:
    """`kbase fix --staged` rewrote A.md and left its memo; A.md then became a FIFO: the
    check read it to compare with the memo, and blocked for ever."""
    root = make_repo({"A.md": "# A\n\n[[B]]\n", "B.md": "# B\n"})
    git(root, "mv", "B.md", "C.md")
    assert kbase(root, "fix", "--staged").returncode == 1
    assert "[[C]]" in (root / "A.md").read_text()
    (root / "A.md").unlink()
    os.mkfifo(root / "A.md")
    proc = kbase(root, "check", "--staged")
    assert proc.returncode == 1, proc.stderr
    assert "A.md:3:1: KB101" in proc.stdout  # the memo no longer holds: reported


def test_a_config_linked_out_of_the_repository_is_refused(make_repo: Callable[..., Path],
                                                          tmp_path: Path) -> None:
    """A committed `.kbase.yml -> /elsewhere/settings.yml` was read and obeyed (here:
    switching the link checks off); it is a located config error."""
    root = make_repo({"A.md": "# A\n\n[[Gone]]\n", ".kbase.yml": "vault: {}\n"})
    outside = tmp_path / "settings.yml"
    outside.write_text("checks:\n  severity:\n    links: off\n", encoding="utf-8")
    _commit_link(root, ".kbase.yml", str(outside))
    proc = kbase(root, "check")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert ".kbase.yml:1:1: KB900 not read: a symbolic link out of" in proc.stderr
