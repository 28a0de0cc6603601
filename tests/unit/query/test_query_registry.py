"""The query registry (kbase_ci.query.registry) is the one declaration of every query: the
CLI's parsers, the MCP tools and docs/mcp.md's tool table are made from it, so a query
declared there (here: `echo`, added by a fixture) is a command, a tool and a table row
at once, checked the same way on both sides; and typed answers read back what they
print."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import anyio
import pytest
from mcp.types import CallToolResult, TextContent

from kbase_ci.cli import queryargs, queryrun
from kbase_ci.cli.commandline import COMMANDS, build_parser
from kbase_ci.errors import UsageError
from kbase_ci.mcp.server import build_server
from kbase_ci.mcp.serverstate import ServerState
from kbase_ci.query import docs, registry
from kbase_ci.query.spec import Param, Query, Session, fields_of
from kbase_ci.typedjson import Record, json_field

REPO = Path(__file__).resolve().parents[3]


class EchoParams(Record):
    words: Annotated[str, Param(positional=True, help="what to say", tool="What to say.")]
    times: Annotated[int, Param(ge=1, tool_le=3, help="how often", tool="How often.")] = 1
    loud: Annotated[bool, Param(flag="--shout", help="in capitals",
                                tool="In capitals.")] = False
    mood: Annotated[str | None, Param(help="a command-line option only")] = None


class Echo(Record):
    said: list[str]
    mood: str | None = json_field(default=None, omit=True)


def _echo(s: Session, p: EchoParams) -> Echo:
    return Echo([p.words.upper() if p.loud else p.words] * p.times, p.mood)


def _prepare(p: EchoParams) -> EchoParams:
    if p.times > 1 and not p.words.strip():
        raise UsageError("--times repeats the words: give some")
    return p


ECHO = Query("echo", ("echo",), help="say the words again",
             tool="Say the words again, as often as asked: a query declared by a test, to "
                  "show that one declaration makes a command, a tool and a table row.",
             when="testing the registry", params=EchoParams, run=_echo,
             text=lambda a: a.said, found=lambda a: bool(a.said), lists=("said",),
             source=False, prepare=_prepare)


@pytest.fixture
def echo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    query = registry._query
    monkeypatch.setattr(registry, "QUERIES",
                        (*registry.QUERIES, ("echo", "echo", "echo", ECHO.help)))
    monkeypatch.setattr(registry, "_query",
                        lambda name, module: ECHO if name == "echo" else query(name, module))
    yield


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kbase")
    queryargs.add_command(parser.add_subparsers(dest="command"), "echo")
    return parser


def test_a_declared_query_is_a_command(echo: None, capsys: pytest.CaptureFixture[str]) -> None:
    parser = _parser()
    assert queryrun.run(parser.parse_args(["echo", "hi", "--times", "2", "--shout",
                                           "--format", "text"])) == 0
    assert capsys.readouterr().out == "HI\nHI\n"
    assert queryrun.run(parser.parse_args(["echo", "hi", "--mood", "calm"])) == 0
    assert json.loads(capsys.readouterr().out) == {"said": ["hi"], "mood": "calm"}
    with pytest.raises(UsageError, match="--times must be at least 1, not 0"):
        queryrun.run(parser.parse_args(["echo", "hi", "--times", "0"]))
    with pytest.raises(UsageError, match="--times repeats the words"):
        queryrun.run(parser.parse_args(["echo", " ", "--times", "2"]))
    assert queryrun.run(parser.parse_args(["echo", "hi", "--times", "5"])) == 0  # CLI: no cap


def _call(server: Any, **arguments: Any) -> CallToolResult:
    async def body() -> CallToolResult:
        got = await server.call_tool("echo", arguments)
        assert isinstance(got, CallToolResult)
        return got

    return anyio.run(body)


def _text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def test_a_declared_query_is_a_tool(echo: None, tmp_path: Path) -> None:
    server = build_server(ServerState(tmp_path))

    async def listed() -> dict[str, Any]:
        return {t.name: t for t in await server.list_tools()}

    tools = anyio.run(listed)
    assert list(tools)[-1] == "echo"  # in registry order
    schema = tools["echo"].input_schema
    assert schema["required"] == ["words"]
    assert schema["additionalProperties"] is False  # an argument it does not take: refused
    props = schema["properties"]
    assert set(props) == {"words", "times", "loud", "max_tokens"}  # `mood`: the CLI's only
    # compact (kbase_ci.mcp.schema): no titles, no trivial floor; the cap an agent needs
    assert props["times"] == {"default": 1, "description": "How often.", "maximum": 3,
                              "type": "integer"}
    assert props["loud"] == {"description": "In capitals.", "type": "boolean"}  # false: left out
    assert tools["echo"].description == ECHO.tool
    assert json.loads(_text(_call(server, words="hi", times=2, loud=True))) == {
        "said": ["HI", "HI"]}
    # Errors are kbase's JSON error, naming the parameter: the schema's bound, the
    # declaration's own check (in its words), an argument the tool does not take.
    bad = _call(server, words="hi", times=0)
    assert bad.is_error and json.loads(_text(bad)) == {"error": {
        "kind": "usage", "message": "times: input should be greater than or equal to 1",
        "parameter": "times"}}
    bad = _call(server, words=" ", times=2)
    assert bad.is_error and json.loads(_text(bad)) == {"error": {
        "kind": "usage", "message": "times repeats the words: give some"}}
    bad = _call(server, words="hi", tims=2)
    assert bad.is_error and json.loads(_text(bad)) == {"error": {
        "kind": "usage", "message": "echo takes no tims; did you mean times? (echo takes "
        "words, times, loud, max_tokens)", "parameter": "tims"}}


def test_a_declared_query_is_a_docs_row(echo: None) -> None:
    assert ("| `echo` | `words`; `times` (1; 1-3); `loud` (CLI `--shout`; false) | "
            "`kbase echo` | testing the registry |") in docs.render()


@pytest.mark.parametrize("target", ["registry.py", "mcp.md", "json-schema.md"])
def test_what_is_generated_is_current(target: str) -> None:
    """The registry's table (what `kbase --help` and `kbase mcp --help` show) and the
    docs' tables are what the declarations make."""
    path, _, _, make = next(g for g in docs.generated() if g[0].name == target)
    assert make() in path.read_text(encoding="utf-8"), \
        f"{path.relative_to(REPO)}: run `python -m kbase_ci.query.docs --write`"


