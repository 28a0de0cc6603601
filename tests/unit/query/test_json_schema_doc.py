"""docs/json-schema.md and the answers' records agree both ways: every key an answer's
record can write (its nested records' too, as typedjson shapes them) is documented in
that query's block of the doc, and every key the doc documents is one a record writes
(kbase_ci.query.docs.schema_problems)."""

from __future__ import annotations

from pathlib import Path

from kbase_ci.query import docs
from kbase_ci.typedjson import Record, json_field

DOC = Path(__file__).resolve().parents[3] / "docs" / "json-schema.md"


class Rank(Record):
    rank: int
    score: float


class Tree(Record):
    name: str
    children: list[Tree]


class Counts(Record):
    a: int
    b: int


def _ranks(places: tuple[int, ...]) -> list[Rank]:
    return [Rank(p, 0.0) for p in places]


class Shaped(Record, json=("from", ("orphans", "new", "total"), "counts", "hits", "best",
                           "tree", "ranked", "size")):
    source: str = json_field(key="from")
    total: int = json_field(within="orphans")
    new: int = json_field(within="orphans")
    counts: Counts = json_field(flatten=True)
    hits: list[Rank] | list[str]
    tree: list[Tree]
    best: Rank | None = json_field(default=None, omit=True)
    secret: str = json_field(default="", hidden=True)
    ranked: tuple[int, ...] = json_field(default=(), as_json=_ranks)

    @property
    def size(self) -> int:
        return len(self.hits)


def test_the_keys_of_a_record_follow_its_shape() -> None:
    """Renamed, grouped, flattened, omitted-when-None, converted (`as_json`) and computed
    keys as `to_json` writes them, the keys of the records in its lists and fields after
    theirs, a record holding itself entered once, a hidden field left out."""
    record = Shaped("s", 2, 1, Counts(3, 4), [Rank(1, 0.5)], [Tree("t", [])], Rank(2, 0.1))
    paths = list(docs.json_paths([Shaped]))
    assert [p for p in paths if "." not in p or p.startswith("orphans.")] == \
        ["from", "orphans.new", "orphans.total", "a", "b", "hits", "best", "tree", "ranked",
         "size"]
    assert {p.partition(".")[0] for p in paths} == set(record.to_json())
    assert [p for p in paths if "." in p and not p.startswith("orphans.")] == \
        ["hits.rank", "hits.score", "best.rank", "best.score", "tree.name", "tree.children",
         "ranked.rank", "ranked.score"]


def _doc(rows: str) -> str:
    return (f"## Shaped\n\n<!-- keys: {__name__}.Shaped -->\n| key | meaning |\n| --- | :-- |\n"
            f"{rows}\n## next\n")


ROWS = """| `from`, `size` | the source, the hits |
| `orphans.new`, `.total` | grouped |
| `a`, `b` | flattened |
| `hits[]` | the hits |
| `hits[].rank`, `.score` | a hit |
| `best`, `best.rank`, `best.score` | the best |
| `tree[]`, `tree[].name`, `tree[].children[]` | a tree |
| `ranked[]` | converted |
| `ranked[].rank`, `.score` | converted |"""


def test_the_doc_is_checked_both_ways() -> None:
    """A key the record writes without a row fails, and so does a row naming a key no
    record writes; `.key` after a row's first key is that key's sibling."""
    assert docs.schema_problems(_doc(ROWS), queries=[]) == []
    lacking = ROWS.replace("| `a`, `b` |", "| `a` |")
    assert docs.schema_problems(_doc(lacking), queries=[]) == \
        [f"{__name__}.Shaped: `b` is not documented"]
    extra = ROWS.replace("| `hits[]` |", "| `hits[]`, `.rank` |")  # a top-level `rank`
    assert docs.schema_problems(_doc(extra), queries=[]) == \
        [f"docs/json-schema.md:9: {__name__}.Shaped has no key `rank`"]
    unquoted = ROWS.replace("| `a`, `b` |", "| a, b |")  # no key, so a row naming none
    assert docs.schema_problems(_doc(unquoted), queries=[]) == \
        [f"{__name__}.Shaped: `a` is not documented", f"{__name__}.Shaped: `b` is not "
         f"documented", f"docs/json-schema.md:8: {__name__}.Shaped has no key `a, b`"]


def test_every_answer_key_is_documented_and_every_documented_key_exists() -> None:
    """docs/json-schema.md documents each query's answer, key by key: a field added to an
    answer's record (or to a record in it) fails here until the doc names it, and so
    does a row left after its field went."""
    assert docs.schema_problems(DOC.read_text(encoding="utf-8")) == []


def test_the_real_doc_fails_on_a_missing_row_an_extra_row_and_a_missing_block() -> None:
    """What a field added to an answer without docs, a field removed with its row left,
    a query added without a block and a record no answer holds any more look like."""
    text = DOC.read_text(encoding="utf-8")
    row = "| `results[].line` |"
    assert row in text
    assert docs.schema_problems(text.replace(row, "| `results[].rank` |")) == [
        "search: `results.line` is not documented",
        f"docs/json-schema.md:{text[:text.index(row)].count(chr(10)) + 1}: search has no "
        "key `results.rank`"]
    assert docs.schema_problems(text.replace("<!-- keys: gaps -->", "")) == \
        ["gaps: no `<!-- keys: gaps -->` block"]
    assert docs.schema_problems(text + _doc(ROWS)) == \
        [f"{__name__}.Shaped: no answer holds it"]
