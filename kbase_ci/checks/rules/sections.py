"""Links to a heading or block id that the target note does not have."""

from __future__ import annotations

from collections.abc import Iterator

from kbase_ci.checks.checkcontext import CheckContext
from kbase_ci.parsed import Finding

CODES = {
    "KB111": "link to a heading the target note does not have",
    "KB112": "link to a block id the target note does not have",
}


def check(ctx: CheckContext) -> Iterator[Finding]:
    broken = ctx.breakage  # anchors this commit removed or renamed: reported with the cause
    for b in broken.values():
        if b.code in CODES:
            yield b.finding()
    for note in ctx.focus_notes:
        for r in ctx.resolved(note):
            if r.status != "ok" or r.anchor_found is not False or r.target is None:
                continue
            if broken and (note.path, r.link.line, r.link.col, r.link.raw) in broken:
                continue
            target = ctx.by_path.get(r.target)
            link = r.link
            where = "this note" if r.target == note.path else f"`{r.target}`"
            fixed = ctx.suggester.for_anchor(r, target) if target is not None else None
            hint = f"; did you mean {fixed}?" if fixed else ""
            if link.anchor_kind == "block":
                yield Finding(note.path, link.line, link.col, "KB112",
                              f"{link.raw}: {where} has no block ^{link.subpath[1:]}{hint}",
                              suggestion=fixed)
            else:
                yield Finding(note.path, link.line, link.col, "KB111",
                              f"{link.raw}: {where} has no heading "
                              f"`{' > '.join(link.heading_path)}`{hint}", suggestion=fixed)
