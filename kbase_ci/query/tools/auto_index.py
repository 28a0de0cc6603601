"""`auto-index`: a generated overview note of a domain or tag, optionally written."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from kbase_ci.errors import UsageError
from kbase_ci.query.tools.spec import Domain, Param, Query, Session, Tags, none_if_blank
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.autoindex import AutoIndexAnswer


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
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.autoindex import auto_index_answer, write_overview

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
    tool="Draft an overview note of a domain or tag: groups, reading order, one-line "
         "summaries (Markdown).",
    when="an overview or map-of-content note for a domain or tag",
    params=AutoIndexParams, run=_run, text=_lines, prepare=_prepare,
    found=lambda a: bool(a.count),
    lists=("groups", "groups.notes", "reading_order"))]
