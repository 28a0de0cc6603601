"""`handover latest`: the newest handover, with its open next steps, blockers and
questions (`handover check` is a command of its own: kbase_ci.cli.commands.handovercmd)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from kbase_ci.query.tools.spec import Nothing, Param, Query, Session, none_if_blank
from kbase_ci.typedjson import Record

if TYPE_CHECKING:  # the answer's code loads when a call runs (`kbase --help` loads this)
    from kbase_ci.handover.latest import HandoverAnswer


class LatestParams(Record):
    track: Annotated[str | None, Param(
        tool="Only this track.")] = None
    no_cache: Annotated[bool, Param(help="ignore the parse cache")] = False


def _run(s: Session, p: LatestParams) -> HandoverAnswer:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.handover.handovers import JSON_VERSION
    from kbase_ci.handover.latest import (
        HandoverAnswer,
        HandoverRef,
        MissingItem,
        OpenQuestion,
        latest,
    )

    track = none_if_blank(p.track)
    vault = s.vault()
    found = latest(vault, track, use_cache=not p.no_cache)
    if found is None:
        raise Nothing("no handover" + (f" for track {track}" if track else ""),
                      "a handover is a note with `type: handover` (or tag #handover, or "
                      "under handovers/); " + ("try without a track" if track
                                               else "none is written yet"))
    n = found.note
    return HandoverAnswer(JSON_VERSION, HandoverRef(n.path, found.title, found.track,
                                                    found.date, n.status, n.score,
                                                    found.committed),
                          list(found.next_steps), list(found.blockers),
                          [OpenQuestion(**q.to_json()) for q in found.questions],
                          [MissingItem(**m.to_json()) for m in n.missing], vault.root)


def _shown(root: Path, path: str) -> str:
    """As `kbase handover check` shows a path: from the current folder."""
    try:
        return os.path.relpath(root / path)
    except ValueError:  # another drive on Windows
        return (root / path).as_posix()


def _lines(a: HandoverAnswer) -> list[str]:
    h = a.handover
    bits = [f"track {h.track}" if h.track else "", h.date or "",
            f"status {h.status}" if h.status else "", f"score {h.score}/100"]
    lines = [f"{_shown(a.root, h.path)}  {'  '.join(b for b in bits if b)}"]
    for title, items in (("Next steps", a.next_steps), ("Blockers", a.blockers)):
        if items:
            lines += [f"{title}:", *(f"  - {i}" for i in items)]
    if a.unanswered_questions:
        lines.append("Unanswered questions:")
        lines += [f"  {_shown(a.root, q.path)}" + (f" [{q.urgency}]" if q.urgency else "")
                  + f" {q.question or q.title}" for q in a.unanswered_questions]
    return lines


QUERIES = [Query(
    "handover_latest", ("handover", "latest"),
    help="the newest handover, with its open next steps, blockers and questions",
    description="The newest handover (of TRACK): by frontmatter date, then commit date. "
                "Exit 1 when there is none.",
    tool="The newest handover: next steps, blockers, open questions. Call it first when you "
         "resume work here.",
    when="resuming work: newest handover, its next steps, blockers, open questions",
    params=LatestParams, run=_run, text=_lines, found=lambda a: True,
    lists=("next_steps", "blockers", "unanswered_questions", "missing"),
    formats=("text", "json"), default_format="text", source=False)]
