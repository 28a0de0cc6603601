"""The hook's fast paths give the same answers as the slow ones, and never stale ones.

A warm hook reads tag spellings, aliases and summaries from narrow cache tables and
point lookups instead of every note's record. Every row is keyed by blob id and path,
so after a rename, an alias edit, a tag spelling change or a branch switch the answer
must follow the vault as it is now, not the rows an earlier run left in the cache.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from kbase_ci.git.diff import staged_changes
from kbase_ci.git.listing import ls_files_rows
from kbase_ci.git.repo import repo_dirs
from kbase_ci.parsed import ParsedNote, Tag
from kbase_ci.vault.cache import ParseCache, cache_key
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.notestore import LazySummaries, NoteStore, NoteSummary
from kbase_ci.vault.scanner import open_store
from tests.conftest import git, run_kbase, write

Repo = Callable[..., Path]


def _codes(stdout: str) -> list[tuple[str, str]]:
    """(path, code) of each `path:line:col: CODE message` line."""
    out = []
    for line in stdout.splitlines():
        head, _, rest = line.partition(": ")
        if rest[:2] == "KB":
            out.append((head.split(":", 1)[0], rest.split(" ", 1)[0]))
    return out


# -- tag spellings ------------------------------------------------------------------

def test_tag_spelling_change_is_not_answered_from_old_rows(make_repo: Repo) -> None:
    root = make_repo({"a.md": "#Rust\n", "b.md": "#rust\n", "c.md": "#rust\n"})
    warm = run_kbase("check", "--all", "--select", "tags", cwd=root)
    assert _codes(warm.stdout) == [("a.md", "KB205")], warm.stdout + warm.stderr
    # The old rows of b.md and c.md (#rust) stay in the cache; they must not count.
    write(root, {"b.md": "#Go\n", "c.md": "#Go\n"})
    git(root, "add", "-A")
    hook = run_kbase("check", "--staged", "--select", "tags", "a.md", "b.md", "c.md", cwd=root)
    assert (hook.returncode, hook.stdout) == (0, ""), hook.stdout + hook.stderr
    write(root, {"d.md": "#rust\n"})
    git(root, "add", "d.md")
    # a.md's KB205 is older than this commit: --all-findings shows it (the counts are
    # what this test is about).
    hook = run_kbase("check", "--staged", "--all-findings", "--select", "tags", "a.md",
                     "d.md", cwd=root)
    assert _codes(hook.stdout) == [("a.md", "KB205")], hook.stdout + hook.stderr
    assert "#rust (1 note)" in hook.stdout, hook.stdout


def test_branch_switch_counts_the_checked_out_notes(make_repo: Repo) -> None:
    root = make_repo({"a.md": "#Rust\n", "b.md": "#rust\n", "c.md": "#rust\n"})
    git(root, "checkout", "-q", "-b", "other")
    write(root, {"b.md": "#Rust\n", "c.md": "#Rust\n", "d.md": "#rust\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "other spelling")
    on_other = run_kbase("check", "--all", "--select", "tags", cwd=root)
    assert _codes(on_other.stdout) == [("d.md", "KB205")], on_other.stdout
    git(root, "checkout", "-q", "main")
    on_main = run_kbase("check", "--all", "--select", "tags", cwd=root)
    assert _codes(on_main.stdout) == [("a.md", "KB205")], on_main.stdout
    git(root, "checkout", "-q", "other")
    again = run_kbase("check", "--all", "--select", "tags", cwd=root)
    assert again.stdout == on_other.stdout


def test_store_counts_match_a_count_over_every_record(make_repo: Repo) -> None:
    root = make_repo({"a.md": "#Rust #x\n", "b.md": "---\ntags: [rust, X]\n---\n#rust\n",
                      "c.md": "#RUST\n", "d.md": "#d, one spelling only\n"})
    vault = Vault(root)
    open_store(vault)  # fill the cache
    write(root, {"e.md": "#Rust\n"})  # a miss in the next store: parsed, not cached yet
    git(root, "add", "e.md")
    vault = Vault(root, staged=True)
    store, stats = open_store(vault)
    assert (stats.cached, stats.parsed) == (4, 1)
    wanted = {"rust", "x", "d", "absent"}
    slow = NoteStore.from_notes(store.all()).tag_variants(wanted)
    assert store.tag_variants(wanted) == slow
    assert slow == {"rust": Counter({"Rust": 2, "rust": 1, "RUST": 1}),
                    "x": Counter({"x": 1, "X": 1})}


# -- aliases and renames --------------------------------------------------------------

def test_alias_edit_follows_the_staged_note(make_repo: Repo) -> None:
    # A link to an alias is KB105 ("names an alias of a.md"); to no name at all, KB101.
    root = make_repo({"a.md": "---\naliases: [Alpha]\n---\n# A\n", "b.md": "See [[Alpha]].\n"})
    warm = run_kbase("check", "--all", cwd=root)
    assert _codes(warm.stdout) == [("b.md", "KB105")], warm.stdout
    write(root, {"c.md": "Also [[Alpha]].\n"})
    git(root, "add", "c.md")
    hook = run_kbase("check", "--staged", "c.md", cwd=root)  # the alias comes from the cache
    assert _codes(hook.stdout) == [("c.md", "KB105")], hook.stdout + hook.stderr
    write(root, {"a.md": "---\naliases: [Alef]\n---\n# A\n", "d.md": "And [[Alef]].\n"})
    git(root, "add", "-A")
    hook = run_kbase("check", "--staged", "--select", "links", "c.md", "d.md", cwd=root)
    assert _codes(hook.stdout) == [("c.md", "KB101"), ("d.md", "KB105")], hook.stdout


def test_rename_after_a_warm_run_reports_the_untouched_note(make_repo: Repo) -> None:
    root = make_repo({"notes/Old.md": "# Old\n", "b.md": "See [[Old]].\n"})
    assert run_kbase("check", "--all", cwd=root).returncode == 0
    git(root, "mv", "notes/Old.md", "notes/New.md")
    hook = run_kbase("check", "--staged", "notes/New.md", cwd=root)
    assert hook.returncode == 1
    assert "b.md:1:5: KB101" in hook.stdout and "did you mean [[New]]?" in hook.stdout, \
        hook.stdout


# -- cache layout ---------------------------------------------------------------------

def _tagged(path: str, *names: str) -> ParsedNote:
    return ParsedNote(path=path, title=Path(path).stem, aliases=("Al",) if "al" in path else (),
                      tags=tuple(Tag(n, 1, 1) for n in names))


def test_tag_uses_only_answers_for_live_keys(tmp_path: Path) -> None:
    c = ParseCache(tmp_path)
    old, new = cache_key("1", "a.md", "s"), cache_key("2", "a.md", "s")
    c.put_many([(old, _tagged("a.md", "Rust")), (new, _tagged("a.md", "rust", "Go"))])
    assert c.tag_uses({"rust"}, {new}) == [("rust", "rust", new)]
    assert sorted(c.tag_uses({"rust", "go"}, {old, new})) == [
        ("go", "Go", new), ("rust", "Rust", old), ("rust", "rust", new)]
    assert c.tag_uses(set(), {new}) == [] and c.tag_uses({"rust"}, set()) == []


def test_summaries_by_point_lookup_and_by_scan_agree(tmp_path: Path) -> None:
    c = ParseCache(tmp_path)
    rows = [(cache_key(str(i), f"n{i}{'al' if i % 3 == 0 else ''}.md", "s"),
             _tagged(f"n{i}{'al' if i % 3 == 0 else ''}.md", f"T{i}", "t")) for i in range(600)]
    c.put_many(rows)
    keys = [k for k, _ in rows]
    every = c.summaries(keys)  # more keys than point lookups: one scan
    few = c.summaries(keys[:5])
    assert len(every) == 600 and few == {k: every[k] for k in keys[:5]}
    assert every[keys[0]].aliases == ("Al",) and every[keys[1]].aliases == ()
    assert c.aliases(keys[:4]) == {keys[0]: ("Al",), keys[3]: ("Al",)}


def test_an_older_cache_layout_is_replaced(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "parse-cache.sqlite")
    db.execute("CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('layout', '3:old')")
    db.execute("CREATE TABLE notes (key TEXT PRIMARY KEY, data TEXT NOT NULL, aliases TEXT"
               " NOT NULL, tags TEXT NOT NULL, targets TEXT NOT NULL, type TEXT NOT NULL)")
    db.execute("INSERT INTO notes VALUES ('k', '[]', '', '', '', '')")
    db.commit()
    db.close()
    c = ParseCache(tmp_path)
    assert c.hits(["k"]) == set()
    k = cache_key("1", "x.md", "s")
    c.put_many([(k, _tagged("x.md", "Go"))])
    assert c.summaries([k])[k].tags == ("Go",)
    assert c.tag_uses({"go"}, {k}) == [("go", "Go", k)]


def test_lazy_summaries_point_lookups_then_one_scan() -> None:
    calls: list[str] = []
    rows = {f"{i}.md": NoteSummary(tags=(str(i),)) for i in range(100)}

    def fetch() -> dict[str, NoteSummary]:
        calls.append("all")
        return dict(rows)

    def fetch_some(paths: Sequence[str]) -> dict[str, NoteSummary]:
        calls.append("some")
        return {p: rows[p] for p in paths}

    lazy = LazySummaries(rows, fetch, {"new.md": NoteSummary(tags=("n",))}, fetch_some)
    assert lazy["3.md"].tags == ("3",) and lazy["new.md"].tags == ("n",)
    assert calls == ["some"]
    for i in range(100):
        assert lazy[f"{i}.md"] == rows[f"{i}.md"]
    assert calls.count("all") == 1 and calls.count("some") == LazySummaries._POINT_LIMIT


# -- git plumbing ---------------------------------------------------------------------

def test_ls_files_rows_reads_odd_names_and_unmerged_paths(make_repo: Repo) -> None:
    root = make_repo({"a b.md": "x\n", "tab\there.md": "t\n", "Ünï.md": "u\n", "c.md": "1\n"})
    git(root, "checkout", "-q", "-b", "side")
    write(root, {"c.md": "2\n"})
    git(root, "commit", "-q", "-am", "side")
    git(root, "checkout", "-q", "main")
    write(root, {"c.md": "3\n"})
    git(root, "commit", "-q", "-am", "main")
    git(root, "merge", "-q", "side", check=False)  # conflict: c.md has stages 1-3
    rows = ls_files_rows(root)
    assert [r[0] for r in rows] == ["a b.md", "c.md", "tab\there.md", "Ünï.md"]
    listed = git(root, "ls-files", "-s", "--", "a b.md").split()
    assert rows[0] == ("a b.md", listed[1], listed[0])
    assert all(len(sha) in (40, 64) and len(mode) == 6 for _, sha, mode in rows)


def test_repo_dirs_and_staged_changes_before_the_first_commit(make_repo: Repo,
                                                              tmp_path: Path) -> None:
    root = make_repo({"a.md": "# A\n", "sub/b.md": "# B\n"}, commit=False)
    dirs = repo_dirs(root / "sub")
    assert dirs is not None and dirs[0].resolve() == root.resolve()
    assert dirs[1].resolve() == (root / ".git").resolve()
    plain = tmp_path / "plain"
    plain.mkdir()
    assert repo_dirs(plain) is None
    assert sorted((c.kind, c.path) for c in staged_changes(root)) == [
        ("added", "a.md"), ("added", "sub/b.md")]
    hook = run_kbase("check", "--staged", "a.md", cwd=root)
    assert hook.returncode == 0, hook.stdout + hook.stderr


def test_parallel_cold_scan_stores_rows_from_the_workers(make_repo: Repo) -> None:
    files = {f"n{i}.md": f"---\naliases: [N{i}]\n---\n# N{i}\n#T{i % 3} [[n{(i + 1) % 9}]]\n"
             for i in range(9)}
    root = make_repo(files)
    vault = Vault(root)
    store, stats = open_store(vault, jobs=2)
    assert (stats.parsed, stats.jobs) == (9, 2)
    serial = NoteStore.from_notes(open_store(vault, jobs=1, use_cache=False)[0].all())
    assert store.all() == serial.all()
    assert [store.summary(p) for p in store.paths] == [serial.summary(p) for p in serial.paths]
    warm, stats = open_store(Vault(root))
    assert (stats.cached, stats.parsed) == (9, 0)
    assert warm.all() == serial.all() and warm.aliases() == serial.aliases()
    assert warm.tag_variants({"t0", "t1"}) == serial.tag_variants({"t0", "t1"})


# -- config memo ----------------------------------------------------------------------

CONFIG = """\
tags:
  allowed: [rust, "project/*"]
  case_duplicates: false
