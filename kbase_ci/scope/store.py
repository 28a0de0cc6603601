"""Where scopes live and whether they are current.

A scope NAME of the index in folder MAIN is the complete index folder `MAIN/scopes/NAME/`
(so `.kbase/scopes/NAME/` locally and `scopes/NAME/` on the index branch). Its manifest's
`scope.main_index.digest` is the sha256 of MAIN's manifest when it was built: when MAIN
is rebuilt the digests differ and the scope is stale.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import IndexFormatError, UsageError
from ..index.manifest import MANIFEST_NAME, read_manifest, sha256
from ..index.reader import open_index
from .spec import check_name

if TYPE_CHECKING:
    from ..model import ParsedNote
    from ..query.source import IndexSource
    from ..vault import Vault

SCOPES = "scopes"


def scope_dir(main_dir: Path, name: str) -> Path:
    return main_dir / SCOPES / check_name(name)


def main_digest(main_dir: Path) -> str:
    try:
        return sha256((main_dir / MANIFEST_NAME).read_bytes())
    except OSError:
        raise IndexFormatError(f"{main_dir}: no index here (manifest.json is missing)"
                               ) from None


def state(main_dir: Path, name: str) -> dict[str, Any]:
    """{name, stale, reason, main_index} of one built scope (manifest only, not hashes)."""
    manifest = read_manifest(scope_dir(main_dir, name))
    block = manifest.get("scope") or {}
    want = (block.get("main_index") or {}).get("digest")
    stale = want != main_digest(main_dir)
    return {"name": name, "stale": stale,
            "reason": (f"scope {name} was built from another index; rebuild with "
                       f"`kbase scope build {name}`") if stale else None,
            "main_index": block.get("main_index"),
            "notes": manifest.get("counts", {}).get("notes")}


def states(main_dir: Path) -> list[dict[str, Any]]:
    """Every scope built inside `main_dir`, sorted by name; unreadable ones say why."""
    out: list[dict[str, Any]] = []
    base = main_dir / SCOPES
    if not base.is_dir():
        return out
    for entry in sorted(base.iterdir()):
        if not entry.is_dir() or not (entry / MANIFEST_NAME).is_file():
            continue
        try:
            out.append(state(main_dir, entry.name))
        except (IndexFormatError, UsageError) as exc:
            out.append({"name": entry.name, "stale": True, "reason": str(exc),
                        "main_index": None, "notes": None})
    return out


class ScopeMember:
    """`freshness.Member` for a scope (state: the main index's blob per path, and the
    selectors): a note unchanged since the main index and left out then is left out
    without parsing; any other note is judged by the selectors on its fresh parse."""

    def __init__(self, vault: Vault, main_dir: Path, manifest: dict[str, Any]) -> None:
        from ..index.shards import DomainRule
        from .spec import ScopeSpec

        main = open_index(main_dir)
        self._main = dict(zip(main.core()["paths"], main.blobs(), strict=True))
        sel = manifest["scope"]["selectors"]
        self._spec = ScopeSpec.from_pairs(
            [(k, v) for k, vs in sel.get("include", {}).items() for v in vs],
            [(k, v) for k, vs in sel.get("exclude", {}).items() for v in vs])
        self._rule = DomainRule.parse(vault.config.index.domain)

    def known_outside(self, path: str, sha: str) -> bool:
        return self._main.get(path) == sha

    def __call__(self, note: ParsedNote) -> bool:
        from .select import NoteFacts, selected

        return selected(self._spec, NoteFacts.from_parsed(
            note, self._rule.domain(note.path, note.frontmatter)))


def open_scope_source(vault: Vault, index_dir: Path | None, name: str, *,
                      stale_ok: bool = False) -> IndexSource:
    """The scope NAME of the index `open_source` would use: `--index DIR`, `.kbase/`, then
    the index branches. Missing or stale (unless `stale_ok`): UsageError (exit 2)."""
    from ..query.source import IndexSource, _ref_candidates, materialise

    check_name(name)
    # (folder, origin, location, ref to materialise first or "")
    places: list[tuple[Path, str, str, str]] = []
    if index_dir is not None:
        places.append((index_dir, "dir", str(index_dir), ""))
    else:
        places.append((vault.root / ".kbase", "worktree", str(vault.root / ".kbase"), ""))
        repo = vault.repo_root
        for ref in _ref_candidates(repo) if repo is not None else []:
            short = ref.removeprefix("refs/heads/").removeprefix("refs/remotes/")
            kind = "branch" if ref.startswith("refs/heads/") else "remote-branch"
            places.append((Path(), kind, short, ref))
    problems: list[str] = []
    for folder, kind, where, ref in places:
        if ref:
            try:
                folder = materialise(vault.repo_root or vault.root, ref)
            except IndexFormatError as exc:
                problems.append(str(exc))
                continue
        if not (scope_dir(folder, name) / MANIFEST_NAME).is_file():
            continue
        info = state(folder, name)
        if info["stale"] and not stale_ok:
            raise UsageError(str(info["reason"]))
        reader = open_index(scope_dir(folder, name))
        if "scope" not in reader.manifest:
            raise IndexFormatError(f"{scope_dir(folder, name)}: not a scoped index")
        return IndexSource(reader, kind, f"{where} scope {name}",
                           scope={"name": name, "stale": info["stale"],
                                  "reason": info["reason"]},
                           member=ScopeMember(vault, folder, reader.manifest))
    declared = sorted(vault.config.scopes.named)
    hint = f" (declared in .kbase.yml: {', '.join(declared)})" if declared else ""
    extra = f"; {'; '.join(problems)}" if problems else ""
    raise UsageError(f"no scope named {name} has been built{hint}: build it with "
                     f"`kbase scope build {name}`{extra}")

