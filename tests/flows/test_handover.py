"""Handovers on real git repositories: the PR report, deletions in the same change, the
pre-commit check, `kbase new` + `kbase handover check`, and `kbase handover latest`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.checks.checkregistry import REGISTRY
from kbase_ci.handover.handovers import check_notes, pr_report
from kbase_ci.handover.latest import latest
from kbase_ci.query.payload import cost
from kbase_ci.vault.notefiles import Vault
from tests.conftest import FIXTURES, GIT_ENV, git, run_kbase, write

VAULT = FIXTURES / "handover" / "vault"
TODAY_FREE = "2025-04-01"


def handover(paths: list[str], *, date: str = "2025-03-20", track: str = "3",
             status: str = "complete", extra: str = "") -> str:
    listed = "\n".join(f"- `{p}` - changed" for p in paths)
    return (f"---\ntype: handover\ntrack: \"{track}\"\ndate: {date}\ncompletes: \"#43\"\n---\n"
            f"# Handover {date}\n\n## Status\n{status}\n\n## Changes Made\n{listed}\n\n"
            "## Build Verification\n- `pytest -q` - passed (12 tests)\n\n"
            "## Discovered Issues\nNone.\n\n## Key Decisions\n- Kept the old API.\n\n"
            f"## Next Steps\n- Wire it into the watcher.\n{extra}")


def commit(root: Path, message: str, when: str | None = None) -> None:
    env = {**os.environ, **GIT_ENV, "HOME": str(root)}
    if when is not None:
        env["GIT_COMMITTER_DATE"] = env["GIT_AUTHOR_DATE"] = when
    git(root, "add", "-A")
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=root, env=env, check=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(VAULT, root)
    git(root, "init", "-q", "-b", "main")
    commit(root, "base")
    return root


def test_pr_report_lists_untouched_and_unmentioned_files(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD").strip()
    write(repo, {"src/app/parser.py": "def parse() -> None: ...\n",
                 "src/app/extra.py": "X = 1\n",
                 # lexer.py is listed but this PR does not touch it; extra.py is the reverse
                 "handovers/2025-03-20-track-3b.md": handover(
                     ["src/app/parser.py", "src/app/lexer.py", "src/app/old.py"])})
    (repo / "tests" / "test_parser.py").unlink()
    write(repo, {"src/app/old.py": ""})  # never committed: listing it is a KB406 too
    (repo / "src/app/old.py").unlink()
    commit(repo, "pr")
    pr = pr_report(Vault(repo), base, "HEAD")
    assert [h.path for h in pr.handovers] == ["handovers/2025-03-20-track-3b.md"]
    assert [x.path for x in pr.not_in_diff] == ["src/app/lexer.py"]
    assert sorted(pr.changed) == ["src/app/extra.py", "src/app/parser.py",
                                  "tests/test_parser.py"]
    assert sorted(pr.unmentioned) == ["src/app/extra.py", "tests/test_parser.py"]
    assert [m.code for m in pr.missing] == ["KB413", "KB413"]
    h = pr.handovers[0]
    assert {(m.code, m.subject) for m in h.missing} == {("KB412", "src/app/lexer.py"),
                                                        ("KB406", "src/app/old.py")}
    assert h.score < 100 and pr.score < h.score
    data = pr.to_json()
    assert data["not_in_diff"] == [{"note": h.path, "path": "src/app/lexer.py", "line": 14}]
    assert data["unmentioned"] == sorted(pr.unmentioned)


def test_pr_report_deleted_file_may_be_listed_and_no_handover_scores_0(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "src/app/lexer.py").unlink()
    write(repo, {"handovers/h.md": handover(["src/app/lexer.py"])})
    commit(repo, "delete lexer")
    pr = pr_report(Vault(repo), base)
    assert pr.unmentioned == () and pr.handovers[0].missing == ()
    assert pr.score == 100
    mid = git(repo, "rev-parse", "HEAD").strip()
    write(repo, {"src/app/parser.py": "# no handover for this\n"})
    commit(repo, "no handover")
    bare = pr_report(Vault(repo), mid)
    assert bare.score == 0 and [m.code for m in bare.missing] == ["KB414", "KB413"]
    cli = run_kbase("handover", "check", "--base", mid, "--format", "json", cwd=repo)
    assert cli.returncode == 1 and json.loads(cli.stdout)["score"] == 0
    git(repo, "checkout", "-q", base)
    with pytest.raises(Exception, match="not at"):
        pr_report(Vault(repo), base, mid)


def test_deleted_in_the_same_commit_is_not_missing(repo: Path) -> None:
    (repo / "src/app/lexer.py").unlink()
    write(repo, {"handovers/h.md": handover(["src/app/lexer.py", "src/app/parser.py"])})
    commit(repo, "remove the lexer")
    (s,) = check_notes(Vault(repo), [str(repo / "handovers/h.md")]).notes
    assert s.missing == () and s.score == 100
    # a later commit that does not touch the handover does not change the verdict
    write(repo, {"README.md": "# readme\n"})
    commit(repo, "later")
    (s,) = check_notes(Vault(repo), [str(repo / "handovers/h.md")]).notes
    assert s.missing == ()
    # but a path nobody deleted is reported at its line and column
    write(repo, {"handovers/h.md": handover(["src/app/lexer.py", "src/app/nope.py"])})
    (s,) = check_notes(Vault(repo), [str(repo / "handovers/h.md")]).notes
    assert [(m.code, m.line, m.col, m.subject) for m in s.missing] == [
        ("KB406", 13, 4, "src/app/lexer.py"), ("KB406", 14, 4, "src/app/nope.py")]


def test_precommit_check_reads_the_staged_change(repo: Path) -> None:
    (repo / "src/app/lexer.py").unlink()
    write(repo, {"handovers/h.md": handover(["src/app/lexer.py"]),
                 "handovers/bad.md": "---\ntype: handover\n---\nDone. See the diff.\n"})
    git(repo, "add", "-A")
    proc = run_kbase("check", "--staged", "--select", "handover", "--format", "json",
                     "handovers/h.md", "handovers/bad.md", cwd=repo)
    assert proc.returncode == 1, proc.stderr
    found = json.loads(proc.stdout)["findings"]
    assert {f["path"] for f in found} == {"handovers/bad.md"}
    codes = sorted({f["code"] for f in found})
    assert codes == ["KB401", "KB402", "KB403"]
    assert all(f["check"] == "handover" for f in found)
    ok = run_kbase("check", "--staged", "--select", "handover", "handovers/h.md", cwd=repo)
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_hook_and_registry_entries() -> None:
    (check,) = [c for c in REGISTRY if c.name == "handover"]
    assert check.hook_id == "kbase-handover"
    assert sorted(check.codes) == [f"KB4{n:02d}" for n in range(1, 15)]
    hooks = (FIXTURES.parent / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    block = hooks.split("- id: kbase-handover\n", 1)[1].split("\n- id:", 1)[0]
    assert "entry: kbase check --staged --select handover\n" in block


def test_new_skeleton_then_check_names_every_unfilled_part(repo: Path) -> None:
    new = run_kbase("new", "handover", "--track", "7", "--date", TODAY_FREE, cwd=repo)
    assert new.returncode == 0, new.stderr
    rel = new.stdout.strip()
    assert rel == f"handovers/{TODAY_FREE}-handover-track-7.md"
    again = run_kbase("new", "handover", "--track", "7", "--date", TODAY_FREE, cwd=repo)
    assert again.returncode == 2 and "already exists" in again.stderr
    text = (repo / rel).read_text(encoding="utf-8")
    assert f"date: {TODAY_FREE}" in text and 'track: "7"' in text
    proc = run_kbase("handover", "check", rel, "--format", "json", cwd=repo)
    assert proc.returncode == 1, proc.stderr
    (note,) = json.loads(proc.stdout)["notes"]
    assert note["passed"] is False and note["score"] <= 15
    got = {(m["code"], m["rule"]) for m in note["missing"]}
    assert got == {("KB403", "field completes")} | {
        ("KB402", f"section {s}") for s in ("Status", "Changes Made", "Build Verification",
                                            "Discovered Issues", "Key Decisions",
                                            "Next Steps")}
    text_out = run_kbase("handover", "check", rel, cwd=repo)
    assert f"{rel}:9:1: KB402 section `Status` is empty" in text_out.stdout


@pytest.mark.parametrize(("args", "path"), [
    (["question", "--title", "How big may the cache grow?"],
     f"questions/{TODAY_FREE}-how-big-may-the-cache-grow.md"),
    (["discovery"], f"discoveries/{TODAY_FREE}-discovery.md"),
    (["decision", "--title", "Use SQLite"], f"decisions/{TODAY_FREE}-use-sqlite.md"),
    (["answer"], f"answers/{TODAY_FREE}-answer.md"),
])
def test_new_other_types(args: list[str], path: str, make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.md": "# A\n"})
    proc = run_kbase("new", *args, "--date", TODAY_FREE, cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == path
    check = run_kbase("handover", "check", path, "--format", "json", cwd=root)
    (note,) = json.loads(check.stdout)["notes"]
    assert note["type"] == args[0] and note["score"] < 50


def test_new_never_writes_into_git_folder(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.md": "x\n", ".kbase.yml": "handover:\n  folder: .git/hooks\n"})
    proc = run_kbase("new", "handover", "--date", TODAY_FREE, cwd=root)
    assert proc.returncode == 2 and "inside a .git folder" in proc.stderr
    assert not list((root / ".git" / "hooks").glob("*.md"))


def test_new_unknown_type_is_a_usage_error(make_repo: Callable[..., Path]) -> None:
    proc = run_kbase("new", "memo", cwd=make_repo({"a.md": "x\n"}))
    assert proc.returncode == 2 and "unknown note type `memo`" in proc.stderr


def test_latest_by_frontmatter_date_then_commit_date(repo: Path) -> None:
    blockers = "\n## Blockers\n- API keys from ops (#57)\n"
    steps = "- [x] Merged the lexer.\n- Wire it into the watcher.\n"
    write(repo, {
        "handovers/a-old.md": handover(["src/app/parser.py"], date="2025-03-15"),
        # same date: the later commit wins, whatever the file names say
        "handovers/z-first.md": handover(["src/app/parser.py"], date="2025-03-20"),
    })
    commit(repo, "first", when="2025-03-20T10:00:00+00:00")
    write(repo, {"handovers/b-second.md": handover(
        ["src/app/lexer.py"], date="2025-03-20", status="partial", extra=blockers)
        .replace("- Wire it into the watcher.\n", steps)})
    commit(repo, "second", when="2025-03-20T18:00:00+00:00")
    write(repo, {"handovers/t9.md": handover(["src/app/lexer.py"], date="2025-04-01",
                                               track="9")})
    commit(repo, "other track", when="2025-04-01T09:00:00+00:00")
    got = latest(Vault(repo), "3")
    assert got is not None and got.note.path == "handovers/b-second.md"
    assert got.next_steps == ("Wire it into the watcher.",)
    assert got.blockers == ("API keys from ops (#57)",)
    assert [q.path for q in got.questions] == ["questions/cache-eviction.md"]
    newest = latest(Vault(repo))
    assert newest is not None and newest.note.path == "handovers/t9.md"
    assert newest.questions == ()
    proc = run_kbase("handover", "latest", "--track", "3", "--format", "json", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["handover"]["path"] == "handovers/b-second.md"
    assert data["handover"]["status"] == "partial" and data["handover"]["date"] == "2025-03-20"
    assert data["unanswered_questions"][0]["urgency"] == "medium"
    assert "\n" not in proc.stdout.rstrip("\n")  # compact when piped, as query commands
    pretty = run_kbase("handover", "latest", "--track", "3", "--format", "json", "--pretty",
                       cwd=repo)
    assert pretty.stdout.startswith("{\n  ") and json.loads(pretty.stdout) == data
    whole = cost(proc.stdout.rstrip("\n"))
    small = run_kbase("handover", "latest", "--track", "3", "--format", "json",
                      "--max-tokens", str(whole - 10), cwd=repo)
    # Its lists hold one item each and no list is emptied: trimmed, the answer would cost
    # more than whole (the `truncated` record), so a budget under it is refused, naming
    # what it needs; at its cost it is answered whole.
    assert small.returncode == 2 and "raise it" in small.stderr, small.stderr
    enough = run_kbase("handover", "latest", "--track", "3", "--format", "json",
                       "--max-tokens", str(whole), cwd=repo)
    assert enough.returncode == 0 and json.loads(enough.stdout) == data, enough.stderr
    # the text form keeps to a budget too, as every query's (issue 39: none unasked)
    tight = run_kbase("handover", "latest", "--max-tokens", "150", cwd=repo)
    assert tight.returncode == 0 and cost(tight.stdout) <= 150, tight.stderr
    text = run_kbase("handover", "latest", "--track", "3", cwd=repo).stdout
    assert "Blockers:\n  - API keys from ops (#57)\n" in text
    none = run_kbase("handover", "latest", "--track", "42", cwd=repo)
    assert none.returncode == 1 and none.stdout.startswith("no handover for track 42: ")


def test_open_questions_and_orphan_answers(repo: Path) -> None:
    write(repo, {"answers/lost.md": "---\ntype: answer\nanswers: \"[[questions/gone]]\"\n---\n"
                                    "# A\n\n## Decision\nYes.\n\n## Rationale\nBecause.\n",
                 "handovers/h.md": handover(["src/app/parser.py"],
                                            extra="- Then settle [[cache-eviction]].\n")})
    commit(repo, "more")
    report = check_notes(Vault(repo))
    assert [q.path for q in report.open_questions] == ["questions/cache-eviction.md"]
    assert [a.path for a in report.orphan_answers] == ["answers/lost.md"]
    data = report.to_json()
    assert data["orphan_answers"][0]["missing"][0]["code"] == "KB409"
    assert "handovers/track-3-done.md" in {n.path for n in report.failed}
    # a complete handover that links an open question gets a warning in `kbase check`
    proc = run_kbase("check", "--select", "KB408,KB409", "--format", "json", cwd=repo)
    found = {(f["path"], f["code"], f["severity"]) for f in json.loads(proc.stdout)["findings"]}
    assert found == {("handovers/h.md", "KB408", "warning"),
                     ("answers/lost.md", "KB409", "error")}


def test_untracked_handovers_count_until_the_setting_says_not(repo: Path) -> None:
    write(repo, {"handovers/zz-untracked.md": handover(["src/app/parser.py"],
                                                        date="2031-01-01", track="5")})
    assert "zz-untracked" in git(repo, "status", "--porcelain", "--untracked-files=all")
    proc = run_kbase("handover", "check", "--format", "json", cwd=repo)
    assert "handovers/zz-untracked.md" in [n["path"] for n in json.loads(proc.stdout)["notes"]]
    proc = run_kbase("handover", "latest", "--format", "json", cwd=repo)
    assert json.loads(proc.stdout)["handover"]["path"] == "handovers/zz-untracked.md"
    write(repo, {".kbase.yml": "vault:\n  untracked: false\n"})
    proc = run_kbase("handover", "latest", "--format", "json", cwd=repo)
    assert json.loads(proc.stdout)["handover"]["path"] != "handovers/zz-untracked.md"


def test_a_bare_bullet_path_with_spaces_is_one_path_in_the_pr_report(repo: Path) -> None:
    """Issue 29: `- Ideas/New idea.md` was read as `Ideas/New` (a false KB406), and the
    file it names counted as mentioned by no handover (a false KB413)."""
    base = git(repo, "rev-parse", "HEAD").strip()
    text = handover([]).replace("## Changes Made\n",
                                "## Changes Made\n- Ideas/New idea.md - the idea itself\n")
    write(repo, {"Ideas/New idea.md": "# New idea\n", "handovers/h.md": text})
    commit(repo, "an idea")
    pr = pr_report(Vault(repo), base, "HEAD")
    assert [m.code for m in pr.missing] == []
    notes = {n.path: [m.code for m in n.missing] for n in pr.handovers}
    assert "KB406" not in notes["handovers/h.md"]


def test_paths_with_spaces_are_not_split(repo: Path) -> None:
    """`docs/My Note.md` in a code span or a `<...>` link is one path (no false KB406);
    a path with spaces that is really missing is still reported whole."""
    write(repo, {"docs/My Note.md": "# My Note\n", "docs/Road Map.md": "# Road Map\n"})
    commit(repo, "notes with spaces")
    text = handover(["docs/My Note.md"]).replace(
        "## Build Verification", "- [the plan](<docs/Road Map.md>) - updated\n"
        "- `docs/Gone Note.md` - added\n\n## Build Verification")
    write(repo, {"handovers/h.md": text})
    proc = run_kbase("handover", "check", "handovers/h.md", "--format", "json", cwd=repo)
    found = [(m["code"], m.get("subject")) for n in json.loads(proc.stdout)["notes"]
             for m in n["missing"]]
    assert found == [("KB406", "docs/Gone Note.md")], proc.stdout
