"""Issue 26: one `Record` base for query answers, query parameters and decoded JSON
(kbase_ci.typedjson.record): it behaves as a frozen dataclass, writes the answers' JSON,
reads it back, and a class's compiled `__init__`/`to_json` (after `COMPILE_AFTER` uses)
gives what the generic ones give."""

from __future__ import annotations

import json
from typing import Annotated, Any

import pytest

from kbase_ci.typedjson import Record, ShapeError, at_least, decode, encode, json_field
from kbase_ci.typedjson.record import COMPILE_AFTER, MISSING


class Item(Record):
    path: str
    title: str | None = json_field(omit=True)
    score: float = 0.0


class Answer(Record):
    source: str = json_field(key="from", keep=True)
    items: list[Item] | list[str]
    extra: dict[str, int] | None = json_field(default=None, omit=True)
    tags: tuple[str, ...] = ()
    seen: list[str] = json_field(default_factory=list)
    root: str = json_field(default=".", hidden=True)


class Leaf(Record, kw_only=True):
    dim: Annotated[int, at_least(1)]
    name: str = "x"


class Block(Leaf, kw_only=True):
    child: Leaf | None = json_field(default=None, omit=True)


class Wider(Block):  # kw_only, as its parents
    more: int = 0


def test_a_record_is_frozen_and_compared_and_hashed_by_its_fields() -> None:
    a = Item("a.md", "A", 1.5)
    assert a == Item(path="a.md", title="A", score=1.5) != Item("a.md", None)
    assert hash(a) == hash(Item("a.md", "A", 1.5))
    assert len({a, Item("a.md", "A", 1.5)}) == 1
    assert a != ("a.md", "A", 1.5)
    assert repr(a) == "Item(path='a.md', title='A', score=1.5)"
    with pytest.raises(AttributeError):
        a.path = "b.md"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del a.path
    assert a._replace(score=2.0) == Item("a.md", "A", 2.0) and a.score == 1.5


def test_defaults_factories_and_argument_errors() -> None:
    one, two = Answer("s", []), Answer("s", [])
    assert one.extra is None and one.tags == () and one.root == "."
    assert one.seen == [] and one.seen is not two.seen  # a factory: a new list each time
    assert Answer.tags == () and "items" not in Answer.__dict__  # as a dataclass's class
    bad: list[tuple[Any, ...]] = [(), ("a", None, 1.0, 2)]
    for args in bad:
        with pytest.raises(TypeError):
            Item(*args)
    for kwargs in ({"nope": 1}, {"path": "b"}):
        with pytest.raises(TypeError):
            Item("a", None, **kwargs)


def test_kw_only_records_and_subclasses() -> None:
    with pytest.raises(TypeError):
        Block(3)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Wider(3)  # type: ignore[call-arg]  # kw_only inherited
    w = Wider(dim=2, more=5)
    assert Wider._fields == ("dim", "name", "child", "more")
    assert (w.dim, w.name, w.child, w.more) == (2, "x", None, 5)
    assert w != Block(dim=2)  # another class: never equal


def test_json_keys_omit_hidden_and_budget_marks() -> None:
    typed = Answer("a", [Item("x.md", None), Item("y.md", "Y", 2.5)], {"n": 2}, ("t",))
    data = typed.to_json()
    assert data == {"from": "a", "items": [{"path": "x.md", "score": 0.0},
                                           {"path": "y.md", "title": "Y", "score": 2.5}],
                    "extra": {"n": 2}, "tags": ["t"], "seen": []}
    assert list(data) == ["from", "items", "extra", "tags", "seen"]  # field order
    assert "extra" not in Answer("a", ["p"]).to_json()
    assert Answer.budget_keys() == frozenset({"from"})
    assert encode(typed) == data and encode([typed, {"k": (1,)}]) == [data, {"k": [1]}]


