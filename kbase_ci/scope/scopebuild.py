"""`kbase scope build`: select notes on the main index, then build them as an index.

The build is the main build pipeline (`index.build.build_index`) over a vault holding
only the selected notes, read at the main index's source commit, with
`build_index(scope=...)`: the main index's model block with a vector donor instead of a
model (no chunk is embedded again), its source, and its other notes for link
resolution. Notes are parsed again through the parse cache (a cache hit when the main
index was built on this machine). BM25, vectors and similar notes are computed over the
scope's chunks only.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from kbase_ci.errors import KbaseError, UsageError
from kbase_ci.git.repo import repo_dirs
from kbase_ci.index.blocks import MainIndex, Scope
from kbase_ci.index.indexbuild import build_index
from kbase_ci.index.integrity import verify_files
from kbase_ci.index.layout import NoteRow
from kbase_ci.index.manifest import read_manifest
from kbase_ci.index.modelchoice import ModelChoice
from kbase_ci.index.modelfolder import STATIC
from kbase_ci.index.provenance import Provenance
from kbase_ci.index.reader import IndexReader, open_index
from kbase_ci.index.scopes import (
    ScopeInputs,
    light_note,
    main_digest,
    scope_dir,
    selectors_of,
    states,
)
from kbase_ci.index.swap import check_target
from kbase_ci.scope import donor as donors
from kbase_ci.scope.select import NoteFacts, Selection, select
from kbase_ci.state.locks import exclusive
from kbase_ci.typedjson import Record, json_field
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.scanner import scan
from kbase_ci.vault.scopeconfig import ScopeSpec

COMPONENTS = ("notes", "links", "bm25", "vectors", "similar")


class Component(Record):
    component: str
    status: str
    """ok, warn, error, skipped (not built: `--plan`, or an earlier failure)."""
    message: str
    details: dict[str, Any] = json_field(default_factory=dict)


class ScopeResult(Record, json=("scope", "folder", "plan", "outcome", "selection",
                                "components")):
    name: str = json_field(hidden=True)
    folder: Path = json_field(as_json=str)
    plan: bool
    outcome: str
    """planned, built, up-to-date, failed."""
    selection: Selection = json_field(flatten=True)
    components: tuple[Component, ...]
    scope: Scope

    @property
    def ok(self) -> bool:
        """Built without errors, or (a plan) selects something."""
        if self.plan:
            return bool(self.selection.paths)
        return self.outcome != "failed" and all(c.status != "error" for c in self.components)


def scope_block(name: str, spec: ScopeSpec, main: IndexReader, digest: str) -> Scope:
    return Scope(name, selectors_of(spec), MainIndex(digest, main.manifest.source.commit))


def _planned(main: IndexReader, chosen: set[str]) -> tuple[Component, ...]:
    table = main.notes()
    rows = [r for r in table if r.path in chosen]
    links = main.links()
    number = {r.path: i for i, r in enumerate(table)}
    inside = {number[p] for p in chosen}
    n_links = away = 0
    for p in sorted(chosen):
        first, count = links.outgoing[number[p]]
        for row in links.rows[first:first + count]:
            n_links += 1
            away += isinstance(row.target, int) and row.target not in inside
    chunks = sum(r.chunks[1] for r in rows)
    dim = main.manifest.embeddings.dim
    shards = len({r.domain for r in rows})
    return (
        Component("notes", "skipped", f"{len(rows)} notes would be included",
                  {"notes": len(rows)}),
        Component("links", "skipped", f"{n_links} links, {away} leaving the scope",
                  {"links": n_links, "out_of_scope": away}),
        Component("bm25", "skipped", f"{chunks} chunks in {shards} domain(s)",
                  {"chunks": chunks, "domains": shards}),
        Component("vectors", "skipped",
                  f"{chunks} vectors copied from the main index" if dim
                  else "no vectors: the main index has none",
                  {"vectors": chunks if dim else 0}),
        Component("similar", "skipped", f"similar notes recomputed for {len(rows)} notes"
                  if dim else "no similar notes without vectors", {"notes": len(rows)}),
    )


def restrict(vault: Vault, paths: set[str]) -> Vault:
    """`vault` with only the notes in `paths` (files, config and contents are shared)."""
    notes = vault.notes  # listed before copying, so the copy shares the listing
    files = vault.files
    sub = copy.copy(vault)
    chosen = [n for n in notes if n.path in paths]
    sub.adopt_notes(lambda: chosen)
    assert sub.files is files
    return sub


def build_scope(root: Path, name: str, spec: ScopeSpec, *, index_dir: Path | None = None,
                plan: bool = False) -> ScopeResult:
    """Plan or build scope `name` of the index in `index_dir` (default `root/.kbase`)."""
    # abspath, not resolve(): a committed `.kbase -> elsewhere` is refused, not followed
    main_dir = Path(os.path.abspath(index_dir if index_dir is not None else root / ".kbase"))
    dirs = repo_dirs(root)
    check_target(main_dir, dirs[0] if dirs is not None else None)
    if not (main_dir / "manifest.json").is_file():
        raise UsageError(f"no index at {main_dir}: a scope is cut from the main index, so "
                         "build that first with `kbase index`")
    main = open_index(main_dir, git_dir=dirs[1] if dirs is not None else None)
    digest = main_digest(main_dir)
    block = scope_block(name, spec, main, digest)
    table = main.notes()
    selection = select(spec, [NoteFacts.from_row(r) for r in table])
    out = scope_dir(main_dir, name)
    chosen = set(selection.paths)
    if plan:
        return ScopeResult(name, out, True, "planned", selection, _planned(main, chosen),
                           block)
    if not chosen:
        why = "; ".join(f"{u.side} `{u.selector}` matched nothing: {u.hint}"
                        for u in selection.unmatched)
        raise UsageError(f"scope {name} selects no note{': ' + why if why else ''}")

    # One build of a scope at a time; the lock file stays beside the scope folders.
    with exclusive(out.parent / f".{name}.lock", what=f"building scope {name}"):
        if _current(out, block):
            comps = tuple(Component(c, "ok", "up to date") for c in COMPONENTS)
            return ScopeResult(name, out, False, "up-to-date", selection, comps, block)
        return _build(root, main, table, selection, block, out)


def build_declared(root: Path, index_dir: Path,
                   declared: Mapping[str, ScopeSpec] | None = None, *,
                   progress: Callable[[str, int, int], None] | None = None
                   ) -> tuple[str, ...]:
    """Build every scope `.kbase.yml` declares into `index_dir/scopes/` (after the main
    index there was rebuilt), one report line per scope; a scope that fails is reported,
    not raised. Scopes built there before that are not declared (ad hoc) are rebuilt by
    nobody: their lines say they are stale and how to rebuild them."""
    lines: list[str] = []
    if declared is None:
        declared = Vault(root).config.scopes.named
    for done, (name, spec) in enumerate(sorted(declared.items())):
        if progress is not None:
            progress("scopes", done, len(declared))
        try:
            res = build_scope(root, name, spec, index_dir=index_dir)
        except KbaseError as exc:
            lines.append(f"scope {name}: not built: {exc}")
            continue
        lines.append(f"scope {name}: {res.outcome}, {len(res.selection.paths)} notes")
    if progress is not None and declared:
        progress("scopes", len(declared), len(declared))
    for st in states(index_dir):
        if st.name not in declared and st.stale:
            lines.append(f"scope {st.name}: stale (ad hoc, built from the previous "
                         f"index): rebuild it with `kbase scope build {st.name} ...` "
                         "and its selectors")
    return tuple(lines)


def _current(out: Path, block: Scope) -> bool:
    if not (out / "manifest.json").is_file():
        return False
    try:
        manifest = read_manifest(out)
        if manifest.scope != block:
            return False
        verify_files(out, manifest)
    except KbaseError:
        return False
    return True


def _build(root: Path, main: IndexReader, table: list[NoteRow], selection: Selection,
           block: Scope, out: Path) -> ScopeResult:
    m = main.manifest
    commit = m.source.commit
    if commit is None:
        raise UsageError("the main index was not built from a git commit; a scope reads "
                         "its notes at the main index's commit")
    vault = Vault(root, rev=commit)
    chosen = set(selection.paths)
    sub = restrict(vault, chosen)
    blob = {r.path: r.blob for r in table}
    differ = sorted(n.path for n in sub.notes if blob.get(n.path) != n.sha)
    missing = sorted(chosen - {n.path for n in sub.notes})
    emb = m.embeddings
    dim = emb.dim
    key = Path(f"<scope donor {block.main_index.digest}>")
    donor = None
    if dim:
        parsed, _ = scan(sub, list(sub.notes))
        donor, rechunked = donors.collect(main, parsed, sub.read(sub.notes), dim)
        differ = sorted({*differ, *rechunked})
        donors.install(donor, key, sub.config.embeddings.dim)
    inputs = ScopeInputs(
        ModelChoice(emb.model, key if dim else None, emb.reason, emb.sha256,
                    emb.kind or STATIC),
        Provenance(m.source, m.built_at),
        tuple(light_note(r) for r in table if r.path not in chosen), block)
    try:
        result = build_index(sub, out, jobs=1, scope=inputs)
    except KbaseError as exc:
        comps = tuple(Component(c, "error", f"build failed: {exc}") for c in COMPONENTS)
        return ScopeResult(block.name, out, False, "failed", selection, comps, block)
    finally:
        if dim:
            donors.uninstall(key, sub.config.embeddings.dim)
    scoped = open_index(out, validated=True)  # built just now
    return ScopeResult(block.name, out, False, "built", selection, _report(
        main, scoped, table, chosen, list(result.warnings), differ, missing, donor),
        block)


def _report(main: IndexReader, scoped: IndexReader, table: list[NoteRow],
            chosen: set[str], warnings: list[str], differ: list[str],
            missing: list[str], donor: Any) -> tuple[Component, ...]:
    counts = scoped.manifest.counts
    comps: list[Component] = []
    problems = bool(warnings or differ or missing)
    comps.append(Component(
        "notes", "warn" if problems else "ok",
        f"{counts.notes} notes" + (f"; {len(differ)} differ from the main index (it was "
                                      "built from a dirty work tree)" if differ else "")
        + (f"; {len(missing)} not in the source commit" if missing else ""),
        {"notes": counts.notes, "warnings": warnings, "differ_from_main": differ,
         "missing": missing}))
    try:
        away = sum(1 for r in scoped.links().rows if r.status == "out_of_scope")
        comps.append(Component("links", "ok", f"{counts.links} links, {away} leaving the "
                               "scope (kept as out_of_scope, no target)",
                               {"links": counts.links, "out_of_scope": away,
                                "unresolved": counts.unresolved_links}))
    except KbaseError as exc:
        comps.append(Component("links", "error", str(exc)))
    expected = sum(r.chunks[1] for r in table if r.path in chosen)
    chunks = counts.chunks
    comps.append(Component(
        "bm25", "ok" if chunks == expected or differ else "error",
        f"{chunks} chunks in {counts.shards} shard(s)" + (
            "" if chunks == expected else f"; the main index has {expected} for these notes"),
        {"chunks": chunks, "shards": counts.shards, "main_chunks": expected}))
    if donor is None:
        comps.append(Component("vectors", "skipped", "no vectors: " + str(
            main.manifest.embeddings.reason or "the main index has none"),
            {"vectors": 0}))
    else:
        missed = len(donor.missed)
        comps.append(Component(
            "vectors", "warn" if missed else "ok",
            f"{counts.vectors} vectors copied from the main index, none embedded" + (
                f"; {missed} chunk(s) differ from the main index and have no vector"
                if missed else ""),
            {"vectors": counts.vectors, "missed": missed}))
    if donor is None:
        comps.append(Component("similar", "skipped", "no similar notes without vectors"))
    else:
        with_sim = sum(1 for r in scoped.notes() if r.similar)
        comps.append(Component("similar", "ok", f"similar notes recomputed inside the scope "
                               f"({with_sim} notes have some)", {"notes": with_sim}))
    return tuple(comps)
