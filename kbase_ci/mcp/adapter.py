"""A query of the registry (kbase_ci.query.tools) as an MCP tool: its signature (the
parameters' JSON schema: types, defaults, bounds, descriptions) made from the query's
parameter record, a call that runs the query on a view of the warm index, and how its
answer, or an error, becomes a tool result: the CLI's JSON, or kbase's JSON error (as
`--format json` prints it: `kind`, `message`, the `parameter` at fault, a `hint`) with
the CLI's message in the words of the tool (`max_tokens`, not `--max-tokens`:
`in_parameters`).
"""

from __future__ import annotations

import difflib
import inspect
import re
import sys
import traceback
from collections.abc import Awaitable, Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Literal

import anyio
import anyio.to_thread
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from kbase_ci.errors import KbaseError, UsageError, error_json
from kbase_ci.mcp.serverstate import ServerState
from kbase_ci.query.payload import Marks, dumps, render
from kbase_ci.query.tools import registry
from kbase_ci.query.tools.fold import Fold, args_of, pick
from kbase_ci.query.tools.spec import (
    BUDGET_TOOL,
    MAX_BUDGET,
    MAX_TOKENS,
    Arg,
    Nothing,
    Query,
    fields_of,
)
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from pathlib import Path

    from kbase_ci.query.view import QueryView
    from kbase_ci.vault.notefiles import Vault

READ_ONLY = ToolAnnotations(read_only_hint=True)
"""(The destructive and idempotent hints mean something only when a tool writes; every
tool's schema is in every agent's context, kbase_ci.mcp.schema.)"""


class WarmSession:
    """One call's view of the warm index (state: the view, taken once per call)."""

    form = "json"

    def __init__(self, warm: ServerState, max_tokens: int | None = None) -> None:
        self.warm = warm
        self.model: Path | None = warm.model
        self.max_tokens = max_tokens
        self._view: QueryView | None = None

    def view(self) -> QueryView:
        if self._view is None:
            self._view = self.warm.view()
        return self._view

    def vault(self) -> Vault:
        return self.warm.vault()

    def embedder(self, view: QueryView) -> tuple[Any, str | None]:
        return self.warm.embedder(view)


def error(kind: str, message: str, exc: BaseException | None = None,
          hint: str | None = None) -> CallToolResult:
    """A tool error: kbase's JSON error (kbase_ci.errors.error_json), its words the
    tool's (`in_parameters`)."""
    said = error_json(kind, in_parameters(message), exc=exc,
                      hint=None if hint is None else in_parameters(hint))
    return CallToolResult(content=[TextContent(type="text", text=dumps(said))], is_error=True)


def kbase_error(exc: KbaseError) -> CallToolResult:
    if isinstance(exc, Nothing):  # no answer at all (the CLI exits 1): what to try
        return error(exc.kind, exc.message, exc, exc.hint)
    return error(exc.kind, str(exc), exc)


async def result(run: Callable[[], tuple[Record, Marks]], warm: ServerState, max_tokens: int
                 ) -> CallToolResult:
    """The answer as compact JSON within `max_tokens` (as the CLI prints it); a kbase
    error as a tool error with its message, named in the tool's parameters. A bug
    becomes a tool error too (with the traceback on stderr, as the CLI prints it): the
    server keeps serving the other tools.

    The answer is computed on a worker thread, without the server's lock (the warm state
    takes it only while it changes), so a slow call never makes the others wait; a call
    that takes longer than `warm.time_limit` gets a tool error at that moment (its thread
    finishes in the background, its answer unused)."""
    try:
        with anyio.fail_after(warm.time_limit):
            answer, marks = await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
    except TimeoutError:
        return error("timeout", f"no answer within {warm.time_limit:g} s (the server's "
                     "time limit)", hint="ask a narrower question (a smaller limit, depth "
                     "or max_tokens, or one note); the other tools keep answering")
    except KbaseError as exc:
        return kbase_error(exc)
    except BaseException as exc:  # pyo3's PanicException is one
        if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit,
                            anyio.get_cancelled_exc_class())):
            raise
        print("kbase mcp: internal error in a tool call (please report this with the "
              "traceback below)", file=sys.stderr)
        traceback.print_exc()
        return error("internal", f"kbase internal error: {type(exc).__name__}: {exc}")
    try:
        text = render(answer.to_json(), marks, max_tokens=max_tokens)
    except KbaseError as exc:
        return kbase_error(exc)
    return CallToolResult(content=[TextContent(type="text", text=text)])


def _annotation(f: Arg) -> Any:
    """The parameter's type with its schema (description, bounds) for the SDK."""
    meta = f.param
    tp: Any = Literal[meta.choices] if meta.choices and meta.enum else f.type
    if f.many:
        tp = list[tp] | None
    elif f.optional or meta.by_action:
        tp = tp | None
    highs = [x for x in (meta.le, meta.tool_le) if x is not None]
    return Annotated[tp, Field(description=meta.tool or None, ge=meta.ge, gt=meta.gt,
                               le=min(highs) if highs else None)]


