"""`kbase auto-index --domain D | --tag T`: a generated overview note, model-free.

The notes of a domain or with every tag given (as `kbase notes` selects them; generated
overviews aside), grouped by folder (groups by path; within a group, the reading order),
or, when they all sit in one folder, by the link clusters among them (`query.clusters`:
Louvain communities of at least `MIN_CLUSTER` notes, biggest first, named by their
central note, the notes in none last) when there are any: one folder says nothing, the
links say what goes together. Then a reading order over all of them (`kbase
reading-order`: each note after the notes it builds on), and a one-line summary each
(its first sentence, `query.prose`). The Markdown is a function of the notes alone (no
date, no commit): the same vault gives the same bytes.

`write_overview` puts it in the repository through the safe writer: a `.md` path inside
the vault (`vault.safefs.confine`: no `..`, no symbolic link, no submodule), a temp file
then a rename (`state.files`), and never over a note it did not generate (its
frontmatter says `kbase-generated: auto-index`) unless forced.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Sequence
from pathlib import Path, PurePosixPath
from typing import Annotated

from kbase_ci.errors import UsageError
from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.filters import domain_key
from kbase_ci.query.prose import read
from kbase_ci.query.readingorder import reading_order_answer
from kbase_ci.query.spec import Domain, Param, Query, Session, Tags, none_if_blank
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, json_field

MARK = "kbase-generated: auto-index"
"""The frontmatter line of a generated overview (what may be overwritten)."""
MIN_CLUSTER = 3
"""Fewest notes of a link cluster that makes a group (as `graph clusters`' default)."""
SUMMARY = 160
"""Longest one-line summary (characters), cut with an ellipsis."""
_ESCAPE = re.compile(r"([\\`*_\[\]#<>|$%^~=!])")
_LINK_UNSAFE = re.compile(r"[\[\]|#^]")


class Entry(Record):
    path: str
    title: str
    summary: str


class Group(Record):
    folder: str | None
    """The folder, grouped by folder; else null."""
    notes: list[Entry]
    central: str | None = json_field(default=None, omit=True)
    """Grouped by link cluster: the cluster's central note (null: the notes in none)."""
    terms: list[str] | None = json_field(default=None, omit=True)
    """Grouped by link cluster: its distinctive title and heading words."""


class AutoIndexAnswer(Record):
    title: str
    domain: str | None
    tags: list[str]
    count: int
    grouped_by: str
    """`folder`, or `cluster` (see the module docstring)."""
    groups: list[Group]
    reading_order: list[str]
    markdown: str
    written: str | None
    """The path written (`--write`), else null."""
    index: IndexInfo = json_field(keep=True)


def _one_line(view: QueryView, path: str, title: str) -> str:
    for s in read(view.text(path))[0]:
        if s.text.strip().casefold() != title.casefold():
            text = " ".join(s.text.split())
            return text if len(text) <= SUMMARY else text[:SUMMARY - 1] + "\u2026"
    return ""


def _esc(text: str) -> str:
    """Text that Markdown shows as written: no link, tag, emphasis, math or comment."""
    return _ESCAPE.sub(r"\\\1", text)


def _link(path: str, title: str) -> str:
    """A wikilink to the note by its path (unambiguous), shown as its title; a note whose
    path a wikilink cannot spell (`[`, `]`, `|`, `#`, `^`) is named, not linked."""
    target = path[:-3] if path.endswith(".md") else path
    if _LINK_UNSAFE.search(target):
        return _esc(title)
    shown = " ".join(_LINK_UNSAFE.sub(" ", title).split())
    return f"[[{target}|{shown}]]" if shown and shown != target else f"[[{target}]]"


def _heading(g: Group, titles: dict[str, str]) -> str:
    if g.folder is not None:
        return g.folder or "Top level"
    if g.central is None:
        return "Other notes"
    return f"Around {titles[g.central]}" + (f" ({', '.join(g.terms)})" if g.terms else "")


def _clusters(view: QueryView, order: list[str]
              ) -> list[tuple[str | None, list[str], list[str]]]:
    """The link clusters among the notes of `order` (at least MIN_CLUSTER notes each,
    biggest first), each (central note, terms, notes), then (None, [], the notes in
    none)."""
    # Lazy: only a one-folder set pays for the clustering
    from kbase_ci.query.clusters import clusters
    from kbase_ci.query.graph import NoteGraph
    from kbase_ci.query.notetable import NoteEdges

    paths = tuple(sorted(order))
    node = {p: i for i, p in enumerate(paths)}
    edges = view.edges
    pairs = tuple(sorted((node[edges.paths[a]], node[edges.paths[b]]) for a, b in edges.pairs
                         if edges.paths[a] in node and edges.paths[b] in node))
    texts = [" ".join((view.notes[p].title, *(h[1] for h in view.notes[p].headings)))
             for p in paths]
    found = clusters(NoteGraph(NoteEdges(paths, pairs)), texts, min_size=MIN_CLUSTER)
    groups: list[tuple[str | None, list[str], list[str]]] = [
        (paths[c.central], list(c.terms), [paths[n] for n in c.members]) for c in found]
    rest = set(order).difference(*(ps for _, _, ps in groups))
    return [*groups, (None, [], sorted(rest))] if rest else groups


def render(title: str, what: str, groups: Sequence[Group], order: Sequence[str],
           titles: dict[str, str]) -> str:
    """The overview note's Markdown (deterministic)."""
    lines = ["---", MARK, "---", f"# {_esc(title)}", "",
             f"Generated by `kbase auto-index {what}`: {len(order)} notes. Regenerate it "
             "rather than editing it.", "", "## Reading order", ""]
    lines += [f"{i}. {_link(p, titles[p])}" for i, p in enumerate(order, 1)]
    for g in groups:
        lines += ["", f"## {_esc(_heading(g, titles))}", ""]
        for e in g.notes:
            summary = _esc(e.summary)
            lines.append(f"- {_link(e.path, e.title)}" + (f": {summary}" if summary else ""))
    return "\n".join(lines) + "\n"


def auto_index_answer(view: QueryView, *, domain: str | None = None,
                      tags: Sequence[str] = (), title: str | None = None) -> AutoIndexAnswer:
    if domain is None and not tags:
        raise UsageError("auto-index needs --domain D or --tag T (the notes to index)")
    domain = domain_key(view, domain)
    ordered = reading_order_answer(view, tags=tags, domain=domain, limit=10**9)
    # Overviews it generated are not notes of the set: regenerating one gives the same bytes
    texts = view.texts(s.path for s in ordered.order)
    order = [s.path for s in ordered.order if not texts[s.path].startswith(f"---\n{MARK}\n")]
    titles = {p: view.notes[p].title for p in order}
    place = {p: i for i, p in enumerate(order)}
    folders: dict[str, list[str]] = {}
    for p in order:
        folders.setdefault(str(PurePosixPath(p).parent).removeprefix("."), []).append(p)

    def entries(ps: list[str]) -> list[Entry]:
        return [Entry(p, titles[p], _one_line(view, p, titles[p]))
                for p in sorted(ps, key=place.__getitem__)]

    linked = _clusters(view, order) if len(folders) == 1 else []
    if len(linked) > 1:  # one cluster of them all says no more than their folder
        by = "cluster"
        groups = [Group(None, entries(ps), central, terms) for central, terms, ps in linked]
    else:
        by = "folder"
        groups = [Group(f, entries(ps)) for f, ps in sorted(folders.items())]
    what = " ".join([*([f"--domain {ordered.domain}"] if ordered.domain else []),
                     *(f"--tag {t}" for t in tags)])
    heading = title or ": ".join([*([ordered.domain] if ordered.domain else []),
                                  *(["notes tagged " + ", ".join(tags)] if tags else [])])
    return AutoIndexAnswer(heading, ordered.domain, list(tags), len(order), by, groups, order,
                           render(heading, what, groups, order, titles), None,
                           view.index_info())


def write_overview(root: Path, rel: str, text: str, *, force: bool = False,
                   gitlinks: Collection[str] = ()) -> str:
    """Write the overview at `rel` (vault-relative) atomically; UsageError when `rel` is
    not a `.md` path inside the vault, or names a note this did not generate (unless
    `force`). Returns `rel` as written."""
    # Lazy: only a write pays for the writers
    from kbase_ci.state.bounded import NotRegular, read_input
    from kbase_ci.state.files import write_atomic
    from kbase_ci.vault.safefs import confine

    rel = PurePosixPath(rel.replace(os.sep, "/")).as_posix()
    if not rel.endswith(".md"):
        raise UsageError(f"--write {rel}: an overview is a note: give a path ending in .md")
    full = confine(root, rel, gitlinks=gitlinks, what="--write")
    if os.path.lexists(full) and not force:
        try:  # never blocks on a FIFO standing at that path
            head = read_input(full)[:4096].decode("utf-8", "replace")
        except NotRegular:
            raise UsageError(f"--write {rel}: not a regular file (a FIFO, socket or "
                             "device); not replaced") from None
        except OSError as exc:
            raise UsageError(f"--write {rel}: cannot read it ({exc.strerror})") from None
        if not head.startswith(f"---\n{MARK}\n"):
            raise UsageError(f"--write {rel}: a note kbase did not generate is there; not "
                             "overwriting it (--force to replace it)")
    full.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(full, text.encode("utf-8"))
    return rel


class AutoIndexParams(Record):
    domain: Domain = None
    tags: Tags = ()
    title: Annotated[str | None, Param(help="the overview's heading (default: the domain "
                                            "or tags)", tool="Its heading.")] = None
    write: Annotated[str | None, Param(
        metavar="PATH", help="also write it to PATH (a .md inside the repository; never "
                             "over a note it did not generate, unless --force)")] = None
    force: Annotated[bool, Param(help="with --write: replace a note it did not "
                                      "generate")] = False


def _prepare(p: AutoIndexParams) -> AutoIndexParams:
    if not none_if_blank(p.domain) and not p.tags:
        raise UsageError("auto-index needs --domain D or --tag T (the notes to index)")
    if p.force and p.write is None:
        raise UsageError("--force goes with --write")
    return p


def _run(s: Session, p: AutoIndexParams) -> AutoIndexAnswer:
    view = s.view()
    answer = auto_index_answer(view, domain=none_if_blank(p.domain), tags=p.tags,
                               title=none_if_blank(p.title))
    if p.write is None or not answer.count:
        return answer
    root = view.vault.root
    rel = os.path.relpath(Path(p.write).absolute(), root)
    if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
        raise UsageError(f"--write {p.write}: outside the repository ({root}); not written")
    written = write_overview(root, rel, answer.markdown, force=p.force,
                             gitlinks=view.vault.gitlinks)
    return answer._replace(written=written)


def _lines(a: AutoIndexAnswer) -> list[str]:
    lines = a.markdown.rstrip("\n").split("\n")
    return [*lines, f"(written to {a.written})"] if a.written else lines


QUERIES = [Query(
    "auto_index", ("auto-index",), help="a generated overview note of a domain or tag",
    description="The notes of --domain D or with every --tag T, grouped by folder (by link "
                "cluster when they share one folder), in a "
                "reading order, with a one-line summary each, as a Markdown note (the "
                "same notes give the same bytes). --write PATH writes it atomically "
                "inside the repository. Exit 0 notes found, 1 none, 2 usage error.",
    fold=("digest", "auto_index"),
    params=AutoIndexParams, run=_run, text=_lines, prepare=_prepare,
    found=lambda a: bool(a.count),
    lists=("groups", "groups.notes", "reading_order"))]
