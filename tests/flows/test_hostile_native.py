"""Issue 28, native code fenced: a forged index branch (every manifest hash recomputed)
whose usearch graph, `.npy` headers or manifest values would make a library crash the
process (SIGSEGV), or raise past kbase's handlers (exit 3), is refused naming the file,
and the query is answered from an index built for it. Run as real processes: on the
code before the fix, the graph case killed the interpreter."""

from __future__ import annotations

import hashlib
import io
import json
import os
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import GIT_ENV, kbase_process, run_kbase, write
from indexkit import commit_index_branch, make_tiny_model

from kbase_ci.index import ann

NOTES: dict[str, str | bytes] = {
    ".kbase.yml": "embeddings:\n  model: models/tiny\n",
    ".gitignore": ".kbase/\n",
    "Soil.md": "# Soil\n\ngarden compost soil water\n\nsee [[Sql]]\n",
    "Sql.md": "# Sql\n\ndatabase query table sql postgres\n",
    "Seed.md": "# Seed\n\ntomato seed bean flower\n",
}
SHARD = "shards/_root/"


def _npy(data: bytes) -> np.ndarray:
    return np.load(io.BytesIO(data), allow_pickle=False)


def _graph_files(files: dict[str, bytes], dim: int, edit: Callable[[bytes], bytes]
                 ) -> dict[str, bytes]:
    """A usearch graph over the shard's rows (as `kbase index` builds one for a large
    shard), passed through `edit`, with its equal-row map."""
    from kbase_ci.index.vectors import Vectors

    vectors = Vectors(_npy(files[SHARD + "vectors.npy"]), dim)
    graph, same = vectors.graph_files()
    return {SHARD + ann.FILE: edit(graph), SHARD + ann.SAME_FILE: same}


def _slot(graph: bytes, dim: int) -> bytes:
    """The first neighbour slot of the first node pointed far past the graph."""
    count = struct.unpack_from("<I", graph, 0)[0]
    at = 8 + count * 2 * dim + 64 + 40 + 2 * count + 10
    return graph[:at] + struct.pack("<II", 1, 10**8) + graph[at + 8:]


def _relabel(descr: bytes, size: int) -> Callable[[bytes], bytes]:
    """The array's header rewritten to say `descr` (items of `size` bytes), its shape
    made to fit the bytes (as a forger who wants the header to add up writes it)."""
    def edit(data: bytes) -> bytes:
        start = 10 + int.from_bytes(data[8:10], "little")
        head = data[10:start].decode("latin-1")
        body = data[start:]
        descr_at = head.index("'descr': '") + len("'descr': '")
        head = head[:descr_at] + descr.decode() + head[head.index("'", descr_at):]
        shape_at = head.index("'shape': (")
        head = (head[:shape_at] + f"'shape': ({len(body) // size},), }}").ljust(
            start - 11) + "\n"
        return data[:10] + head.encode("latin-1") + body
    return edit


def _manifest(change: Callable[[dict[str, object]], None]) -> Callable[[bytes], bytes]:
    def edit(data: bytes) -> bytes:
        manifest = json.loads(data)
        change(manifest)
        return json.dumps(manifest).encode()
    return edit


def _stopwords(m: dict[str, object]) -> None:
    tokenizer = m["tokenizer"]
    assert isinstance(tokenizer, dict)
    tokenizer["stopwords"] = [1, "the"]


FORGERIES: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    "vectors.npy labelled <f1": (SHARD + "vectors.npy", _relabel(b"<f1", 1)),
    "blobs.npy relabelled <u4": ("blobs.npy", _relabel(b"<u4", 4)),
    "line numbers labelled <f2": (SHARD + "chunks.lines.npy", _relabel(b"<f2", 2)),
    "a number among the stopwords": ("manifest.json", _manifest(_stopwords)),
}



def _forge(root: Path, change: Callable[[dict[str, bytes]], None], out: Path) -> None:
    """`.kbase/` changed by `change`, its manifest's hashes recomputed, committed as the
    index branch and written to `out`; `.kbase/` removed."""
    index = root / ".kbase"
    files = {p.relative_to(index).as_posix(): p.read_bytes()
             for p in sorted(index.rglob("*")) if p.is_file()}
    change(files)
    manifest = json.loads(files["manifest.json"])
    manifest["files"] = {r: hashlib.sha256(d).hexdigest() for r, d in sorted(files.items())
                         if r != "manifest.json"}
    files["manifest.json"] = json.dumps(manifest).encode()
    commit_index_branch(root, files)
    write(out, dict(files))
    for p in sorted(index.rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    index.rmdir()


@pytest.fixture
def built(make_repo: Callable[..., Path], tmp_path: Path) -> Path:
    root = make_repo(NOTES)
    make_tiny_model(root / "models" / "tiny")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env={**os.environ, **GIT_ENV})
    subprocess.run(["git", "commit", "-qm", "model"], cwd=root, check=True,
                   env={**os.environ, **GIT_ENV})
    proc = run_kbase("index", cwd=root)
    assert proc.returncode == 0, proc.stderr
    return root


