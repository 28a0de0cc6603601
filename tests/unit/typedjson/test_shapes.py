"""Issue 41 item 3: one JSON mechanism. A record whose JSON is shaped otherwise than its
fields (keys in another order, a group of fields in a sub-object, a record's keys
flattened into its parent's, a computed key, a value written through a function) says so
in its declaration, and `to_json`, `typedjson.decode` and `from_json` all follow it;
`Row`s are written as lists of values."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest

from kbase_ci.typedjson import Record, Row, ShapeError, between, decode, json_field
from kbase_ci.typedjson.record import COMPILE_AFTER


class Item(Record, json=("path", "code", "message")):
    path: str
    message: str
    code: str = ""


class Marked(Record):
    status: str
    item: Item = json_field(flatten=True)


class Report(Record, json=("format", "total", ("orphans", "count", "new"), "ok", "items",
                           "listed")):
    items: tuple[Marked, ...] = ()
    new: tuple[str, ...] = json_field(default=(), within="orphans")
    total: Annotated[int, between(0, 10)] = 0
    count: int = json_field(default=0, within="orphans")
    listed: tuple[int, ...] = json_field(default=(), as_json=lambda v: [str(n) for n in v])
    format: Literal["r"] = "r"

    @property
    def ok(self) -> bool:
        return self.total == 0


class Shaped(Record):  # no as_json: read back too
    items: tuple[Marked, ...] = ()
    count: int = json_field(default=0, within="orphans")
    new: tuple[str, ...] = json_field(default=(), within="orphans")


def test_order_groups_flattened_and_computed_keys() -> None:
    r = Report((Marked("new", Item("a.md", "m", "KB1")),), ("x.md",), 3, 1, (4, 5))
    assert list(r.to_json().items()) == [
        ("format", "r"), ("total", 3), ("orphans", {"count": 1, "new": ["x.md"]}),
        ("ok", False),
        ("items", [{"status": "new", "path": "a.md", "code": "KB1", "message": "m"}]),
        ("listed", ["4", "5"])]


def test_order_only_stays_on_the_compiled_writer() -> None:
    assert Item._shape is None  # the plain writer, in the declared order
    item = Item("a.md", "m", "KB1")
    for _ in range(COMPILE_AFTER + 1):
        got = item.to_json()
    assert getattr(Item.to_json, "compiled", False)
    assert list(got) == ["path", "code", "message"]


def test_shaped_json_is_decoded_and_read_back_as_it_was_written() -> None:
    s = Shaped((Marked("fixed", Item("b.md", "gone")),), 2, ("o.md",))
    data = s.to_json()
    assert data == {"items": [{"status": "fixed", "path": "b.md", "code": "",
                               "message": "gone"}], "orphans": {"count": 2, "new": ["o.md"]}}
    assert decode(Shaped, data) == s and Shaped.from_json(data) == s
    assert decode(Shaped, {}) == Shaped()  # an absent group: its fields' defaults


@pytest.mark.parametrize(("data", "message"), [
    ({"orphans": {"count": "x"}}, "`orphans.count` should be a whole number"),
    ({"orphans": []}, "`orphans` should be an object"),
    ({"items": [{"status": "new", "message": "m"}]}, "`items[0].path` is missing"),
])
def test_a_bad_shaped_value_is_named_by_its_json_path(data: dict[str, object],
                                                      message: str) -> None:
    with pytest.raises(ShapeError) as err:
        decode(Shaped, data)
    assert message in str(err.value)


def test_a_computed_value_is_written_never_read() -> None:
    with pytest.raises(TypeError, match="cannot read it back"):
        decode(Report, {"format": "r"})


def test_a_json_order_must_name_every_key() -> None:
    with pytest.raises(TypeError, match="leaves out"):
        class Bad(Record, json=("a",)):
            a: int
            b: int
    with pytest.raises(TypeError, match="no field or property"):
        class Worse(Record, json=("a", "c")):
            a: int


def test_compare_false_leaves_a_field_out_of_equality_and_the_hash() -> None:
    class Change(Record):
        path: str
        sha: str | None = json_field(default=None, compare=False, hidden=True)

    a, b = Change("a.md"), Change("a.md", "f" * 40)
    assert a == b and hash(a) == hash(b) and a.to_json() == {"path": "a.md"}
    assert Change("b.md") != a


class Cell(Row):
    name: str
    line: int
    parents: tuple[str, ...] = ()


class Sheet(Row):
    path: str
    cells: tuple[Cell, ...] = ()
    meta: dict[str, object] = json_field(default_factory=dict)
    note: str | None = None


def test_rows_are_lists_of_values_and_read_back_equal() -> None:
    s = Sheet("a.md", (Cell("x", 1, ("h",)), Cell("y", 2)), {"k": [1]}, None)
    assert s.to_json() == ["a.md", [["x", 1, ["h"]], ["y", 2, []]], {"k": [1]}, None]
    back = Sheet.from_json(s.to_json())
    assert back == s and isinstance(back.cells, tuple) and back.cells[0].parents == ("h",)
