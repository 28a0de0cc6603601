from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from kbase_ci.parse.parser import parse_note
from kbase_ci.parsed import ParsedNote
from kbase_ci.vault.config import parse_config
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.notestore import NoteStore, summarize
from kbase_ci.vault.scanner import open_store
from tests.conftest import write


def _notes() -> dict[str, ParsedNote]:
    src = {
        "a.md": "---\naliases: [Alpha]\ntype: question\n---\n[[Sub/B.md]] #Tag\n",
        "Sub/B.md": "[[a#x]] and [[Gone]]\n",
        "c.md": "no links\n",
    }
    return {p: parse_note(p, t.encode()) for p, t in src.items()}


def test_records_load_only_when_asked() -> None:
    notes = _notes()
    asked: list[list[str]] = []

    def loader(paths: Sequence[str]) -> dict[str, ParsedNote]:
        asked.append(list(paths))
        return {p: notes[p] for p in paths}

    store = NoteStore(list(notes), {p: summarize(n) for p, n in notes.items()}, loader)
    assert store.paths == ("Sub/B.md", "a.md", "c.md")
    assert store.aliases() == {"a.md": ("Alpha",)}
    assert store.summary("a.md").type == "question"
    assert asked == []
    assert store.get("a.md") == notes["a.md"]
    assert store.get("a.md") == notes["a.md"]
    assert asked == [["a.md"]]
    assert "c.md" in store and "zzz.md" not in store
    assert [n.path for n in store] == ["Sub/B.md", "a.md", "c.md"]
    assert asked[-1] == ["Sub/B.md", "c.md"]


def test_linking_to_uses_target_names() -> None:
    store = NoteStore.from_notes(_notes().values())
    assert store.linking_to(["B"]) == ["a.md"]
    assert store.linking_to(["sub/b.md"]) == ["a.md"]
    assert store.linking_to(["a", "gone"]) == ["Sub/B.md"]
    assert store.linking_to(["c"]) == []


def test_open_store_warm_run_parses_nothing(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.md": "[[b]]\n", "b.md": "# B\n"})
    store, stats = open_store(Vault(root))
    assert (stats.parsed, stats.cached) == (2, 0)
    store, stats = open_store(Vault(root))
    assert (stats.parsed, stats.cached) == (0, 2)
    assert store.get("a.md") is not None and store.get("a.md").links[0].target == "b"
    write(root, {"b.md": "# B changed\n"})
    store, stats = open_store(Vault(root))
    assert (stats.parsed, stats.cached) == (1, 1)
    assert store.get("b.md").headings[0].text == "B changed"


def test_open_store_without_git_cache(tmp_path: Path) -> None:
    write(tmp_path, {"a.md": "x\n"})
    store, stats = open_store(Vault(tmp_path, parse_config("")))
    assert stats.parsed == 1 and store.get("a.md") is not None


def test_overlay_answers_aliases_without_reading_summaries() -> None:
    from kbase_ci.checks.swappedstore import overlay

    notes = _notes()
    fetched: list[int] = []
    base = NoteStore.from_notes(notes.values())

    class Counting(NoteStore):
        def summary(self, path: str):  # type: ignore[no-untyped-def]
            fetched.append(1)
            return super().summary(path)

    store = Counting(base.paths, {p: summarize(n) for p, n in notes.items()},
                     lambda ps: {p: notes[p] for p in ps}, aliases=base.aliases)
    new = parse_note("z.md", b"---\naliases: [Zed]\n---\n")
    after = overlay(store, ["a.md"], {"z.md": new})
    assert after.aliases() == {"z.md": ("Zed",)}
    assert fetched == []
    assert after.summary("Sub/B.md").targets and fetched
    assert "a.md" not in after and after.get("z.md") == new
