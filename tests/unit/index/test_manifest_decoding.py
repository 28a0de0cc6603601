"""Issue 26 items 2 and 4: the manifest is declared once (kbase_ci.index.manifest and its
blocks) and read only through the decoder there; a forged manifest is refused with the
file and the key it got wrong (exit 2), never a crash (exit 3); every exit code comes
from the error's class in `cli.main.EXIT_CODES`."""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbase_ci import errors
from kbase_ci.cli.main import EXIT_CODES, exit_code_for
from kbase_ci.errors import IndexFormatError
from kbase_ci.index.blocks import Fusion
from kbase_ci.index.manifest import (
    FORMAT_VERSION,
    IndexManifest,
    SliceManifest,
    decode_manifest,
)
from kbase_ci.typedjson import ShapeError, decode, encode
from tests.conftest import REPO, run_kbase

PACKAGE = REPO / "kbase_ci"
DECODER = {PACKAGE / "index" / "manifest.py"}
"""The one module that reads manifest JSON by key."""
MANIFEST_KEYS = {"format_version", "kbase_version", "config_digest", "tokenizer", "embeddings",
                 "fusion", "link_inputs", "shards", "background", "slice", "main_index",
                 "selectors", "dirty_paths", "stopwords", "rankers", "top1"}
"""Keys that only a manifest has (the generic ones, `source` or `counts`, name parts of
query answers too: those are caught by the receiver's name below)."""
NOT_A_MANIFEST = {("kbase_ci/index/indexbuild.py", "embeddings"),
                  ("kbase_ci/index/shardbuild.py", "embeddings")}
"""A build stage is named `embeddings` (its seconds)."""
DELETE = object()
NOTES = {"A.md": "# A\n\nsee [[B]] and [[nowhere]]\n", "B.md": "# B\n\n[[A]]\n",
         ".gitignore": ".kbase/\n"}


def _receiver(node: ast.AST) -> str:
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        if isinstance(node, ast.Attribute):
            return node.attr
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


def _string_key_reads(path: Path) -> list[tuple[int, str, str]]:
    """(line, key, receiver) of every `x["key"]` and `x.get("key")` in a module."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            key, obj = node.slice.value, node.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "get" and node.args
              and isinstance(node.args[0], ast.Constant)):
            key, obj = node.args[0].value, node.func.value
        else:
            continue
        if isinstance(key, str):
            out.append((node.lineno, key, _receiver(obj)))
    return out


def test_no_string_key_manifest_reads_outside_the_decoder() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in DECODER:
            continue
        rel = path.relative_to(REPO).as_posix()
        for line, key, receiver in _string_key_reads(path):
            if "manifest" in receiver.lower() or (
                    key in MANIFEST_KEYS and (rel, key) not in NOT_A_MANIFEST):
                found.append(f"{rel}:{line}: [{key!r}] of {receiver or '...'}")
    assert found == [], "read the typed manifest (kbase_ci.index.manifest) instead"


def test_the_scan_sees_a_string_key_read(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("def f(view, emb):\n    return view.manifest['counts'], emb.get('top1')\n",
                      encoding="utf-8")
    assert [(k, r) for _, k, r in _string_key_reads(sample)] == [("counts", "manifest"),
                                                                 ("top1", "emb")]


# -- forged manifests ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.conftest import git, write

    root = tmp_path_factory.mktemp("manifest") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, NOTES)
    git(root, "add", "-A")
    git(root, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-qm", "v")
    assert run_kbase("index", cwd=root).returncode == 0
    return root


def _with_vectors(data: dict[str, Any]) -> dict[str, Any]:
    """The built index has no model (none offline): give its manifest the blocks an index
    with vectors has, so that they can be forged too (the files stay as they are)."""
    fusion = {"method": "z-score", "stats": 100, "rankers": {
        "bm25": {"weight": 1.0, "depth": None, "floor": "zero", "stats": None},
        "semantic": {"weight": 3.0, "depth": 5, "floor": "last", "stats": 100}}}
    return {**data, "fusion": fusion,
            "background": {"queries": 3, "version": 2, "top1": [0.1, 0.2, 0.3]}}


def _at(data: Any, path: tuple[str | int, ...], value: Any) -> Any:
    """`data` with the value at `path` replaced by `value` (or removed: DELETE)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(data, dict):
        out = dict(data)
        if rest or value is not DELETE:
            out[head] = _at(data.get(head), rest, value)
        else:
            del out[head]
        return out
    out_list = list(data)
    out_list[int(head)] = _at(data[int(head)], rest, value)
    return out_list


def _forged(index: Path, dest: Path, edit: Callable[[dict[str, Any]], dict[str, Any]]
            ) -> Path:
    """A copy of the index folder whose manifest is `edit`ed (its hashes still right)."""
    import shutil

    shutil.copytree(index, dest)
    data = json.loads((dest / "manifest.json").read_bytes())
    (dest / "manifest.json").write_text(json.dumps(edit(data)), encoding="utf-8")
    return dest


