"""`--shard K/N` slices and `--merge`: combining slices gives the bytes of one build."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git, write
from indexkit import ONNX_MODEL, make_tiny_model, small_vault, snapshot

from kbase_ci.errors import IndexFormatError, UsageError
from kbase_ci.index.indexbuild import build_index
from kbase_ci.index.merge import merge_slices
from kbase_ci.index.reader import open_index
from kbase_ci.vault.notefiles import Vault

MakeRepo = Callable[..., Path]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_model(tmp_path_factory.mktemp("model") / "tiny")


def slices(root: Path, n: int, model: Path | None) -> list[Path]:
    out = []
    for k in range(1, n + 1):
        d = root.parent / f"slice-{k}"
        result = build_index(Vault(root), d, model=model, shard=(k, n))
        assert result.manifest.slice.k == k
        out.append(d)
    return out


@pytest.mark.parametrize("n", [2, 3, 6])
def test_merged_slices_equal_a_single_build(make_repo: MakeRepo, tiny_model: Path,
                                            n: int) -> None:
    files = {**small_vault(), ".kbase.yml": "index:\n  shard_max_bytes: 150\n"}
    root = make_repo(files)
    single = build_index(Vault(root), root.parent / "single", model=tiny_model)
    assert single.manifest.counts.shards > 4  # the small limit split the folders
    parts = slices(root, n, tiny_model)
    built = [s for p in parts for s in json.loads((p / "manifest.json").read_text())["shards"]]
    assert sorted(built) == sorted(single.manifest.shards)  # each shard built once
    # A slice reads only its own notes: together they parsed each note once.
    counts = [json.loads((p / "manifest.json").read_text())["counts"]["notes"] for p in parts]
    assert sum(counts) == single.manifest.counts.notes
    merge_slices(Vault(root), list(reversed(parts)), root.parent / "merged")
    assert snapshot(root.parent / "merged") == snapshot(root.parent / "single")


def test_transformer_slices_merge_to_a_single_builds_bytes(make_repo: MakeRepo) -> None:
    """The documented way to spread embedding over a CI matrix (examples/workflows/
    kbase-index-matrix.yml), with the transformer tier: slices built apart merge to
    exactly the bytes of one build."""
    if not ONNX_MODEL.is_dir():
        pytest.skip(f"{ONNX_MODEL} absent")
    files = {**small_vault(), ".kbase.yml": "index:\n  shard_max_bytes: 150\n"}
    root = make_repo(files)
    single = build_index(Vault(root), root.parent / "single", model=ONNX_MODEL)
    assert single.manifest.embeddings.kind == "onnx"
    merge_slices(Vault(root), slices(root, 3, ONNX_MODEL), root.parent / "merged")
    assert snapshot(root.parent / "merged") == snapshot(root.parent / "single")


def test_a_slice_is_not_an_index(make_repo: MakeRepo) -> None:
    root = make_repo(small_vault())
    (part,) = slices(root, 1, None)
    with pytest.raises(IndexFormatError, match=r"slice 1/1.*--merge"):
        open_index(part)


def test_merge_refuses_incomplete_or_mismatched_slices(make_repo: MakeRepo) -> None:
    root = make_repo(small_vault())
    parts = slices(root, 3, None)
    out = root.parent / "merged"
    with pytest.raises(UsageError, match=r"slices 1\.\.3 once each"):
        merge_slices(Vault(root), parts[:2], out)
    with pytest.raises(UsageError, match="once each"):
        merge_slices(Vault(root), [parts[0], parts[0], parts[1]], out)
    # Slices of an older commit do not merge into a newer vault.
    write(root, {"Home.md": "# Home\n\nnew text\n"})
    git(root, "commit", "-qam", "edit")
    with pytest.raises(UsageError, match="another state of the vault"):
        merge_slices(Vault(root), parts, out)
    # A slice whose files were changed is refused before anything is combined.
    git(root, "reset", "-q", "--hard", "HEAD~1")
    victim = next((parts[1] / "shards").rglob("chunks.json"))
    victim.write_text("[]\n")
    with pytest.raises(IndexFormatError, match="does not match the manifest"):
        merge_slices(Vault(root), parts, out)
    assert not out.exists()
    # A full index is not a slice.
    build_index(Vault(root), root.parent / "full", model=None)
    shutil.copytree(root.parent / "full", root.parent / "notaslice")
    with pytest.raises(IndexFormatError, match="not a slice"):
        merge_slices(Vault(root), [root.parent / "notaslice"], out)
