"""Links whose target does not exist, is ambiguous, or lies outside the repository."""

from __future__ import annotations

from collections.abc import Iterator

from kbase_ci.checks.checkcontext import CheckContext
from kbase_ci.errors import UsageError
from kbase_ci.parse.linksyntax import link_from_raw
from kbase_ci.parsed import Finding
from kbase_ci.vault.globs import any_match
from kbase_ci.vault.resolver import ResolvedLink
from kbase_ci.vault.rewrite import relink

CODES = {
    "KB101": "link to a note or file that does not exist",
    "KB102": "embed of a note or file that does not exist",
    "KB103": "link name matches several notes; the first is used",
    "KB104": "link climbs above the vault root (where Obsidian stops) and finds nothing",
    "KB105": "link names a frontmatter alias; Obsidian leaves such links unresolved",
    "KB106": "link finds another note than before, because this commit moved or deleted its "
             "target",
    "KB107": "Markdown link whose destination is itself a link (a URL pasted onto a link)",
}
WARNINGS = frozenset({"KB103"})
"""Codes reported as warnings by default (the registry's severity)."""


def check(ctx: CheckContext) -> Iterator[Finding]:
    cfg = ctx.config.links
    broken = ctx.breakage  # links this commit breaks: reported with their cause
    for b in broken.values():
        link = b.link
        if b.code in CODES and (link.style == "wiki" or cfg.markdown_links) and not (
                cfg.ignore_targets and any_match(cfg.ignore_targets, link.target)):
            yield b.finding()
    for note in ctx.focus_notes:
        for r in ctx.resolved(note):
            link = r.link
            if r.status == "external" or (link.style == "markdown" and not cfg.markdown_links):
                continue
            if broken and (note.path, link.line, link.col, link.raw) in broken:
                continue
            if r.status == "escapes":
                fixed = ctx.suggester.for_target(r)
                hint = f"; did you mean {fixed}?" if fixed else ""
                yield Finding(note.path, link.line, link.col, "KB104",
                              f"{link.raw} climbs above the vault root, where Obsidian stops, "
                              f"and finds nothing there{hint}", suggestion=fixed)
            elif r.status == "unresolved":
                pasted = _pasted(r)
                if pasted is not None:
                    yield pasted
                    continue
                if cfg.ignore_targets and any_match(cfg.ignore_targets, link.target):
                    continue
                found = unresolved_finding(ctx, r)
                if found is not None:
                    yield found
            elif r.via == "alias" and r.target is not None:
                # kbase resolves aliases (queries, graph), but Obsidian shows a typed
                # [[alias]] as unresolved, so the link is broken where people read it.
                title = r.target.rsplit("/", 1)[-1][:-3]
                label = link.alias or link.target
                fixed = relink(link, title, alias="" if label == title else label)
                write = f": write {fixed}" if fixed else ""
                yield Finding(note.path, link.line, link.col, "KB105",
                              f"{link.raw} names an alias of `{r.target}`; Obsidian does not "
                              f"resolve aliases in links{write}", suggestion=fixed)
            elif r.ambiguous:
                others = ", ".join(c for c in r.candidates)
                yield Finding(note.path, link.line, link.col, "KB103",
                              f"{link.raw} matches {len(r.candidates)} notes ({others}); "
                              f"using {r.target}: write the folder to choose",
                              severity="warning")


def unresolved_finding(ctx: CheckContext, r: ResolvedLink) -> Finding | None:
    """KB101/KB102 for a link that finds nothing and that no change in this commit broke
    (those are `breakage`'s, always errors). A link to a *note* that does not exist is
    weighed by `links.unresolved` (a forward link to a note not yet written); one to
    a missing attachment stays an error."""
    link = r.link
    code = "KB102" if link.embed else "KB101"
    name = link.target.rsplit("/", 1)[-1]
    kind = "file" if "." in name.strip(".") and not name.lower().endswith(".md") else "note"
    level = ctx.config.links.unresolved_at(r.source) if kind == "note" else "error"
    if level == "off":
        return None
    msg = f"{link.raw}: no {kind} named `{link.target}`"
    suggestion = ctx.suggester.for_target(r)
    if suggestion is not None:
        msg += f"; did you mean {suggestion}?"
    return Finding(r.source, link.line, link.col, code, msg, suggestion=suggestion,
                   severity="warning" if level == "warning" else "error")


def _pasted(r: ResolvedLink) -> Finding | None:
    """KB107: `[t]([https://x](https://x))`, a link whose destination is a whole link
    (the parser reads it as CommonMark does); the fix keeps the inner destination."""
    link = r.link
    target = link.target
    if link.style != "markdown" or not (target.startswith("[") and target.endswith(")")):
        return None
    try:
        inner = link_from_raw(target)
    except UsageError:
        return None
    dest = target[target.index("](", 0) + 2:-1].strip() if "](" in target else ""
    if not dest:
        return None
    text = f"{'!' if link.embed else ''}[{link.alias or ''}]({dest})"
    kind = "URL" if inner.external else "link"
    return Finding(r.source, link.line, link.col, "KB107",
                   f"{link.raw}: its destination is a whole {kind} ({target}), pasted onto "
                   f"the link; did you mean {text}?", suggestion=text)
