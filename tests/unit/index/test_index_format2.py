"""Index format 2 and 3 (note rows without path and blob id): rows read one at a time,
lazily hashed files, the BM25 and vector readers against the libraries' own answers, the
link graph arrays against the rows, and the refusal of format 1 (with the query commands
falling back to a build)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import run_kbase
from indexkit import make_tiny_model, small_vault

from kbase_ci.errors import IndexFormatError
from kbase_ci.index import bm25, tokens, vectorfile, vectors
from kbase_ci.index.idf import idf
from kbase_ci.index.indexbuild import build_index
from kbase_ci.index.layout import LINK_FIELDS, LINK_ROWS_FILE, STORED_NOTE_FIELDS, NoteRow
from kbase_ci.index.reader import open_index
from kbase_ci.index.rowfile import int_table, int_view
from kbase_ci.index.storednotes import full_note_row, shard_notes, stored_note_row
from kbase_ci.query.discovery import IndexSource
from kbase_ci.query.view import QueryView
from kbase_ci.vault.notefiles import Vault

MakeRepo = Callable[..., Path]


def _index(make_repo: MakeRepo, model: Path | None = None) -> Path:
    root = make_repo(small_vault())
    build_index(Vault(root), root / ".kbase", model=model)
    return root


@pytest.mark.parametrize("with_model", [False, True])
def test_rows_match_the_whole_tables(make_repo: MakeRepo, tmp_path: Path,
                                     with_model: bool) -> None:
    root = _index(make_repo, make_tiny_model(tmp_path / "model") if with_model else None)
    reader = open_index(root / ".kbase")
    notes, links = reader.notes(), reader.links()
    fresh = open_index(root / ".kbase")  # a reader that decoded nothing yet
    assert [fresh.note_row(i) for i in range(len(notes))] == notes
    assert [fresh.link_row(i) for i in range(len(links.rows))] == links.rows
    assert [fresh.link_column(f) for f in LINK_FIELDS] == [list(c) for c in zip(*links.rows,
                                                                                strict=True)]
    paths = reader.core().paths
    assert paths == sorted(paths) == [r.path for r in notes]
    # Format 4: a line holds only what notes.json, blobs.npy, the similar arrays and
    # the shards' chunks.json do not (notetable.py), trailing empty values left out.
    lines = (root / ".kbase" / "notes.jsonl").read_text(encoding="utf-8").splitlines()
    core = reader.core()
    groups, blobs = core.groups, reader.blobs()
    assert groups == sorted(groups) and len(groups) > 1
    assert core.blobs is None and core.blob_bytes == 20
    assert all(len(b) == 40 for b in blobs)
    for i, (line, row) in enumerate(zip(lines, notes, strict=True)):
        stored = json.loads(line)
        assert stored == stored_note_row(row) and 1 <= len(stored) <= len(STORED_NOTE_FIELDS)
        assert stored[-1] or len(stored) == 1  # nothing empty at the end
        assert full_note_row(stored, core, i, blobs[i], row.chunks, row.similar) == row
        assert (row.blob, row.path) == (blobs[i], core.paths[i])
        assert blobs[i] not in line and json.dumps(row.path, ensure_ascii=False) not in line
        assert groups[core.group[i]] == (row.shard, row.domain)
    # Similar lists: similar_k entries per note in two arrays, 0-score padding.
    k = core.similar_k
    ids = np.load(root / ".kbase" / "similar.npy")
    scores = np.load(root / ".kbase" / "similar.scores.npy")
    assert len(ids) == len(scores) == k * len(lines) and ids.dtype == np.uint16
    assert any(row.similar for row in notes) == with_model
    for i, row in enumerate(notes):
        want = row.similar
        assert [[int(n), int(sc) / 1000] for n, sc in zip(ids[i * k:i * k + k],
                                                          scores[i * k:i * k + k],
                                                          strict=True) if sc] == want
        assert fresh.similar(i) == want
    # A shard's chunks belong to its notes in path order (chunks.json counts them).
    members = shard_notes(core)
    for sid in reader.shards:
        counts = json.loads((root / ".kbase" / "shards" / sid / "chunks.json").read_text())
        paths = [core.paths[i] for i in members[sid]]
        assert reader.chunk_notes(sid) == [p for p, n in zip(paths, counts["counts"],
                                                             strict=True) for _ in range(n)]
        for i in members[sid]:
            first, count = fresh.chunk_span(i)
            assert reader.chunk_notes(sid)[first:first + count] == [core.paths[i]] * count
    # The CSR backlinks hold exactly the links from other notes that resolve to a note.
    for i in range(len(paths)):
        want = [n for n, r in enumerate(links.rows) if r.target == i and r.source != i]
        assert sorted(links.backlinks[i]) == want
    names = reader.names()
    for i, row in enumerate(notes):
        assert i in names[row.title.casefold()]


def test_edges_equal_the_link_rows(make_repo: MakeRepo) -> None:
    root = _index(make_repo)
    reader = open_index(root / ".kbase")
    view = QueryView(Vault(root), IndexSource(reader, "dir", str(root / ".kbase")))
    rows = reader.links().rows
    want = {(r.source, r.target) for r in rows if r.status == "ok"
            and isinstance(r.target, int) and r.source != r.target}
    assert view.edges.paths == tuple(reader.core().paths)
    assert set(view.edges.pairs) == want and len(want) > 3


def test_a_tampered_row_file_is_refused_when_read(make_repo: MakeRepo) -> None:
    root = _index(make_repo)
    victim = root / ".kbase" / LINK_ROWS_FILE
    victim.write_bytes(victim.read_bytes().replace(b"[[", b"[[X", 1))
    # Built (and so validated) here: only the core is hashed at open ...
    reader = open_index(root / ".kbase", git_dir=root / ".git")
    assert reader.note_row(0)
    with pytest.raises(IndexFormatError, match=r"links\.jsonl does not match the manifest"):
        reader.link_row(0)
    # ... an index never validated here is checked whole at open (issue 22).
    with pytest.raises(IndexFormatError, match=r"links\.jsonl does not match the manifest"):
        open_index(root / ".kbase")
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
    assert "older kbase" in proc.stderr and "built for this query" in proc.stderr
    assert json.loads(proc.stdout)["index"]["origin"] == "temporary"


def test_postings_score_as_bm25s_does_within_a_byte(tmp_path: Path) -> None:
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
    for query in ("compost water", "contextmanager", "camel case water water", "absent"):
        terms = tokens.query_terms(query)
        known = [model.vocab_dict[t] for t in terms if t in model.vocab_dict]
        got = postings.get_scores(terms)
        if not known:
            assert got is None
            continue
        want = model.get_scores(known)
        # One byte per posting (format 4): the same chunks, each score within half a
        # `LEVEL` step of every query term's IDF.
        assert np.array_equal(np.asarray(got) > 0, want > 0)
        bound = sum(idf(len(texts), postings.doc_freq(t)) for t in terms) * bm25.LEVEL / 2
        assert np.max(np.abs(np.asarray(got) - want)) <= bound + 1e-6
        assert np.allclose(got, want, rtol=0.01, atol=0)
        # `top` (what queries use) ranks the same scores: best first, ties by chunk.
        dense = np.asarray(got, dtype=np.float32)
        want = sorted((i for i in range(len(dense)) if dense[i] > 0),
                      key=lambda i: (-dense[i], i))[:4]
        assert [i for i, _ in postings.top(terms, None, 4)] == want
        assert [s for _, s in postings.top(terms, None, 4)] == [float(dense[i]) for i in want]


def test_term_dictionary_finds_every_term_and_no_other(tmp_path: Path) -> None:
    # Front-coded blocks (format 4): many blocks, prefixes longer than the one byte
    # that counts them, multi-byte UTF-8 and LEB128 lengths and frequencies past 127.
    rng = np.random.default_rng(5)
    words = {"a", "ab", "abc", "b", "ba", "zz", "\u00e9t\u00e9", "\u00e9t\u00e9s", "x" * 300,
             "x" * 300 + "y", "x" * 299, "q" * 200}
    words |= {"".join(rng.choice(list("abcdé_."), size=int(rng.integers(1, 12))))
              for _ in range(700)}
    terms = sorted(w.encode() for w in words)
    dfs = [int(rng.integers(1, 400)) for _ in terms]
    data, blocks = bm25.front_coded(terms, dfs)
    (tmp_path / "bm25").mkdir()
    np.save(tmp_path / "bm25" / bm25.FILES[0], np.asarray(blocks, dtype="<i4"))
    np.save(tmp_path / "bm25" / bm25.FILES[3], np.frombuffer(data, dtype=np.uint8))

    class Files:
        def ints(self, rel: str) -> object:
            return int_view((tmp_path / rel).read_bytes())

    postings = bm25.Postings(Files(), "bm25/", 1)
    assert len(postings) == len(terms) and len(blocks) == 3 * (-(-len(terms) // bm25.BLOCK) + 1)
    start = 0
    for term, df in zip(terms, dfs, strict=True):
        assert postings.postings(term.decode()) == (start, start + df), term
        assert postings.doc_freq(term.decode()) == df
        start += df
    for absent in ("", "0", "a0", "abf", "x" * 301, "x" * 300 + "z", "zzz", "\u00e9t\u00e90",
                   "\uffff"):
        assert absent.encode() not in terms
        assert postings.postings(absent) is None and postings.doc_freq(absent) == 0
    # every term beginning with a prefix, in order, across blocks (a query's near words)
    for prefix in ("", "a", "ab", "x", "x" * 300, "\u00e9", "\u00e9t", "0", "\uffff"):
        want = [(t.decode(), df) for t, df in zip(terms, dfs, strict=True)
                if t.startswith(prefix.encode())]
        assert list(postings.starting(prefix)) == want, prefix


@pytest.mark.parametrize("dim", [12, 11])
def test_vectors_search_exactly_and_round_trip(tmp_path: Path, dim: int) -> None:
    rng = np.random.default_rng(3)
    m = rng.normal(size=(40, dim)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    m[7] = 0
    packed = vectorfile.pack(vectorfile.quantize(m.astype(np.float16)))
    assert vectorfile.write_packed(packed, tmp_path / "v.npy") == 39
    stored = np.load(tmp_path / "v.npy")
    assert stored.dtype == np.uint8 and stored.shape == (40, (dim + 1) // 2)  # 2 a byte
    vecs = vectors.load_vectors(tmp_path / "v.npy", dim)
    assert len(vecs) == 39 and vecs.ndim == dim and vecs.get(7) is None
    values = vectorfile.unpack(stored, dim)
    assert values.min() >= -vectorfile.LEVELS and values.max() <= vectorfile.LEVELS
    assert np.array_equal(values, vectorfile.quantize(m))  # exact round trip of the 4 bits
    q = rng.normal(size=dim).astype(np.float32)
    found = vecs.search(q, 5)
    # Exact over what is stored: the order of the stored rows' cosines...
    unit = values.astype(np.float32)
    unit[np.arange(40) != 7] /= np.linalg.norm(np.delete(unit, 7, axis=0), axis=1)[:, None]
    cos = np.delete(unit, 7, axis=0) @ (q / np.linalg.norm(q))
    want = [int(i) + (i >= 7) for i in np.argsort(-cos, kind="stable")[:5]]
    assert found.keys.tolist() == want
    assert np.all(np.diff(found.distances) >= 0)
    # ... and close to the unrounded vectors' (4 bits keep the order of clear gaps).
    exact = np.delete(m, 7, axis=0) @ (q / np.linalg.norm(q))
    assert np.max(np.abs(np.sort(cos) - np.sort(exact))) < 0.1
    assert found.keys.tolist()[0] == int(np.argmax(exact)) + (int(np.argmax(exact)) >= 7)
    # Read back and written again, a row is the same bytes (scoped builds reuse rows).
    back = np.vstack([vecs.get(i) if i != 7 else np.zeros(dim, np.float16) for i in range(40)])
    vectorfile.write_packed(vectorfile.pack(vectorfile.quantize(back)), tmp_path / "again.npy")
    assert (tmp_path / "again.npy").read_bytes() == (tmp_path / "v.npy").read_bytes()


def test_search_with_vectors_uses_every_shard(make_repo: MakeRepo, tmp_path: Path) -> None:
    model = make_tiny_model(tmp_path / "model")
    root = _index(make_repo, model)
    proc = run_kbase("search", "compost", "--mode", "semantic", "--model", str(model),
                     "--format", "json", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["results"]


@pytest.mark.parametrize(("blobs", "width"), [
    (["ab" * 20, "cd" * 20], 20),  # SHA-1 repositories
    (["ab" * 32, "01" * 32], 32),  # SHA-256 repositories
    (["ab" * 20, ""], None),  # a note without an id: listed in notes.json instead
    (["AB" * 20, "cd" * 20], None),  # not as git writes them: kept as written
    (["xy" * 20, "cd" * 20], None),
])
def test_blob_ids_are_bytes_when_they_can_round_trip(blobs: list[str], width: int | None
                                                     ) -> None:
    from kbase_ci.index.storednotes import blob_bytes, blob_list, core_table

    rows = [NoteRow(f"n{i}.md", f"n{i}", [], [], [], [], {}, blob, 0, 0, "", "_root",
                    [0, 0], []) for i, blob in enumerate(blobs)]
    core = core_table(rows, [], 0)
    raw = blob_bytes(core, rows)
    assert core.blob_bytes == width and (core.blobs is not None) == (width is None)
    assert (raw is None) == (width is None)
    assert blob_list(core, raw) == blobs
    if width is not None:
        assert raw is not None and len(raw) == width * len(blobs)
        with pytest.raises(IndexFormatError, match="one id per note"):
            blob_list(core, raw[:-1])


@pytest.mark.parametrize("cut", [1, 3, 7])
def test_an_npy_file_of_no_whole_number_of_items_is_refused_not_a_crash(cut: int) -> None:
    """A forged scope `links.npy` whose bytes are no whole number of items made
    memoryview raise TypeError (exit 3); the readers answer None (the file is refused)."""
    one, two = io.BytesIO(), io.BytesIO()
    np.save(one, np.arange(6, dtype="<i8"))
    np.save(two, np.arange(6, dtype="<i4").reshape(3, 2))
    assert int_view(one.getvalue()) is not None and int_table(two.getvalue()) is not None
    assert int_view(one.getvalue()[:-cut]) is None
    assert int_table(two.getvalue()[:-cut]) is None
