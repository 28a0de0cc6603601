"""`safefs.entries`, the one walk behind `foreign_entry` and the index listing check:
the same entries, in the same order, as the `os.walk` it replaced."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kbase_ci.vault.safefs import entries, foreign_entry


def _walked(folder: Path) -> list[str]:
    """The order of the former `foreign_entry`: os.walk top down, files sorted, then the
    folder links, then each real subfolder."""
    out = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        base = Path(dirpath)
        dirnames.sort()
        for name in sorted(filenames) + [d for d in dirnames if (base / d).is_symlink()]:
            out.append((base / name).relative_to(folder).as_posix())
    return out


def _tree(root: Path) -> None:
    for rel in ("b.json", "a.npy", "z/x.npy", "shards/0/v.npy", "shards/1/a.npy",
                "shards/0b/c", "m/n/o/p.txt"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel, encoding="utf-8")
    (root / "c-link").symlink_to(root / "shards")  # a link to a folder: listed, not entered
    (root / "shards" / "0" / "dangling").symlink_to(root / "missing")
    (root / "a-file-link").symlink_to(root / "b.json")
    os.mkfifo(root / "z" / "fifo")


def test_entries_lists_what_os_walk_did_in_its_order(tmp_path: Path) -> None:
    _tree(tmp_path)
    got = entries(tmp_path)
    assert list(got) == _walked(tmp_path)
    assert stat.S_ISLNK(got["c-link"].st_mode) and stat.S_ISFIFO(got["z/fifo"].st_mode)
    assert got["a.npy"].st_size == len("a.npy")
    assert "shards/0/v.npy" in got and not any(r.startswith("c-link/") for r in got)


def test_foreign_entry_is_the_first_unowned_or_irregular_entry(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert foreign_entry(tmp_path, lambda rel: True) == "a-file-link"
    assert foreign_entry(tmp_path, lambda rel: rel != "b.json") == "a-file-link"
    (tmp_path / "a-file-link").unlink()
    (tmp_path / "c-link").unlink()
    assert foreign_entry(tmp_path, lambda rel: rel != "b.json") == "b.json"
    assert foreign_entry(tmp_path, lambda rel: True) == "shards/0/dangling"
