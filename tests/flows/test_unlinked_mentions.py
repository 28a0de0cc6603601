"""Unlinked mentions (`explore`, `links --unlinked`, the MCP tools) on fixtures/mentions:
`Tools/Docker.md` (alias `container engine`) is named in prose by `Plain.md` (three
times, once over a line wrap), `Wrapped.md` and once by `Hidden.md`, whose other
mentions are inside code, links, URLs, comments, tags and frontmatter; `Linked.md` links
it and `Linked From.md` is linked from it, so neither counts. `Menu.md` names
`Café Noir` in capitals; `Index` is named everywhere and never looked for."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import FIXTURES, git, run_kbase, write
from querykit import clone, publish_index, query


def _places(ans: dict[str, Any]) -> list[tuple[str, int, int, str, int]]:
    return [(u["path"], u["line"], u["col"], u["text"], u["count"]) for u in ans["unlinked"]]


DOCKER = [("Plain.md", 3, 16, "docker", 3), ("Plain.md", 3, 24, "Docker", 3),
          ("Plain.md", 4, 8, "container engine", 3), ("Hidden.md", 13, 21, "Docker", 1),
          ("Wrapped.md", 3, 30, "Container Engine", 1)]


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("mentions")
    src = base / "src"
    shutil.copytree(FIXTURES / "mentions", src)
    git(src, "init", "-q", "-b", "main")
    git(src, "add", "-A")
    git(src, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", "vault")
    publish_index(src)
    return src


@pytest.fixture
def fresh(published: Path, tmp_path: Path) -> Path:
    return clone(published, tmp_path / "clone")


def test_links_unlinked_lists_prose_mentions_only_ranked_by_count(fresh: Path) -> None:
    code, ans, _ = query(fresh, "links", "--unlinked", "Docker")
    assert code == 0
    assert _places(ans) == DOCKER
    assert ans["names"] == ["Docker", "container engine"] and ans["skipped"] == []
    assert ans["source"] == "index"
    assert ans["unlinked"][0]["sentence"] == "We deploy with docker."
    assert ans["unlinked"][2]["sentence"] == "A good container"


def test_unicode_title_in_capitals_and_a_common_title_skipped(fresh: Path) -> None:
    code, ans, _ = query(fresh, "links", "--unlinked", "Café Noir")
    assert code == 0 and _places(ans) == [("Menu.md", 3, 8, "CAFÉ NOIR", 1)]
    code, ans, _ = query(fresh, "links", "--unlinked", "Index")
    assert code == 1 and ans["unlinked"] == [] and ans["skipped"] == ["Index"]


def test_none_exits_1_and_text_form_has_path_line_col(fresh: Path) -> None:
    code, ans, _ = query(fresh, "links", "--unlinked", "Linked From")
    assert code == 1 and ans["unlinked"] == []
    proc = run_kbase("links", "--unlinked", "Docker", "--format", "text", cwd=fresh)
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[0] == "Plain.md:3:16: docker  We deploy with docker."


def test_explore_lists_them_unless_asked_not_to(fresh: Path) -> None:
    code, ans, _ = query(fresh, "explore", "Docker")
    assert code == 0 and _places(ans) == DOCKER
    code, ans, _ = query(fresh, "explore", "Docker", "--concise")
    assert ans["unlinked"] == ["Plain.md", "Hidden.md", "Wrapped.md"]
    code, ans, _ = query(fresh, "explore", "Docker", "--no-mentions")
    assert code == 0 and "unlinked" not in ans


def test_fresh_notes_are_searched_again_and_links_of_the_work_tree_count(fresh: Path) -> None:
    write(fresh, {"Wrapped.md": "# Wrapped\n\nNo mention any more.\n",
                  "Linked.md": "# Linked\n\nDocker again, and no link now.\n",
                  "New.md": "# New\n\nA new note on docker.\n"})
    git(fresh, "add", "-A")
    code, ans, _ = query(fresh, "links", "--unlinked", "Docker")
    assert code == 0 and ans["source"] == "index"
    assert [(p, line) for p, line, *_ in _places(ans)] == [
        ("Plain.md", 3), ("Plain.md", 3), ("Plain.md", 4), ("Hidden.md", 13),
        ("Linked.md", 3), ("New.md", 3)]


def test_a_fresh_note_is_answered_by_a_scan(fresh: Path) -> None:
    write(fresh, {"Kafka.md": "# Kafka\n\nA log.\n", "Menu.md": "# Menu\n\nKafka on Fridays.\n"})
    git(fresh, "add", "-A")
    code, ans, _ = query(fresh, "links", "--unlinked", "Kafka")
    assert code == 0 and ans["source"] == "scan"
    assert _places(ans) == [("Menu.md", 3, 1, "Kafka", 1)]


def test_mcp_tools_answer_as_the_cli(fresh: Path) -> None:
    from test_mcp import answer, connect

    got: dict[str, Any] = {}

    async def main() -> None:
        async with connect(fresh) as session:
            got["links"] = await answer(session, "links", action="links", note="Docker",
                                        unlinked=True)
            got["explore"] = await answer(session, "links", action="explore", note="Docker")
            got["none"] = await answer(session, "links", action="explore", note="Docker",
                                       no_mentions=True)

    anyio.run(main)
    assert got["links"] == query(fresh, "links", "--unlinked", "Docker")[1]
    assert _places(got["explore"]) == DOCKER and "unlinked" not in got["none"]


def test_an_index_without_the_table_is_answered_by_a_scan(fresh: Path) -> None:
    """An index built before mentions.jsonl (no manifest block): same answer, by a scan."""
    from kbase_ci.index.reader import open_index
    from kbase_ci.query.discovery import IndexSource
    from kbase_ci.query.mentions import unlinked_answer
    from kbase_ci.query.view import QueryView
    from kbase_ci.vault.notefiles import Vault

    proc = run_kbase("index", cwd=fresh)
    assert proc.returncode == 0, proc.stderr
    out = fresh / ".kbase"
    view = QueryView(Vault(fresh), IndexSource(open_index(out), "dir", str(out)))
    view.manifest = view.manifest._replace(mentions=None)
    ans = json.loads(json.dumps(unlinked_answer(view, "Tools/Docker.md").to_json()))
    assert ans["source"] == "scan" and _places(ans) == DOCKER


@pytest.mark.parametrize("added", [False, True], ids=["edited", "edited-and-added"])
def test_incremental_build_writes_the_full_builds_table(fresh: Path, tmp_path: Path,
                                                        added: bool) -> None:
    """An edit reuses the other notes' rows (same names); a new note (new names) makes
    a full table; either way the bytes of a full build."""
    assert run_kbase("index", cwd=fresh).returncode == 0
    write(fresh, {"Plain.md": "# Plain\n\nNo docker now, but Café Noir.\n",
                  **({"Croissant.md": "# Croissant\n\nWith café noir.\n"} if added else {})})
    git(fresh, "add", "-A")
    git(fresh, "commit", "-q", "-m", "edit")
    assert run_kbase("index", cwd=fresh).returncode == 0
    full = tmp_path / "full"
    assert run_kbase("index", "--out", str(full), cwd=fresh).returncode == 0
    for name in ("mentions.jsonl", "mentions.offsets.npy"):
        assert (fresh / ".kbase" / name).read_bytes() == (full / name).read_bytes()
    code, ans, _ = query(fresh, "links", "--unlinked", "Café Noir")
    assert code == 0
    assert [u["path"] for u in ans["unlinked"]] == \
        (["Croissant.md", "Menu.md", "Plain.md"] if added else ["Menu.md", "Plain.md"])
