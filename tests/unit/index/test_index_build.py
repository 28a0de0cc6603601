"""`build_index` end to end on small real git repositories, with a model built here."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import git, write
from indexkit import make_tiny_model, small_vault, snapshot

from kbase_ci.errors import IndexFormatError, UsageError
from kbase_ci.index import FORMAT_VERSION, tokens
from kbase_ci.index.blocks import Source
from kbase_ci.index.embedder import Embedder
from kbase_ci.index.indexbuild import BuildResult, build_index
from kbase_ci.index.layout import LinkRow, NoteRow
from kbase_ci.index.manifest import IndexManifest, read_manifest
from kbase_ci.index.reader import open_index
from kbase_ci.state.folders import make_temp_dir
from kbase_ci.typedjson import encode
from kbase_ci.vault.config import load_config
from kbase_ci.vault.notefiles import Vault

MakeRepo = Callable[..., Path]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_model(tmp_path_factory.mktemp("model") / "tiny")


def build(root: Path, model: Path | None, out: Path | None = None, **kw: object) -> BuildResult:
    return build_index(Vault(root), out or root / ".kbase", model=model, **kw)  # type: ignore[arg-type]


def table(rows: Sequence[NoteRow] | Sequence[LinkRow]) -> list[dict[str, Any]]:
    return [r._asdict() for r in rows]


def bm25_top(reader: object, query: str) -> list[tuple[str, float]]:
    """(note path, score) of the best chunk hits over every shard."""
    hits: list[tuple[str, float]] = []
    for sid in reader.shards:  # type: ignore[attr-defined]
        model = reader.bm25(sid)  # type: ignore[attr-defined]
        if model is None:
            continue
        scores = model.get_scores(tokens.query_terms(query))
        if scores is None:
            continue
        notes = reader.chunk_notes(sid)  # type: ignore[attr-defined]
        hits += [(notes[i], float(s)) for i, s in enumerate(scores) if s > 0]
    return sorted(hits, key=lambda h: -h[1])


def test_manifest_tables_and_search(make_repo: MakeRepo, tiny_model: Path) -> None:
    root = make_repo(small_vault())
    result = build(root, tiny_model)
    m = read_manifest(root / ".kbase")
    assert isinstance(m, IndexManifest) and m == result.manifest
    assert m.format == "kbase-index" and m.format_version == FORMAT_VERSION
    head = git(root, "rev-parse", "HEAD").strip()
    assert m.source == Source(head, git(root, "rev-parse", "HEAD^{tree}").strip(), False,
                              (), "")
    assert m.built_at == git(root, "show", "-s", "--format=%cI", "HEAD").strip()
    assert m.embeddings.model == "tiny" and m.embeddings.dim == 16
    assert m.embeddings.reason is None
    assert m.tokenizer.stemmer == "english" and "the" in m.tokenizer.stopwords
    assert m.config_digest == load_config(root).digest
    assert m.counts.notes == 8 and m.counts.shards == 4
    assert set(m.shards) == {"_root", *(s for s in m.shards if s != "_root")}
    raw = (root / ".kbase" / "manifest.json").read_text()
    assert raw.endswith("}\n") and raw == json.dumps(encode(m), indent=2, sort_keys=True,
                                                     ensure_ascii=False) + "\n"
    assert result.shards_reused == () and len(result.shards_built) == 4

    reader = open_index(root / ".kbase")
    notes = table(reader.notes())
    paths = [n["path"] for n in notes]
    assert paths == sorted(paths)
    cm = notes[paths.index("Python/Context Managers.md")]
    assert cm["aliases"] == ["with statement"] and cm["tags"] == ["python"]
    assert cm["headings"] == [[1, "Context Managers", 5], [2, "Exceptions", 9]]
    assert cm["domain"] == "Python" and cm["shard"].startswith("python-")
    assert cm["blob"] == git(root, "rev-parse", "HEAD:Python/Context Managers.md").strip()
    assert cm["tokens"] == (cm["size"] + 3) // 4
    deco = notes[paths.index("Python/Decorators.md")]
    assert deco["block_ids"] == [["wrap-id", 5]]

    links = reader.links()
    rows = table(links.rows)
    by_raw = {r["raw"]: r for r in rows}
    assert by_raw["[[Python/Decorators#Basics]]"]["target"] == paths.index("Python/Decorators.md")
    assert by_raw["[[Python/Decorators#Basics]]"]["anchor"] == "heading"
    assert by_raw["[[Python/Decorators#Basics]]"]["anchor_found"] is True
    assert by_raw["[[Missing Note]]"]["status"] == "unresolved"
    assert by_raw["[[Missing Note]]"]["target"] is None
    assert [rows[i]["raw"] for i in links.unresolved["Missing Note"]] == ["[[Missing Note]]"]
    # Backlinks of a note are one list lookup; outgoing links are one contiguous range.
    deco_back = links.backlinks[paths.index("Python/Decorators.md")]
    assert [notes[rows[i]["source"]]["path"] for i in deco_back] == ["Python/Context Managers.md"]
    first, count = links.outgoing[paths.index("Home.md")]
    assert [rows[i]["raw"] for i in range(first, first + count)] == [
        "[[Python/Context Managers]]", "[[Garden/Tomatoes]]"]

    # Title and aliases weigh more than body text; code identifiers match by their parts.
    assert bm25_top(reader, "context managers")[0][0] == "Python/Context Managers.md"
    assert bm25_top(reader, "with statement")[0][0] == "Python/Context Managers.md"
    assert bm25_top(reader, "contextmanager")[0][0] == "Python/Context Managers.md"
    assert bm25_top(reader, "camel")[0][0] == "Databases/Replicas.md"

    # Vectors: a query lands nearest to the note about its topic.
    enc = Embedder(tiny_model)
    q = enc.encode(["tomato soil harvest"])[0]
    best: tuple[float, str] = (-2.0, "")
    for sid in reader.shards:
        index = reader.vectors(sid)
        chunk_notes = reader.chunk_notes(sid)
        if index is None or not len(index):
            continue
        res = index.search(q, 1)
        best = max(best, (1 - float(res.distances[0]), chunk_notes[int(res.keys[0])]))
    assert best[1].startswith("Garden/")


def test_similar_notes_skip_linked_ones(make_repo: MakeRepo, tiny_model: Path) -> None:
    root = make_repo(small_vault())
    build(root, tiny_model)
    reader = open_index(root / ".kbase")
    notes = table(reader.notes())
    paths = [n["path"] for n in notes]
    assert reader.core().similar_k == 5
    by_path = {n["path"]: [(paths[j], s) for j, s in n["similar"]] for n in notes}
    tomatoes = by_path["Garden/Tomatoes.md"]
    assert tomatoes[0][0] == "Garden/Beans.md"
    assert [s for _, s in tomatoes] == sorted((s for _, s in tomatoes), reverse=True)
    # Indexes links to Replicas, so Replicas is not "similar but unlinked" for it.
    assert "Databases/Replicas.md" not in [p for p, _ in by_path["Databases/Indexes.md"]]
    assert "Databases/Indexes.md" in [p for p, _ in by_path["Databases/Replicas.md"]]
    assert all(p != "Garden/Tomatoes.md" for p, _ in tomatoes)


def test_two_builds_are_byte_identical_serial_or_parallel(make_repo: MakeRepo,
                                                          tiny_model: Path) -> None:
    root = make_repo(small_vault())
    build(root, tiny_model, root.parent / "a", jobs=1)
    build(root, tiny_model, root.parent / "b", jobs=2)
    assert snapshot(root.parent / "a") == snapshot(root.parent / "b")


def test_build_is_independent_of_hash_seed(make_repo: MakeRepo, tiny_model: Path) -> None:
    import subprocess
    import sys

    from conftest import REPO

    root = make_repo(small_vault())
    build(root, tiny_model, root.parent / "here")
    code = ("import sys; from pathlib import Path; from kbase_ci.vault.notefiles import Vault; "
            "from kbase_ci.index.indexbuild import build_index; "
            "build_index(Vault(Path(sys.argv[1])), Path(sys.argv[2]), model=Path(sys.argv[3]))")
    for seed in ("1", "12345"):
        out = root.parent / f"seed{seed}"
        proc = subprocess.run([sys.executable, "-c", code, str(root), str(out), str(tiny_model)],
                              env={"PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO),
                                   "PATH": "/usr/bin:/bin", "HOME": str(root.parent)},
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        got, want = snapshot(out), snapshot(root.parent / "here")
        assert got == want, sorted(p for p in got.keys() | want.keys()
                                   if got.get(p) != want.get(p))


def test_incremental_rebuild_touches_one_shard(make_repo: MakeRepo, tiny_model: Path) -> None:
    root = make_repo(small_vault())
    first = build(root, tiny_model)
    before = snapshot(root / ".kbase")
    write(root, {"Garden/Beans.md": "# Beans\n\nRunner beans climb; water the bean plant.\n"})
    git(root, "commit", "-qam", "beans")
    second = build(root, tiny_model)
    garden = next(s for s in first.shards_built if s.startswith("garden-"))
    assert second.shards_built == (garden,)
    assert set(second.shards_reused) == set(first.shards_built) - {garden}
    after = snapshot(root / ".kbase")
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    # Only the vault-wide files at the top (notes, links, manifest) change besides it.
    assert all("/" not in p for p in changed if not p.startswith(f"shards/{garden}/"))
    assert any(p.startswith(f"shards/{garden}/") for p in changed)
    # ... and the incremental result is exactly what a fresh build of the commit gives.
    build(root, tiny_model, root.parent / "fresh")
    assert snapshot(root.parent / "fresh") == after


def test_changed_model_or_tampered_shard_is_rebuilt(make_repo: MakeRepo, tiny_model: Path,
                                                    tmp_path: Path) -> None:
    root = make_repo(small_vault())
    first = build(root, tiny_model)
    other = make_tiny_model(tmp_path / "other", seed=99)
    assert set(build(root, other).shards_built) == set(first.shards_built)
    sid = first.shards_built[0]
    victim = root / ".kbase" / "shards" / sid / "chunks.json"
    victim.write_bytes(victim.read_bytes() + b" ")
    again = build(root, other)
    assert again.shards_built == (sid,)
    open_index(root / ".kbase")  # verifies


def test_dirty_work_tree_is_flagged(make_repo: MakeRepo, tiny_model: Path) -> None:
    root = make_repo(small_vault())
    write(root, {"Home.md": "# Home\n\nEdited, not committed: tomato.\n"})
    m = build(root, None).manifest
    assert m.source.dirty is True and m.source.dirty_paths == ("Home.md",)
    reader = open_index(root / ".kbase")
    assert bm25_top(reader, "tomato")[0][0] in {"Home.md", "Garden/Tomatoes.md"}


def test_no_model_builds_bm25_only_and_says_why(make_repo: MakeRepo,
                                                monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    root = make_repo(small_vault())
    result = build(root, None)
    emb = result.manifest.embeddings
    assert emb.model == "minishlab/potion-base-8M" and emb.dim is None
    assert emb.reason is not None and "not available offline" in emb.reason
    assert result.embeddings_reason == emb.reason
    assert not [p for p in snapshot(root / ".kbase") if p.endswith(".usearch")]
    reader = open_index(root / ".kbase")
    assert [n.similar for n in reader.notes()] == [[] for _ in range(8)]
    assert bm25_top(reader, "replica")[0][0] == "Databases/Replicas.md"


def test_model_from_config_path_and_disabled(make_repo: MakeRepo, tiny_model: Path) -> None:
    import shutil

    files = small_vault()
    root = make_repo({**files, ".kbase.yml": "embeddings:\n  model: models/tiny\n"})
    shutil.copytree(tiny_model, root / "models" / "tiny")
    m = build(root, None).manifest
    assert m.embeddings.model == "models/tiny" and m.embeddings.dim == 16
    write(root, {".kbase.yml": "embeddings:\n  model: models/tiny\n  dim: 8\n"})
    result = build(root, None)
    assert result.manifest.embeddings.dim == 8
    assert len(result.shards_built) == 4  # fewer dimensions: other vectors everywhere
    reader = open_index(root / ".kbase")
    assert {reader.vectors(s).ndim for s in reader.shards} == {8}
    write(root, {".kbase.yml": "embeddings:\n  model: models/tiny\n  dim: 99\n"})
    with pytest.raises(UsageError, match=r"embeddings\.dim"):
        build(root, None)
    write(root, {".kbase.yml": "embeddings:\n  model: null\n"})
    m = build(root, None).manifest
    assert m.embeddings.dim is None and "disabled" in str(m.embeddings.reason)


def test_frontmatter_domains(make_repo: MakeRepo) -> None:
    root = make_repo({
        ".kbase.yml": "index:\n  domain: frontmatter:type\n",
        "a.md": "---\ntype: project\n---\n# A\n\ntext\n",
        "b/c.md": "---\ntype: project\n---\n# C\n\ntext\n",
        "d.md": "# D\n\nno type\n",
    })
    m = build(root, None).manifest
    assert {v.domain: v.notes for v in m.shards.values()} == {"project": 2, "": 1}
    assert "_none" in m.shards


def test_empty_vault_gives_a_valid_empty_index(make_repo: MakeRepo, tiny_model: Path) -> None:
    root = make_repo({"readme.txt": "not a note\n"})
    result = build(root, tiny_model)
    reader = open_index(root / ".kbase")
    assert result.manifest.counts.notes == 0 and reader.shards == []
    assert reader.notes() == [] and reader.links().rows == []
    # A repository without any commit at all.
    bare = make_repo(commit=False)
    m = build(bare, None).manifest
    assert m.source.commit is None and m.counts.notes == 0


def test_unparsable_notes_are_indexed_as_text_with_a_warning(make_repo: MakeRepo) -> None:
    big = "# Huge\n\n" + "\n\n".join(["zebra crossing paragraph"] * 200) + "\n"
    root = make_repo({
        ".kbase.yml": "vault:\n  max_note_bytes: 3000\n",
        "big.md": big,
        "yaml.md": "---\ntags: [unclosed\n---\n# Yaml\n\nquokka text\n",
        "bin.md": b"\x00\x01binary",
        "latin1.md": "# Caf\xe9\n\nokapi\n".encode("latin-1"),
    })
    result = build(root, None)
    warned = {w.split(":", 1)[0]: w for w in result.warnings}
    assert set(warned) == {"big.md", "yaml.md", "bin.md", "latin1.md"}
    assert "KB003" in warned["big.md"] and "indexed as plain text" in warned["big.md"]
    assert "KB002" in warned["bin.md"] and "not indexed" in warned["bin.md"]
    assert result.manifest.warnings == result.warnings
    reader = open_index(root / ".kbase")
    assert bm25_top(reader, "zebra")[0][0] == "big.md"
    assert bm25_top(reader, "quokka")[0][0] == "yaml.md"
    assert bm25_top(reader, "okapi")[0][0] == "latin1.md"
    big_chunks = [p for sid in reader.shards for p in reader.chunk_notes(sid) if p == "big.md"]
    assert len(big_chunks) > 1  # split into paragraphs, not one 5 kB blob


def test_interrupted_build_keeps_the_previous_index(make_repo: MakeRepo,
                                                     tiny_model: Path) -> None:
    root = make_repo(small_vault())
    build(root, tiny_model)
    before = snapshot(root / ".kbase")
    write(root, {"Home.md": "# Home\n\nchanged\n"})
    git(root, "commit", "-qam", "edit")

    def stop(stage: str, done: int, total: int) -> None:
        if stage == "build" and done > 0:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build(root, tiny_model, progress=stop, jobs=1)
    assert snapshot(root / ".kbase") == before
    open_index(root / ".kbase")
    assert sorted(p.name for p in root.iterdir() if p.name.startswith(".kbase")) == [".kbase"]


def test_leftovers_of_a_killed_build_are_recovered(make_repo: MakeRepo) -> None:
    root = make_repo(small_vault())
    build(root, None)
    dead = 2**22 + 12345  # above the default pid_max: no such process
    # Killed while writing: a temp folder. Killed mid-swap: the index renamed aside.
    make_temp_dir(root / f".kbase.tmp-{dead}")
    (root / ".kbase").rename(root / f".kbase.old-{dead}")
    # A look-alike someone committed is not a temp folder of ours: it stays.
    write(root, {f".kbase.tmp-{dead + 1}/mine.md": "# mine\n"})
    result = build(root, None)
    assert len(result.shards_reused) == 4  # the restored index was reused
    assert sorted(p.name for p in root.iterdir() if p.name.startswith(".kbase")) == [
        ".kbase", f".kbase.tmp-{dead + 1}"]


def test_index_files_are_json_and_npy_only(make_repo: MakeRepo,
                                                    tiny_model: Path) -> None:
    root = make_repo(small_vault())
    build(root, tiny_model)
    kinds = {Path(p).suffix for p in snapshot(root / ".kbase")}
    assert kinds == {".json", ".jsonl", ".npy"}
    for p in (root / ".kbase").rglob("*.npy"):
        arr = np.load(p, allow_pickle=False)  # raises on object (pickled) arrays
        assert arr.dtype != object
    for p in (root / ".kbase").rglob("*.jsonl"):  # JSON lines whose offsets file is exact
        data = p.read_bytes()
        ends = np.load(p.with_name(p.name.replace(".jsonl", ".offsets.npy")))
        assert int(ends[-1]) == len(data) and len(ends) == data.count(b"\n") + 1
        for a, b in itertools.pairwise(ends.tolist()):
            assert isinstance(json.loads(data[a:b]), list)


def test_reader_refuses_modified_or_newer_indexes(make_repo: MakeRepo) -> None:
    root = make_repo(small_vault())
    build(root, None)
    idx = root / ".kbase"
    notes = idx / "notes.json"
    good = notes.read_bytes()
    notes.write_bytes(good.replace(b"Home", b"Hame"))
    with pytest.raises(IndexFormatError, match=r"notes\.json does not match the manifest"):
        open_index(idx)
    notes.write_bytes(good)
    (idx / "extra.json").write_text("{}")
    with pytest.raises(IndexFormatError, match=r"extra\.json is not in the manifest"):
        open_index(idx)
    (idx / "extra.json").unlink()
    m = json.loads((idx / "manifest.json").read_text())
    (idx / "manifest.json").write_text(json.dumps({**m, "format_version": FORMAT_VERSION + 1}))
    with pytest.raises(IndexFormatError, match=r"newer kbase.*upgrade"):
        open_index(idx)
    (idx / "manifest.json").unlink()
    with pytest.raises(IndexFormatError, match="no index here"):
        open_index(idx)


def test_previous_index_of_a_newer_format_is_rebuilt_not_reused(make_repo: MakeRepo) -> None:
    root = make_repo(small_vault())
    build(root, None)
    mpath = root / ".kbase" / "manifest.json"
    m = json.loads(mpath.read_text())
    mpath.write_text(json.dumps({**m, "format_version": FORMAT_VERSION + 1}))
    result = build(root, None)
    assert result.previous is not None and "newer kbase" in result.previous
    assert result.shards_reused == () and len(result.shards_built) == 4
    open_index(root / ".kbase")


def topic_vault(n_per_topic: int = 12) -> dict[str, str | bytes]:
    """Notes mixing topic words (seeded), with a few links and an unresolved one."""
    import random

    from indexkit import TOPICS

    rng = random.Random(3)
    files: dict[str, str | bytes] = {".gitignore": ".kbase/\n"}
    for topic, words in sorted(TOPICS.items()):
        vocab = words.split()
        for i in range(n_per_topic):
            body = " ".join(rng.choice(vocab) for _ in range(30))
            link = f"[[{topic}-{(i + 1) % n_per_topic}]]" if i % 3 == 0 else ""
            files[f"{topic}/{topic}-{i}.md"] = f"# {topic} {i}\n\n{body} {link}\n"
    files["garden/garden-0.md"] = str(files["garden/garden-0.md"]) + "See [[Sunny]].\n"
    return files


@pytest.mark.parametrize("change", ["edit", "add", "delete", "alias", "unknown-words"])
def test_incremental_similar_lists_equal_a_fresh_build(make_repo: MakeRepo, tiny_model: Path,
                                                       change: str) -> None:
    root = make_repo(topic_vault())
    build(root, tiny_model)
    if change == "edit":
        write(root, {"python/python-4.md": "# python 4\n\ntomato soil garden harvest sun\n"})
    elif change == "add":
        write(root, {"python/new.md": "# new\n\ndatabase replica shard query sql\n"})
    elif change == "delete":
        (root / "database" / "database-3.md").unlink()
    elif change == "alias":  # an unchanged note's unresolved [[Sunny]] now resolves
        write(root, {"garden/garden-5.md": "---\naliases: [Sunny]\n---\n"
                     + (root / "garden" / "garden-5.md").read_text()})
    else:  # words the model does not know: new blob, same vector
        with (root / "python" / "python-2.md").open("a") as fh:
            fh.write("zzzz qqqq\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", change)
    inc = build(root, tiny_model)
    fresh = build(root, tiny_model, root.parent / "fresh")
    assert snapshot(root / ".kbase") == snapshot(root.parent / "fresh")
    n = fresh.manifest.counts.notes
    assert fresh.similar_rows == n
    assert inc.similar_rows < n / 2  # the update path was taken, not a recomputation
    if change == "unknown-words":  # same vector: only its own list (its links) is redone
        assert inc.similar_rows == 1
