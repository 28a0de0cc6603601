"""`kbase new TYPE`: a dated note skeleton drawn from the type's schema.

Every field and section the type requires is written out with its guidance in a
comment and nothing else, so `kbase handover check` on a fresh skeleton names every
part still to fill in (comments and empty bullets never count as content).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Collection
from pathlib import Path, PurePosixPath

from kbase_ci.errors import UsageError
from kbase_ci.state.files import create_new
from kbase_ci.vault.config import Config
from kbase_ci.vault.notetypes import NoteType, default_folder
from kbase_ci.vault.safefs import confine

_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    return _SLUG.sub("-", text.lower()).strip("-")[:60].rstrip("-")


def render(t: NoteType, *, title: str, track: str | None, date: str) -> str:
    fm = [f"type: {t.match.types[0] if t.match.types else t.name}"]
    for f in t.fields:
        if not f.required and not (f.name == "track" and track):
            continue
        note = f"  # {f.help}" if f.help else ""
        if f.name == "date" and f.kind == "date":
            fm.append(f"{f.name}: {date}")
        elif f.name == "track" and track:
            fm.append(f"{f.name}: {json.dumps(track)}")
        elif f.many or f.kind == "list":
            fm.append(f"{f.name}: []{note}")
        elif f.kind in ("boolean", "integer", "number"):
            fm.append(f"{f.name}:{note}")
        else:
            fm.append(f'{f.name}: ""{note}')
    required = {n.lower() for r in t.rules for n in r.require}
    body = [f"# {title}", ""]
    for s in t.sections:
        if not s.required and s.name.lower() not in required:
            continue
        body.append(f"## {s.name}")
        if s.help:
            body.append(f"<!-- {s.help} -->")
        body.extend(["" if s.values else "- ", ""])
    return "---\n" + "\n".join(fm) + "\n---\n" + "\n".join(body).rstrip("\n") + "\n"


def new_note(root: Path, config: Config, type_name: str, *, title: str | None = None,
             track: str | None = None, date: dt.date | None = None,
             gitlinks: Collection[str] = ()) -> str:
    """Write the skeleton; returns its vault-relative path. Never overwrites."""
    t = config.types.get(type_name)
    if t is None:
        known = ", ".join(x.name for x in config.types.types)
        raise UsageError(f"unknown note type `{type_name}`; known: {known}")
    day = (date or dt.date.today()).isoformat()
    folder = PurePosixPath(default_folder(t, config.handover.folder).strip("/") or ".")
    name = slug(title) if title else slug(f"{t.name} track {track}" if track else t.name)
    rel = (folder / f"{day}-{name or t.name}.md").as_posix()
    if rel.startswith("./"):
        rel = rel[2:]
    heading = title or (f"{t.name.capitalize()}: track {track}" if track
                        else f"{t.name.capitalize()} {day}")
    # Inside the vault, outside .git, submodules and the index folder, and never through
    # a symbolic link (a tracked `handovers -> /elsewhere` must not lead the write out).
    full = confine(root, rel, gitlinks=gitlinks, what="note")
    if os.path.lexists(full):
        raise UsageError(f"{rel} already exists; not overwriting it")
    full.parent.mkdir(parents=True, exist_ok=True)
    try:
        create_new(full, render(t, title=heading, track=track, date=day).encode())
    except FileExistsError:  # created in between: a race cannot clobber it
        raise UsageError(f"{rel} already exists; not overwriting it") from None
    return rel
