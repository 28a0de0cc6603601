"""Folds (kbase_ci.query.fold): several queries offered as one MCP tool whose
`action` picks the query, each query still a tool's worth of answer (tests/flows/test_mcp.py
asks them through the SDK's client)."""

from __future__ import annotations

import pytest

from kbase_ci.errors import UsageError
from kbase_ci.query import registry
from kbase_ci.query.fold import FOLDS, args_of, as_tool, members, pick, tools

_queries = members


def test_every_query_is_a_tool_or_one_folds_action() -> None:
    names = [q.name for q in registry.every()]
    folded = [q.name for f in FOLDS for q in members(f).values()]
    assert len(folded) == len(set(folded)) and set(folded) <= set(names)
    assert set(folded) == {q.name for q in registry.every() if q.fold is not None}
    offered = [t.name for t in tools()]
    assert len(offered) == len(set(offered)) == len(names) - len(folded) + len(FOLDS)
    assert as_tool("backlinks", {"note": "A"}) == ("links", {"action": "backlinks",
                                                             "note": "A"})
    assert as_tool("read", {"note": "A"}) == ("read", {"note": "A"})


def test_a_folds_parameters_say_which_actions_take_them() -> None:
    digest = next(f for f in FOLDS if f.name == "digest")
    args = {a.name: a for a in args_of(digest, _queries(digest))}
    assert next(iter(args)) == "action" and args["action"].required
    assert args["action"].param.choices == tuple(digest.actions)
    note = args["note"]  # summarize's NOTE, optional on the tool
    assert note.optional and not note.required and note.param.actions == ("summarize",)
    limit = args["limit"]  # three defaults: the tool leaves it None
    assert limit.default is None and limit.param.by_action == {
        "concept": 20, "concepts": 50, "compare": 10}
    assert args["definition"].default is False  # a flag stays a flag
    links = next(f for f in FOLDS if f.name == "links")
    assert next(a for a in args_of(links, _queries(links)) if a.name == "note").required


def test_a_call_gives_its_action_only_what_it_takes() -> None:
    tags = next(f for f in FOLDS if f.name == "tags")
    queries = _queries(tags)
    query, given = pick(tags, queries, {"action": "suggest", "note": "A", "limit": None,
                                        "tree": False, "max_tokens": 900})
    assert query.name == "tags_suggest" and given == {"note": "A", "max_tokens": 900}
    with pytest.raises(UsageError, match=r"^action suggest takes no stats, tags; it takes "
                                         r"note, limit$"):
        pick(tags, queries, {"action": "suggest", "note": "A", "stats": True,
                             "tags": ["x"]})
    with pytest.raises(UsageError, match=r"^action suggest needs note$"):
        pick(tags, queries, {"action": "suggest", "note": None})
    with pytest.raises(UsageError, match="at most 100 for action suggest, not 101"):
        pick(tags, queries, {"action": "suggest", "note": "A", "limit": 101})
    assert pick(tags, queries, {"action": "list", "limit": 101})[1] == {"limit": 101}


def test_a_parameter_the_queries_describe_otherwise_must_be_described() -> None:
    tags = next(f for f in FOLDS if f.name == "tags")
    bare = tags._replace(described=None)
    with pytest.raises(ValueError, match="describe"):
        args_of(bare, _queries(bare))


def test_a_folds_actions_are_its_queries_and_only_the_fold_describes_them() -> None:
    """Membership is the query's field (`Query.fold`); the fold declares the order of its
    actions and the one description an agent reads, so a folded query has none."""
    for q in registry.every():
        if q.fold is None:
            assert q.tool and q.when, q.name
            continue
        assert not q.tool and not q.when, q.name  # never shown: the fold's text is
        fold = next(f for f in FOLDS if f.name == q.fold[0])
        assert q.fold[1] in fold.actions, q.name
    for fold in FOLDS:
        assert sorted(members(fold)) == sorted(fold.actions)
