"""Issue 40, what a query pays at start in a fresh process: a hybrid search asks numpy's
BLAS for one thread before numpy loads (no threadpoolctl, ~10 ms a query), loads the
chunker and the parse records only for notes changed since the index, and reads the
static model's vocabulary by count; what the model files say is still checked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from indexkit import make_tiny_model, read_static_table, write_safetensors

from tests.conftest import GIT_ENV, REPO

np = pytest.importorskip("numpy")

NOTES = {"garden.md": "# Garden\n\nThe python garden grows tomato plants.\n",
         "db.md": "# Database\n\nA database query reads the notes.\n"}
PROBE = """
import json, sys
from kbase_ci.cli.main import main
code = main(sys.argv[1:])
import threadpoolctl
blas = [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
print(json.dumps({"code": code, "blas": blas, "loaded": sorted(m for m in (
    "threadpoolctl", "kbase_ci.parsed", "kbase_ci.index.chunks") if m in LOADED)}))
"""


def _query(root: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    # What was loaded before the probe's own import of threadpoolctl: a module list kept
    # by an import hook would change what it measures, so the probe copies sys.modules.
    code = PROBE.replace("code = main(sys.argv[1:])",
                         "code = main(sys.argv[1:])\nLOADED = set(sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code, *args], cwd=root, capture_output=True,
                          text=True, timeout=300, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV, **(env or {})})
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


@pytest.fixture()
def indexed(make_repo: Any, tmp_path: Path) -> tuple[Path, Path]:
    root = make_repo({**NOTES, ".gitignore": ".kbase/\n"})
    model = make_tiny_model(tmp_path / "tiny")
    proc = subprocess.run([sys.executable, "-m", "kbase_ci", "index", "--model", str(model)],
                          cwd=root, capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV})
    assert proc.returncode == 0, proc.stderr
    return root, model


def test_a_hybrid_query_starts_with_one_blas_thread_and_no_chunker(
        indexed: tuple[Path, Path]) -> None:
    root, model = indexed
    got = _query(root, "search", "python garden", "--model", str(model))
    assert got["code"] == 0
    assert got["loaded"] == []  # neither threadpoolctl nor the chunker and parse records
    assert got["blas"] and set(got["blas"]) == {1}


def test_a_thread_count_the_user_set_is_limited_as_before(indexed: tuple[Path, Path]) -> None:
    root, model = indexed
    got = _query(root, "search", "python garden", "--model", str(model),
                 env={"OPENBLAS_NUM_THREADS": "2"})
    assert got["code"] == 0 and "threadpoolctl" in got["loaded"]
    assert got["blas"] and set(got["blas"]) == {1}


def test_a_changed_note_is_chunked_as_before(indexed: tuple[Path, Path]) -> None:
    root, model = indexed
    (root / "garden.md").write_text("# Garden\n\nNow about a database query.\n",
                                    encoding="utf-8")
    got = _query(root, "search", "database query", "--model", str(model))
    assert got["code"] == 0 and "kbase_ci.index.chunks" in got["loaded"]


def _forged_tokenizer(model: Path) -> str:
    """Give `tokenizer.json`'s last token an id past the vocabulary's count; that token."""
    spec = json.loads((model / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = spec["model"]["vocab"]
    last: str = max(vocab, key=vocab.get)
    vocab[last] = len(vocab) + 40
    (model / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    return last


def test_forged_model_files_are_still_refused(tmp_path: Path) -> None:
    from kbase_ci.errors import KbaseError
    from kbase_ci.index.modelfolder import open_embedder

    model = make_tiny_model(tmp_path / "ids")
    last = _forged_tokenizer(model)
    # The id past the table is refused when a text uses it (the count is all a load reads).
    with pytest.raises(KbaseError, match=r"tokenizer\.json: token id \d+ for a vocabulary"):
        open_embedder(model).encode([f"python {last}"])
    nan = make_tiny_model(tmp_path / "nan")
    table = read_static_table(nan).copy()
    table[3, 1] = np.nan
    write_safetensors(nan / "model.safetensors", {"embeddings": table})
    with pytest.raises(KbaseError, match="NaN or infinite"):
        open_embedder(nan)


def test_an_index_of_the_work_tree_spares_listing_it(indexed: tuple[Path, Path],
                                                     tmp_path: Path) -> None:
    """An index built from HEAD with nothing changed since: the query reads git's status
    and never lists the work tree (`git ls-files`; a trace's eager count of the notes
    made every query list it, 38k files on tldr-pages)."""
    root, model = indexed  # built from HEAD, nothing changed since
    trace = tmp_path / "git-trace.txt"
    for command in (["backlinks", "garden.md"], ["search", "--mode", "bm25", "python"],
                    ["search", "python garden", "--model", str(model)]):
        trace.unlink(missing_ok=True)
        got = _query(root, *command, env={"GIT_TRACE": str(trace)})
        assert got["code"] in (0, 1)  # backlinks: none (exit 1), the answer all the same
        ran = trace.read_text(encoding="utf-8")
        assert "status" in ran and "ls-files" not in ran, (command, ran)
