"""Scoped indexes inside an index folder: where they live, whether they are current, and
what building one takes from the main index (kbase_ci/scope builds them; docs/scopes.md).

A scope NAME of the index in folder MAIN is the complete index folder `MAIN/scopes/NAME/`
(so `.kbase/scopes/NAME/` locally and `scopes/NAME/` on the index branch). Its manifest's
`scope.main_index.digest` is the sha256 of MAIN's manifest when it was built: when MAIN
is rebuilt the digests differ and the scope is stale.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kbase_ci.errors import IndexFormatError, UsageError
from kbase_ci.index.manifest import MANIFEST_NAME, read_manifest, sha256
from kbase_ci.index.modelchoice import ModelChoice
from kbase_ci.index.provenance import Source
from kbase_ci.model import BlockId, Heading, ParsedNote
from kbase_ci.vault.scopeconfig import ScopeSpec, check_name

SCOPES = "scopes"


def scope_dir(main_dir: Path, name: str) -> Path:
    return main_dir / SCOPES / check_name(name)


def main_digest(main_dir: Path) -> str:
    try:
        return sha256((main_dir / MANIFEST_NAME).read_bytes())
    except OSError:
        raise IndexFormatError(f"{main_dir}: no index here (manifest.json is missing)"
                               ) from None


def state(main_dir: Path, name: str,
          declared: Mapping[str, ScopeSpec] | None = None) -> dict[str, Any]:
    """{name, stale, reason, main_index} of one built scope (manifest only, not hashes).
    Stale: built from another main index, or (`declared`: `.kbase.yml`'s scopes) for
    other selectors than `.kbase.yml` declares for it now."""
    manifest = read_manifest(scope_dir(main_dir, name))
    block = manifest.get("scope") or {}
    want = (block.get("main_index") or {}).get("digest")
    reason = why = None
    if want != main_digest(main_dir):
        reason, why = f"scope {name} was built from another index", "index"
    elif declared is not None and name in declared and \
            declared[name].to_json() != block.get("selectors"):
        # Cutting the new selection means a build (links, BM25, vectors), not a filter:
        # the old cut would answer for a scope nobody declares any more.
        reason = (f"scope {name} was built for another declaration ("
                  f"{describe(block.get('selectors') or {})}; .kbase.yml now declares "
                  f"{describe(declared[name].to_json())})")
        why = "declaration"
    return {"name": name, "stale": reason is not None, "why": why,
            "reason": f"{reason}; rebuild with `kbase scope build {name}`" if reason else None,
            "main_index": block.get("main_index"),
            "notes": manifest.get("counts", {}).get("notes")}


def describe(selectors: Mapping[str, Any]) -> str:
    """`include domain: a, b; exclude tag: draft` for a manifest's selectors block."""
    return "; ".join(f"{side} {kind}: {', '.join(values)}"
                     for side in ("include", "exclude")
                     for kind, values in sorted((selectors.get(side) or {}).items())) \
        or "no selectors"


def states(main_dir: Path, declared: Mapping[str, ScopeSpec] | None = None
           ) -> list[dict[str, Any]]:
    """Every scope built inside `main_dir`, sorted by name; unreadable ones say why
    (`declared`: as for `state`)."""
    out: list[dict[str, Any]] = []
    base = main_dir / SCOPES
    if not base.is_dir():
        return out
    for entry in sorted(base.iterdir()):
        if not entry.is_dir() or not (entry / MANIFEST_NAME).is_file():
            continue
        try:
            out.append(state(main_dir, entry.name, declared))
        except (IndexFormatError, UsageError) as exc:
            out.append({"name": entry.name, "stale": True, "why": "unreadable",
                        "reason": str(exc),
                        "main_index": None, "notes": None})
    return out


def light_note(row: Sequence[Any], f: dict[str, int]) -> ParsedNote:
    """A main-index notes-table row as the names and anchors a link resolves against
    (a note outside a scope: `ScopeInputs.outside`, and the overlay of a scoped query)."""
    return ParsedNote(row[f["path"]], row[f["title"]], tuple(row[f["aliases"]]),
                      headings=tuple(Heading(lv, tx, ln) for lv, tx, ln in row[f["headings"]]),
                      block_ids=tuple(BlockId(i, ln) for i, ln in row[f["block_ids"]]))


@dataclass(frozen=True)
class ScopeInputs:
    model: ModelChoice
    """The main index's model; its `path` names the vector donor (`donor.py`), so no
    chunk is embedded again."""
    source: Source
    """The main index's source: a scope is of the same commit."""
    outside: tuple[ParsedNote, ...]
    """The main index's other notes, names and anchors only: links resolve as in the
    whole vault, and those landing outside become `out_of_scope`."""
    manifest: dict[str, Any]
    """The manifest's `scope` block: name, selectors, main index digest and commit."""