frontmatter:
  required:
    "notes/**": [status]
"""


def test_config_memo_gives_the_parsed_config_and_follows_edits(make_repo: Repo) -> None:
    from kbase_ci.state.memos import state_store
    from kbase_ci.vault.config import load_config

    root = make_repo({".kbase.yml": CONFIG, "notes/a.md": "#golang\n"})
    first = Vault(root).config  # parses the YAML and remembers it
    store = state_store(root / ".git" / "kbase")
    memos = list(store.all("config"))
    assert len(memos) == 1
    assert Vault(root).config == first == load_config(root)  # from the memo
    store.put("config", memos[0], "{not json")  # a damaged memo is re-made
    assert Vault(root).config == first
    write(root, {".kbase.yml": CONFIG.replace("rust,", "rust, golang,")})
    edited = Vault(root).config
    assert edited.tags.allowed == ("rust", "golang", "project/*") != first.tags.allowed
    assert edited.source == ".kbase.yml" and edited.digest == load_config(root).digest
    proc = run_kbase("check", "--all", "--select", "tags", cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    write(root, {".kbase.yml": CONFIG.replace("case_duplicates: false",
                                              "case_duplicates: maybe")})
    proc = run_kbase("check", "--all", cwd=root)  # never remembered: the located error
    assert proc.returncode == 2
    assert ".kbase.yml:3:20" in proc.stderr and "true or false" in proc.stderr, proc.stderr


def test_staged_diff_gives_the_head_blob_ids_ls_tree_gives(make_repo: Repo) -> None:
    from kbase_ci.git.diff import old_blob_shas

    long = "".join(f"line {i} of a note long enough for git to pair rewrites\n"
                   for i in range(40))
    root = make_repo({"a.md": "# A\n" + long, "b.md": "# B\n" + long.upper(),
                      "c.md": "# C\n", "d.md": "# D\n" + long, "e.md": "# E\n",
                      "sub/f.md": "# F\n" + long})
    (root / "a.md").rename(root / "tmp.md")  # a rename cycle: a -> b, b -> a
    (root / "b.md").rename(root / "a.md")
    (root / "tmp.md").rename(root / "b.md")
    write(root, {"c.md": "# C edited\n", "g.md": "# G new\n"})
    (root / "e.md").unlink()
    (root / "sub/f.md").rename(root / "sub/moved.md")
    git(root, "add", "-A")
    changes = staged_changes(root, break_rewrites=True)
    kinds = {(c.kind, c.path, c.old_path) for c in changes}
    assert ("renamed", "sub/moved.md", "sub/f.md") in kinds and ("deleted", "e.md", None) in kinds
    old_side = {c.old_path or c.path: c.old_sha for c in changes if c.kind != "added"}
    assert old_side and all(old_side.values())
    assert old_side == old_blob_shas(root, "HEAD", sorted(old_side))
    assert [c.old_sha for c in changes if c.kind == "added"] == [None]


# -- frontmatter memo -------------------------------------------------------------------

FRONTMATTER_CASES = [
    "---\ntitle: Plain\ntags: [a, b/c]\naliases: [One, Two]\n---\n# Body\n",
    "---\ncreated: 2024-01-05\nwhen: 2024-01-05 10:30:00\nn: 1.5\nbig: 12345678901234567890\n---\n",
    "---\nratio: .nan\nup: .inf\nempty:\nyes: no\n---\nx\n",
    "---\nkey: [unclosed\n---\nbody\n",
    "---\na: 1\na: 2\n---\n",
    "---\n- just\n- a list\n---\n",
    "---\nnested:\n  deep: {x: [1, {y: \"\\udcff\"}]}\nrelated: \"[[Other#Part]]\"\n---\n",
    "---\n---\nempty frontmatter\n",
]


def test_frontmatter_memo_gives_what_a_load_gives() -> None:
    from kbase_ci.parse.frontmatter import YamlMemo
    from kbase_ci.parse.parser import parse_note

    for text in FRONTMATTER_CASES:
        data = text.encode("utf-8", "surrogatepass")
        plain = parse_note("n.md", data)
        first = YamlMemo(lambda _digests: {})
        assert parse_note("n.md", data, yaml_memo=first) == plain, text
        # Answered from what the first one loaded: equal, and nothing is loaded again.
        again = YamlMemo(lambda digests, saved=dict(first.fresh): {
            d: saved[d] for d in digests if d in saved})
        assert parse_note("n.md", data, yaml_memo=again) == plain, text
        if first.fresh:
            assert again.fresh == {}, text
        # A damaged row is loaded again (and handed back to be overwritten).
        damaged = YamlMemo(lambda digests: {d: "{not json" for d in digests})
        assert parse_note("n.md", data, yaml_memo=damaged) == plain, text
        assert damaged.fresh == first.fresh, text


_RUAMEL_PROBE = """\
import sys
from kbase_ci.cli import main as cli
code = cli.main(["check", "--staged", "notes/a.md"])
print(code, "ruamel.yaml" in sys.modules)
"""


def test_hook_on_a_body_edit_skips_yaml_and_a_frontmatter_edit_loads_it(
        make_repo: Repo) -> None:
    import os
    import subprocess
    import sys

    from tests.conftest import GIT_ENV, REPO

    note = "---\ntags: [x]\naliases: [Alpha]\n---\n# A\nsee [[b]]\n"
    root = make_repo({"notes/a.md": note, "notes/b.md": "# B\n"})
    assert run_kbase("check", "--all", cwd=root).returncode == 0  # fills the cache

    def hook() -> str:
        git(root, "add", "-A")
        env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV}
        proc = subprocess.run([sys.executable, "-c", _RUAMEL_PROBE], cwd=root, env=env,
                              capture_output=True, text=True, timeout=120, check=False)
        return proc.stdout.strip().splitlines()[-1]

    write(root, {"notes/a.md": note + "more text, [[b]] again\n"})
    assert hook() == "0 False"  # the frontmatter is the committed one: remembered
    write(root, {"notes/a.md": note.replace("tags: [x]", "tags: [x")})
    assert hook() == "1 True"  # new YAML text: loaded, and its error reported


_PREFETCH_PROBE = """\
import sys
from kbase_ci.cli import main as cli
from kbase_ci.git import process as gitio
left = []
drop = gitio.drop_prefetched
gitio.drop_prefetched = lambda: left.append(drop()) or left[-1]
code = cli.main(["check", "--staged", *sys.argv[1:]])
print(code, left)
"""


def test_hook_uses_every_git_answer_it_started_ahead(make_repo: Repo) -> None:
    """`check --staged` starts the repository, staged-diff and listing processes before
    importing the check code; each must be the exact command asked later (else it runs
    twice and the head start is lost)."""
    import os
    import subprocess
    import sys

    from tests.conftest import GIT_ENV, REPO

    root = make_repo({"a.md": "# A\n[[b]]\n", "b.md": "# B\n", "c.txt": "x\n"})

    def probe(*args: str) -> str:
        env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV}
        proc = subprocess.run([sys.executable, "-c", _PREFETCH_PROBE, *args], cwd=root,
                              env=env, capture_output=True, text=True, timeout=120,
                              check=False)
        return proc.stdout.strip().splitlines()[-1]

    write(root, {"a.md": "# A\n[[b]] and [[missing]]\n"})
    git(root, "add", "a.md")
    assert probe("a.md") == "1 [0]"  # the broken link found, nothing started in vain
    git(root, "commit", "-q", "-m", "edit", "--no-verify")
    write(root, {"c.txt": "y\n"})
    git(root, "add", "c.txt")
    assert probe() == "0 [1]"  # no Markdown staged: exits before listing (one dropped)
