"""Freshness: a clone whose work tree moved on since the published index (notes added,
deleted, renamed, links removed) must answer for the work tree, never the index; a
tampered index branch is refused and the answer rebuilt in a temporary folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import GIT_ENV, REPO, git, run_kbase, write
from indexkit import make_tiny_model
from querykit import clone, paths, publish_index, query

FILES: dict[str, str | bytes] = {
    "Hub.md": "# Hub\n\nSee [[Alpha]] and [[Beta]]. Later [[Gamma]] will exist.\n",
    "Alpha.md": "# Alpha\n\nAlpha talks about compost heaps. Back to [[Hub]].\n",
    "Beta.md": "# Beta\n\nBeta grows tomato seedlings. Links [[Alpha]].\n",
    "Café Notes.md": "# Café Notes\n\nEspresso ratios. See [[Hub]].\n",
    "C# Tips.md": "# C# Tips\n\n## Usage\n\nUse LINQ queries.\n\n## Other\n\nNothing.\n",
    "Folder/My Space Note.md": "# My Space Note\n\n[tips](../C%23%20Tips.md) and [[Café Notes]].\n",
}


@pytest.fixture
def fresh(make_repo: Callable[..., Path], tmp_path: Path) -> Path:
    src = make_repo(FILES)
    publish_index(src)
    return clone(src, tmp_path / "clone")


def test_clean_clone_is_not_stale(fresh: Path) -> None:
    code, ans, _ = query(fresh, "backlinks", "Alpha")
    assert code == 0
    assert paths(ans["backlinks"]) == ["Beta.md", "Hub.md"]
    assert ans["index"]["stale_notes"] == [] and ans["index"]["overlaid"] is False


def test_added_note_gets_backlinks_and_search_hits(fresh: Path) -> None:
    write(fresh, {"Gamma.md": "# Gamma\n\nGamma covers zeppelin maintenance. See [[Beta]].\n"})
    git(fresh, "add", "Gamma.md")
    code, ans, _ = query(fresh, "backlinks", "Gamma")
    assert code == 0 and paths(ans["backlinks"]) == ["Hub.md"]  # was unresolved in the index
    assert ans["index"]["stale_notes"] == ["Gamma.md"] and ans["index"]["overlaid"]
    code, ans, _ = query(fresh, "backlinks", "Beta")
    assert paths(ans["backlinks"]) == ["Gamma.md", "Hub.md"]
    code, ans, _ = query(fresh, "search", "zeppelin", "--mode", "bm25")
    assert code == 0 and paths(ans["results"]) == ["Gamma.md"]
    code, ans, _ = query(fresh, "links", "Hub")
    assert [lk["path"] for lk in ans["links"]] == ["Alpha.md", "Beta.md", "Gamma.md"]


def test_deleted_note_never_appears(fresh: Path) -> None:
    git(fresh, "rm", "-q", "Beta.md")
    code, ans, _ = query(fresh, "search", "tomato seedlings", "--mode", "bm25")
    assert code == 1 and ans["results"] == []
    code, ans, _ = query(fresh, "backlinks", "Alpha")
    assert paths(ans["backlinks"]) == ["Hub.md"]
    code, ans, _ = query(fresh, "links", "Hub")
    beta = [lk for lk in ans["links"] if lk["raw"] == "[[Beta]]"]
    assert beta[0]["path"] is None and beta[0]["status"] == "unresolved"
    assert query(fresh, "read", "Beta")[0] == 2


def test_renamed_note_moves_its_backlinks(fresh: Path) -> None:
    git(fresh, "mv", "Alpha.md", "Folder/Alpha Prime.md")
    code, ans, _ = query(fresh, "search", "compost", "--mode", "bm25")
    assert code == 0 and paths(ans["results"]) == ["Folder/Alpha Prime.md"]
    code, ans, _ = query(fresh, "links", "Hub")
    # [[Alpha]] no longer resolves
    assert code == 0 and next(lk["path"] for lk in ans["links"]) is None
    code, ans, _ = query(fresh, "backlinks", "Hub")
    assert code == 0 and paths(ans["backlinks"]) == ["Café Notes.md", "Folder/Alpha Prime.md"]
    assert set(ans["index"]["stale_notes"]) == {"Alpha.md", "Folder/Alpha Prime.md"}


def test_removed_link_is_no_backlink(fresh: Path) -> None:
    write(fresh, {"Beta.md": "# Beta\n\nBeta grows tomato seedlings.\n"})  # not even staged
    code, ans, _ = query(fresh, "backlinks", "Alpha")
    assert code == 0 and paths(ans["backlinks"]) == ["Hub.md"]
    assert ans["index"]["stale_notes"] == ["Beta.md"]
    code, ans, _ = query(fresh, "explore", "Alpha", "--concise")
    assert code == 0 and ans["backlinks"] == ["Hub.md"]


def test_edits_between_queries_are_seen_and_touched_files_are_not_changes(fresh: Path
                                                                        ) -> None:
    code, ans, _ = query(fresh, "backlinks", "Alpha")
    assert code == 0 and ans["index"]["stale_notes"] == []
    write(fresh, {"Beta.md": "# Beta\n\nBeta grows tomato seedlings.\n"})  # link removed
    later = (fresh / "Hub.md").stat().st_mtime + 5
    os.utime(fresh / "Hub.md", (later, later))  # same content, new stat data
    code, ans, _ = query(fresh, "backlinks", "Alpha")
    assert code == 0 and paths(ans["backlinks"]) == ["Hub.md"]
    assert ans["index"]["stale_notes"] == ["Beta.md"]
    git(fresh, "add", "Beta.md")  # staged now: still the work tree's content
    code, ans, _ = query(fresh, "backlinks", "Alpha")
    assert paths(ans["backlinks"]) == ["Hub.md"] and ans["index"]["stale_notes"] == ["Beta.md"]
    # The query's `git status` refreshed git's stat data: Hub.md is clean for git again.
    assert git(fresh, "diff-files", "--name-only").strip() == ""


def test_committed_changes_count_too(fresh: Path) -> None:
    write(fresh, {"Beta.md": "# Beta\n\nNow about quasars.\n"})
    git(fresh, "commit", "-qam", "edit")
    code, ans, _ = query(fresh, "search", "quasars", "--mode", "bm25")
    assert paths(ans["results"]) == ["Beta.md"]
    code, ans, _ = query(fresh, "search", "tomato", "--mode", "bm25")
    assert code == 1


def test_names_with_spaces_unicode_and_hash(fresh: Path) -> None:
    code, ans, _ = query(fresh, "read", "C# Tips#Usage")
    assert code == 0 and ans["path"] == "C# Tips.md" and ans["anchor"] == "Usage"
    assert "LINQ" in ans["text"] and "Nothing" not in ans["text"]
    # `../C%23%20Tips.md` is no link to it: decodeURI keeps `%23` encoded, in Obsidian
    # and in kbase (docs/resolution.md, rule 11), and no spelling of a `#` reaches it.
    code, ans, _ = query(fresh, "backlinks", "C# Tips")
    assert code == 1 and paths(ans["backlinks"]) == []
    code, ans, _ = query(fresh, "backlinks", "café notes")
    assert paths(ans["backlinks"]) == ["Folder/My Space Note.md"]
    code, ans, _ = query(fresh, "read", "Folder/My Space Note.md")
    assert code == 0 and ans["title"] == "My Space Note"
    code, ans, _ = query(fresh, "search", "espresso", "--mode", "bm25")
    assert paths(ans["results"]) == ["Café Notes.md"]


def test_tampered_branch_is_refused_and_answer_rebuilt(make_repo: Callable[..., Path],
                                                       tmp_path: Path) -> None:
    src = make_repo(FILES)
    publish_index(src)
    idx = tmp_path / "tamper.idx"
    env_git = ["-c", "core.quotepath=false"]
    git(src, *env_git, "read-tree", f"--index-output={idx}", "kbase-index")
    notes = git(src, "cat-file", "blob", "kbase-index:notes.json")
    bad = tmp_path / "notes.json"
    bad.write_text(notes.replace("Alpha", "Alfa"), encoding="utf-8")
    sha = git(src, "hash-object", "-w", str(bad)).strip()
    env = {**os.environ, "GIT_INDEX_FILE": str(idx)}
    subprocess.run(["git", "update-index", "--cacheinfo", f"100644,{sha},notes.json"],
                   cwd=src, env=env, check=True)
    tree = subprocess.run(["git", "write-tree"], cwd=src, env=env, check=True,
                          capture_output=True, text=True).stdout.strip()
    commit = git(src, "commit-tree", tree, "-p", "kbase-index", "-m", "tamper").strip()
    git(src, "update-ref", "refs/heads/kbase-index", commit)
    cl = clone(src, tmp_path / "clone")
    code, ans, err = query(cl, "backlinks", "Alpha")
    assert code == 0 and paths(ans["backlinks"]) == ["Beta.md", "Hub.md"]
    assert "does not match the manifest" in err and "built for this query" in err
    assert ans["index"]["origin"] == "temporary"
    assert not list((cl / ".git" / "kbase" / "index").glob("[0-9a-f]*"))


def test_no_index_anywhere_builds_in_memory(make_repo: Callable[..., Path]) -> None:
    src = make_repo(FILES)
    code, ans, err = query(src, "search", "compost", "--mode", "bm25")
    assert code == 0 and paths(ans["results"]) == ["Alpha.md"]
    assert "no committed index found" in err
    assert "git fetch origin +kbase-index:refs/remotes/origin/kbase-index" in err


def test_index_option_and_newer_format(fresh: Path, tmp_path: Path) -> None:
    code, ans, _ = query(fresh, "status")
    folder = Path(ans["source"]["folder"])
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    code, ans, _ = query(fresh, "status", "--index", str(copy))
    assert code == 0 and ans["source"]["origin"] == "dir"
    m = json.loads((copy / "manifest.json").read_text())
    m["format_version"] = 99
    (copy / "manifest.json").write_text(json.dumps(m))
    code, _, err = query(fresh, "status", "--index", str(copy))
    assert code == 2 and "upgrade" in err


def test_hybrid_with_model_and_fresh_vectors(make_repo: Callable[..., Path],
                                             tmp_path: Path) -> None:
    model = make_tiny_model(tmp_path / "model")
    src = make_repo({
        "Soil.md": "# Soil\n\ngarden compost soil water\n",
        "Sql.md": "# Sql\n\ndatabase query table sql postgres\n",
        "Py.md": "# Py\n\npython generator decorator yield\n"})
    publish_index(src, "--model", str(model))
    cl = clone(src, tmp_path / "clone")
    # No shared word: the vectors rank Soil first, but cosine alone is no evidence (the
    # tiny model's random questions come as close): shown first, and no answer.
    code, ans, err = query(cl, "search", "tomato harvest", "--model", str(model))
    assert code == 1, err
    near = ans["results"]
    assert near[0]["path"] == "Soil.md" and ans["notices"] == []
    assert near[0]["evidence"]["cosine"] > near[1]["evidence"]["cosine"]
    assert near[0]["confidence"] == "none" and ans["verdict"]["near_topic"] == "Soil.md"
    write(cl, {"Beans.md": "# Beans\n\nbean flower seed plant\n"})
    git(cl, "add", "Beans.md")
    code, ans, _ = query(cl, "search", "seed flower", "--mode", "semantic", "--model",
                         str(model), "--limit", "2")
    assert paths(ans["results"])[0] == "Beans.md"
    code, ans, _ = query(cl, "explore", "Soil", "--concise")
    assert code == 0 and isinstance(ans["similar"], list)


def test_semantic_search_on_an_index_with_fewer_dimensions(make_repo: Callable[..., Path],
                                                           tmp_path: Path) -> None:
    # `embeddings.dim` keeps the first N dimensions; queries must be truncated the same way.
    model = make_tiny_model(tmp_path / "model")
    src = make_repo({
        ".kbase.yml": "embeddings:\n  dim: 8\n",
        "Soil.md": "# Soil\n\ngarden compost soil water\n",
        "Sql.md": "# Sql\n\ndatabase query table sql postgres\n"})
    publish_index(src, "--model", str(model))
    cl = clone(src, tmp_path / "clone")
    code, ans, err = query(cl, "search", "tomato harvest", "--mode", "semantic", "--model",
                           str(model), "--limit", "1")
    assert code == 1, err
    assert ans["results"][0]["path"] == "Soil.md"


def test_index_of_this_exact_commit_is_used_without_listing_the_vault(fresh: Path) -> None:
    """When HEAD is the index's source commit, nothing differs from it (staged or not) and
    the settings are the same, the index's notes are the vault's: not listed, not compared.
    Anything else takes the full comparison."""
    from kbase_ci.query.discovery import open_source
    from kbase_ci.query.freshness import assess
    from kbase_ci.vault.notefiles import Vault

    def assessed() -> tuple[tuple[str, ...], bool]:
        vault = Vault(fresh)
        source = open_source(vault, None)
        got = assess(vault, source.reader)
        listed = vault._files is not None
        assert sorted(n.path for n in vault.notes) == sorted(FILES)
        return got.stale, listed

    assert assessed() == ((), False)
    write(fresh, {"Beta.md": FILES["Beta.md"] + "more\n"})  # unstaged
    assert assessed() == (("Beta.md",), True)
    git(fresh, "add", "Beta.md")  # staged only: the work tree equals the index
    assert assessed() == (("Beta.md",), True)
    git(fresh, "commit", "-q", "-m", "edit")  # committed: HEAD is not the source commit
    assert assessed() == (("Beta.md",), True)
    git(fresh, "reset", "-q", "--hard", "HEAD~1")
    assert assessed() == ((), False)
    write(fresh, {".kbase.yml": "vault:\n  exclude: ['Folder/**']\n"})  # other settings
    code, ans, _ = query(fresh, "backlinks", "Café Notes")
    assert code == 1 and ans["backlinks"] == [], ans  # exit 1: no results
    assert ans["index"]["stale_notes"] == ["Folder/My Space Note.md"]


def test_stemmer_setting_is_built_recorded_and_followed_by_queries(
        make_repo: Callable[..., Path]) -> None:
    files: dict[str, str | bytes] = {
        "Plural.md": "# Plural\n\nRecurring tasks are listed here.\n",
        "Single.md": "# Single\n\nA task with a due date.\n"}
    src = make_repo(files)
    code, ans, _ = query(src, "search", "tasks", "--mode", "bm25", "--index", ".idx")
    assert code == 2  # no such index folder yet: a usage error
    assert run_kbase("index", "--out", ".idx", cwd=src).returncode == 0
    code, ans, _ = query(src, "search", "tasks", "--mode", "bm25", "--index", ".idx")
    assert sorted(paths(ans["results"])) == ["Plural.md", "Single.md"]  # stemmed: task
    write(src, {".kbase.yml": "index:\n  stemmer: none\n"})
    git(src, "add", ".kbase.yml")
    git(src, "commit", "-q", "-m", "no stemming")
    built = run_kbase("index", "--out", ".idx", cwd=src)
    assert built.returncode == 0, built.stderr
    manifest = json.loads((src / ".idx" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["tokenizer"]["stemmer"] == "none"
    assert " 0 reused)" in built.stdout + built.stderr  # other tokens: all rebuilt
    code, ans, _ = query(src, "search", "tasks", "--mode", "bm25", "--index", ".idx")
    assert code == 0 and paths(ans["results"]) == ["Plural.md"]  # only the word as written
    write(src, {".kbase.yml": "index:\n  stemmer: german\n"})
    bad = run_kbase("index", "--out", ".idx", cwd=src)
    assert bad.returncode == 2 and ".kbase.yml:2:12" in bad.stderr, bad.stderr
    assert "english | none" in bad.stderr


def test_an_index_of_a_commit_answers_for_a_folder_outside_git(fresh: Path,
                                                              tmp_path: Path) -> None:
    """The same index queried for a plain folder (no git: a directory walk) is compared
    note by note, never taken as the folder's own."""
    assert query(fresh, "backlinks", "Alpha")[0] == 0  # materialises the branch's index
    index = next((fresh / ".git" / "kbase" / "index").iterdir())
    plain = tmp_path / "plain"
    shutil.copytree(fresh, plain, ignore=shutil.ignore_patterns(".git"))
    code, ans, err = query(plain, "backlinks", "Alpha", "--index", str(index))
    assert code == 0, err
    assert paths(ans["backlinks"]) == ["Beta.md", "Hub.md"]


