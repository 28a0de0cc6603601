"""Property-based fuzzing (Hypothesis) over parse, resolve, check, fix, index and the
readers of untrusted data (issue 22). Inputs are built from the syntax an attacker
would reach for (unclosed links, nested brackets, control characters, bidi overrides,
`::` commands, huge repeats) mixed with random text.

Properties: nothing raises but a KbaseError (no exit 3), nothing is written outside the
repository, `kbase fix` is idempotent, builds are byte-identical, parses deterministic.
Sized to add about a minute to the suite on two cores (`derandomize`: the same examples
every run, so CI is stable); `KBASE_FUZZ_SCALE=10` runs ten times the examples with
fresh randomness (how the campaign in the issue note was run).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbase_ci.ci.cireport import from_json
from kbase_ci.cli.main import exit_code_for
from kbase_ci.errors import IndexFormatError, KbaseError, UsageError
from kbase_ci.index.reader import open_index
from kbase_ci.parse.conceptmentions import extract, heading_keys
from kbase_ci.parse.parser import parse_note
from kbase_ci.query.links import sentence_at
from kbase_ci.report.escape import md_text, terminal_text
from kbase_ci.vault.config import parse_config
from kbase_ci.vault.resolver import Resolver
from tests.conftest import git, indexed_repo, run_kbase, write

SCALE = int(os.environ.get("KBASE_FUZZ_SCALE", "1"))
FRESH = SCALE > 1


def fuzz(examples: int) -> settings:
    return settings(max_examples=examples * SCALE, deadline=None, derandomize=not FRESH,
                    database=None, suppress_health_check=list(HealthCheck))


ATOMS = ["[[", "]]", "[", "]", "(", ")", "![[", "![", "](", "|", "#", "^", "%%", "<!--",
         "-->", "<", ">", "`", "```", "~~~", "$", "$$", "\\", "*", "_", "---", "...",
         "\n", "\r\n", "\r", "\t", " ", "  ", "- ", "> ", "1. ", "# ", "## ", "a", "B",
         "Note", "Aa Bb", "x.md", "../", "/", ".", ":", "::error::", "https://x.io",
         "www.x", "\x00", "\x1b[2J", "\u202e", "\ufeff", "é", "日本", "\udcff", "[[a|b]]",
         "[[a#b]]", "[[#^x]]", "[t](a.md)", "[t](<a b.md>)", "#tag/x", "^blk", "=="]

markdown = st.lists(st.one_of(st.sampled_from(ATOMS), st.text(max_size=6)),
                    max_size=80).map("".join)
note_names = st.sampled_from(["a", "b", "c", "Note", "x/y", "sub/Note", "é", "a b",
                              "UPPER", "dot.name", "#hash", "tab\tname"])


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


@fuzz(1000)
@given(data=st.one_of(markdown.map(_bytes), st.binary(max_size=400)))
def test_parse_never_fails_and_is_deterministic(data: bytes) -> None:
    first, again = parse_note("n.md", data), parse_note("n.md", data)
    assert first == again
    lines = data.count(b"\n") + data.count(b"\r") + 1
    for link in first.links:
        assert 1 <= link.line <= lines and link.col >= 1


@fuzz(800)
@given(text=markdown)
def test_mentions_and_sentences_never_fail(text: str) -> None:
    assert extract(text) == extract(text)
    heading_keys(text)
    for col in range(0, len(text) + 2, 7):
        sentence_at(text, col)


@fuzz(400)
@given(notes=st.dictionaries(note_names, markdown, min_size=1, max_size=5),
       files=st.lists(st.sampled_from(["img.png", "x/y.pdf", "a.md.bak"]), max_size=3))
def test_resolve_never_fails_and_stays_in_the_vault(notes: dict[str, str],
                                                    files: list[str]) -> None:
    parsed = [parse_note(f"{n}.md", _bytes(t)) for n, t in sorted(notes.items())]
    paths = sorted([p.path for p in parsed] + files)
    resolver = Resolver(parsed, paths)
    for note in parsed:
        for r in resolver.resolve_all(note):
            assert r.target is None or r.target in paths


@fuzz(500)
@given(text=st.text(max_size=200))
def test_escaping_leaves_no_command_or_link(text: str) -> None:
    out = terminal_text(text)
    assert "\n" not in out and "\r" not in out and "\x1b" not in out
    assert not any(ln.lstrip().startswith("::") for ln in out.split("\n"))
    md = md_text(text)
    assert "https://" not in md.lower() and "www." not in md.lower()


@fuzz(300)
@given(doc=st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                        lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(st.text(max_size=6), inner, max_size=4),
                        max_leaves=30))
def test_report_json_is_accepted_or_refused_never_crashes(doc: object) -> None:
    with suppress(UsageError):
        from_json(doc)


yaml_bits = st.lists(st.sampled_from([
    "tags:", "  pattern: '(a+)+$'", "  pattern: '[\\w-]+'", "  allowed: [a, '*']",
    "scopes:", "  s: {include: [a]}", "  '../x': {}", "links:", "  resolve_aliases: yes",
    "vault:", "  folders: [.]", "  exclude: ['**/x']", "index:", "  domain: folder",
    "handover:", "  folder: ../out", "  folder: .git", "checks:", "x: [", "'\\n::error::'",
    "  - 1", "{", "&a [1]", "*a", "!!python/object:os.system ls", "- - - -"]),
    max_size=8).map("\n".join)


@fuzz(300)
@given(text=yaml_bits)
def test_config_errors_are_config_errors(text: str) -> None:
    try:
        parse_config(text, ".kbase.yml")
    except KbaseError as exc:
        assert exit_code_for(exc) == 2


@contextmanager
def _repo(files: dict[str, str | bytes]) -> Iterator[tuple[Path, Path]]:
    """A real repository (and a sentinel folder beside it that nothing may touch)."""
    with tempfile.TemporaryDirectory(prefix="kbase-fuzz-") as tmp:
        root, outside = Path(tmp) / "repo", Path(tmp) / "outside"
        write(outside, {"keep.txt": "untouched\n"})
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        write(root, {n: t for n, t in files.items()})
        git(root, "add", "-A")
        git(root, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-qm", "v",
            "--allow-empty")
        yield root, outside
        assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
        assert (outside / "keep.txt").read_text() == "untouched\n"
        assert sorted(p.name for p in Path(tmp).iterdir()) == ["outside", "repo"]


def _vault(notes: dict[str, str]) -> dict[str, str | bytes]:
    return {f"{name}.md": _bytes(text) for name, text in notes.items()}


vaults = st.dictionaries(note_names, markdown, min_size=1, max_size=4).map(_vault)


@fuzz(60)
@given(files=vaults)
def test_check_exits_0_or_1(files: dict[str, str | bytes]) -> None:
    with _repo(files) as (root, _):
        proc = run_kbase("check", "--all", cwd=root)
        assert proc.returncode in (0, 1), proc.stderr


@fuzz(40)
@given(files=vaults, old=note_names, new=st.sampled_from(["moved", "deep/er/one", "é2"]))
def test_fix_is_idempotent_and_stays_in_the_repository(files: dict[str, str | bytes], old: str,
                                                       new: str) -> None:
    files = {**files, f"{old}.md": files.get(f"{old}.md", "# old\n")}
    with _repo(files) as (root, _):
        (root / f"{new}.md").parent.mkdir(parents=True, exist_ok=True)
        git(root, "mv", f"{old}.md", f"{new}.md")
        first = run_kbase("fix", "--staged", cwd=root)
        assert first.returncode in (0, 1), first.stderr
        git(root, "add", "-A")
        snapshot = {p: p.read_bytes() for p in root.rglob("*.md")}
        again = run_kbase("fix", "--staged", cwd=root)
        assert again.returncode == 0 and again.stdout == "", again.stdout + again.stderr
        assert {p: p.read_bytes() for p in root.rglob("*.md")} == snapshot


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "manifest.json"}


@fuzz(12)
@given(files=vaults)
def test_index_is_deterministic_and_queries_never_crash(files: dict[str, str | bytes]
                                                        ) -> None:
    with _repo(files) as (root, _):
        assert run_kbase("index", cwd=root).returncode == 0
        first = _tree(root / ".kbase")
        assert run_kbase("index", "--no-cache", cwd=root).returncode == 0
        assert _tree(root / ".kbase") == first
        for args in (["links", "a"], ["backlinks", "Note"], ["explore", "x/y"],
                     ["search", "Aa Bb"], ["gaps"], ["graph", "--format", "text"]):
            proc = run_kbase(*args, cwd=root)
            assert proc.returncode in (0, 1, 2), (args, proc.stderr)
            assert "internal error" not in proc.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_repo(tmp_path_factory.mktemp("fuzzidx") / "repo", {
        "A.md": "# A\n\n[[B]] [[C#x]] [[gone]] ^blk\n", "B.md": "# B\n\n[[A]]\n",
        "sub/C.md": "---\ntags: [t]\n---\n# C\n\n## x\n\n[[A]] #tag\n"})


@fuzz(120)
@given(data=st.data())
def test_forged_index_files_never_crash_a_query(built: Path, data: st.DataObject) -> None:
    index = built / ".kbase"
    names = sorted(p.relative_to(index).as_posix() for p in index.rglob("*")
                   if p.is_file() and p.name != "manifest.json")
    rel = data.draw(st.sampled_from(names))
    original = (index / rel).read_bytes()
    pos = data.draw(st.integers(0, max(len(original) - 1, 0)))
    chunk = data.draw(st.binary(min_size=1, max_size=8) | st.sampled_from(
        [b"9999999", b"-1", b"[[[[", b'"x"', b"null", b"\xff\xfe", b"1e309"]))
    forged = original[:pos] + chunk + original[pos + len(chunk):]
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "idx"
        shutil.copytree(index, copy)
        (copy / rel).write_bytes(forged)
        manifest = json.loads((copy / "manifest.json").read_bytes())
        manifest["files"][rel] = hashlib.sha256(forged).hexdigest()
        (copy / "manifest.json").write_text(json.dumps(manifest))
        with suppress(IndexFormatError):  # refused at open: the CLI builds a temporary index
            open_index(copy)
        for args in (["links", "A"], ["backlinks", "A"], ["explore", "B"], ["search", "A"],
                     ["gaps"], ["read", "sub/C.md"], ["status"]):
            proc = run_kbase(*args, "--index", str(copy), cwd=built)
            assert proc.returncode in (0, 1, 2), (rel, args, proc.stderr)
            assert "internal error" not in proc.stderr, (rel, args, proc.stderr)


_GONE = object()
values = (st.none() | st.booleans() | st.integers(-2**70, 2**70)
          | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8)
          | st.sampled_from(["../../etc/passwd", "0" * 64, "onnx", "pickle", "--x"])
          | st.lists(st.integers(-3, 3) | st.text(max_size=3), max_size=3)
          | st.dictionaries(st.text(max_size=4), st.integers(-3, 3), max_size=2)
          | st.just(_GONE))


def forge_key(manifest: dict[str, Any], data: st.DataObject) -> tuple[list[str | int], object]:
    """Replace (or remove) one key of `manifest` at any depth, in place, with a drawn
    value: the forger's edit the manifest properties make. Returns (key path, value)."""
    path: list[str | int] = [data.draw(st.sampled_from(sorted(manifest)))]
    node: Any = manifest[path[0]]
    while isinstance(node, dict | list) and node and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(node) if isinstance(node, dict)
                                        else range(len(node))))
        path.append(key)
        node = node[key]
    value = data.draw(values)
    parent: Any = manifest
    for key in path[:-1]:
        parent = parent[key]
    if value is _GONE and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = None if value is _GONE else value
    return path, value


@fuzz(100)
@given(data=st.data())
def test_forged_manifests_are_refused_by_key_never_crash(built: Path,
                                                          data: st.DataObject) -> None:
    """Any key of the manifest, at any depth, replaced (or removed): the query answers,
    or exits 2 naming the file it refused; never a crash (issue 26)."""
    index = built / ".kbase"
    manifest = json.loads((index / "manifest.json").read_bytes())
    path, value = forge_key(manifest, data)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "idx"
        shutil.copytree(index, copy)
        (copy / "manifest.json").write_text(json.dumps(manifest))
        for args in (["backlinks", "A"], ["status"]):
            proc = run_kbase(*args, "--index", str(copy), cwd=built)
            assert proc.returncode in (0, 1, 2), (path, value, args, proc.stderr)
            assert "internal error" not in proc.stderr, (path, value, proc.stderr)
            if proc.returncode == 2:  # refused, naming what (the manifest, or a table)
                assert str(copy) in proc.stderr, (path, value, proc.stderr)

