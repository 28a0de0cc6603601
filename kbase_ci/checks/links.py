"""Links whose target does not exist, is ambiguous, or lies outside the repository."""

from __future__ import annotations

from collections.abc import Iterator

from ..globs import any_match
from ..model import Finding, Link
from ..resolver import ResolvedLink
from .context import CheckContext

CODES = {
    "KB101": "link to a note or file that does not exist",
    "KB102": "embed of a note or file that does not exist",
    "KB103": "link name matches several notes; the first is used",
    "KB104": "link target escapes the repository",
}


def check(ctx: CheckContext) -> Iterator[Finding]:
    cfg = ctx.config.links
    for note in ctx.focus_notes:
        for r in ctx.resolved(note):
            link = r.link
            if r.status == "external" or (link.style == "markdown" and not cfg.markdown_links):
                continue
            if r.status == "escapes":
                yield Finding(note.path, link.line, link.col, "KB104",
                              f"{link.raw} points outside the repository; it is never followed")
            elif r.status == "unresolved":
                if cfg.ignore_targets and any_match(cfg.ignore_targets, link.target):
                    continue
                yield unresolved_finding(ctx, r)
            elif r.ambiguous:
                others = ", ".join(c for c in r.candidates)
                yield Finding(note.path, link.line, link.col, "KB103",
                              f"{link.raw} matches {len(r.candidates)} notes ({others}); "
                              f"using {r.target}: write the folder to choose",
                              severity="warning")


def unresolved_finding(ctx: CheckContext, r: ResolvedLink, cause: str = "") -> Finding:
    link = r.link
    code = "KB102" if link.embed else "KB101"
    kind = "file" if "." in link.target.rsplit("/", 1)[-1] and not link.target.lower().endswith(
        ".md") else "note"
    msg = f"{link.raw}: no {kind} named `{link.target}`"
    if cause:
        msg = f"{link.raw}: {cause}"
    near = ctx.suggest(link.target) if kind == "note" else None
    suggestion = None
    if near is not None:
        suggestion = relink(link, near)
        msg += f"; did you mean {suggestion}?"
    return Finding(r.source, link.line, link.col, code, msg, suggestion=suggestion)


def relink(link: Link, new_target: str, new_subpath: str | None = None) -> str:
    """The link re-written to point at `new_target`, keeping its other parts and style."""
    sub = link.subpath if new_subpath is None else new_subpath
    if link.style == "wiki":
        inner = new_target + (f"#{sub}" if sub else "")
        if link.alias is not None:
            inner += f"|{link.alias}"
        return f"{'!' if link.embed else ''}[[{inner}]]"
    from urllib.parse import quote

    dest = quote(new_target, safe="/._-~") + (f"#{quote(sub, safe='^-_.~')}" if sub else "")
    return f"{'!' if link.embed else ''}[{link.alias or ''}]({dest})"