def test_from_json_reads_an_answer_back() -> None:
    typed = Answer("a", [Item("x.md", None), Item("y.md", "Y", 2.5)], {"n": 2}, ("t",))
    again = Answer.from_json(json.loads(json.dumps(typed.to_json())))
    assert again == typed and isinstance(again.items[0], Item)
    assert Answer.from_json({"from": "b", "items": ["p"]}) == Answer("b", ["p"])
    assert Item.from_json({"path": "z"}) == Item("z", None)  # `omit`: absent is None


def test_decode_validates_with_the_same_declarations() -> None:
    got = decode(Block, {"dim": 3, "child": {"dim": 1, "name": "c"}, "other": 1})
    assert got == Block(dim=3, child=Leaf(dim=1, name="c"))
    assert encode(got) == {"dim": 3, "name": "x", "child": {"dim": 1, "name": "c"}}
    assert decode(Answer, {"from": "s", "items": []}) == Answer("s", [])
    for bad, message in (({"name": "y"}, "`dim` is missing"),
                         ({"dim": 0}, "`dim` should be at least 1, not 0"),
                         ({"dim": "3"}, '`dim` should be a whole number, not "3"'),
                         ({"dim": 1, "child": {"dim": -1}}, "`child.dim` should be at least 1"),
                         ([], "the document should be an object")):
        with pytest.raises(ShapeError) as caught:
            decode(Block, bad)
        assert str(caught.value).startswith(message)
    with pytest.raises(ShapeError, match="`from` is missing"):
        decode(Answer, {"items": []})


class Node(Record):
    """Made only by the compile test below (a class compiles after its own uses)."""

    path: str
    label: str | None = json_field(default=None, omit=True)
    links: list[str] = json_field(default_factory=list)
    weights: dict[str, float] = json_field(default_factory=dict)
    extra: Any = None


class Subnode(Node):
    """Made before its parent compiles: it must not take its parent's methods then."""

    depth: int = 0


class Page(Record):
    name: str = json_field(key="from")
    nodes: list[Node]
    hidden: int = json_field(default=0, hidden=True)


def test_compiled_methods_give_what_the_generic_ones_give() -> None:
    assert Node.__init__ is Record.__init__ and Node.to_json is Record.to_json

    def make(i: int) -> tuple[Page, dict[str, Any]]:
        kwargs: dict[str, Any] = {"label": None if i % 2 else f"L{i}", "extra": [Node(f"{i}")]}
        if i % 3:
            kwargs["links"] = ["x", "y"]
        node = Node(f"n{i}", **kwargs)
        page = Page(f"p{i}", [node], hidden=i)
        return page, page.to_json()

    generic = [make(i) for i in range(COMPILE_AFTER - 2)]
    for _ in range(4):
        make(0)
    assert getattr(Node.__init__, "compiled", False) and getattr(Page.to_json, "compiled", False)
    compiled = [make(i) for i in range(COMPILE_AFTER - 2)]
    assert compiled == generic
    assert Node("a") == Node("a", None, [], {}, None) and Node("a").links is not Node("a").links
    with pytest.raises(TypeError):
        Node()  # type: ignore[call-arg]
    with pytest.raises(AttributeError):
        Node("a").path = "b"  # type: ignore[misc]

    class Late(Node):
        depth: int = 0

    for sub in (Subnode, Late):  # made before and after its parent compiled
        assert sub.__init__ is Record.__init__ and sub.to_json is Record.to_json
        assert sub("s", None, [], {}, None, 3).depth == 3
    assert Subnode("s", depth=2).to_json() == {"path": "s", "links": [], "weights": {},
                                                "extra": None, "depth": 2}


def test_a_dataclass_field_is_refused_not_taken_for_a_default() -> None:
    import dataclasses

    with pytest.raises(TypeError, match="json_field"):
        class Bad(Record):
            items: list[str] = dataclasses.field(default_factory=list)


def test_a_parameter_record_keeps_missing_as_a_value() -> None:
    class Arg(Record):
        name: str
        default: Any

    assert Arg("x", MISSING).default is MISSING
