"""A fresh clone's first hook run takes the notes it does not decode from the published
index (kbase_ci.vault.indexhints): a staged rename or delete gives exactly the findings
and exit code of a run without the index, with the index fresh, stale, forged or absent,
and a run with the fresh index parses only the notes it looks at."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git, run_kbase, write
from querykit import clone, publish_index

FILLER = 60
"""Notes that do not link to the target (more than the scanner's `_HINTS_MIN`)."""


def _files() -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {
        "Target Note.md": "---\naliases: [TN]\n---\n# Target Note\n\n## Sec\n\nText ^blk\n",
        "Wiki.md": "# Wiki\n\nSee [[Target Note]] and [[target note#Sec]].\n",
        "Md.md": "# Md\n\n[a](Target%20Note.md) and [b](<Target Note.md#Sec>).\n",
        "Escaped.md": "# Escaped\n\n| a | b |\n|---|---|\n| [[Target Note\\|t]] | x |\n",
        "Alias.md": "# Alias\n\nBy alias [[TN]] and embed ![[Target Note#^blk]].\n",
        "Front.md": '---\nrelated: "[[Target Note]]"\n---\n# Front\n',
        "Deep/Path.md": "# Path\n\n[[Target Note|shown]] and [[Other#Two]].\n",
        "Other.md": "# Other\n\n## Two\n\nSee [[Wiki]].\n",
        "Mixed.md": "# Mixed\n\n#Topic and [[Other]].\n",
        "Tags.md": "# Tags\n\n#topic here.\n",
        ".gitignore": ".kbase/\n",
    }
    for i in range(FILLER):
        files[f"Filler/F{i:03}.md"] = f"# F{i}\n\nAbout [[Other]] and [[F{(i + 1) % FILLER:03}]].\n"
    return files


@pytest.fixture
def origin(make_repo: Callable[..., Path]) -> Path:
    src = make_repo(_files())
    publish_index(src)
    return src


def _hook(repo: Path) -> tuple[int, list[object]]:
    proc = run_kbase("check", "--staged", "--format", "json", cwd=repo)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)["findings"]


def _cached(repo: Path) -> int:
    db = repo / ".git" / "kbase" / "parse-cache.sqlite"
    with sqlite3.connect(db) as con:
        return int(con.execute("SELECT count(*) FROM notes").fetchone()[0])


def _parsed(repo: Path) -> set[str]:
    """The paths of the notes in the parse cache (parsed by the runs so far)."""
    db = repo / ".git" / "kbase" / "parse-cache.sqlite"
    with sqlite3.connect(db) as con:
        return {str(k).split("\0", 2)[1] for (k,) in con.execute("SELECT key FROM notes")}


def _pair(origin: Path, tmp_path: Path, change: Callable[[Path], None]
          ) -> tuple[Path, Path]:
    """Two fresh clones with `change` staged: one with the index branch, one without."""
    with_index = clone(origin, tmp_path / "with")
    without = clone(origin, tmp_path / "without")
    git(without, "update-ref", "-d", "refs/remotes/origin/kbase-index")
    for repo in (with_index, without):
        change(repo)
    return with_index, without


def _rename(repo: Path) -> None:
    git(repo, "mv", "Target Note.md", "Moved.md")
    # A staged note whose tag the vault spells two other ways (summaries of unparsed
    # notes give the spellings) and whose link names the renamed note's alias.
    write(repo, {"New.md": "# New\n\n#TOPIC and [[TN]].\n"})
    git(repo, "add", "New.md")


def _delete(repo: Path) -> None:
    git(repo, "rm", "-q", "Target Note.md")


@pytest.mark.parametrize("change", [_rename, _delete], ids=["rename", "delete"])
def test_fresh_index_gives_the_findings_of_a_full_parse(origin: Path, tmp_path: Path,
                                                        change: Callable[[Path], None]
                                                        ) -> None:
    with_index, without = _pair(origin, tmp_path, change)
    got, want = _hook(with_index), _hook(without)
    assert got == want
    assert got[0] == 1
    sources = {f["path"] for f in got[1]}  # type: ignore[index]
    assert {"Wiki.md", "Md.md", "Escaped.md", "Alias.md", "Front.md",
            "Deep/Path.md"} <= sources
    if change is _rename:
        assert "New.md" in sources
    # Only the notes the hook looked at were parsed; the full parse cached every note.
    assert _cached(with_index) < FILLER // 2 < _cached(without)
    # Issue 40: the notes linking to the moved one took their links from the index
    # (checked against their bytes), so none of them was parsed.
    assert _parsed(with_index).isdisjoint({"Wiki.md", "Md.md", "Escaped.md", "Alias.md",
                                           "Front.md", "Deep/Path.md"}), _parsed(with_index)
    assert _hook(with_index) == want  # the second run in the clone, likewise


