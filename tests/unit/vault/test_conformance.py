"""Obsidian conformance: fixtures/resolution/obsidian-cases.txt against a real vault.

The vault (fixtures/resolution/obsidian-vault.txt) is committed to a git repository in a
temp dir and read the way `kbase check` reads it: the Vault listing (dot folders left
out), the parse cache, the Resolver. Each case's text is parsed as the content of its
source note, so link syntax, property links and block ids go through the real parser.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from kbase_ci.checks.checker import check_vault
from kbase_ci.parse.parser import parse_note
from kbase_ci.parsed import Link
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.resolver import Resolver
from kbase_ci.vault.scanner import open_store
from tests import tables
from tests.conftest import FIXTURES, git, run_kbase

TABLES = FIXTURES / "resolution"
VERDICTS = ("resolves", "does not", "no link", "external")


def _vault_files() -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for _no, path, content in tables.arrows(TABLES / "obsidian-vault.txt"):
        name = tables.decode(path).decode("utf-8")
        files[name] = b"" if content == tables.NONE else tables.decode(content)
    return files


@dataclass(frozen=True)
class Case:
    line: int
    source: str
    text: bytes
    verdict: str
    target: str | None


def _cases() -> list[Case]:
    out: list[Case] = []
    for no, given, expected in tables.arrows(TABLES / "obsidian-cases.txt"):
        source, sep, text = given.partition(tables.CELL)
        assert sep, f"obsidian-cases.txt:{no}: no ` | ` after the source note"
        verdict = next((v for v in VERDICTS if expected.startswith(v)), None)
        assert verdict is not None, f"obsidian-cases.txt:{no}: bad verdict {expected!r}"
        target = expected[len(verdict):].strip() or None
        out.append(Case(no, source.strip(), tables.decode(text),
                        verdict, tables.decode(target).decode() if target else None))
    return out


CASES = _cases()


@pytest.fixture(scope="module")
def vault_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("obsidian")
    for rel, data in _vault_files().items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", "vault")
    return root


@pytest.fixture(scope="module")
def resolver(vault_root: Path) -> Resolver:
    vault = Vault(vault_root)
    store, _stats = open_store(vault)
    return Resolver(store, vault.files, include_dot=vault.config.vault.include_dot_folders)


def test_table_covers_enough_cases() -> None:
    assert len(CASES) >= 150
    assert {c.verdict for c in CASES} == set(VERDICTS)


def _only_link(case: Case) -> Link | None:
    links = parse_note(case.source, case.text).links
    assert len(links) <= 1, f"line {case.line}: more than one link in the text: {links}"
    return links[0] if links else None


@pytest.mark.parametrize("case", CASES, ids=[f"line{c.line}" for c in CASES])
def test_obsidian_conformance(case: Case, resolver: Resolver) -> None:
    link = _only_link(case)
    if case.verdict == "no link":
        assert link is None
        return
    assert link is not None, f"line {case.line}: no link parsed"
    got = resolver.resolve(case.source, link)
    if case.verdict == "external":
        assert got.status == "external"
    elif case.verdict == "resolves":
        assert (got.status, got.target, got.anchor_found is not False) == (
            "ok", case.target, True)
    elif case.target is None:  # does not: no file at all
        assert got.status in ("unresolved", "escapes") and got.target is None
    else:  # does not: the file, without the heading or block
        assert (got.status, got.target, got.anchor_found) == ("ok", case.target, False)


def test_dot_folders_opt_in(vault_root: Path) -> None:
    """`vault.include_dot_folders: true` makes hidden notes and files vault members."""
    cfg = vault_root / ".kbase.yml"
    cfg.write_text("vault:\n  include_dot_folders: true\n", encoding="utf-8")
    try:
        vault = Vault(vault_root)
        assert vault.note(".hidden/Secret.md") is not None
        store, _ = open_store(vault, use_cache=False)
        resolver = Resolver(store, vault.files,
                            include_dot=vault.config.vault.include_dot_folders)
        for text, target in [("[[Secret]]", ".hidden/Secret.md"),
                             ("[[.draft]]", "notes/.draft.md"),
                             ("![[hidden-logo.png]]", ".assets/hidden-logo.png")]:
            link = parse_note("Home.md", text.encode()).links[0]
            assert resolver.resolve("Home.md", link).target == target
    finally:
        cfg.unlink()


def test_check_reports_nothing_in_dot_folders(vault_root: Path) -> None:
    """`.github/pull_request_template.md` holds two broken links; Obsidian never sees
    that file, and neither does `kbase check --all`. The one finding is a warning: the
    `[[Log]]` of `n/Todo.md` resolves (row 6), but two notes are named `Log`."""
    report = check_vault(Vault(vault_root), select=["links", "sections"])
    assert [f"{f.path}:{f.line}: {f.code} {f.severity}" for f in report.findings] == [
        "n/Todo.md:1: KB103 warning"]
    assert report.notes == len([p for p in _vault_files() if p.endswith(".md")
                                and not any(s.startswith(".") for s in p.split("/"))])


@pytest.mark.parametrize("include_dot", [False, True])
def test_dot_folder_setting_reaches_index_and_queries(
        make_repo: Callable[..., Path], include_dot: bool) -> None:
    """The hook, the index's link table, `kbase links` and `kbase gaps` agree on whether a
    file under a `.` folder is a link target (all four read `vault.include_dot_folders`)."""
    repo = make_repo({
        ".gitignore": ".kbase/\n",
        ".kbase.yml": f"vault:\n  include_dot_folders: {str(include_dot).lower()}\n",
        "Home.md": "# Home\n\n![[logo.png]] and [[Other]].\n",
        "Other.md": "# Other\n\nBack to [[Home]].\n",
        ".assets/logo.png": b"\x89PNG\r\n",
    })
    check = run_kbase("check", "--all", "--format", "json", cwd=repo)
    assert check.returncode == (0 if include_dot else 1), check.stdout
    assert ("logo.png" in check.stdout) is not include_dot
    assert run_kbase("index", cwd=repo).returncode == 0
    links = run_kbase("links", "Home", cwd=repo)
    assert links.returncode == 0, links.stderr
    logo = [x for x in json.loads(links.stdout)["links"] if "logo" in x["raw"]]
    assert [x["path"] for x in logo] == ([".assets/logo.png"] if include_dot else [None])
    gaps = run_kbase("gaps", "--kind", "attachment", cwd=repo)
    assert gaps.returncode == (1 if include_dot else 0), gaps.stdout
