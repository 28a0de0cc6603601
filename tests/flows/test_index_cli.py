"""`kbase index` through the real entry point (subprocess)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import GIT_ENV, REPO, run_kbase, write
from indexkit import ONNX_MODEL, REAL_MODEL, make_tiny_model, small_vault, snapshot

from kbase_ci.index.reader import open_index

MakeRepo = Callable[..., Path]


def kbase(*args: str, cwd: Path, hub: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV, "HF_HUB_CACHE": str(hub)}
    return subprocess.run([sys.executable, "-m", "kbase_ci", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_index_command_output(make_repo: MakeRepo, tmp_path: Path) -> None:
    root = make_repo(small_vault())
    hub = tmp_path / "no-hub"
    proc = kbase("index", cwd=root, hub=hub)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("\n") == 1  # one summary line for CI logs
    assert proc.stdout.startswith("kbase index: 8 notes, ")
    assert "4 shards (4 built, 0 reused), vectors: none" in proc.stdout
    # Why there are no vectors: said once, and the manifest says it too.
    assert proc.stderr.count("not available offline") == 1
    assert "not available offline" in str(open_index(root / ".kbase").manifest.embeddings.reason)
    assert "is not ignored by git" in proc.stderr
    write(root, {".gitignore": ".kbase/\n"})
    proc = kbase("index", cwd=root, hub=hub)
    assert "4 reused" in proc.stdout and "not ignored" not in proc.stderr
    assert "\x1b[" not in proc.stderr  # no progress bar outside a terminal


def test_index_usage_errors(make_repo: MakeRepo, tmp_path: Path) -> None:
    root = make_repo(small_vault())
    proc = run_kbase("--root", str(tmp_path / "nope"), "index", cwd=tmp_path)
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    proc = run_kbase("index", "--model", str(tmp_path / "nomodel"), cwd=root)
    assert proc.returncode == 2 and "--model" in proc.stderr
    proc = run_kbase("index", "--shard", "3/2", cwd=root)
    assert proc.returncode == 2 and "K/N" in proc.stderr
    write(root, {".kbase.yml": "index:\n  domain: tags\n"})
    proc = run_kbase("index", cwd=root)
    assert proc.returncode == 2 and "index.domain" in proc.stderr
    assert not (root / ".kbase").exists()


def test_shard_and_merge_on_the_command_line(make_repo: MakeRepo, tmp_path: Path) -> None:
    model = make_tiny_model(tmp_path / "tiny")
    root = make_repo(small_vault())
    hub = tmp_path / "no-hub"
    for k in (1, 2):
        proc = kbase("index", "--model", str(model), "--shard", f"{k}/2", cwd=root, hub=hub)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("kbase slice: ")
    proc = kbase("index", "--merge", ".kbase-slice-1-of-2", ".kbase-slice-2-of-2",
                 "--out", str(tmp_path / "merged"), cwd=root, hub=hub)
    assert proc.returncode == 0, proc.stderr
    proc = kbase("index", "--model", str(model), cwd=root, hub=hub)
    assert proc.returncode == 0, proc.stderr
    assert snapshot(tmp_path / "merged") == snapshot(root / ".kbase")


@pytest.mark.parametrize(("folder", "kind", "library", "dim"), [
    (REAL_MODEL, "model2vec", "kbase", 256),
    (ONNX_MODEL, "onnx", "onnxruntime", 384)])
def test_real_models_on_the_demo_vault(tmp_path: Path, folder: Path, kind: str,
                                       library: str, dim: int) -> None:
    """Both tiers end to end: `--model` takes a model2vec or an ONNX folder, told apart by
    its files, and the nearest paragraph to a question is the one that answers it."""
    import shutil

    from conftest import FIXTURES, git

    from kbase_ci.index.modelfolder import open_embedder

    if not folder.is_dir():
        pytest.skip(f"{folder} absent")
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-vault", root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "demo")
    proc = kbase("index", "--model", str(folder), cwd=root, hub=tmp_path / "hub")
    assert proc.returncode == 0, proc.stderr
    reader = open_index(root / ".kbase")
    rate = re.search(r"kbase index: embedded (\d+) chunks \((\d+) distinct texts\) in "
                     r"[\d.]+ s \((\d+) chunks/s\)", proc.stderr)
    assert rate is not None and int(rate.group(1)) == reader.manifest.counts.chunks
    assert 0 < int(rate.group(2)) <= int(rate.group(1))
    assert int(rate.group(3)) > 0 and "chunks/s" not in proc.stdout
    emb, fusion = reader.manifest.embeddings, reader.manifest.fusion
    assert (emb.model, emb.dim, emb.kind, emb.library) == (folder.name, dim, kind, library)
    assert fusion is not None and fusion.rankers["semantic"].weight > 0
    q = open_embedder(folder).encode(["tags nested with slashes"], query=True)[0]
    hits = []
    for sid in reader.shards:
        index = reader.vectors(sid)
        res = index.search(q, 1)
        hits.append((float(res.distances[0]), reader.chunk_notes(sid)[int(res.keys[0])]))
    assert min(hits)[1] == "Concepts/Tags.md"
