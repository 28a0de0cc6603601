from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from kbase_ci.parsed import Heading, Link, ParsedNote, Tag
from kbase_ci.vault.cache import ParseCache, cache_key


def _note(path: str, n: int = 0) -> ParsedNote:
    return ParsedNote(
        path=path, title=Path(path).stem, aliases=("x",), tags=(Tag("t", 1, 2),),
        frontmatter={"k": [1, "2"]}, frontmatter_end=3,
        headings=(Heading(1, f"H{n}", 4, ()),),
        links=(Link("wiki", False, "[[a]]", "a", "", None, 5, 1),), size=10, lines=6,
    )


def test_round_trip(tmp_path: Path) -> None:
    c = ParseCache(tmp_path)
    k = cache_key("abc", "n.md", "s")
    c.put_many([(k, _note("n.md"))])
    c.close()
    assert ParseCache(tmp_path).get_many([k, "other"]) == {k: _note("n.md")}


def test_corrupt_row_is_a_miss_and_is_rebuilt(tmp_path: Path) -> None:
    c = ParseCache(tmp_path)
    k = cache_key("abc", "n.md", "s")
    c.put_many([(k, _note("n.md"))])
    c.close()
    db = sqlite3.connect(tmp_path / "parse-cache.sqlite")
    db.execute("UPDATE notes SET data = '[1, 2' WHERE key = ?", (k,))
    db.commit()
    db.close()
    c = ParseCache(tmp_path)
    assert c.get_many([k]) == {}
    c.put_many([(k, _note("n.md", 1))])
    assert c.get_many([k])[k].headings[0].text == "H1"


def test_corrupt_database_file_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "parse-cache.sqlite").write_bytes(b"this is not sqlite" * 100)
    c = ParseCache(tmp_path)
    k = cache_key("a", "b", "c")
    c.put_many([(k, _note("b"))])
    assert k in c.get_many([k])
    assert (tmp_path / "parse-cache.sqlite.corrupt").exists()


def test_no_folder_means_no_cache() -> None:
    c = ParseCache(None)
    c.put_many([("k", _note("a"))])
    assert c.get_many(["k"]) == {}


def _writer(folder: str, start: int) -> None:
    c = ParseCache(Path(folder))
    for i in range(start, start + 200, 20):
        rows = [(cache_key(str(j), f"{j}.md", "s"), _note(f"{j}.md")) for j in range(i, i + 20)]
        c.put_many(rows)
    c.close()


@pytest.mark.parametrize("round_", range(3))
def test_two_processes_write_at_once(tmp_path: Path, round_: int) -> None:
    # Both create the file at once (pre-commit starts hook processes together): one of
    # them finding it busy must wait, not set the other's database aside as corrupt.
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), s)) for s in (0, 100)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    keys = [cache_key(str(j), f"{j}.md", "s") for j in range(300)]
    assert len(ParseCache(tmp_path).get_many(keys)) == 300
    assert not list(tmp_path.glob("*.corrupt"))


def test_summaries_without_decoding_records(tmp_path: Path) -> None:
    c = ParseCache(tmp_path)
    note = ParsedNote(path="q.md", title="q", aliases=("Q one",), tags=(Tag("Rust", 1, 1),),
                      frontmatter={"type": "question"},
                      links=(Link("wiki", False, "[[Sub/Target.md]]", "Sub/Target.md", "", None,
                                  2, 1),))
    k = cache_key("s", "q.md", "x")
    c.put_many([(k, note)])
    s = c.summaries([k, "missing"])[k]
    assert (s.aliases, s.tags, s.type) == (("Q one",), ("Rust",), "question")
    assert set(s.targets) == {"sub/target", "target"}


def test_a_path_that_is_not_utf8_is_simply_not_cached(tmp_path: Path) -> None:
    # git hands out non-UTF-8 file names with surrogate escapes; SQLite cannot store
    # them, and a cache must never fail a check: such a note is a miss every time.
    c = ParseCache(tmp_path)
    odd, ok = cache_key("abc", "x\udcffy.md", "s"), cache_key("abd", "n.md", "s")
    c.put_many([(odd, _note("x\udcffy.md")), (ok, _note("n.md"))])
    assert c.get_many([odd, ok]) == {ok: _note("n.md")}
    assert c.hits([odd, ok]) == {ok}
