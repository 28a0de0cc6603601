"""The CI report as Markdown (PR comment, step summary, report.md) and annotations.

One layout serves all three Markdown outputs; they differ only in how many items each
list may show. The comment must stay under GitHub's 65,536 characters and the step
summary under 1 MiB, so lists are capped more and more tightly until the text fits,
and a truncated list says how much is missing and where the full report is. Nothing
run-specific (run id, timings) goes into the comment: an unchanged report renders to
an unchanged body, so the comment is left alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from kbase_ci.ci.cireport import CiReport, FindingStatus
from kbase_ci.ci.conceptgaps import ConceptChange
from kbase_ci.parsed import Finding
from kbase_ci.report.escape import (
    command_data,
    command_property,
    md_text,
    md_url,
    mermaid_label,
)
from kbase_ci.vault.linkgraph import Gap

MARKER = "<!-- kbase-ci:report -->"
COMMENT_LIMIT = 65_536
"""Characters GitHub accepts in an issue comment body."""
SUMMARY_LIMIT = 1_000_000
"""Bytes; GitHub refuses step summaries over 1 MiB."""
ANNOTATIONS_PER_LEVEL = 10
"""GitHub shows 10 annotations of each level per step; more are dropped unseen."""
_CAPS: tuple[int | None, ...] = (None, 1000, 300, 100, 40, 15, 5, 0)
_CATEGORIES: tuple[tuple[str, str], ...] = (
    ("KB0", "unreadable notes"), ("KB10", "broken links"), ("KB11", "broken anchors"),
    ("KB2", "tags"), ("KB3", "frontmatter"), ("KB4", "typed notes (handover)"),
    ("KB9", "config"))
_ICON = {"error": "❌", "warning": "⚠️"}
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Caps:
    items: int | None
    """Most items per list (None: all)."""
    graph: bool = True


def category(code: str) -> str:
    return next((label for prefix, label in _CATEGORIES if code.startswith(prefix)), "other")


def verdict(r: CiReport) -> str:
    new, fixed = len(r.with_status("new")), len(r.with_status("fixed"))
    old = len(r.with_status("pre-existing", "present"))
    extra = [f"{fixed} fixed"] if fixed else []
    extra += [f"{old} pre-existing" if r.base else f"{old} found"] if old else []
    tail = f" ({', '.join(extra)})" if extra else ""
    if r.failing:
        what = f"{new} new problem{'s' * (new != 1)} in this PR" if r.fail_on == "new" \
            else f"{r.failing} problem{'s' * (r.failing != 1)}"
        return f"❌ **kbase: {what}**{tail}"
    if r.base is None:
        return f"✅ **kbase: checked {r.notes} notes**{tail}"
    if r.policy_unseen:
        n = len(r.policy_unseen)
        return (f"⚠️ **kbase: {new} new problem{'s' * (new != 1)} under this PR's "
                f"`.kbase.yml`, {n} under the base's** (this PR changes how notes are "
                f"judged){tail}")
    if new:
        return f"ℹ️ **kbase: {new} new problem{'s' * (new != 1)}** (fail-on: none){tail}"
    return f"✅ **kbase: no new problems**{tail}"


def count_rows(r: CiReport) -> list[tuple[str, int, int, int]]:
    """(label, new, fixed, pre-existing) per category with anything to count."""
    counts: dict[str, list[int]] = {label: [0, 0, 0] for _, label in _CATEGORIES}
    counts["other"] = [0, 0, 0]
    col = {"new": 0, "fixed": 1, "pre-existing": 2, "present": 2}
    for m in r.findings:
        counts[category(m.finding.code)][col[m.status]] += 1
    rows = [(label, c[0], c[1], c[2]) for label, c in counts.items() if any(c)]
    rows.append(("orphans (nothing links to them)", len(r.new_orphans), len(r.fixed_orphans),
                 r.orphans - len(r.new_orphans)))
    rows.append(("gaps (link targets that do not exist)", len(r.new_gaps),
                 len(r.closed_gaps), r.gaps - len(r.new_gaps)))
    return rows


class _Doc:
    """Markdown being written, with list caps (state: the lines so far)."""

    def __init__(self, r: CiReport, caps: Caps, more: str | None) -> None:
        self.r, self.caps, self.more = r, caps, more
        self.lines: list[str] = []
        self.truncated = 0

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def listing(self, items: Sequence[T], fmt: Callable[[T], str], noun: str) -> None:
        """One line per item, formatted only for the items shown."""
        cap = self.caps.items
        shown = items if cap is None else items[:cap]
        self.lines.extend(fmt(x) for x in shown)
        if len(shown) < len(items):
            self.truncated += len(items) - len(shown)
            where = f" The full list is in the [report artifact]({self.more})." \
                if self.more else " The full list is in report.md."
            self.lines.append(f"- … and {len(items) - len(shown)} more {noun}.{where}")

    def link(self, path: str, line: int, sha: str | None) -> str:
        text = md_text(f"{path}:{line}")
        r = self.r
        if not r.repository or sha is None:
            return text
        base = f"{r.server_url}/{r.repository}/blob/{sha}/"
        return f"[{text}]({md_url(base, r.vault_prefix + path)}#L{line})"

    def finding(self, f: Finding, sha: str | None) -> str:
        return (f"- {_ICON.get(f.severity, '')} {self.link(f.path, f.line, sha)} "
                f"**{md_text(f.code)}** {md_text(f.message)}")


def render(r: CiReport, caps: Caps = Caps(None), *, more: str | None = None,
           marker: bool = False) -> str:
    d = _Doc(r, caps, more)
    if marker:
        d.add(MARKER)
    d.add(verdict(r), "")
    short = f"`{r.head[:12]}`"
    where = f"head {short} compared with merge base `{r.base[:12]}`" if r.base \
        else f"commit {short}"
    notes_changed = sum(1 for c in r.changes if c.path.lower().endswith(".md"))
    d.add(f"<sub>{where} · {r.notes} notes · {notes_changed} changed</sub>", "")
    if r.base:
        d.add("| | new | fixed | pre-existing |", "|---|---:|---:|---:|")
        d.add(*(f"| {label} | {a} | {b} | {c} |" for label, a, b, c in count_rows(r)))
    else:
        d.add("| | found |", "|---|---:|")
        d.add(*(f"| {label} | {c} |" for label, _, _, c in count_rows(r)))
    d.add("", *(f"_{md_text(n)}_" for n in r.notices), "")
    _policy(d)
    _findings(d, "new", "New in this PR", r.head)
    _graph_sections(d)
    _handover(d)
    _findings(d, "fixed", "Fixed by this PR", r.base)
    _findings(d, "present", "Problems", r.head)
    pre = r.with_status("pre-existing")
    if pre:
        d.add(f"<details><summary>Pre-existing problems ({len(pre)})</summary>", "")
        d.listing(pre, lambda f: d.finding(f, r.head), "pre-existing problems")
        d.add("", "</details>", "")
    if caps.graph:
        _mermaid(d)
    return "\n".join(d.lines).rstrip() + "\n"


def _policy(d: _Doc) -> None:
    """A PR that changes how `.kbase.yml` judges notes says so, with what the base's
    settings would have found (issue 38: checks switched off unremarked)."""
    r = d.r
    if not r.policy_sections:
        return
    which = ", ".join(f"`{md_text(s)}`" for s in r.policy_sections)
    found = (f"Under the base's settings it would have {len(r.policy_unseen)} new "
             "problem(s) that its own settings do not report:" if r.policy_unseen
             else "The base's settings find nothing more in it.")
    d.add("### `.kbase.yml` changes how notes are judged", "",
          f"This PR changes {which}. {found}", "")
    if r.policy_unseen:
        d.listing(r.policy_unseen, lambda f: d.finding(f, r.head),
                  "problems under the base's settings")
        d.add("")


def _findings(d: _Doc, status: FindingStatus, title: str, sha: str | None) -> None:
    items = d.r.with_status(status)
    if items:
        d.add(f"### {title} ({len(items)})", "")
        d.listing(items, lambda f: d.finding(f, sha), f"{status} problems")
        d.add("")


def _graph_sections(d: _Doc) -> None:
    r = d.r
    if r.new_orphans:
        d.add(f"### New orphans ({len(r.new_orphans)})", "")
        d.listing(r.new_orphans, lambda o: f"- {md_text(o.path)}: " + (
            "no links in or out" if o.isolated else
            f"links to {o.outgoing}, nothing links here"), "orphans")
        d.add("")
    if r.new_gaps:
        d.add(f"### New gaps ({len(r.new_gaps)})", "")
        def gap(g: Gap) -> str:
            srcs = ", ".join(d.link(s.path, s.line, r.head) for s in g.sources[:3])
            more = f" and {len(g.sources) - 3} more" if len(g.sources) > 3 else ""
            # Escaped backticks, not a code span: inside one, md_text's escapes would show.
            return f"- no {g.kind} {md_text(f'`{g.target}`')}, linked from {srcs}{more}"

        d.listing(r.new_gaps, gap, "gaps")
        d.add("")
    _concepts(d)


def _concepts(d: _Doc) -> None:
    r = d.r
    if r.new_concepts:
        d.add(f"### New undocumented concepts ({len(r.new_concepts)})", "",
              "Terms that now recur across notes but no note title, alias or heading "
              "names (`kbase gaps` lists them all).", "")

        def concept(c: ConceptChange) -> str:
            where = ", ".join(d.link(p.path, p.line, r.head) for p in c.places[:3])
            return f"- {md_text(c.name)}: in {c.notes} notes, e.g. {where}"

        d.listing(r.new_concepts, concept, "concepts")
        d.add("")
    if r.closed_concepts:
        d.add("Concepts this PR documents: "
              + ", ".join(md_text(n) for n in r.closed_concepts[:20])
              + (f" and {len(r.closed_concepts) - 20} more" if len(r.closed_concepts) > 20
                 else ""), "")


def _handover(d: _Doc) -> None:
    h = d.r.handover
    if h is None:
        return
    if not h.notes:
        d.add("### Handover", "", "This PR adds or changes no handover note.", "")
        return
    d.add(f"### Handover completeness: {h.score}/100 (threshold {h.threshold})", "",
          "| note | score | status | missing |", "|---|---:|---|---|")
    for n in h.notes:
        missing = "; ".join(f"{md_text(m.code)} {md_text(m.message)}" for m in n.missing[:5])
        if len(n.missing) > 5:
            missing += f"; … {len(n.missing) - 5} more"
        d.add(f"| {d.link(n.path, 1, d.r.head)} | {n.score} | {md_text(n.status or '')} | "
              f"{missing or 'nothing'} |")
    d.add("")
    d.listing(h.items, lambda i: f"- **{md_text(i.code)}** {md_text(i.message)}",
              "handover items")
    d.add("")


def _mermaid(d: _Doc) -> None:
    g = d.r.graph
    if not g.nodes:
        return
    ids = {p: f"n{i}" for i, p in enumerate(g.nodes)}
    d.add(f"<details><summary>Notes this PR changed and their neighbours ({len(g.nodes)})"
          "</summary>", "", "```mermaid", "graph LR")
    d.add(*(f'  {ids[p]}["{mermaid_label(p[:-3] if p.endswith(".md") else p)}"]'
            for p in g.nodes))
    d.add(*(f"  {ids[a]} --> {ids[b]}" for a, b in g.edges if a in ids and b in ids))
    changed = [ids[p] for p in g.changed if p in ids]
    if changed:
        d.add(f"  class {','.join(changed)} changed",
              "  classDef changed fill:#fde68a,stroke:#b45309,color:#000")
    d.add("```", "", "</details>", "")


def fitted(r: CiReport, limit: int, size: Callable[[str], int], *, more: str | None,
           marker: bool) -> str:
    """The most complete rendering whose `size` is within `limit`."""
    for graph in (True, False):
        for cap in _CAPS:
            text = render(r, Caps(cap, graph), more=more, marker=marker)
            if size(text) <= limit:
                return text
    note = "\n\n_The report is too large to show here; see the report artifact._\n"
    head = (f"{MARKER}\n" if marker else "") + verdict(r)
    return head + note


def comment_body(r: CiReport, more: str | None) -> str:
    return fitted(r, COMMENT_LIMIT, len, more=more, marker=True)


def step_summary(r: CiReport, more: str | None) -> str:
    # Measured as written (outputs.py): a surrogate-escaped name becomes `\udcff`.
    return fitted(r, SUMMARY_LIMIT, lambda s: len(s.encode("utf-8", "backslashreplace")),
                  more=more, marker=False)


def annotation_lines(r: CiReport, repo_path: Callable[[str], str],
                per_level: int = ANNOTATIONS_PER_LEVEL) -> list[str]:
    """Workflow commands for the first findings of each level, most severe first: new
    findings of a PR, every finding of a push. `repo_path` maps vault paths."""
    wanted = r.with_status("new") if r.base else r.with_status("present")
    lines: list[str] = []
    for level in ("error", "warning"):
        picked = sorted((f for f in wanted if f.severity == level), key=Finding.sort_key)
        for f in picked[:per_level]:
            props = ",".join(f"{k}={command_property(v)}" for k, v in (
                ("file", repo_path(f.path)), ("line", str(f.line)), ("col", str(f.col)),
                ("title", f"{f.code} {'new in this PR' if r.base else f.check}")))
            lines.append(f"::{level} {props}::{command_data(f.message)}")
        if len(picked) > per_level:
            lines.append(f"::notice title=kbase::{len(picked) - per_level} more {level}s are "
                         "listed in the step summary and the report artifact")
    return lines