ATTACHED: dict[str, str | bytes] = {
    "Gallery.md": "# Gallery\n\n![[x.png]] and ![](images/y.png)\n",
    "Plain.md": "# Plain\n\nNo pictures. See [[Gallery]].\n",
    "images/y.png": b"PNG-y",
}


def test_an_untracked_file_no_link_names_costs_no_link_table(fresh: Path) -> None:
    """Issue 32: an untracked file beside a fresh index (a scratch file, a `.gitignore`)
    can change an answer only when some link names it; when none does, the link numbers
    are not read, and numpy (~70 ms of every query's start) is never imported."""
    write(fresh, {"scratch.txt": "notes to self\n"})
    env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV}
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "kbase_ci", "backlinks",
                           "Alpha"], cwd=fresh, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert paths(json.loads(proc.stdout)["backlinks"]) == ["Beta.md", "Hub.md"]
    imported = {ln.rsplit("|", 1)[-1].strip() for ln in proc.stderr.splitlines()
                if ln.startswith("import time:")}
    assert "kbase_ci.query.freshness" in imported and "numpy" not in imported


def _attachment_gaps(cl: Path) -> list[str]:
    code, ans, err = query(cl, "gaps", "--kind", "attachment")
    assert code in (0, 1), err
    return sorted(a["target"] for a in ans["attachments"])


