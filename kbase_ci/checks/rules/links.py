"""Links whose target does not exist, is ambiguous, or lies outside the repository."""

from __future__ import annotations

from collections.abc import Iterator

from kbase_ci.checks.checkcontext import CheckContext
from kbase_ci.model import Finding
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
}


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
                if cfg.ignore_targets and any_match(cfg.ignore_targets, link.target):
                    continue
                yield unresolved_finding(ctx, r)
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


def unresolved_finding(ctx: CheckContext, r: ResolvedLink, cause: str = "") -> Finding:
    link = r.link
    code = "KB102" if link.embed else "KB101"
    name = link.target.rsplit("/", 1)[-1]
    kind = "file" if "." in name.strip(".") and not name.lower().endswith(".md") else "note"
    msg = f"{link.raw}: no {kind} named `{link.target}`"
    if cause:
        msg = f"{link.raw}: {cause}"
    suggestion = ctx.suggester.for_target(r)
    if suggestion is not None:
        msg += f"; did you mean {suggestion}?"
    return Finding(r.source, link.line, link.col, code, msg, suggestion=suggestion)
