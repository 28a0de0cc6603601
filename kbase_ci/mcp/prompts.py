"""The `write_handover` prompt: how to write a handover that passes `kbase handover check`
in this repository, with the skeleton `kbase new handover` would write (drawn from the
repository's own type schema, so a configured handover type is followed)."""

from __future__ import annotations

import datetime as dt

from kbase_ci.errors import UsageError
from kbase_ci.handover.skeleton import render
from kbase_ci.mcp.serverstate import ServerState
from kbase_ci.vault.notetypes import default_folder


def write_handover(warm: ServerState, *, track: str | None = None, title: str | None = None) -> str:
    config = warm.vault().config
    t = config.types.get("handover")
    if t is None:
        raise UsageError("this repository's .kbase.yml defines no handover type")
    track = (track or "").strip() or None
    day = dt.date.today().isoformat()
    heading = (title or "").strip() or (f"Handover: track {track}" if track
                                        else f"Handover {day}")
    skeleton = render(t, title=heading, track=track, date=day)
    folder = default_folder(t, config.handover.folder).strip("/") or "."
    command = "kbase new handover" + (f" --track {track}" if track else "")
    threshold = config.handover.threshold
    return f"""\
Write a handover note so that the next agent can resume this work without asking you
anything. Create it with `{command}` (it writes the skeleton below into {folder}/ and
prints the path), or save the skeleton yourself as {folder}/{day}-<short-name>.md.

Skeleton for this repository (from its note type schema):

```markdown
{skeleton}```

Fill in every field and section with real content; the HTML comments say what each one
needs and never count as content. What `kbase handover check` scores as missing:
- placeholders: empty bullets, TODO, TBD, "...", "see the diff", "see above", a line that
  only repeats its heading;
- Changes Made: list the file paths you changed (each must exist, or be deleted in this
  change), with what changed in each;
- Build Verification: each command you ran with its outcome (`pytest tests/x.py` - passed
  (38 tests));
- Status: its first word is complete, partial or blocked; when partial or blocked, Next
  Steps and Blockers must both say something other than "none";
- link questions you leave open as [[wikilinks]] so `handover_latest` lists them.

Then run `kbase handover check <path>` and fix every item it names until the score is at
least {threshold}/100. Call the `handover_latest` tool (or `kbase handover latest`) to see
what the next agent will be shown.
"""