def _gallery_links(cl: Path) -> dict[str, str]:
    code, ans, err = query(cl, "links", "Gallery")
    assert code in (0, 1), err
    return {lk["raw"]: lk["status"] for lk in ans["links"]}


@pytest.mark.parametrize("how", ["untracked", "staged", "committed"])
def test_an_attachment_added_or_deleted_after_the_index_reaches_the_queries(
        make_repo: Callable[..., Path], tmp_path: Path, how: str) -> None:
    src = make_repo(ATTACHED)
    publish_index(src)
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(src), str(bare))
    cl = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--single-branch", "--branch", "main", str(bare), str(cl))
    assert _attachment_gaps(cl) == ["x.png"]
    assert _gallery_links(cl) == {"![[x.png]]": "unresolved",
                                  "![](images/y.png)": "ok"}
    write(cl, {"images/x.png": b"PNG"})  # untracked; nothing else moved (the fast path)
    assert _attachment_gaps(cl) == []
    (cl / "images" / "y.png").unlink()
    if how != "untracked":
        git(cl, "add", "-A")
    if how == "committed":
        git(cl, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", "pics")
    assert _attachment_gaps(cl) == ["images/y.png"]
    assert _gallery_links(cl) == {"![[x.png]]": "ok", "![](images/y.png)": "unresolved"}
    code, ans, _ = query(cl, "status")
    assert code == 0 and ans["freshness"]["relinked"] == ["Gallery.md"]  # Plain.md is not re-read
    assert ans["freshness"]["changed"] == [] and ans["index"]["overlaid"] is True


def test_many_changed_notes_never_break_a_budget(fresh: Path) -> None:
    # 150 edits since the index: the list of them alone is over the budget, and it was
    # kept whole (a kept key), so every budgeted answer failed with exit 2.
    write(fresh, {f"Logs/Sprint log number {i:03d} with a long descriptive name.md":
                  f"# Log {i}\n\nCompost heaps and tomato seedlings, see [[Hub]].\n"
                  for i in range(150)})
    for args, budget in ((("search", "compost", "--concise", "--mode", "bm25"), 1500),
                         (("status",), 2000), (("backlinks", "Hub"), 1500),
                         (("context", "Hub", "--concise"), 1500)):
        proc = run_kbase(*args, "--max-tokens", str(budget), cwd=fresh)
        assert proc.returncode == 0, (args, proc.stderr)
        assert len(proc.stdout.rstrip("\n")) / 4 <= budget, args
        ans = json.loads(proc.stdout)
        index = ans["index"]
        assert index["stale_count"] == 150 and len(index["stale_notes"]) < 150, args
        assert ans["truncated"]["lists"]["index.stale_notes"] == \
            f"{len(index['stale_notes'])}/150", args
        assert index["stale_notes"] == sorted(index["stale_notes"])
    _, ans, _ = query(fresh, "search", "compost", "--concise", "--mode", "bm25",
                      "--max-tokens", "1500")
    assert ans["results"]
    assert ans["index"]["stale_notes"][0].startswith("Logs/Sprint log number 000")
    proc = run_kbase("backlinks", "Hub", "--format", "text", cwd=fresh)
    assert "150 note(s) changed since" in proc.stdout


def test_explore_follows_a_note_moved_since_the_index(make_repo: Callable[..., Path],
                                                      tmp_path: Path) -> None:
    """`similar` comes from the index; a note `git mv`ed since is shown at its new path,
    not dropped (same blob, one old path, one new path)."""
    model = make_tiny_model(tmp_path / "model")
    src = make_repo({
        "Tomato.md": "# Tomato\n\ntomato seed soil water compost plant\n",
        "Bean.md": "# Bean\n\nbean seed soil water flower plant\n",
        "Sql.md": "# Sql\n\nsql table query index join schema\n",
    })
    publish_index(src, "--model", str(model))
    cl = clone(src, tmp_path / "clone")
    code, ans, _ = query(cl, "explore", "Tomato")
    assert code == 0 and paths(ans["similar"])[0] == "Bean.md"
    (cl / "garden").mkdir()
    git(cl, "mv", "Bean.md", "garden/Bean.md")
    code, ans, _ = query(cl, "explore", "Tomato")
    assert code == 0 and paths(ans["similar"])[0] == "garden/Bean.md"


def test_the_index_folder_is_no_attachment_when_git_does_not_ignore_it(
        make_repo: Callable[..., Path]) -> None:
    """Issue 32: with `.kbase/` not in `.gitignore`, its files are untracked; counted as
    attachments, every link naming one (`[[notes.json]]`) made its note re-read on every
    query, and hundreds of index files made a scan over all links per file name."""
    repo = make_repo({**FILES, "Data.md": "# Data\n\nThe export is [[notes.json]].\n"})
    proc = run_kbase("index", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert (repo / ".kbase" / "notes.json").is_file()
    assert "?? .kbase/" in git(repo, "status", "--porcelain")
    code, ans, err = query(repo, "status")
    assert code == 0, err
    assert ans["freshness"]["relinked"] == [] and ans["index"]["overlaid"] is False
    write(repo, {"notes.json": "{}\n"})  # a real attachment of that name still counts
    code, ans, err = query(repo, "status")
    assert code == 0, err
    assert ans["freshness"]["relinked"] == ["Data.md"]


def test_a_link_query_imports_no_search_scope_or_tracing_code(fresh: Path) -> None:
    """Issue 32: `backlinks` from a fresh index opens no shard, no scope and no trace, so
    their modules (and `logging`, `shutil`) stay unloaded: query start-up had grown past
    commit 3360284's by ~100 ms of CPU, mostly imports."""
    env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV}
    env.pop("KBASE_LOG", None)
    first = run_kbase("backlinks", "Alpha", cwd=fresh)  # unpacks and checks the branch
    assert first.returncode == 0, first.stderr
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "kbase_ci", "backlinks",
                           "Alpha"], cwd=fresh, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    imported = {ln.rsplit("|", 1)[-1].strip() for ln in proc.stderr.splitlines()
                if ln.startswith("import time:")}
    assert "kbase_ci.query.view" in imported
    unwanted = {"logging", "shutil", "kbase_ci.index.bm25", "kbase_ci.index.vectors",
                "kbase_ci.index.scopes", "kbase_ci.index.modelchoice",
                "kbase_ci.scope.select", "kbase_ci.parse.conceptmentions", "kbase_ci.index.shards"}
    assert not unwanted & imported, sorted(unwanted & imported)