SHARD = "_root"
FORGERIES: list[tuple[tuple[str | int, ...], Any, str]] = [
    # (where, forged value, the key path the message names)
    (("format_version",), "6", "format_version"),
    (("kbase_version",), 6, "kbase_version"),
    (("source",), "HEAD", "source"),
    (("source", "commit"), "--upload-pack=touch pwned", "source.commit"),
    (("source", "dirty_paths"), [1], "source.dirty_paths[0]"),
    (("config_digest",), "abc", "config_digest"),
    (("tokenizer", "stopwords"), "the", "tokenizer.stopwords"),
    (("tokenizer", "min_length"), -1, "tokenizer.min_length"),
    (("tokenizer",), DELETE, "tokenizer"),
    (("bm25", "k1"), DELETE, "bm25.k1"),
    (("embeddings", "dim"), 10**9, "embeddings.dim"),
    (("embeddings", "dim"), "x", "embeddings.dim"),
    (("embeddings", "kind"), "pickle", "embeddings.kind"),
    (("fusion", "rankers", "semantic", "weight"), math.nan, 'fusion.rankers["semantic"].weight'),
    (("fusion", "rankers", "semantic", "floor"), "up", 'fusion.rankers["semantic"].floor'),
    (("fusion", "rankers"), [], "fusion.rankers"),
    (("counts", "notes"), -5, "counts.notes"),
    (("counts",), DELETE, "counts"),
    (("warnings",), [None], "warnings[0]"),
    (("link_inputs",), DELETE, "link_inputs"),
    (("shards", SHARD, "chunks"), -1, f'shards["{SHARD}"].chunks'),
    (("shards", SHARD), "x", f'shards["{SHARD}"]'),
    (("background",), "x", "background"),
    (("background", "top1"), [0.5, 0.1], "background.top1"),
    (("background", "queries"), True, "background.queries"),
    (("files", "notes.json"), 5, 'files["notes.json"]'),
    (("scope",), {"name": "x"}, "scope.selectors"),
    (("slice",), {"k": 3, "n": 2, "plan": "0" * 64}, "slice"),
]


@pytest.mark.parametrize(("where", "value", "key"), FORGERIES,
                         ids=[f"{'.'.join(map(str, w))}="
                              f"{'(deleted)' if v is DELETE else repr(v)}"[:60]
                              for w, v, _ in FORGERIES])
def test_a_forged_manifest_is_refused_naming_the_key(built: Path, tmp_path: Path,
                                                     where: tuple[str | int, ...], value: Any,
                                                     key: str) -> None:
    forged = _forged(built / ".kbase", tmp_path / "forged",
                     lambda d: _at(_with_vectors(d), where, value))
    direct = run_kbase("backlinks", "A", "--index", str(forged), cwd=built)
    assert direct.returncode == 2, direct.stderr
    assert f"{forged / 'manifest.json'}: " in direct.stderr
    assert f"`{key}`" in direct.stderr or key == "format_version", direct.stderr
    assert "internal error" not in direct.stderr and "Traceback" not in direct.stderr


def test_the_unforged_copy_is_read(built: Path, tmp_path: Path) -> None:
    forged = _forged(built / ".kbase", tmp_path / "same", _with_vectors)
    proc = run_kbase("backlinks", "A", "--index", str(forged), cwd=built)
    assert proc.returncode == 0, proc.stderr


def test_a_forged_branch_manifest_falls_back_to_memory(built: Path, tmp_path: Path) -> None:
    """As for any refused index (tests/slow/test_hostile_index.py): the query answers from an
    in-memory build and says why, naming the key."""
    import shutil

    shutil.move(built / ".kbase", tmp_path / "kept")
    try:
        _forged(tmp_path / "kept", built / ".kbase",
                lambda d: _at(d, ("embeddings", "dim"), -3))
        proc = run_kbase("backlinks", "A", cwd=built)
        assert proc.returncode == 0, proc.stderr
        assert "`embeddings.dim` should be from 1 to 4096, not -3" in proc.stderr
        assert json.loads(proc.stdout)["index"]["origin"] == "temporary"
    finally:
        shutil.rmtree(built / ".kbase")
        shutil.move(tmp_path / "kept", built / ".kbase")


def test_the_written_manifest_decodes_to_what_encodes_it(built: Path) -> None:
    raw = (built / ".kbase" / "manifest.json").read_bytes()
    manifest = decode_manifest(raw, "manifest.json")
    assert isinstance(manifest, IndexManifest)
    again = json.dumps(encode(manifest), ensure_ascii=False, sort_keys=True, indent=2) + "\n"
    assert again.encode() == raw
    sliced = {**json.loads(raw), "slice": {"k": 1, "n": 2, "plan": "a" * 64},
              "counts": {"notes": 2, "shards": 1}}
    assert isinstance(decode_manifest(json.dumps(sliced).encode(), "m"), SliceManifest)


