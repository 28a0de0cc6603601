"""`kbase index --merge DIR...`: combine `--shard K/N` slices into one index.

Slices are checked before anything is combined: each verifies against its own
manifest, all come from the same source, config, model and shard plan, and together
they hold every shard exactly once. The vault-wide files are then written by the same
`assemble` a single build uses, from the slices' parsed notes, so the result is
byte-identical to building everything at once.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kbase_ci.errors import IndexFormatError, InputRefused, UsageError
from kbase_ci.index import swap
from kbase_ci.index.assemble import assemble
from kbase_ci.index.blocks import Shard
from kbase_ci.index.indexbuild import BuildResult, Progress, parse_warnings, plan_digest
from kbase_ci.index.integrity import MAX_JSON_BYTES, manifest_digest, remember, verify_files
from kbase_ci.index.layout import PARSED_FILE
from kbase_ci.index.manifest import Header, SliceManifest, header_fields, read_manifest
from kbase_ci.index.provenance import source_of
from kbase_ci.index.shards import DomainRule, plan_shards
from kbase_ci.index.sizes import note_sizes
from kbase_ci.parsed import ParsedNote
from kbase_ci.state.bounded import load_json_file
from kbase_ci.vault.notefiles import Vault


def _load_slice(d: Path) -> SliceManifest:
    """A slice folder's manifest, checked (`read_manifest`: slices are CI artifacts,
    data from another job) and its files verified."""
    m = read_manifest(d)
    if not isinstance(m, SliceManifest):
        raise IndexFormatError(f"{d}: not a slice (built without --shard K/N)")
    verify_files(d, m)
    return m


def _n(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _parsed_note(row: Any, where: Path) -> ParsedNote:
    """A note of a slice's parsed.json, with every value of the type kbase writes."""
    try:
        n = ParsedNote.from_json(row)
        ok = (isinstance(n.path, str) and isinstance(n.title, str)
              and all(isinstance(a, str) for a in n.aliases)
              and all(isinstance(t.name, str) and _n(t.line) and _n(t.col) for t in n.tags)
              and (n.frontmatter is None or isinstance(n.frontmatter, dict))
              and all(_n(h.level) and isinstance(h.text, str) and _n(h.line)
                      and all(isinstance(p, str) for p in h.parents) for h in n.headings)
              and all(isinstance(b.id, str) and _n(b.line) for b in n.block_ids)
              and all(isinstance(x, str) for lk in n.links
                      for x in (lk.raw, lk.target, lk.subpath, lk.style))
              and all(_n(lk.line) and _n(lk.col) for lk in n.links)
              and all(isinstance(d.code, str) and isinstance(d.message, str)
                      for d in n.diagnostics) and _n(n.size) and _n(n.lines))
    except (KeyError, TypeError, ValueError):
        ok = False
    if not ok:
        raise IndexFormatError(f"{where}: a note row that kbase did not write")
    return n


def merge_slices(vault: Vault, slices: Sequence[Path], out_dir: Path, *,
                 progress: Progress | None = None) -> BuildResult:
    t_start = time.perf_counter()
    report = progress or (lambda stage, done, total: None)
    if not slices:
        raise UsageError("--merge needs the slice folders to combine")
    found = [(d, _load_slice(d)) for d in slices]
    first = found[0][1]
    n = first.slice.n
    shared = header_fields(first)  # must agree between slices
    for d, m in found:
        for key, value in header_fields(m).items():
            if value != shared[key]:
                raise UsageError(f"{d}: slice differs from {found[0][0]} in `{key}`: "
                                 "slices must come from one build of one commit")
        if m.slice.n != n or m.slice.plan != first.slice.plan:
            raise UsageError(f"{d}: slice of another shard plan than {found[0][0]}")
    ks = sorted(m.slice.k for _, m in found)
    if ks != list(range(1, n + 1)):
        raise UsageError(f"--merge needs slices 1..{n} once each; got {ks}")
    here = source_of(vault).source
    if here != first.source:
        raise UsageError("the slices were built from another state of the vault "
                         f"(commit {first.source.commit}, here {here.commit})")
    if vault.config.digest != first.config_digest:
        raise UsageError("the slices were built with another .kbase.yml")

    parsed: dict[str, ParsedNote] = {}
    metas: dict[str, Shard] = {}
    owner: dict[str, Path] = {}
    for d, m in found:
        try:  # a slice may come from another job's artifact: read as any input
            rows = load_json_file(d / PARSED_FILE, MAX_JSON_BYTES, follow_links=False)
        except InputRefused as exc:
            raise IndexFormatError(f"{exc.at}: not JSON as kbase writes it ({exc.detail})"
                                   ) from None
        for row in rows if isinstance(rows, list) else [None]:
            note = _parsed_note(row, d / PARSED_FILE)
            parsed[note.path] = note
        for sid, meta in m.shards.items():
            metas[sid] = meta
            owner[sid] = d
    rule = DomainRule.parse(vault.config.index.domain)
    sizes = note_sizes(vault)
    missing = [nf.path for nf in vault.notes if nf.path not in parsed]
    if missing:
        raise UsageError(f"the slices lack {len(missing)} notes of the vault "
                         f"(first: {missing[0]})")
    plan = plan_shards([(nf.path, sizes[nf.path], rule.domain(
        nf.path, parsed[nf.path].frontmatter)) for nf in vault.notes],
        rule, vault.config.index.shard_max_bytes)
    if plan_digest(plan) != first.slice.plan or {s.id for s in plan} != set(metas):
        raise UsageError("the slices' shard plan does not match this vault")

    out_dir = Path(os.path.abspath(out_dir))  # not resolve(): see build_index
    swap.check_target(out_dir, vault.repo_root)
    swap.recover(out_dir)
    tmp = swap.temp_dir_for(out_dir)
    try:
        report("merge", 0, len(plan))
        for i, spec in enumerate(plan):
            src = owner[spec.id] / "shards" / spec.id
            if src.is_dir():
                shutil.copytree(src, tmp / "shards" / spec.id)
            report("merge", i + 1, len(plan))
        notes = [parsed[p] for s in plan for p in s.notes]
        head = Header(**shared)
        manifest, seconds, similar_rows = assemble(
            tmp, vault, notes, plan, metas, head, parse_warnings(notes),
            vault.config.index.similar)
        swap.swap_into(tmp, out_dir, vault.repo_root)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    remember(vault.git_dir, manifest_digest(out_dir))  # built here: trusted
    seconds["total"] = time.perf_counter() - t_start
    return BuildResult(out_dir, manifest, (), tuple(s.id for s in plan), seconds,
                       manifest.warnings, None, similar_rows)
