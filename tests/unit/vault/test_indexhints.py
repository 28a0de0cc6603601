"""Summaries from a published index (kbase_ci.vault.indexhints): what a parse would
summarize, found by name in the links' raw text, and None on any doubt about the branch."""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kbase_ci.git.repo import repo_dirs
from kbase_ci.index import FORMAT_VERSION, layout
from kbase_ci.index.hooklinks import hook_row
from kbase_ci.parse.parser import parse_note
from kbase_ci.vault import hintcheck, indexhints
from kbase_ci.vault.notefiles import Vault
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


def _hints(repo: Path) -> indexhints.HintedNotes | None:
    dirs = repo_dirs(repo)
    assert dirs is not None
    vault = Vault(repo, staged=True)
    return indexhints.index_hints(dirs[0], dirs[1], vault.config.digest,
                                  {n.path: (n.sha, c) for n, c in zip(
                                      vault.notes, vault.read(vault.notes).values(),
                                      strict=True)})


def test_the_format_read_is_the_format_written() -> None:
    assert indexhints.FORMAT_VERSION == FORMAT_VERSION
    assert (indexhints.NOTES_FILE, indexhints.BLOBS_FILE, indexhints.NOTE_ROWS_FILE,
            indexhints.HOOK_LINKS_FILE) == (layout.NOTES_FILE, layout.BLOBS_FILE,
                                            layout.NOTE_ROWS_FILE, layout.HOOK_LINKS_FILE)
    assert layout.STORED_NOTE_FIELDS[2:4] == ("aliases", "tags")
    assert layout.STORED_NOTE_FIELDS[5] == "frontmatter"


def test_summaries_and_links_are_what_a_parse_gives(published: Path) -> None:
    got = _hints(published)
    assert got is not None and set(got.summaries) == {"Target Note.md", "Links.md",
                                                      "Plain.md"}
    for path, summary in got.summaries.items():
        note = parse_note(path, (published / path).read_bytes())
        parsed = summarize(note)
        assert (set(summary.aliases), set(summary.tags), summary.type) == \
            (set(parsed.aliases), set(parsed.tags), parsed.type)
        # Links from the index are the parse's, or None (then the note is parsed).
        links = got.links(path, [fold("Nowhere")])
        assert links == note.links, path
    # Prose on a line whose brackets are all claimed links can hold no other link.
    links = parse_note("Links.md", (published / "Links.md").read_bytes()).links
    assert got.links("Links.md", [fold("bad escape")]) == links
    assert got.links("Links.md", [fold("Target Note")]) == links


@pytest.mark.parametrize(("text", "used"), [
    ("# N\n\nSee [[Old]] here.\nold news, no bracket\n", True),
    ("# N\n\nSee [[Old]] here.\nA [bracket] and old\n", False),  # may be a link
    ("# N\n\nSee [[Old]] here.\n[t](\nold.md)\n", False),  # a destination on the next line
    ("# N\n\nSee [[Old]] here.\n[t][r]\n\n[r]:\n  old.md\n", False),  # a definition's
    ("# N\n\nSee [[Old]] [[Old]] here.\n", False),  # the second left out of the row
])
def test_a_name_where_a_link_could_be_makes_the_note_parsed(text: str, used: bool) -> None:
    row = [[3, 5, "[[Old]]"]]
    got = hintcheck.verified_links(text, row, [fold("old")])
    assert (got is not None) == used, got
    if used:
        assert got == parse_note("N.md", text.encode()).links


def test_a_claim_swallowing_a_link_into_a_longer_text_is_refused() -> None:
    text = "# N\n\n[[A]] and [[Old]]\n"
    # `link_from_raw` reads this claimed text as one link to `A]] and [[Old`: the name
    # inside it is not its target, so the claim cannot hide `[[Old]]`.
    assert hintcheck.verified_links(text, [[3, 1, "[[A]] and [[Old]]"]],
                                     [fold("old")]) is None
    assert hintcheck.verified_links(text, [[3, 1, "[[A]]"], [3, 11, "[[Old]]"]],
                                     [fold("old")]) is not None


def test_linking_to_matches_names_in_the_notes_text(published: Path) -> None:
    got = _hints(published)
    assert got is not None
    store = NoteStore(list(got.summaries), got.summaries, lambda paths: {}, hinted=got)
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


def _short_links(tree: Path) -> None:  # fewer rows than notes
    (tree / "hooklinks.jsonl").write_text("[]\n")
    _rehash(tree, "hooklinks.jsonl")


def _padded_core(tree: Path) -> None:
    """`notes.json` padded with empty lists (issue 38: 80M of them took 17 s and exit 3):
    far more than notes of these sizes can hold, refused before decoding."""
    core = json.loads((tree / "notes.json").read_text())
    core["pad"] = [[] for _ in range(200_000)]
    (tree / "notes.json").write_text(json.dumps(core))
    _rehash(tree, "notes.json")


