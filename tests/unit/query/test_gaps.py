"""`kbase gaps`: unresolved targets and undocumented concepts, on real index builds of the
fixtures/gaps vault, with the work tree overlaid; concept extraction from a case table."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import FIXTURES, git, indexed_copy, run_kbase, write
from querykit import query

from kbase_ci.parse.conceptmentions import extract
from tests import tables

VAULT = FIXTURES / "gaps" / "vault"


def _cases() -> list[tuple[str, list[str]]]:
    return [(text.replace("\\n", "\n"), tables.items(terms))
            for _no, text, terms in tables.arrows(FIXTURES / "gaps" / "concepts.txt")]


@pytest.mark.parametrize(("text", "terms"), _cases(), ids=lambda v: str(v)[:40])
def test_extraction_table(text: str, terms: list[str]) -> None:
    assert [m.name for m in extract(text)] == terms


def test_extraction_positions_and_kinds() -> None:
    got = extract("---\na: b\n---\nIntro line.\nUse `json.loads` with Apache Kafka.\n")
    assert [(m.name, m.kind, m.line, m.col) for m in got] == [
        ("json.loads", "code", 5, 6), ("Apache Kafka", "name", 5, 23)]
    assert [m.key for m in got] == ["json.loads", "apache kafka"]


def test_sentence_initial_names_are_marked() -> None:
    """A capitalised run that starts a sentence (line, list item, table cell) is kept as
    `initial`; the same key written mid-sentence in the note makes it a plain `name`."""
    got = extract("Intro.\n- Reduces IO operations.\n| Off Target | x |\n"
                  "Sentence Case starts here, and Sentence Case again.\n")
    assert [(m.name, m.kind) for m in got] == [
        ("Reduces IO", "initial"), ("Off Target", "initial"), ("Sentence Case", "name")]
    # German capitalises nouns: a capitalised run there is no evidence of a name, but a
    # CamelCase word still is
    german = extract("Sende viele HTTP GET Anfragen an eine Adresse mit dem Programm und "
                     "zeige die Daten eines JPEG Bildes im Fenster von PostgreSQL.\n")
    assert [(m.name, m.kind) for m in german] == [
        ("HTTP GET Anfragen", "initial"), ("JPEG Bildes", "initial"), ("PostgreSQL", "name")]


@pytest.fixture
def vault(make_repo: Callable[..., Path]) -> Path:
    return indexed_copy(make_repo(), VAULT)


def _names(ans: dict[str, object], part: str, field: str) -> list[object]:
    items = ans[part]
    assert isinstance(items, list)
    return [i[field] for i in items]


def test_ranking_grouping_and_sentences(vault: Path) -> None:
    code, ans, err = query(vault, "gaps")
    assert code == 0, err
    assert ans["kinds"] == ["note", "concept", "attachment"]
    top = ans["unwritten"][0]
    # `[[apache kafka.md|...]]` groups with `[[Apache Kafka]]`; first spelling in path order
    assert (top["target"], top["key"], top["notes"], top["references"]) == (
        "Apache Kafka", "apache kafka", 3, 4)
    assert [(r["path"], r["line"]) for r in top["referrers"]] == [
        ("Home.md", 3), ("Pipelines/Batch.md", 3), ("Pipelines/Ingest.md", 6),
        ("Pipelines/Ingest.md", 6)]
    assert [r["sentence"] for r in top["referrers"][2:]] == [
        "The ingest job reads [[Apache Kafka]] topics.",
        "Retries go back to [[Apache Kafka]] too."]
    # ties on notes and references: by key; `Node.js` is a note (`.js` is no attachment)
    assert _names(ans, "unwritten", "target") == ["Apache Kafka", "Delta Lake", "Node.js",
                                                  "Stream Processing"]
    # the image four notes embed is listed apart, after the notes and concepts
    assert [(g["target"], g["notes"]) for g in ans["attachments"]] == [
        ("pipeline-diagram.png", 4)]
    assert list(ans) == ["kinds", "domain", "min_notes", "limit", "counts", "unwritten",
                         "concepts", "attachments", "index"]
    # "Data Vault" is a heading and "Slowly Changing Dimensions" an alias: documented
    assert [(c["name"], c["kind"], c["notes"]) for c in ans["concepts"]] == [
        ("Change Data Capture", "name", 4), ("dbt_project", "code", 3)]
    cdc = ans["concepts"][0]["places"]
    assert [p["path"] for p in cdc] == ["Home.md", "Pipelines/Batch.md", "Pipelines/Ingest.md",
                                        "Storage/Lakehouse.md"]
    assert cdc[0]["sentence"] == "We capture row changes with Change Data Capture before loading."
    assert ans["counts"] == {"unwritten": 4, "concepts": 2, "attachments": 1}
    assert ans["index"]["overlaid"] is False


def test_min_notes_limit_and_domain(vault: Path) -> None:
    _, ans, _ = query(vault, "gaps", "--min-notes", "4", "--limit", "1")
    assert _names(ans, "concepts", "name") == ["Change Data Capture"]
    assert _names(ans, "unwritten", "target") == ["Apache Kafka"]
    assert ans["counts"]["unwritten"] == 4
    code, ans, _ = query(vault, "gaps", "--domain", "Pipelines")
    assert code == 0 and ans["concepts"] == []
    assert [(g["target"], g["notes"], g["references"]) for g in ans["unwritten"]] == [
        ("apache kafka.md", 2, 3)]
    assert [(g["target"], g["notes"]) for g in ans["attachments"]] == [
        ("pipeline-diagram.png", 2)]
    _, ans, _ = query(vault, "gaps", "--domain", "Pipelines", "--min-notes", "2")
    assert _names(ans, "concepts", "name") == ["Change Data Capture", "dbt_project"]


def test_names_only_starting_sentences_are_not_concepts(vault: Path) -> None:
    # "Compacted Files" starts a sentence in three notes and is written nowhere else
    _, ans, _ = query(vault, "gaps", "--kind", "concept", "--min-notes", "1")
    assert "compacted file" not in _names(ans, "concepts", "key")
    write(vault, {"Home.md": (vault / "Home.md").read_text(encoding="utf-8")
                  + "Home keeps Compacted Files too.\n"})
    _, ans, _ = query(vault, "gaps", "--kind", "concept")
    assert ("Compacted Files", 4) in [(c["name"], c["notes"]) for c in ans["concepts"]]


def test_exit_codes_and_text(vault: Path) -> None:
    code, _, err = query(vault, "gaps", "--domain", "Nowhere")
    assert code == 2 and "no domain 'Nowhere'" in err  # a typo is no "no gaps"
    code, ans, _ = query(vault, "gaps", "--domain", "pipelines", "--min-notes", "2",
                         "--concise")
    assert code == 0 and ans["domain"] == "Pipelines"
    assert set(ans["concepts"][0]) == {"name", "notes"}
    assert run_kbase("gaps", "--limit", "0", cwd=vault).returncode == 2
    proc = run_kbase("gaps", "--format", "text", cwd=vault)
    assert proc.returncode == 0
    assert "  Apache Kafka  (3 notes, 4 links)" in proc.stdout
    assert "    Home.md:4: We capture row changes with Change Data Capture before loading." \
        in proc.stdout
    titles = [ln for ln in proc.stdout.splitlines() if not ln.startswith(" ")]
    assert titles == ["notes to write (unresolved link targets): 4",
                      "undocumented concepts (in >= 3 notes): 2", "missing attachments: 1"]


def test_kind_selects_lists(vault: Path) -> None:
    code, ans, _ = query(vault, "gaps", "--kind", "attachment")
    assert code == 0 and ans["kinds"] == ["attachment"]
    assert "unwritten" not in ans and "concepts" not in ans
    assert ans["counts"] == {"attachments": 1}
    code, ans, _ = query(vault, "gaps", "--kind", "concept", "--kind", "note")
    assert ans["kinds"] == ["note", "concept"] and "attachments" not in ans
    code, ans, _ = query(vault, "gaps", "--kind", "concept", "--min-notes", "99")
    assert code == 1 and ans["concepts"] == []  # the asked kind has nothing: no gaps
    code, ans, _ = query(vault, "gaps", "--kind", "attachment", "--domain", "Nowhere")
    assert code == 2  # an unknown domain is a usage error, whatever the kind
    assert run_kbase("gaps", "--kind", "image", cwd=vault).returncode == 2


def test_overlay_without_rebuild(vault: Path) -> None:
    warehouse = (vault / "Storage/Warehouse.md").read_text(encoding="utf-8")
    write(vault, {
        "Storage/Warehouse.md": warehouse.replace("the `dbt_project` folder", "dbt"),
        "Home.md": (vault / "Home.md").read_text(encoding="utf-8")
        + "Home also runs `dbt_project` and links [[Delta Lake]].\n",
    })
    code, ans, _ = query(vault, "gaps")
    assert code == 0 and ans["index"]["overlaid"]
    dbt = next(c for c in ans["concepts"] if c["key"] == "dbt_project")
    assert [p["path"] for p in dbt["places"]] == ["Home.md", "Pipelines/Batch.md",
                                                  "Pipelines/Ingest.md"]
    assert dbt["places"][0]["line"] == 5
    delta = next(g for g in ans["unwritten"] if g["key"] == "delta lake")
    assert [r["path"] for r in delta["referrers"]] == ["Home.md", "Storage/Lakehouse.md"]
    # a note added since the index documents the concept: it is no longer a gap
    write(vault, {"Pipelines/Change Data Capture.md": "# CDC\n\nRow-level change feeds.\n"})
    git(vault, "add", "Pipelines/Change Data Capture.md")
    _, ans, _ = query(vault, "gaps")
    assert _names(ans, "concepts", "name") == ["dbt_project"]
    # deleting a note drops its mentions and its links
    git(vault, "rm", "-q", "Pipelines/Ingest.md")
    _, ans, _ = query(vault, "gaps")
    assert ans["concepts"] == []
    assert ans["unwritten"][0]["notes"] == 2 and ans["unwritten"][0]["references"] == 2


def test_incremental_build_matches_full_build(vault: Path, tmp_path: Path) -> None:
    glossary = (vault / "Glossary.md").read_text(encoding="utf-8")
    # First in path order, another spelling: the index's first spelling of the term...
    write(vault, {"Glossary.md": glossary + "Also `DBT_PROJECT`.\n"})
    git(vault, "commit", "-qam", "spelling")
    assert run_kbase("index", cwd=vault).returncode == 0
    # ...must not leak into the reused mentions of other notes once it is gone
    write(vault, {"Glossary.md": glossary, "Storage/New.md":
                  "# New\n\nIt also uses Change Data Capture and `dbt_project`.\n"})
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "more")
    assert run_kbase("index", cwd=vault).returncode == 0  # reuses the previous .kbase/
    full = tmp_path / "full"
    assert run_kbase("index", "--out", str(full), cwd=vault).returncode == 0
    assert (vault / ".kbase/concepts.json").read_bytes() == (full / "concepts.json").read_bytes()
    _, ans, _ = query(vault, "gaps")
    assert [(c["name"], c["notes"]) for c in ans["concepts"]] == [
        ("Change Data Capture", 5), ("dbt_project", 4)]


def test_parenthesised_title_and_drawings(vault: Path) -> None:
    """A title naming one thing twice documents both names; Excalidraw notes are
    drawings and count for nothing (issue 31) - in the index and in the overlay."""
    drawing = ("---\nexcalidraw-plugin: parsed\n---\nSee Drawing Label Here.\n\n"
               "# Excalidraw Data\n## Text Elements\nDrawing Label Here ^a1\n")
    write(vault, {"Change Data Capture (变更捕获).md": "# CDC\n\nRow-level change feeds.\n",
                  **{f"Boards/B{i}.excalidraw.md": "Plain Body Term text.\n" for i in range(3)},
                  **{f"Boards/D{i}.md": drawing for i in range(3)}})
    git(vault, "add", "-A")
    _, ans, _ = query(vault, "gaps", "--kind", "concept", "--min-notes", "1")
    keys = _names(ans, "concepts", "key")
    assert "dbt_project" in keys and "change data capture" not in keys
    assert not {"plain body term", "drawing label here"} & set(keys)
    git(vault, "commit", "-q", "-m", "titles and drawings")
    assert run_kbase("index", cwd=vault).returncode == 0
    _, ans, _ = query(vault, "gaps", "--kind", "concept", "--min-notes", "1")
    assert not ans["index"]["overlaid"]
    assert _names(ans, "concepts", "key") == keys