def test_the_registry_lists_every_declared_query_and_its_module() -> None:
    assert [(q.name, q.words, module, q.help) for module, q in docs.declarations()] == \
        list(registry.QUERIES)
    assert [q.name for q in registry.every()] == [name for name, *_ in registry.QUERIES]


def test_every_module_name_in_the_query_package_is_its_own() -> None:
    """A jump to `links.py` lands on the one in kbase_ci/query (a query that grows into a
    package of its own keeps its modules' names apart from its siblings')."""
    package = REPO / "kbase_ci" / "query"
    names = [p.name for p in package.rglob("*.py") if p.name != "__init__.py"]
    assert sorted(names) == sorted(set(names))


def test_help_imports_no_query() -> None:
    """`kbase --help` and `kbase mcp --help` read the registry's table: no query module
    (nor its answer code) is loaded to list the commands and tools."""
    script = ("import sys, contextlib, io\n"
              "from kbase_ci.cli.main import main\n"
              "for argv in (['--help'], ['mcp', '--help']):\n"
              "    with contextlib.redirect_stdout(io.StringIO()):\n"
              "        main(argv)\n"
              "print(sorted(m for m in sys.modules if m.startswith('kbase_ci.query.')))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, cwd=REPO).stdout
    # the registry, the declarations' types and choices; `kbase handover latest`'s own
    assert out.strip() == str([f"kbase_ci.query.{m}" for m in
                               ("choices", "handover", "registry", "spec")])


def test_every_query_is_declared_once_and_offered_on_both_sides() -> None:
    queries = registry.every()
    assert len({q.name for q in queries}) == len(queries) == len(registry.QUERIES)
    assert len({q.command for q in queries}) == len(queries)
    for q in queries:
        assert q.command[0] in COMMANDS, q.name
        help_text = _help(q)
        for f in fields_of(q.params):
            if f.param.cli and not f.param.positional and not f.param.actions \
                    and f.name != q.actions:
                assert f.flag in help_text, (q.name, f.flag)
            assert f.param.cli or f.param.tool is not None, (q.name, f.name)


def _help(q: Query[Any, Any]) -> str:
    import contextlib
    import io

    parser = build_parser(q.command[0])
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        parser.parse_args([*q.command, *(["explore"] if q.actions else []), "--help"])
    return out.getvalue()


class Item(Record):
    path: str
    title: str | None = json_field(omit=True)


class Answer(Record):
    source: str = json_field(key="from")
    items: list[Item] | list[str]
    extra: dict[str, int] | None = json_field(default=None, omit=True)


def test_typed_answers_read_back_their_json() -> None:
    typed = Answer("a", [Item("x.md", None), Item("y.md", "Y")], {"n": 2})
    data = typed.to_json()
    assert data == {"from": "a", "items": [{"path": "x.md"}, {"path": "y.md", "title": "Y"}],
                    "extra": {"n": 2}}
    assert list(data) == ["from", "items", "extra"]
    assert Answer.from_json(data) == typed
    assert Answer.from_json({"from": "b", "items": ["p"]}) == Answer("b", ["p"])
    with pytest.raises(AttributeError):
        typed.source = "c"  # type: ignore[misc]
    for _ in range(40):  # past the point a class compiles its `__init__`
        assert Item(path="z", title=None).to_json() == {"path": "z"}
    with pytest.raises(TypeError):
        Item()  # type: ignore[call-arg]