def test_stale_index_is_used_only_where_blobs_match(origin: Path, tmp_path: Path) -> None:
    def change(repo: Path) -> None:
        # Since the index: a filler note gains a link to the target, a linking note
        # loses its link; both are committed, so the index is stale for them.
        write(repo, {"Filler/F007.md": "# F7\n\nNow [[Target Note#Sec]].\n",
                     "Wiki.md": "# Wiki\n\nNo links now.\n"})
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "edit")
        _rename(repo)

    with_index, without = _pair(origin, tmp_path, change)
    got, want = _hook(with_index), _hook(without)
    assert got == want
    sources = {f["path"] for f in got[1]}  # type: ignore[index]
    assert "Filler/F007.md" in sources and "Wiki.md" not in sources


def _forge(repo: Path, edit: Callable[[Path], None]) -> None:
    """A local `kbase-index` branch (read before origin's) with `edit` applied."""
    tree = repo.parent / f"{repo.name}-index"
    git(repo, "worktree", "add", "-q", "-b", "kbase-index", str(tree),
        "origin/kbase-index")
    edit(tree)
    git(tree, "commit", "-q", "-am", "forged")


def _drop_links(tree: Path) -> None:  # every link gone: the manifest's hash no longer fits
    (tree / "hooklinks.jsonl").write_text("")


def _rehash(tree: Path, *names: str) -> None:
    """A consistent forgery: the manifest's hashes made to fit the edited files."""
    manifest = json.loads((tree / "manifest.json").read_text())
    for name in names:
        manifest["files"][name] = hashlib.sha256((tree / name).read_bytes()).hexdigest()
    (tree / "manifest.json").write_text(json.dumps(manifest))


def _wrong_types(tree: Path) -> None:  # rows of the wrong type, hashes made to fit
    (tree / "notes.jsonl").write_text('"x"\n' * (FILLER + 10))
    _rehash(tree, "notes.jsonl")


def _rows(tree: Path, name: str) -> list[object]:
    return [json.loads(line) for line in (tree / name).read_text().splitlines()]