def test_a_shape_error_names_the_path_and_the_value() -> None:
    with pytest.raises(ShapeError) as got:
        decode(Fusion, {"method": "z-score", "stats": 1, "rankers": {
            "a b": {"weight": "heavy", "depth": None, "floor": "zero"}}})
    assert str(got.value) == '`rankers["a b"].weight` should be a number, not "heavy"'
    assert got.value.path == 'rankers["a b"].weight'
    with pytest.raises(ShapeError, match=r"^the document should be an object, not a list$"):
        decode(Fusion, [])
    data = _minimal()
    del data["fusion"]
    with pytest.raises(IndexFormatError, match=r"^m: `fusion` is missing$"):
        decode_manifest(json.dumps(data).encode(), "m")


def _minimal() -> dict[str, Any]:
    """A manifest with every key, as small as it can be."""
    sha = "0" * 64
    return {
        "format": "kbase-index", "format_version": FORMAT_VERSION, "kbase_version": "0",
        "source": {"commit": None, "tree": None, "dirty": False, "dirty_paths": [],
                   "path": ""},
        "built_at": "1970-01-01T00:00:00+00:00", "config_digest": sha, "domain": "folder",
        "tokenizer": {"name": "kbase-code", "version": 1, "lower": True, "min_length": 2,
                      "compound_separators": [], "camel_case_parts": True,
                      "stemmer": "english", "stemmer_library": "PyStemmer",
                      "stopwords": []},
        "bm25": {"method": "lucene", "k1": 1.5, "b": 0.75, "library": "bm25s",
                 "title_weight": 3, "heading_weight": 2, "files": [], "scores_dtype": "",
                 "docs_dtype": "", "columns": "", "terms": "", "postings": ""},
        "vectors": None,
        "embeddings": {"model": None, "kind": None, "dim": None, "reason": "off",
                       "sha256": None, "library": None},
        "fusion": None,
        "counts": {k: 0 for k in ("chunks", "domains", "links", "markdown_bytes", "notes",
                                  "shards", "unresolved_links", "vectors")},
        "warnings": [], "link_inputs": sha, "shards": {}, "background": None, "files": {},
    }


def test_a_minimal_manifest_round_trips() -> None:
    data = _minimal()
    assert encode(decode(IndexManifest, data)) == data


# -- exit codes ---------------------------------------------------------------------------
WANT = {errors.UsageError: 2, errors.ConfigError: 2, errors.UnsafePathError: 2,
        errors.ChangedError: 2, errors.GitError: 2, errors.IndexFormatError: 2,
        errors.ModelRefused: 2, errors.StorageError: 2, errors.InputRefused: 2,
        errors.GitHubError: 3, errors.PublishGaveUp: 1, errors.KbaseError: 3}


def test_every_error_class_has_its_documented_exit_code() -> None:
    classes = {c for c in vars(errors).values()
               if isinstance(c, type) and issubclass(c, errors.KbaseError)}
    assert classes == set(WANT)
    for kind, code in WANT.items():
        made = kind("x", "a.yml") if kind in (errors.ConfigError, errors.InputRefused) \
            else kind("x")
        assert exit_code_for(made) == code, kind
    assert exit_code_for(KeyboardInterrupt()) == 130 and exit_code_for(ValueError()) == 3
    # Not usage errors by accident: each has its own line in the table.
    for kind in (errors.GitError, errors.IndexFormatError, errors.GitHubError,
                 errors.PublishGaveUp):
        assert not issubclass(kind, errors.UsageError)
        assert kind in {k for k, _ in EXIT_CODES}


def test_only_cli_main_decides_exit_codes() -> None:
    """No `exit_code` attribute on an error, and no module catching an error to return
    its own code for it (ci/job.py once mapped GitHubError to 3 itself)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "exit_code":
                found.append(f"{rel}:{node.lineno}: .exit_code")
            if isinstance(node, ast.ExceptHandler) and rel != "kbase_ci/cli/main.py" and any(
                    isinstance(n, ast.Name) and n.id == "EXIT_INTERNAL"
                    for n in ast.walk(ast.Module(body=node.body, type_ignores=[]))):
                found.append(f"{rel}:{node.lineno}: returns EXIT_INTERNAL for an error")
    assert found == []


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(st.lists(st.sampled_from(["a", "b.npy", ".", "..", ".git", ".GIT", ".kbase",
                                 ".kbase.tmp-1", "", "\0", "é", "x y", "/"]),
                min_size=1, max_size=5).map("".join))
def test_the_fast_index_path_rule_agrees_with_unsafe_part(path: str) -> None:
    from kbase_ci.index.blocks import _PLAIN_PATH
    from kbase_ci.vault.safefs import unsafe_part

    if _PLAIN_PATH.fullmatch(path):
        assert unsafe_part(path) is None, path
