"""Summaries from a published index (kbase_ci.vault.indexhints): what a parse would
summarize, found by name in the links' raw text, and None on any doubt about the branch."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kbase_ci.git.repo import repo_dirs
from kbase_ci.index import layout
from kbase_ci.index.manifest import FORMAT_VERSION
from kbase_ci.parse.parser import parse_note
from kbase_ci.vault import indexhints
from kbase_ci.vault.files import Vault
from kbase_ci.vault.notestore import NoteStore, NoteSummary, fold, summarize
from tests.conftest import git, run_kbase

NOTES: dict[str, str | bytes] = {
    "Target Note.md": "---\naliases: [TN, Tê]\ntype: topic\ntags: [Big]\n---\n# T\n\n#x ^b\n",
    "Links.md": ("# L\n\n[[Target Note#h|s]] [a](Step%201%3A%20Go.md) [b](<Sp ace.md>)"
                 " [c](Esc\\_aped.md) ![[ΟΔΟΣ]] [[Café]]\n\nA bad escape [d](100%ZZ.md)"
                 " beside [e](Good%20One.md). [100%](Fine%20Two.md) and"
                 ' [f](Third%C3%A9.md "50%") [g](%E2%82.md)\n'),
    "Plain.md": "# Plain\n\nNo links.\n",
    ".gitignore": ".kbase/\n",
}


@pytest.fixture
def published(make_repo: Callable[..., Path]) -> Path:
    repo = make_repo(NOTES)
    for cmd in (("index",), ("publish",)):
        assert run_kbase(*cmd, cwd=repo).returncode == 0
    return repo


def _hints(repo: Path) -> dict[str, tuple[str, NoteSummary]] | None:
    dirs = repo_dirs(repo)
    assert dirs is not None
    return indexhints.index_summaries(dirs[0], dirs[1], Vault(repo).config.digest)


def test_the_format_read_is_the_format_written() -> None:
    assert indexhints.FORMAT_VERSION == FORMAT_VERSION
    assert (indexhints.NOTES_FILE, indexhints.BLOBS_FILE, indexhints.NOTE_ROWS_FILE,
            indexhints.LINK_ROWS_FILE) == (layout.NOTES_FILE, layout.BLOBS_FILE,
                                           layout.NOTE_ROWS_FILE, layout.LINK_ROWS_FILE)
    assert layout.STORED_NOTE_FIELDS[2:4] == ("aliases", "tags")
    assert layout.STORED_NOTE_FIELDS[5] == "frontmatter"
    assert (layout.LINK_FIELDS[0], layout.LINK_FIELDS[3]) == ("source", "raw")


def test_summaries_are_what_a_parse_summarizes(published: Path) -> None:
    got = _hints(published)
    assert got is not None and set(got) == {"Target Note.md", "Links.md", "Plain.md"}
    for path, (blob, summary) in got.items():
        assert blob == git(published, "rev-parse", f"HEAD:{path}").strip()
        parsed = summarize(parse_note(path, (published / path).read_bytes()))
        assert (set(summary.aliases), set(summary.tags), summary.type) == \
            (set(parsed.aliases), set(parsed.tags), parsed.type)
        # Every target key the parse finds is a substring of the folded raw texts.
        assert all(fold(t) in summary.loose for t in parsed.targets), path
    assert got["Plain.md"][1].loose == ""


def test_linking_to_matches_names_in_raw_text(published: Path) -> None:
    got = _hints(published)
    assert got is not None
    store = NoteStore(list(got), {p: s for p, (_b, s) in got.items()}, lambda paths: {})
    for name in ("Target Note", "target note.md", "Step 1%3A Go", "sp ace", "Esc_aped",
                 "οδος", "CAFÉ", "good one", "100%ZZ", "fine two",
                 "thirdé", "%E2%82"):
        assert store.linking_to([name]) == ["Links.md"], name
    assert store.linking_to(["Nowhere"]) == []


def test_no_index_branch_gives_none(make_repo: Callable[..., Path]) -> None:
    assert _hints(make_repo(NOTES)) is None


def _forge(repo: Path, edit: Callable[[Path], None]) -> None:
    tree = repo.parent / f"{repo.name}-forged"
    git(repo, "worktree", "add", "-q", str(tree), "kbase-index")
    edit(tree)
    git(tree, "commit", "-q", "-am", "forged")


def _rehash(tree: Path, name: str) -> None:
    manifest = json.loads((tree / "manifest.json").read_text())
    manifest["files"][name] = hashlib.sha256((tree / name).read_bytes()).hexdigest()
    (tree / "manifest.json").write_text(json.dumps(manifest))


def _bad_blobs(tree: Path) -> None:
    data = (tree / "blobs.npy").read_bytes()
    (tree / "blobs.npy").write_bytes(data[:-1])
    _rehash(tree, "blobs.npy")


def _long_raw(tree: Path) -> None:
    row = [1, 3, 5, "[[" + "x" * (indexhints.MAX_RAW + 1) + "]]", "wiki", False, None, "",
           "none", "unresolved", None, None]
    (tree / "links.jsonl").write_text(json.dumps(row) + "\n")
    _rehash(tree, "links.jsonl")


def _bad_source(tree: Path) -> None:
    row = [99, 3, 5, "[[x]]", "wiki", False, None, "", "none", "unresolved", None, None]
    (tree / "links.jsonl").write_text(json.dumps(row) + "\n")
    _rehash(tree, "links.jsonl")


def _alias_number(tree: Path) -> None:
    (tree / "notes.jsonl").write_text("[1,[],[5]]\n" * 3)
    _rehash(tree, "notes.jsonl")


def _other_version(tree: Path) -> None:
    manifest = json.loads((tree / "manifest.json").read_text())
    manifest["kbase_version"] = "0.0.0-other"
    (tree / "manifest.json").write_text(json.dumps(manifest))


def _hash_mismatch(tree: Path) -> None:
    (tree / "notes.jsonl").write_text("[1]\n[1]\n[1]\n")


@pytest.mark.parametrize("edit", [_bad_blobs, _long_raw, _bad_source, _alias_number,
                                  _other_version, _hash_mismatch])
def test_a_forged_branch_gives_none(published: Path, edit: Callable[[Path], None]) -> None:
    _forge(published, edit)
    assert _hints(published) is None


def test_a_file_over_the_cap_is_not_read(published: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    assert _hints(published) is not None
    monkeypatch.setattr(indexhints, "MAX_FILE_BYTES", 100)
    assert _hints(published) is None


_PIECES = ["a", "B", "é", "É", "Σ", "ς", " ", "%20", "%3A", "%C3%A9", "%ZZ", "%E2%82", "%",
           "\\", "\\_", "\\%", "\\%20", "_", "#", "|", "\\|", "/", ".md", "(", ")", "<", ">", '"t"',
           "ǅ", "ﬃ", "İ", "e\u0301"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["[[{}]]", "![[{}]]", "[x]({})", "[x%]({})",
                                           "[x](<{}>)", '[x]({} "50%")']),
                          st.lists(st.sampled_from(_PIECES), min_size=1, max_size=8)),
                min_size=1, max_size=4))
# Found by this property in CI: the parser ends the link at `\\>`, which is no escape there.
@example([("[x](<{}>)", ["a", "\\%20", "\\", ">"])])
def test_every_target_the_parser_finds_is_inside_the_loose_text(
        links: list[tuple[str, list[str]]]) -> None:
    text = "# N\n\n" + "\n\n".join(form.format("".join(parts)) for form, parts in links)
    note = parse_note("N.md", text.encode())
    loose = indexhints._loose([link.raw for link in note.links])
    for key in summarize(note).targets:
        assert fold(key) in loose, (text, key)
