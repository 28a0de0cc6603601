"""One `QueryTerms` per search (issue 41): the query string is cut into words in one
place, `QueryTerms.of`, and every ranker, the evidence, the verdict and the snippets read
the record it makes; each term's document frequencies are looked up once."""

from __future__ import annotations

import ast

import pytest
from querykit import published_demo

from kbase_ci.query.discovery import open_source
from kbase_ci.query.queryterms import QueryTerms
from kbase_ci.query.search import Searcher
from kbase_ci.query.view import QueryView
from kbase_ci.vault.notefiles import Vault
from tests.conftest import REPO

QUERY = REPO / "kbase_ci" / "query"
SEARCH = ("queryterms", "search", "searcher", "notebm25", "evidence", "verdict", "misspell",
          "framewords", "snippets", "overlay", "hits", "fusion")
"""The modules a search runs through, from its string to its answer."""
TAKES_THE_STRING = {"queryterms.QueryTerms.of", "queryterms.QueryTerms.asked",
                    "search.rank", "search.search_answer"}
"""The constructors, and the entry points that hand the string to them."""
HANDED_TO = {"of", "rank", "SearchAnswer"}
"""What the entry points may give the string to: the constructor, `rank` (which calls
it) and the answer, which says what was asked."""
CUTTERS = {"words", "stemmed", "written", "query_terms", "written_terms"}
"""kbase_ci.index.tokens's functions that cut a query into terms."""


def _functions(tree: ast.AST, prefix: str) -> list[tuple[str, ast.FunctionDef]]:
    out: list[tuple[str, ast.FunctionDef]] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.ClassDef):
            out += _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.FunctionDef):
            out.append((prefix + node.name, node))
            out += _functions(node, f"{prefix}{node.name}.")
    return out


def _trees() -> dict[str, ast.Module]:
    return {name: ast.parse((QUERY / f"{name}.py").read_text(encoding="utf-8"))
            for name in SEARCH if (QUERY / f"{name}.py").is_file()}


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def test_only_the_constructor_takes_the_query_string() -> None:
    """Structural: a function of the search path given the query's string could cut it
    into words again; only `QueryTerms.of` (and `asked`) may, and the entry points hand
    it to nothing else."""
    takers = set()
    for module, tree in _trees().items():
        for name, fn in _functions(tree, f"{module}."):
            if any(a.arg == "query" for a in (*fn.args.args, *fn.args.kwonlyargs)):
                takers.add(name)
    assert takers == TAKES_THE_STRING
    handed = set()
    for module, tree in _trees().items():
        for name, fn in _functions(tree, f"{module}."):
            if name not in TAKES_THE_STRING or name.startswith("queryterms."):
                continue
            parents = {id(c): p for p in ast.walk(fn) for c in ast.iter_child_nodes(p)}
            for node in ast.walk(fn):
                if isinstance(node, ast.Name) and node.id == "query" and \
                        isinstance(node.ctx, ast.Load):
                    call = parents.get(id(node))
                    handed.add(_callee(call) if isinstance(call, ast.Call) else
                               f"{name}:{node.lineno}")
    assert handed <= HANDED_TO, handed


def _cuts(call: ast.Call, imported: set[str]) -> bool:
    """Whether `call` is one of `CUTTERS` (`tokens.words(...)`, or imported by name)."""
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr in CUTTERS and isinstance(f.value, ast.Name) and f.value.id == "tokens"
    return isinstance(f, ast.Name) and f.id in imported


def test_only_the_constructor_cuts_the_query_into_terms() -> None:
    called = set()
    for module, tree in _trees().items():
        imported = {a.asname or a.name for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module == "kbase_ci.index.tokens"
                    for a in node.names if a.name in CUTTERS}
        for name, fn in _functions(tree, f"{module}."):
            if any(isinstance(n, ast.Call) and _cuts(n, imported) for n in ast.walk(fn)):
                called.add(name)
    assert called == {"queryterms.QueryTerms.of"}


@pytest.fixture(scope="module")
def view(tmp_path_factory: pytest.TempPathFactory) -> QueryView:
    vault = Vault(published_demo(tmp_path_factory.mktemp("terms")))
    return QueryView(vault, open_source(vault, None))


def test_the_terms_of_a_query(view: QueryView) -> None:
    s = Searcher(view)
    q = QueryTerms.of("how do I install the package manager package", s)
    # BM25 counts a repeated word again; evidence reads each term once, as written,
    # without the frame of the question
    assert q.ranked == ("instal", "packag", "manag", "packag")
    assert q.written == (("install", "instal"), ("package", "packag"), ("manager", "manag"))
    assert q.text == "how do I install the package manager package"
    assert q.prefixes == ("insta", "the", "packa", "manag", "packa")
    assert set(q.idf) == {"instal", "packag", "manag"} and q.scale == {}
    # nothing but question words: they are what is asked for
    assert QueryTerms.of("how to", s).ranked == ("how",)


def test_each_term_is_looked_up_once_per_search(view: QueryView) -> None:
    s = Searcher(view)
    q = QueryTerms.of("package manager install package", s)
    counted = dict(s.frequencies().overall)
    assert set(counted) == {"packag", "manag", "instal"}
    s.bm25(q)
    assert s.frequencies().overall == counted  # BM25 reads the IDF already worked out


def test_a_slip_is_ranked_as_the_word_meant_at_its_weight(view: QueryView) -> None:
    s = Searcher(view)
    q = QueryTerms.of("package managr", s)
    assert q.read == (("managr", "manag", "manag"),)  # "manag": one letter added
    assert q.ranked == ("packag", "managr", "manag") and q.scale == {"manag": 0.25}
    assert q.terms == ["packag", "manag"] and "managr" not in q.unknown
