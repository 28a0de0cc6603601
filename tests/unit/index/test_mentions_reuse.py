"""An incremental build copies the unchanged rows of the previous index's mentions.jsonl;
those rows come from a branch (an attacker's input), so a row of the wrong shape makes
the build search every note again instead of copying it into the new index."""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import git, write

from kbase_ci.index.assemble import link_inputs
from kbase_ci.index.indexbuild import build_index
from kbase_ci.index.layout import MENTIONS_FILE
from kbase_ci.index.manifest import read_manifest
from kbase_ci.index.previous import PreviousIndex
from kbase_ci.index.unlinked import mentions_table
from kbase_ci.parsed import ParsedNote
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.scanner import scan

VAULT = {
    "Alpha.md": "# Alpha\n\nAlpha is read before Gamma.\n",
    "Beta.md": "# Beta\n\nBeta builds on Alpha and on Gamma.\n",
    "Gamma.md": "# Gamma\n\nGamma says nothing of the others.\n",
    "Delta.md": "# Delta\n\nDelta is edited below.\n",
}

# Forged rows of Alpha's line (note 0): each names a source note that does not change,
# so a build that trusted them would copy them as they are.
FORGED = {
    "source out of range": [[999, 1, [[3, 1, 5]]]],
    "count below one": [[1, 0, [[3, 1, 5]]]],
    "place not a triple": [[1, 1, [[3, 1]]]],
    "negative place": [[1, 1, [[-3, 1, 5]]]],
    "row not a list": {"1": 1},
}


def _forge_alpha(index: Path, row: object) -> None:
    """Alpha's row of mentions.jsonl replaced by `row`, the manifest's hash recomputed
    (what someone who can push the index branch can do)."""
    path = index / MENTIONS_FILE
    lines = path.read_bytes().splitlines(keepends=True)
    lines[0] = json.dumps(row, separators=(",", ":")).encode() + b"\n"
    path.write_bytes(b"".join(lines))
    manifest = json.loads((index / "manifest.json").read_text())
    manifest["files"][MENTIONS_FILE] = hashlib.sha256(path.read_bytes()).hexdigest()
    (index / "manifest.json").write_text(json.dumps(manifest))


@dataclass(frozen=True)
class Built:
    """The index of VAULT before Delta's edit, and the vault after it (committed)."""

    index: Path
    vault: Vault
    notes: list[ParsedNote]
    key: str


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    root = tmp_path_factory.mktemp("repo")
    git(root, "init", "-q", "-b", "main")
    for key, value in (("user.name", "Test"), ("user.email", "test@example.com"),
                       ("commit.gpgsign", "false")):
        git(root, "config", key, value)
    write(root, VAULT)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "notes")
    build_index(Vault(root), root / ".kbase")
    index = tmp_path_factory.mktemp("before") / "index"
    shutil.copytree(root / ".kbase", index)
    write(root, {"Delta.md": "# Delta\n\nDelta now names Beta.\n"})
    git(root, "commit", "-qam", "edit")
    vault = Vault(root)
    notes, _ = scan(vault)
    return Built(index, vault, notes, link_inputs(notes, vault.files, True))


def _previous(built: Built, tmp_path: Path, row: object | None = None) -> PreviousIndex:
    index = tmp_path / "index"
    shutil.copytree(built.index, index)
    if row is not None:
        _forge_alpha(index, row)
    return PreviousIndex(index, read_manifest(index))


def test_an_intact_previous_table_is_reused_byte_for_byte(built: Built, tmp_path: Path
                                                          ) -> None:
    fresh = mentions_table(built.vault, built.notes)
    assert fresh[0][0] == [[1, 1, [[3, 16, 5]]]]  # Beta names Alpha, once
    previous = _previous(built, tmp_path)
    assert mentions_table(built.vault, built.notes, previous, built.key) == fresh


@pytest.mark.parametrize("case", sorted(FORGED))
def test_a_forged_previous_row_is_never_copied(built: Built, tmp_path: Path, case: str
                                               ) -> None:
    previous = _previous(built, tmp_path, FORGED[case])
    assert previous.data(MENTIONS_FILE) is not None  # the hash matches: only shape tells
    got = mentions_table(built.vault, built.notes, previous, built.key)
    assert got == mentions_table(built.vault, built.notes)