def _default(f: Arg) -> Any:
    if f.many or f.param.by_action:
        return None  # the CLI's default (an empty list, the action's own)
    return inspect.Parameter.empty if f.required else f.default


def tool_function(tool: Query[Any, Any] | Fold, warm: ServerState
                  ) -> Callable[..., Awaitable[CallToolResult]]:
    """The function the SDK makes the tool of: its signature is the tool's schema. A
    fold's call runs the query its `action` picks (kbase_ci.query.tools.fold)."""
    if isinstance(tool, Fold):
        queries = {q.name: q for q in registry.every() if q.name in tool.actions.values()}
        offered = args_of(tool, queries)
    else:
        offered = [f for f in fields_of(tool.params) if f.param.tool is not None]
    params = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=_default(f),
                                annotation=_annotation(f)) for f in offered]
    if not any(f.name == "max_tokens" for f in offered):  # every tool's answer has a budget
        params.append(inspect.Parameter(
            "max_tokens", inspect.Parameter.KEYWORD_ONLY, default=MAX_TOKENS,
            annotation=Annotated[int, Field(description=BUDGET_TOOL or None, ge=1, le=MAX_BUDGET)]))

    async def call(**arguments: Any) -> CallToolResult:
        def answer() -> tuple[Record, Marks]:
            query, given = ((tool, arguments) if isinstance(tool, Query)
                            else pick(tool, queries, arguments))
            params = query.call(given)
            got: Record = query.run(WarmSession(warm, int(arguments["max_tokens"])), params)
            return got, query.marks(params, got)

        return await result(answer, warm, int(arguments["max_tokens"]))

    call.__name__ = call.__qualname__ = tool.name
    call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        params, return_annotation=CallToolResult)
    return call


def unknown_arguments(tool: str, unknown: list[str], takes: Sequence[str]) -> CallToolResult:
    """A call with arguments the tool does not take: refused (as the schema's
    `additionalProperties: false` says), never silently dropped, naming what it takes."""
    near = difflib.get_close_matches(unknown[0], takes, n=1)
    return error(UsageError.kind,
                 f"{tool} takes no {', '.join(unknown)}"
                 + (f"; did you mean {near[0]}?" if near else "")
                 + f" ({tool} takes {', '.join(takes)})",
                 UsageError("", parameter=unknown[0]))


def invalid_arguments(tool: str, exc: ValidationError) -> CallToolResult:
    """Arguments the tool's schema refuses (a type, a bound, a choice, one missing), as
    kbase's JSON error naming the parameter: not pydantic's text and URL."""
    said: list[str] = []
    for err in exc.errors():
        name = ".".join(str(part) for part in err["loc"])
        if err["type"] == "missing":
            said.append(f"{tool} needs {name}")
        else:
            said.append(f"{name}: {err['msg'][:1].lower()}{err['msg'][1:]}")
    first = exc.errors()[0]["loc"] if exc.errors() else ()
    return error(UsageError.kind, "; ".join(said),
                 UsageError("", parameter=str(first[0]) if first else None))


_FLAG = re.compile(r"(?<![\w`-])--([a-z][a-z0-9-]*)(?: PATH| DIR| NAME)?")
_SERVER_OPTIONS = {"model": "`kbase mcp --model PATH`", "index": "`kbase mcp --index DIR`",
                   "scope": "`kbase mcp --scope NAME`"}


@cache
def _renamed() -> dict[str, str]:
    """CLI flags spelled otherwise than their parameters (`--from` is `start`)."""
    return {f.flag[2:]: f.name for q in registry.every() for f in fields_of(q.params)
            if f.param.tool is not None and f.flag != "--" + f.name.replace("_", "-")}


def in_parameters(message: str) -> str:
    """A CLI message in the words of the tools: `--max-tokens` is the parameter
    `max_tokens`, `NOTE` is `note`, and `--model` an option to start the server with."""
    renamed = _renamed()

    def name(m: re.Match[str]) -> str:
        flag = m.group(1)
        if flag in _SERVER_OPTIONS:
            return f"start the server with {_SERVER_OPTIONS[flag]}"
        return renamed.get(flag, flag.replace("-", "_"))

    message = re.sub(r"\bpass (?=--model)", "", message)
    # A quoted option with its value (`--model PATH/TO/name`) keeps the value the hint names.
    message = _FLAG.sub(name, message)
    message = re.sub(r"(?:\bpass )?`--(model|index|scope) ([^`\s]+)`",
                     r"start the server with `kbase mcp --\1 \2`", message)
    return re.sub(r"\bNOTE\b", "note", message)