def _refused_and_answered(root: Path, forged: Path, named: str) -> None:
    proc = kbase_process("search", "compost soil", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert "is not a valid index" in proc.stderr and named in proc.stderr, proc.stderr
    ans = json.loads(proc.stdout)
    assert ans["index"]["origin"] == "temporary"
    assert ans["results"][0]["path"] == "Soil.md"
    direct = kbase_process("search", "compost soil", "--index", str(forged), cwd=root)
    assert direct.returncode == 2 and named in direct.stderr, direct.stderr
    assert "Traceback" not in direct.stderr


def test_a_graph_pointing_outside_itself_is_refused_not_a_crash(built: Path,
                                                                tmp_path: Path) -> None:
    dim = json.loads((built / ".kbase" / "manifest.json").read_text())["embeddings"]["dim"]

    def add_graph(files: dict[str, bytes]) -> None:
        files.update(_graph_files(files, dim, lambda g: _slot(g, dim)))

    _forge(built, add_graph, tmp_path / "forged")
    _refused_and_answered(built, tmp_path / "forged", ann.FILE)


def test_a_truncated_graph_is_refused_not_exit_3(built: Path, tmp_path: Path) -> None:
    dim = json.loads((built / ".kbase" / "manifest.json").read_text())["embeddings"]["dim"]

    def add_graph(files: dict[str, bytes]) -> None:
        files.update(_graph_files(files, dim, lambda g: g[:len(g) // 2]))

    _forge(built, add_graph, tmp_path / "forged")
    _refused_and_answered(built, tmp_path / "forged", ann.FILE)


def test_a_sound_graph_is_used(built: Path, tmp_path: Path) -> None:
    """The check refuses forgeries only: the graph kbase itself writes is walked."""
    dim = json.loads((built / ".kbase" / "manifest.json").read_text())["embeddings"]["dim"]

    def add_graph(files: dict[str, bytes]) -> None:
        files.update(_graph_files(files, dim, lambda g: g))

    _forge(built, add_graph, tmp_path / "forged")
    proc = kbase_process("search", "compost soil", cwd=built)
    assert proc.returncode == 0 and "not a valid index" not in proc.stderr, proc.stderr
    assert json.loads(proc.stdout)["index"]["origin"] != "temporary"


@pytest.mark.parametrize("case", list(FORGERIES))
def test_forged_headers_and_values_are_refused(built: Path, tmp_path: Path,
                                               case: str) -> None:
    rel, edit = FORGERIES[case]

    def change(files: dict[str, bytes]) -> None:
        files[rel] = edit(files[rel])

    _forge(built, change, tmp_path / "forged")
    named = "stopwords" if rel == "manifest.json" else rel
    _refused_and_answered(built, tmp_path / "forged", named)


def _lengths(edit: Callable[[np.ndarray], np.ndarray]) -> Callable[[bytes], bytes]:
    def change(data: bytes) -> bytes:
        out = io.BytesIO()
        np.save(out, edit(_npy(data)), allow_pickle=False)
        return out.getvalue()
    return change


LENGTHS: dict[str, Callable[[bytes], bytes]] = {
    "one chunk short": _lengths(lambda a: a[:-1]),
    "floats": _lengths(lambda a: a.astype(np.float64)),
    "NaN": _lengths(lambda a: np.where(np.arange(len(a)) == 0, np.nan, a)),
    "negative": _lengths(lambda a: a.astype(np.int32) - 100),
}


@pytest.mark.parametrize("case", list(LENGTHS))
def test_forged_chunk_lengths_are_refused_by_validation(built: Path, tmp_path: Path,
                                                        case: str) -> None:
    """The note-level BM25 list (kbase_ci.query.notebm25) adds chunk lengths up per
    note. Issue 38: a lengths file one chunk short, of floats or holding a NaN passed
    the branch's validation, and then every hybrid search failed (exit 2) in every
    clone. Validation refuses it (kbase_ci.index.validation), naming the file, and the
    query is answered from an index built for it, as for any forged table."""
    rel = SHARD + "bm25/lengths.npy"

    def change(files: dict[str, bytes]) -> None:
        files[rel] = LENGTHS[case](files[rel])

    _forge(built, change, tmp_path / "forged")
    _refused_and_answered(built, tmp_path / "forged", rel)


@pytest.mark.parametrize("stats", [b'{"avgdl":"x","docs":6}', b"[1]", b'{"avgdl":null}',
                                   b'{"avgdl":-1}', b'{"avgdl":true}',
                                   b'{"avgdl":5e-324,"docs":6}', b'{"avgdl":1e308,"docs":6}'])
def test_a_forged_mean_chunk_length_is_refused(built: Path, tmp_path: Path,
                                               stats: bytes) -> None:
    """Every hybrid query divides by the shard's mean chunk length (the note-level
    list). A value no build writes (issue 38: a subnormal 5e-324 made numpy print a
    RuntimeWarning naming kbase's source), with the manifest's hash made to fit, is
    refused by validation: the mean of the lengths file, or the index is forged."""
    rel = SHARD + "bm25/stats.json"

    def change(files: dict[str, bytes]) -> None:
        files[rel] = stats

    _forge(built, change, tmp_path / "forged")
    _refused_and_answered(built, tmp_path / "forged", rel)
    proc = kbase_process("search", "compost soil", cwd=built)
    assert "Warning" not in proc.stderr and ".py" not in proc.stderr, proc.stderr