def _put_rows(tree: Path, name: str, rows: list[object]) -> None:
    (tree / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


@pytest.mark.parametrize("edit", [_drop_links, _wrong_types], ids=["hash", "types"])
def test_forged_index_is_refused(origin: Path, tmp_path: Path,
                                 edit: Callable[[Path], None]) -> None:
    with_index, without = _pair(origin, tmp_path, _rename)
    _forge(with_index, edit)
    got, want = _hook(with_index), _hook(without)
    assert got == want and got[0] == 1
    assert _cached(with_index) == _cached(without)  # refused: every note parsed


def test_single_branch_clone_reads_the_index_from_fetch_head(origin: Path, tmp_path: Path
                                                           ) -> None:
    """`git clone --single-branch` then `git fetch origin kbase-index` fills FETCH_HEAD
    only; the hook finds the index there."""
    fetched = tmp_path / "single"
    git(tmp_path, "clone", "-q", "--single-branch", str(origin), str(fetched))
    git(fetched, "fetch", "-q", "origin", "kbase-index")
    without = clone(origin, tmp_path / "without")
    git(without, "update-ref", "-d", "refs/remotes/origin/kbase-index")
    for repo in (fetched, without):
        _rename(repo)
    assert _hook(fetched) == _hook(without)
    assert _cached(fetched) < FILLER // 2


def test_another_configuration_parses_every_note(origin: Path, tmp_path: Path) -> None:
    """The index was built under another `.kbase.yml`: its rows are not used."""
    def change(repo: Path) -> None:
        write(repo, {".kbase.yml": "vault:\n  max_note_bytes: 4000000\n"})
        git(repo, "add", ".kbase.yml")
        git(repo, "commit", "-q", "-m", "config")
        _rename(repo)

    with_index, without = _pair(origin, tmp_path, change)
    assert _hook(with_index) == _hook(without)
    assert _cached(with_index) == _cached(without)


def _fix(repo: Path) -> tuple[int, str, str]:
    proc = run_kbase("fix", "--staged", cwd=repo)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, proc.stdout, git(repo, "diff")  # rewritten, left unstaged


def test_fix_in_a_fresh_clone_rewrites_what_a_full_parse_does(origin: Path, tmp_path: Path
                                                             ) -> None:
    with_index, without = _pair(origin, tmp_path, _rename)
    got = _fix(with_index)
    assert got == _fix(without)
    assert "[[Moved]]" in got[2] and "Moved.md#Sec" in got[2]  # the links were rewritten
    assert _cached(with_index) < FILLER // 2 < _cached(without)


def _paths(tree: Path) -> list[str]:
    return list(json.loads((tree / "notes.json").read_text())["paths"])


def _hide_links(tree: Path) -> None:
    """Issue 38: an index whose rows leave out the links to the target (links.jsonl,
    what kbase before format 7 read, and hooklinks.jsonl), hashes made to fit."""
    paths = _paths(tree)
    links = [r for r in _rows(tree, "links.jsonl")
             if "Target" not in r[3] and "TN" not in r[3]]  # type: ignore[index]
    _put_rows(tree, "links.jsonl", links)
    hook = _rows(tree, "hooklinks.jsonl") if (tree / "hooklinks.jsonl").exists() else []
    hook = [[x for x in row if "Target" not in x[2] and "TN" not in x[2]]  # type: ignore[attr-defined,index]
            if row is not None else None for row in hook]
    _put_rows(tree, "hooklinks.jsonl", hook)
    assert len(hook) in (0, len(paths))
    _rehash(tree, *[n for n in ("links.jsonl", "hooklinks.jsonl") if (tree / n).exists()])


def _forge_alias(tree: Path) -> None:
    """Issue 38: `Other.md` given the alias `Ghost` it does not have, so a new
    `[[Ghost]]` would resolve through it."""
    paths = _paths(tree)
    rows = _rows(tree, "notes.jsonl")
    row = rows[paths.index("Other.md")]
    assert isinstance(row, list)
    row.extend([[]] * (3 - len(row)))
    row[2] = ["Ghost"]
    _put_rows(tree, "notes.jsonl", rows)
    _rehash(tree, "notes.jsonl")


def _ghost(repo: Path) -> None:
    _rename(repo)
    write(repo, {"Haunted.md": "# Haunted\n\nSee [[Ghost]].\n"})
    git(repo, "add", "Haunted.md")


@pytest.mark.parametrize(("edit", "change"), [(_hide_links, _rename), (_hide_links, _delete),
                                              (_forge_alias, _ghost)],
                         ids=["hidden-links-rename", "hidden-links-delete", "alias"])
def test_a_consistent_forgery_misses_nothing_on_any_run(
        origin: Path, tmp_path: Path, edit: Callable[[Path], None],
        change: Callable[[Path], None]) -> None:
    """Issue 38, item 6: what the index claims is checked against the notes' own bytes,
    so a forgery with hashes that fit hides no broken link, on the first hook run of
    the clone or any later one."""
    with_index, without = _pair(origin, tmp_path, change)
    _forge(with_index, edit)
    want = _hook(without)
    assert want[0] == 1
    assert _hook(with_index) == want
    assert _hook(with_index) == want  # the second run: the cache holds only what was parsed


def _pad_core(tree: Path) -> None:
    """Issue 38, item 2: `notes.json` padded with empty lists (80M of them: 17 s, exit 3)."""
    core = json.loads((tree / "notes.json").read_text())
    core["pad"] = [[] for _ in range(500_000)]
    (tree / "notes.json").write_text(json.dumps(core))
    _rehash(tree, "notes.json")


def _wide_links(tree: Path) -> None:
    """Issue 38, item 2: 8 KiB link texts of U+01FB and one non-BMP character (250 MiB of
    them grew to 10.5 GB), in the link tables of either format."""
    raw = "[[" + "\u01fb" * 4000 + "\U0001F600]]"
    rows = [[0, 1, 1, raw, "wiki", False, None, "", "none", "unresolved", None, None]] * 200
    _put_rows(tree, "links.jsonl", rows)
    paths = _paths(tree)
    _put_rows(tree, "hooklinks.jsonl", [[[1, 1, raw]] * 3 for _ in paths])
    _rehash(tree, "links.jsonl", "hooklinks.jsonl")


@pytest.mark.parametrize("edit", [_pad_core, _wide_links], ids=["padded", "wide"])
def test_an_index_larger_than_the_notes_is_refused_unread(origin: Path, tmp_path: Path,
                                                         edit: Callable[[Path], None]
                                                         ) -> None:
    """Files a few megabytes larger than any index of these notes: refused by their
    sizes and container counts, before decoding; the hook parses as without an index."""
    with_index, without = _pair(origin, tmp_path, _rename)
    _forge(with_index, edit)
    got, want = _hook(with_index), _hook(without)
    assert got == want and got[0] == 1
    assert _cached(with_index) == _cached(without)