def _wide_rows(tree: Path) -> None:
    """Rows far larger than these notes: 8 KiB link texts of U+01FB (issue 38: 250 MiB of
    them grew to 10.5 GB)."""
    raw = "[[" + "\u01fb" * 4000 + "\U0001F600]]"
    (tree / "hooklinks.jsonl").write_text(
        "".join(json.dumps([[1, 1, raw]] * 40) + "\n" for _ in range(3)))
    _rehash(tree, "hooklinks.jsonl")


def _alias_number(tree: Path) -> None:
    (tree / "notes.jsonl").write_text("[1,[],[5]]\n" * 3)
    _rehash(tree, "notes.jsonl")


def _other_version(tree: Path) -> None:
    manifest = json.loads((tree / "manifest.json").read_text())
    manifest["kbase_version"] = "0.0.0-other"
    (tree / "manifest.json").write_text(json.dumps(manifest))


def _hash_mismatch(tree: Path) -> None:
    (tree / "notes.jsonl").write_text("[1]\n[1]\n[1]\n")


@pytest.mark.parametrize("edit", [_bad_blobs, _short_links, _padded_core, _wide_rows,
                                  _alias_number, _other_version, _hash_mismatch])
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
           "ǅ", "ﬃ", "İ", "e\u0301", "''", "\\x41", "\n  ", "\n>", "\t", "&#97;", "_", "ab"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["[[{}]]", "![[{}]]", "[x]({})", "[x%]({})",
                                           "[x](<{}>)", '[x]({} "50%")', "`{}`", "{}",
                                           "up: \"[[{}]]\"", "up: '[[{}]]'",
                                           "up: [[{}]]", "[x](\n{})", "[x][r]\n\n[r]:\n  {}",
                                           "see {} here"]),
                          st.lists(st.sampled_from(_PIECES), min_size=1, max_size=8),
                          st.sampled_from(["\n\n", " ", "\n", "é ", " \\", "\n  ", "\n> ", "\n- ",
                                           "x"])),
                min_size=1, max_size=4),
       st.booleans())
# Found by this property in CI: the parser ends the link at `\\>`, which is no escape there.
@example([("[x](<{}>)", ["a", "\\%20", "\\", ">"], "\n\n")], False)
def test_the_index_never_hides_a_link_the_parser_finds(
        links: list[tuple[str, list[str], str]], front: bool) -> None:
    """Candidates are found in the note's text, and the index's links of a note are
    used only when they are exactly the parser's: for every key a link of the note
    targets, and for a key it does not."""
    body = "".join(form.format("".join(parts)) + sep for form, parts, sep in links)
    text = ("---\n" + body + "\n---\n" if front else "# N\n\n") + body
    note = parse_note("N.md", text.encode())
    rewrites = hintcheck.yaml_rewrites(text)  # then always a candidate, always parsed
    loose = hintcheck.loose_text(text)
    targets = summarize(note).targets
    for key in targets:
        # The last segment is what a rename's name key is matched with.
        name = key.rsplit("/", 1)[-1]
        assert rewrites or hintcheck.names_in([fold(name)])(loose), (text, key)
    row = json.loads(json.dumps(hook_row(note.links)))
    for keys in [[fold(k)] for k in targets] + [[fold("Qz Absent")]]:
        got = hintcheck.verified_links(text, row, keys)
        assert got is None or got == note.links, (text, keys)
    if row is not None and not rewrites:  # a genuine row of a note without the key is used
        assert hintcheck.verified_links(text, row, [fold("Qz Absent")]) == note.links, text
    if row is None:
        return
    # A forged row that leaves a link out never hides it: asked for that link's name, the
    # hook parses the note.
    for i, link in enumerate(note.links):
        if link.external or not link.target:
            continue
        seg = link.target.rsplit("/", 1)[-1]
        name = unicodedata.normalize("NFC", seg).lower().removesuffix(".md")
        forged = row[:i] + row[i + 1:]
        assert hintcheck.verified_links(text, forged, [fold(name)]) is None, (text, link)


@pytest.mark.parametrize("row", [b"[" + b"[]," * 10_000 + b"[]]", b"[" * 100_000,
                                 b'[[3, 5, "[[Old]]"]' + b" " * 10_000 + b"]"])
def test_a_row_larger_than_its_note_is_not_decoded(row: bytes) -> None:
    """Issue 38: a row is decoded only within what a row of its note can hold."""
    text = b"# N\n\nSee [[Old]].\n"
    hinted = indexhints.HintedNotes({"N.md": NoteSummary()}, {"N.md": text}, {"N.md": row})
    assert hinted.links("N.md", [fold("old")]) is None
    genuine = indexhints.HintedNotes({"N.md": NoteSummary()}, {"N.md": text},
                                     {"N.md": b'[[3, 5, "[[Old]]"]]'})
    assert genuine.links("N.md", [fold("old")]) == parse_note("N.md", text).links
