"""A query tool declared once (`Query`): its CLI words and MCP name, its help, a frozen
parameter record whose fields carry `Param` metadata (help, bounds, choices, the CLI's
spelling), how it runs on a `Session`, its answer's text form, and when the answer counts
as "found" (exit 0) or "none" (exit 1). The CLI's argparse parsers
(kbase_ci.cli.queryargs), the MCP tools (kbase_ci.mcp.adapter) and docs/mcp.md's tool
table (`docs`) are made from it, and `check` validates a call the same way for both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import NoneType, UnionType
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Generic,
    Protocol,
    TypeVar,
    get_args,
    get_origin,
)

from kbase_ci.errors import UsageError
from kbase_ci.typedjson import MISSING, Record

if TYPE_CHECKING:
    from kbase_ci.query.view import QueryView
    from kbase_ci.vault.notefiles import Vault

P = TypeVar("P", bound=Record)
A = TypeVar("A", bound=Record)


MAX_DEPTH = 100
"""Most links a traversal follows from its start (`read --depth`, `graph --depth`,
`prerequisites --depth`, `reading-order --depth`): past a vault's diameter more
changes nothing, and a depth of 10**12 spun forever (issue 28)."""
MAX_LIMIT = 100_000
"""Most entries a list may be asked for (`--limit`, and the `--min-*` thresholds)."""
MAX_BUDGET = 1_000_000
"""Largest `--max-tokens` / `max_tokens`."""
MAX_SECONDS = 3600
"""Longest `--timeout` of a query that takes one."""


class Param(Record):
    """How a parameter is offered (the metadata of a parameter record's field)."""

    help: str | None = None
    """The CLI's help (`%(default)s` allowed); None: no help line."""
    tool: str | None = None
    """The MCP parameter's description; None: a CLI option only; "": offered without one
    (a parameter many tools share, described once in the server's instructions,
    kbase_ci.mcp.server: every tool's schema is in every agent's context)."""
    flag: str | None = None
    """The CLI spelling when it is not `--name-with-dashes`."""
    positional: bool = False
    metavar: str | None = None
    choices: tuple[str, ...] = ()
    enum: bool = True
    """MCP: the choices as an enum (else a string `check` refuses when not one)."""
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    """The largest value anyone may ask for (`bounds`: CLI exit 2, a tool error): what
    keeps a depth, limit or budget from making one call run forever."""
    tool_le: int | None = None
    """An upper bound for agents only (a tool's answer stays small; a person may ask
    for more on the command line)."""
    cli: bool = True
    actions: tuple[str, ...] = ()
    """A query with actions (`kbase graph ACTION`): the actions taking it (all: ())."""
    by_action: Mapping[str, Any] | None = None
    """Defaults per action (the CLI shows them; a tool leaves the parameter None)."""
    helps: Mapping[str, str] | None = None
    """The CLI's help per action, where it differs."""


class Arg(Record):
    """A parameter record's field, resolved: its name, its type without `None`
    (`many`: a tuple of them), its default, and its `Param`."""

    name: str
    type: Any
    optional: bool
    many: bool
    default: Any
    param: Param

    @property
    def flag(self) -> str:
        return self.param.flag or "--" + self.name.replace("_", "-")

    @property
    def required(self) -> bool:
        return self.default is MISSING


_FIELDS: dict[type, list[Arg]] = {}
_NO_PARAM = Param()


def fields_of(params: type[Record]) -> list[Arg]:
    """The fields of a parameter record, in order (resolved once per record class)."""
    got = _FIELDS.get(params)
    if got is None:
        import typing  # the annotations are strings until a parser or a tool is made

        hints = typing.get_type_hints(params, include_extras=True)
        got = []
        for name in params._fields:
            tp, meta = hints[name], _NO_PARAM
            if get_origin(tp) is Annotated:  # nested ones are flattened: merge their Params
                tp, *extra = get_args(tp)
                for m in extra:
                    if isinstance(m, Param):
                        meta = m if meta is _NO_PARAM else meta._replace(**{
                            k: v for k, v in vars(m).items() if v != getattr(_NO_PARAM, k)})
            optional = get_origin(tp) in (typing.Union, UnionType) and NoneType in get_args(tp)
            if optional:
                tp = next(a for a in get_args(tp) if a is not NoneType)
            many = get_origin(tp) is tuple
            got.append(Arg(name, get_args(tp)[0] if many else tp, optional, many,
                           params._defaults.get(name, MISSING), meta))
        _FIELDS[params] = got
    return got


class Session(Protocol):
    """What a query runs on: the CLI's (one view, opened from its options) or the MCP
    server's (a view of its warm index, right for the work tree now)."""

    model: Path | None
    """The embedding model folder given to the server (`kbase mcp --model`)."""
    form: str
    """How the answer is printed: `json` (always, for a tool), `text`, a picture."""
    max_tokens: int | None
    """The budget the answer is printed within (None: none): an answer that can fill it
    better than trimming would (`read --expand-links`) packs itself to it."""

    def view(self) -> QueryView: ...

    def vault(self) -> Vault: ...

    def embedder(self, view: QueryView) -> tuple[Any, str | None]:
        """The index's embedding model already loaded, or (None, why not), or (None,
        None): look for it now."""
        ...


class Nothing(UsageError):
    """No answer at all: the CLI prints `kbase: MESSAGE` and exits 1 (as for an empty
    answer; with `--format json` also the JSON error of kind `not-found`), a tool's error
    adds the hint."""

    kind = "not-found"

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(f"{message}: {hint}")
        self.message, self.hint = message, hint


class Query(Record, Generic[P, A]):
    """One query tool (see the module docstring)."""

    name: str
    """The MCP tool's name."""
    command: tuple[str, ...]
    """The CLI's words: `("tags", "suggest")` is `kbase tags suggest`."""
    help: str
    """The CLI's one-line help."""
    tool: str
    """The MCP tool's description: when an agent should call it."""
    when: str
    """docs/mcp.md: when an agent calls it, in a few words."""
    params: type[P]
    run: Callable[[Session, P], A]
    text: Callable[[A], list[str]]
    """The text form (`--format text`), made from the answer (trimmed to a budget, too)."""
    found: Callable[[A], bool]
    """Exit 0 when True, else 1 (`--format text` and JSON alike)."""
    lists: tuple[str, ...] | Callable[[P], tuple[str, ...]] = ()
    """The answer's lists that say what it is for, most first (or, for a call, which
    ones: a graph action's): the first one the answer has is its primary list. A token
    budget cuts every other list first and these last, the primary list last of all
    (kbase_ci.query.payload). A list is named by its keys joined with `.`
    (`clusters.members`); naming one inside another's items spares both."""
    description: str | None = None
    """The CLI's `--help` description."""
    formats: tuple[str, ...] = ("json", "text")
    default_format: str = "json"
    source: bool = True
    """It answers from the index (`--index`, `--scope`, `--offline`)."""
    stale_ok: bool = False
    """It answers from a stale scope too (to say it is stale)."""
    prepare: Callable[[P], P] | None = None
    """Checks and normalises a call beyond `Param` bounds and choices."""
    budgeted: bool = False
    """Its text form keeps to `--max-tokens` itself."""
    actions: str | None = None
    """The field whose values are CLI subcommands (`kbase graph ACTION`)."""
    aliases: Mapping[str, tuple[str, ...]] | None = None
    draw: Callable[[A, str], str] | None = None
    """Pictures: the answer in one of `pictures`."""
    pictures: Mapping[str, str] | None = None
    """The picture formats of `formats` (Mermaid, DOT), and how a comment starts in each
    (the line saying what a budget cut)."""
    events: Callable[[Session, P], Iterator[tuple[str, Record]]] | None = None
    """`--stream`: JSON lines as the answer is made: ("node", item) for each item as it is
    reached (the first: where the walk starts), then ("result", the answer without them)."""
    check_form: Callable[[P, str], None] | None = None
    """Checks a call against the form it is printed in (`--format`, `--stream`)."""

    @property
    def words(self) -> str:
        return " ".join(self.command)

    def marks(self, params: P, answer: A) -> tuple[frozenset[str], tuple[str, ...]]:
        """What a budget never cuts in `answer`, and its lists in the order they give
        way last (kbase_ci.query.payload.Marks)."""
        named = self.lists(params) if callable(self.lists) else self.lists
        return answer.budget_keys(), named

    def call(self, values: Mapping[str, Any]) -> P:
        """The parameter record for `values` (by field name; a tool's None for a list is
        an empty one), checked: bounds, choices, then `prepare`."""
        given: dict[str, Any] = {}
        for f in fields_of(self.params):
            if f.name not in values:
                continue
            value = values[f.name]
            if f.many:
                value = tuple(value or ())
            given[f.name] = value
        params = self.params(**given)
        for f in fields_of(self.params):
            check(f, getattr(params, f.name))
        return self.prepare(params) if self.prepare is not None else params


def _num(v: float) -> str:
    """A bound or value as typed: `100`, `1000000000000`, `0.5` (never `1e+12`)."""
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def check(f: Arg, value: Any) -> None:
    """A value against its field's choices and bounds (a message in the CLI's words)."""
    meta = f.param
    for v in (value if f.many else (value,)):
        if v is None:
            continue
        wrong = None
        if meta.choices and v not in meta.choices:
            wrong = f"must be one of {', '.join(meta.choices)}, not {v!r}"
        elif meta.ge is not None and v < meta.ge:
            wrong = f"must be at least {meta.ge:g}, not {v:g}"
        elif meta.gt is not None and v <= meta.gt:
            wrong = f"must be more than {meta.gt:g}, not {v:g}"
        elif meta.le is not None and v > meta.le:
            wrong = f"must be at most {_num(meta.le)}, not {_num(v)}"
        if wrong is not None:
            raise UsageError(f"{f.flag} {wrong}", parameter=f.name)


def refuse_unused(action: str, given: Mapping[str, Any], offered: Sequence[str],
                  needs: Iterable[str] = ()) -> None:
    """A call of a tool with actions (`graph`'s, a fold's: kbase_ci.query.tools.fold)
    gives only what its action takes (`offered`, in order): a value given for another
    action is an error, not silently dropped (None, False and an empty list are "not
    given"), naming what the action takes instead (`needs`: what it cannot do without,
    when not given)."""
    unused = sorted(k for k, v in given.items()
                    if v is not None and v is not False and v != () and v != []
                    and k not in offered)
    if unused:
        needed = [n for n in needs if given.get(n) in (None, "")]
        rest = [k for k in offered if k not in needed]
        said = (f"; it needs {' and '.join(needed)}" if needed else "") + \
            ((", takes " if needed else "; it takes ") + ", ".join(rest) if rest else "")
        raise UsageError(f"action {action} takes no {', '.join(unused)}{said}",
                         parameter=unused[0])


BUDGET = ("the answer printed (JSON, text or picture) stays within N tokens: lists are cut "
          "from their least relevant end and `truncated` (a last line in text) says what "
          "went")
"""`--max-tokens`, which every query takes."""
BUDGET_TOOL = ""
"""`max_tokens` of a tool: described once, in kbase_ci.mcp.server.INSTRUCTIONS."""
MAX_TOKENS = 8000
"""A tool's answer stays within this many tokens unless the call asks for another budget."""

Note = Annotated[str, Param(metavar="NOTE", positional=True, tool="")]
Tags = Annotated[tuple[str, ...], Param(
    flag="--tag", metavar="T", help="only notes with tag T or a tag under it (T/...); repeatable",
    tool="")]
Domain = Annotated[str | None, Param(help="only notes of this domain", tool="")]
Timeout = Annotated[float | None, Param(
    metavar="SECONDS", gt=0, le=MAX_SECONDS,
    help="stop after this many seconds and answer with what was found so far, marked "
         "`partial: true` with the reason",
    tool="")]


def none_if_blank(text: str | None) -> str | None:
    """A tool's empty string is "not given", as an option left out is."""
    return (text or "").strip() or None
