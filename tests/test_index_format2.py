"""Index format 2 and 3 (note rows without path and blob id): rows read one at a time,
lazily hashed files, the BM25 and vector readers against the libraries' own answers, the
link graph arrays against the rows, and the refusal of format 1 (with the query commands
falling back to a build)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import run_kbase
from indexkit import make_tiny_model, small_vault

from kbase_ci.errors import IndexFormatError
from kbase_ci.index import bm25, tokens, vectors
from kbase_ci.index.build import build_index
from kbase_ci.index.reader import LINK_ROWS_FILE, open_index
from kbase_ci.index.rowfile import int_view
from kbase_ci.index.tables import (
    NOTE_FIELDS,
    STORED_NOTE_FIELDS,
    full_note_row,
    stored_note_row,
)
from kbase_ci.query.source import IndexSource
from kbase_ci.query.view import QueryView
from kbase_ci.vault import Vault

MakeRepo = Callable[..., Path]


def _index(make_repo: MakeRepo, model: Path | None = None) -> Path:
    root = make_repo(small_vault())
    build_index(Vault(root), root / ".kbase", model=model)
    return root


def test_rows_match_the_whole_tables(make_repo: MakeRepo) -> None:
    root = _index(make_repo)
    reader = open_index(root / ".kbase")
    notes, links = reader.notes(), reader.links()
    fresh = open_index(root / ".kbase")  # a reader that decoded nothing yet
    assert [fresh.note_row(i) for i in range(len(notes["rows"]))] == notes["rows"]
    assert [fresh.link_row(i) for i in range(len(links["rows"]))] == links["rows"]
    paths = reader.core()["paths"]
    assert paths == sorted(paths) == [r[0] for r in notes["rows"]]
    # Format 3: a line holds neither the path nor the blob id (notes.json has them).
    lines = (root / ".kbase" / "notes.jsonl").read_text(encoding="utf-8").splitlines()
    blobs = reader.core()["blobs"]
    for line, row, path, blob in zip(lines, notes["rows"], paths, blobs, strict=True):
        stored = json.loads(line)
        assert stored == stored_note_row(row) and len(stored) == len(STORED_NOTE_FIELDS)
        assert full_note_row(stored, path, blob) == row
        assert (row[NOTE_FIELDS.index("blob")], row[0]) == (blob, path)
        assert blob not in line and json.dumps(path, ensure_ascii=False) not in line
    # The CSR backlinks hold exactly the links from other notes that resolve to a note.
    for i in range(len(paths)):
        want = [n for n, r in enumerate(links["rows"]) if r[6] == i and r[0] != i]
        assert sorted(links["backlinks"][i]) == want
    names = reader.names()
    for i, row in enumerate(notes["rows"]):
        assert i in names[row[1].casefold()]


def test_edges_equal_the_link_rows(make_repo: MakeRepo) -> None:
    root = _index(make_repo)
    reader = open_index(root / ".kbase")
    view = QueryView(Vault(root), IndexSource(reader, "dir", str(root / ".kbase")))
    rows = reader.links()["rows"]
    want = {(r[0], r[6]) for r in rows if r[9] == "ok" and isinstance(r[6], int)
            and r[0] != r[6]}
    assert view.edges.paths == tuple(reader.core()["paths"])
    assert set(view.edges.pairs) == want and len(want) > 3


def test_a_tampered_row_file_is_refused_when_read(make_repo: MakeRepo) -> None:
    root = _index(make_repo)
    victim = root / ".kbase" / LINK_ROWS_FILE
    victim.write_bytes(victim.read_bytes().replace(b"[[", b"[[X", 1))
    reader = open_index(root / ".kbase")  # only the core is hashed at open
    assert reader.note_row(0)
    with pytest.raises(IndexFormatError, match=r"links\.jsonl does not match the manifest"):
        reader.link_row(0)
    code = run_kbase("links", "Home", "--index", str(root / ".kbase"), cwd=root)
    assert code.returncode == 2 and "does not match the manifest" in code.stderr


def test_format_1_is_refused_and_queries_fall_back(make_repo: MakeRepo) -> None:
    root = _index(make_repo)
    mpath = root / ".kbase" / "manifest.json"
    mpath.write_text(json.dumps({**json.loads(mpath.read_text()), "format_version": 1}))
    with pytest.raises(IndexFormatError, match=r"older kbase.*rebuild with `kbase index`"):
        open_index(root / ".kbase")
    proc = run_kbase("backlinks", "Context Managers", "--format", "json", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert "older kbase" in proc.stderr and "built in memory" in proc.stderr
    assert json.loads(proc.stdout)["index"]["origin"] == "memory"


def test_postings_score_as_bm25s_does(tmp_path: Path) -> None:
    import bm25s

    texts = ["Compost heaps need air and water", "Tomato seedlings like compost",
             "contextlib.contextmanager wraps generators", "snake_case and camelCase names",
             "water water everywhere"] * 3
    bm25.build_bm25(texts, tmp_path / "bm25")
    (tmp_path / "manifest.json").write_text("{}")

    class Files:  # the reader's file interface over a plain folder
        def ints(self, rel: str) -> object:
            return int_view((tmp_path / rel).read_bytes())

        def data(self, rel: str) -> bytes:
            return (tmp_path / rel).read_bytes()

        buffer = data

        def npy(self, rel: str) -> object:
            return np.load(tmp_path / rel, allow_pickle=False)

    postings = bm25.Postings(Files(), "bm25/", len(texts))
    tok = tokens.make_tokenizer()
    ids = tok.tokenize(texts, update_vocab=True, return_as="ids", show_progress=False)
    model = bm25s.BM25(**bm25.PARAMS)
    model.index((ids, tok.get_vocab_dict()), show_progress=False)
    model.scores["data"] = model.scores["data"].astype(np.float16)
    for query in ("compost water", "contextmanager", "camel case water water", "absent"):
        terms = tokens.query_terms(query)
        known = [model.vocab_dict[t] for t in terms if t in model.vocab_dict]
        got = postings.get_scores(terms)
        if not known:
            assert got is None
            continue
        assert np.array_equal(got, model.get_scores(known))
        # `top` (what queries use) ranks the same scores: best first, ties by chunk.
        dense = np.asarray(got, dtype=np.float32)
        want = sorted((i for i in range(len(dense)) if dense[i] > 0),
                      key=lambda i: (-dense[i], i))[:4]
        assert [i for i, _ in postings.top(terms, None, 4)] == want
        assert [s for _, s in postings.top(terms, None, 4)] == [float(dense[i]) for i in want]


def test_vectors_search_exactly_and_round_trip(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    m = rng.normal(size=(40, 12)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    m[7] = 0
    assert vectors.build_vectors(m.astype(np.float16), tmp_path / "v.npy") == 39
    vecs = vectors.load_vectors(tmp_path / "v.npy")
    assert len(vecs) == 39 and vecs.ndim == 12 and vecs.get(7) is None
    q = rng.normal(size=12).astype(np.float32)
    found = vecs.search(q, 5)
    exact = np.argsort(-(np.delete(m, 7, axis=0) @ q))
    want = [int(i) + (i >= 7) for i in exact[:5]]
    assert found.keys.tolist() == want
    assert np.all(np.diff(found.distances) >= 0)
    # Read back and written again, a row is the same bytes (scoped builds reuse rows).
    back = np.vstack([vecs.get(i) if i != 7 else np.zeros(12, np.float16) for i in range(40)])
    assert vectors.matrix_bytes(back) == (tmp_path / "v.npy").read_bytes()


def test_search_with_vectors_uses_every_shard(make_repo: MakeRepo, tmp_path: Path) -> None:
    model = make_tiny_model(tmp_path / "model")
    root = _index(make_repo, model)
    proc = run_kbase("search", "compost", "--mode", "semantic", "--model", str(model),
                     "--format", "json", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["results"]
