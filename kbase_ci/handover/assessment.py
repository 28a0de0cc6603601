"""One typed note judged against its type: fields, sections, rules, deflections and open
questions, each part's result handed to a `scoring.Tally`."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from kbase_ci.errors import UsageError
from kbase_ci.handover.fieldvalues import is_empty, judge_field
from kbase_ci.handover.placeholders import Body, classify, deflections, read_body
from kbase_ci.handover.scoring import Missing, NoteScore, Tally
from kbase_ci.handover.sectionitems import ListedPath, commands, listed_paths, path_matches
from kbase_ci.parse.anchors import normalize_heading
from kbase_ci.parse.linksyntax import link_from_raw, wikilink_spans
from kbase_ci.parse.outline import Section, sections, split_lines
from kbase_ci.parsed import ParsedNote
from kbase_ci.vault.notetypes import FieldSpec, NoteType, SectionSpec
from kbase_ci.vault.resolver import Resolver


class Surroundings(Protocol):
    """What judging one note asks of the rest of the vault: completeness.Assessor (a
    Protocol, not that class: the Assessor makes the assessments, so importing it here
    would be a cycle)."""

    notes: Mapping[str, ParsedNote]
    resolver: Resolver
    diff: frozenset[str] | None

    def type_of(self, path: str) -> NoteType | None: ...
    def answered(self) -> frozenset[str]: ...
    def is_type(self, path: str, type_name: str) -> bool: ...
    def deleted_for(self, path: str) -> frozenset[str]: ...
    def exists(self, path: str) -> bool: ...


class NoteAssessment:
    """One note against its type (state: the note's lines, sections and tally)."""

    def __init__(self, env: Surroundings, note: ParsedNote, text: str, t: NoteType) -> None:
        self.env, self.note, self.t = env, note, t
        self.lines = split_lines(text)
        self.secs = sections(note, text, nested=True)
        self.tally = Tally()
        self.bodies: dict[str, tuple[Section, Body] | None] = {}
        # A note's only `#` heading, when it comes first, is its title (`# Decision` over
        # a `## Decision` section), not a section: it would span the whole note.
        h1 = [h for h in note.headings if h.level == 1]
        first = min(note.headings, key=lambda h: h.line, default=None)
        self.title_line = first.line if first and len(h1) == 1 and h1[0] is first else 0
        self.paths: list[ListedPath] = []

    def run(self) -> NoteScore:
        for f in self.t.fields:
            self._field(f)
        for s in self.t.sections:
            self._section(s)
        for rule in self.t.rules:
            if all(self.value(k) in vals for k, vals in rule.when):
                self._rule(rule.describe(), rule.require, rule.weight)
        self._deflections()
        self._open_links()
        score, missing = self.tally.result()
        return NoteScore(self.note.path, self.t.name, score, self.value("status"), missing,
                         tuple(self.paths))

    # -- lookups -----------------------------------------------------------------------
    def fm(self, key: str) -> tuple[bool, Any]:
        k = key.lower()
        for name, v in self.note.frontmatter.items():
            if name.lower() == k:
                return True, v
        return False, None

    def fm_line(self, key: str) -> int:
        pat = re.compile(rf"^['\"]?{re.escape(key)}['\"]?\s*:", re.IGNORECASE)
        for i in range(1, max(self.note.frontmatter_end - 1, 0)):
            if pat.match(self.lines[i]):
                return i + 1
        return 1

    def body(self, spec: SectionSpec) -> tuple[Section, Body] | None:
        if spec.name not in self.bodies:
            wanted = {normalize_heading(n) for n in spec.names}
            sec = next((s for s in self.secs if s.heading is not None
                        and s.heading.line != self.title_line
                        and normalize_heading(s.heading.text) in wanted), None)
            self.bodies[spec.name] = None if sec is None else (
                sec, read_body(self.lines, sec.start_line + 1, sec.end_line, sec.title))
        return self.bodies[spec.name]

    def value(self, key: str) -> str | None:
        """A rule's view of `key`: the frontmatter value, else the first word of the
        section that stands for it (`## Status` / `partial`), lower-cased."""
        present, v = self.fm(key)
        if present and not is_empty(v):
            return str(v).lower()  # booleans become "true" / "false"
        spec = next((s for s in self.t.sections if s.field and s.field.lower() == key.lower()),
                    None) or self.t.section_spec(key)
        got = self.body(spec) if spec is not None else None
        if got is None:
            return None
        return got[1].first_word() or None

    # -- fields ------------------------------------------------------------------------
    def _field(self, spec: FieldSpec) -> None:
        present, value = self.fm(spec.name)
        line = self.fm_line(spec.name) if present else 1
        got = judge_field(spec, present, value, line, self._resolve,
                          lambda p: (t.name if (t := self.env.type_of(p)) else None))
        if got is not None:
            self.tally.add(spec.weight, *got)

    def _resolve(self, s: str, bare: bool) -> str | None:
        if bare:
            raw = f"[[{s}]]"
        else:
            spans = wikilink_spans(s)
            raw = s[spans[0][0]:spans[0][1]] if spans else s
        try:
            link = link_from_raw(raw)
        except UsageError:  # not link syntax: a bare note name
            r = self.env.resolver.lookup(s, self.note.path)
        else:
            r = self.env.resolver.resolve(self.note.path, link)
        return r.target if r.status == "ok" and r.target in self.env.notes else None

    # -- sections ----------------------------------------------------------------------
    def _section(self, spec: SectionSpec) -> None:
        rule = f"section {spec.name}"
        got = self.body(spec)
        if got is None:
            if spec.field:
                present, v = self.fm(spec.field)
                if present and not is_empty(v):
                    ok = not spec.values or str(v).lower() in {x.lower() for x in spec.values}
                    self.tally.add(spec.weight, 1 if ok else 0, [] if ok else [Missing(
                        "KB404", rule, f"`{spec.field}` must be one of "
                        f"{' | '.join(spec.values)}, not `{v}`", self.fm_line(spec.field))])
                    return
            if spec.required:
                also = f" (or {', '.join(spec.aliases)})" if spec.aliases else ""
                self.tally.add(spec.weight, 0, [Missing(
                    "KB401", rule, f"missing section `## {spec.name}`{also}")])
            return
        sec, body = got
        line = sec.start_line
        if not body.substantive and not spec.required:
            return  # an optional section left empty (Blockers when complete): rules judge it
        if not body.substantive:
            phs = body.placeholders
            what = (f"has only placeholder text (`{phs[0].text.strip()}`)" if phs
                    else "is empty")
            self.tally.add(spec.weight, 0, [Missing("KB402", rule,
                                                    f"section `{sec.title}` {what}", line)])
            return
        problems: list[Missing] = []
        fraction = 1.0
        real = len([ln for ln in body.lines if ln.kind != "placeholder"])
        for ph in body.placeholders:
            problems.append(Missing("KB402", rule, f"placeholder in `{sec.title}`: "
                                    f"`{ph.text.strip()}`", ph.line))
        fraction *= real / (real + len(body.placeholders))
        if spec.values:
            word = body.first_word()
            if word not in {v.lower() for v in spec.values}:
                fraction = 0
                problems.append(Missing("KB404", rule, f"`{sec.title}` must start with one of "
                                        f"{' | '.join(spec.values)}, not `{word}`", line))
        if spec.content == "paths" and not body.nil:
            fraction *= self._paths(body, rule, line, problems)
        elif spec.content == "commands" and not body.nil:
            fraction *= self._commands(body, rule, sec.title, line, problems)
        self.tally.add(spec.weight, fraction, problems)

    def _paths(self, body: Body, rule: str, line: int, problems: list[Missing]) -> float:
        listed = listed_paths(body)
        self.paths.extend(listed)
        if not listed:
            problems.append(Missing("KB411", rule, "Changes Made lists no file paths "
                                    "(one bullet per file: `path/to/file` - what changed)",
                                    line))
            return 0.0
        bad = 0
        diff = self.env.diff
        for lp in listed:
            if not self.env.exists(lp.path) and not any(
                    path_matches(lp.path, d) for d in self.env.deleted_for(self.note.path)):
                bad += 1
                problems.append(Missing("KB406", rule, f"`{lp.path}` does not exist and was "
                                        "not deleted in this change", lp.line, lp.col,
                                        subject=lp.path))
            elif diff is not None and not any(path_matches(lp.path, d) for d in diff):
                bad += 1
                problems.append(Missing("KB412", rule, f"`{lp.path}` is listed but this PR "
                                        "does not change it", lp.line, lp.col,
                                        subject=lp.path))
        return (len(listed) - bad) / len(listed)

    def _commands(self, body: Body, rule: str, title: str, line: int,
                  problems: list[Missing]) -> float:
        cmds = commands(body)
        if not cmds:
            problems.append(Missing("KB410", rule, f"`{title}` names no command that was run "
                                    "(`command` - passed/failed)", line))
            return 0.0
        without = [c for c in cmds if c.outcome is None]
        for c in without:
            problems.append(Missing("KB410", rule, f"`{c.text}` has no outcome (passed, "
                                    "failed, exit code)", c.line, c.col))
        return (len(cmds) - len(without)) / len(cmds)

    # -- rules and relations -----------------------------------------------------------
    def _rule(self, when: str, require: Sequence[str], weight: int) -> None:
        problems: list[Missing] = []
        for name in require:
            line, ok = self._has(name)
            if not ok:
                problems.append(Missing("KB407", f"rule {when}", f"{when}: `{name}` must say "
                                        "something (not empty, not \"none\")", line))
        self.tally.add(weight, (len(require) - len(problems)) / len(require), problems)

    def _has(self, name: str) -> tuple[int, bool]:
        f = self.t.field_spec(name)
        if f is not None:
            present, v = self.fm(f.name)
            ok = not is_empty(v) and not (isinstance(v, str) and classify(v) != "content")
            return (self.fm_line(f.name) if present else 1), ok
        spec = self.t.section_spec(name) or SectionSpec(name)
        got = self.body(spec)
        if got is None:
            return 1, False
        return got[0].start_line, bool(got[1].content)

    def _deflections(self) -> None:
        start = self.note.frontmatter_end + 1
        for ln in read_body(self.lines, start, len(self.lines)).content:
            if ln.code:
                continue
            for col, phrase in deflections(ln.text):
                self.tally.warn(Missing(
                    "KB402", "placeholder", f"\"{phrase}\" hands nothing over: say what "
                    "changed, how it was verified and what is next", ln.line, col + 1,
                    severity="warning"))

    def _open_links(self) -> None:
        if self.value("status") != "complete":
            return
        answered: frozenset[str] | None = None
        for link in self.note.links:
            r = self.env.resolver.resolve(self.note.path, link)
            if r.target is None or not self.env.is_type(r.target, "question"):
                continue
            if answered is None:
                answered = self.env.answered()
            if r.target not in answered:
                self.tally.warn(Missing(
                    "KB408", "open question", f"status is complete but {link.raw} has no "
                    "answer", link.line, link.col, severity="warning"))
