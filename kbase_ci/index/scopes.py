"""Scoped indexes inside an index folder: where they live, whether they are current, and
what building one takes from the main index (kbase_ci/scope builds them; docs/scopes.md).

A scope NAME of the index in folder MAIN is the complete index folder `MAIN/scopes/NAME/`
(so `.kbase/scopes/NAME/` locally and `scopes/NAME/` on the index branch). Its manifest's
`scope.main_index.digest` is the sha256 of MAIN's manifest when it was built: when MAIN
is rebuilt the digests differ and the scope is stale.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kbase_ci.errors import IndexFormatError, UsageError
from kbase_ci.index.blocks import MainIndex, Scope, Selectors
from kbase_ci.index.layout import NoteRow
from kbase_ci.index.manifest import (
    MANIFEST_NAME,
    MAX_MANIFEST_BYTES,
    IndexManifest,
    read_manifest,
    sha256,
)
from kbase_ci.index.modelchoice import ModelChoice
from kbase_ci.index.provenance import Provenance
from kbase_ci.parsed import BlockId, Heading, ParsedNote
from kbase_ci.state.bounded import read_input
from kbase_ci.typedjson import Record, decode
from kbase_ci.vault.scopeconfig import ScopeSpec, check_name

SCOPES = "scopes"


def scope_dir(main_dir: Path, name: str) -> Path:
    return main_dir / SCOPES / check_name(name)


def main_digest(main_dir: Path) -> str:
    try:
        return sha256(read_input(main_dir / MANIFEST_NAME, MAX_MANIFEST_BYTES,
                                 follow_links=False))
    except OSError:  # InputRefused included
        raise IndexFormatError(f"{main_dir}: no index here (manifest.json is missing)"
                               ) from None


class ScopeState(Record):
    """Whether one built scope is current; `why` says what made it stale: "index" (built
    from another main index), "declaration" (`.kbase.yml` declares other selectors now)
    or "unreadable" (its manifest is not a scoped index's; `main_index` and `notes` are
    then None)."""

    name: str
    stale: bool
    why: str | None
    reason: str | None
    main_index: MainIndex | None
    notes: int | None


def state(main_dir: Path, name: str,
          declared: Mapping[str, ScopeSpec] | None = None) -> ScopeState:
    """Whether the scope `name` built in `main_dir` is current (manifest only, not hashes).
    Stale: built from another main index, or (`declared`: `.kbase.yml`'s scopes) for
    other selectors than `.kbase.yml` declares for it now."""
    folder = scope_dir(main_dir, name)
    manifest = read_manifest(folder)
    block = manifest.scope
    if not isinstance(manifest, IndexManifest) or block is None:
        raise IndexFormatError(f"{folder}: not a scoped index")
    reason = why = None
    if block.main_index.digest != main_digest(main_dir):
        reason, why = f"scope {name} was built from another index", "index"
    elif declared is not None and name in declared and \
            selectors_of(declared[name]) != block.selectors:
        # Cutting the new selection means a build (links, BM25, vectors), not a filter:
        # the old cut would answer for a scope nobody declares any more.
        reason = (f"scope {name} was built for another declaration ("
                  f"{describe(block.selectors)}; .kbase.yml now declares "
                  f"{describe(selectors_of(declared[name]))})")
        why = "declaration"
    return ScopeState(name, reason is not None, why,
                      f"{reason}; rebuild with `kbase scope build {name}`" if reason else None,
                      block.main_index, manifest.counts.notes)


def selectors_of(spec: ScopeSpec) -> Selectors:
    """A declaration's selectors as a manifest records them."""
    return decode(Selectors, spec.to_json())


def describe(selectors: Selectors) -> str:
    """`include domain: a, b; exclude tag: draft` for a manifest's selectors block."""
    return "; ".join(f"{side} {kind}: {', '.join(values)}"
                     for side, chosen in (("include", selectors.include),
                                          ("exclude", selectors.exclude))
                     for kind, values in sorted(chosen.items())) or "no selectors"


def states(main_dir: Path, declared: Mapping[str, ScopeSpec] | None = None
           ) -> list[ScopeState]:
    """Every scope built inside `main_dir`, sorted by name; unreadable ones say why
    (`declared`: as for `state`)."""
    out: list[ScopeState] = []
    base = main_dir / SCOPES
    if not base.is_dir():
        return out
    for entry in sorted(base.iterdir()):
        if not entry.is_dir() or not (entry / MANIFEST_NAME).is_file():
            continue
        try:
            out.append(state(main_dir, entry.name, declared))
        except (IndexFormatError, UsageError) as exc:
            out.append(ScopeState(entry.name, True, "unreadable", str(exc), None, None))
    return out


def light_note(row: NoteRow) -> ParsedNote:
    """A main-index notes-table row as the names and anchors a link resolves against
    (a note outside a scope: `ScopeInputs.outside`, and the overlay of a scoped query)."""
    return ParsedNote(row.path, row.title, tuple(row.aliases),
                      headings=tuple(Heading(lv, tx, ln) for lv, tx, ln in row.headings),
                      block_ids=tuple(BlockId(i, ln) for i, ln in row.block_ids))


@dataclass(frozen=True)
class ScopeInputs:
    model: ModelChoice
    """The main index's model; its `path` names the vector donor (`donor.py`), so no
    chunk is embedded again."""
    source: Provenance
    """The main index's source and date: a scope is of the same commit."""
    outside: tuple[ParsedNote, ...]
    """The main index's other notes, names and anchors only: links resolve as in the
    whole vault, and those landing outside become `out_of_scope`."""
    manifest: Scope
    """The manifest's `scope` block: name, selectors, main index digest and commit."""
