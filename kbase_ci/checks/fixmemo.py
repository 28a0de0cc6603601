"""What `kbase fix --staged` rewrote in the work tree, so that `kbase check --staged` in
the same pre-commit run does not report those links a second time.

pre-commit runs `kbase-fix-links` and then `kbase-check` on the same staged change. The
fixer rewrites the work-tree copy (pre-commit has stashed any other unstaged edits), so
the staged copy still holds the broken links, and the check would repeat every one of
them. The fixer leaves a memo (the `fix` memo of the state store under the git dir,
kbase_ci.state.memos, keyed by the vault's root): per rewritten note, its staged blob id,
the blob id of what it wrote, and the positions of the links it rewrote that now resolve
whole (a rewrite whose heading the commit removed is still broken, so it is reported). The
check leaves out a link finding only while all three still hold: the note is staged as
it was and its work-tree copy is exactly what the fixer wrote. Staging the fix (or any
other edit) makes the memo stale, and then every finding is reported again. The check
still fails: the staged copy is still broken until the fix is staged.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kbase_ci.git.objects import blob_sha
from kbase_ci.parsed import Finding
from kbase_ci.state.bounded import read_input
from kbase_ci.state.memos import StateStore, state_store
from kbase_ci.vault.fileedit import Edit
from kbase_ci.vault.notefiles import Vault

VERSION = 1
LINK_CODES = frozenset(("KB101", "KB102", "KB106", "KB111", "KB112"))
"""Findings a rewritten link may have had."""


def _store(vault: Vault) -> StateStore | None:
    return state_store(vault.git_dir / "kbase") if vault.git_dir is not None else None


def _worktree_bytes(vault: Vault, path: str) -> bytes:
    """The work-tree copy of note `path`: a regular file of the vault, never through a
    link (issue 38: a FIFO where a rewritten note was blocked `check --staged`). An
    OSError (InputRefused included) when it is anything else."""
    return read_input(vault.root / path, within=vault.root, follow_links=False)


def remember(vault: Vault, edits: Sequence[Edit], changed: Iterable[str]) -> None:
    """Record the rewrites `kbase fix` just made to the files `changed` (vault paths)."""
    store = _store(vault)
    if store is None:
        return
    files: dict[str, dict[str, object]] = {}
    for path in sorted(set(changed)):
        staged = vault.note(path)
        try:
            written = blob_sha(_worktree_bytes(vault, path))
        except OSError:
            continue
        files[path] = {"staged": staged.sha if staged is not None else None,
                       "written": written, "root": str(vault.root),
                       "links": sorted([e.line, e.col] for e in edits if e.path == path)}
    store.put("fix", str(vault.root), json.dumps({"version": VERSION, "files": files},
                                                 sort_keys=True, separators=(",", ":")))


@dataclass(frozen=True)
class Sorted:
    kept: tuple[Finding, ...]
    fixed: tuple[Finding, ...]
    """Link findings `kbase fix` already rewrote in the work tree (not yet staged)."""


def _valid(vault: Vault, files: Mapping[str, object]) -> dict[str, set[tuple[int, int]]]:
    """The memo's entries that still describe the staged and the work-tree copies."""
    out: dict[str, set[tuple[int, int]]] = {}
    for path, entry in files.items():
        if not isinstance(entry, dict) or entry.get("root") != str(vault.root):
            continue
        staged = vault.note(path)
        if staged is None or staged.sha != entry.get("staged"):
            continue
        try:
            if blob_sha(_worktree_bytes(vault, path)) != entry.get("written"):
                continue
        except OSError:
            continue
        out[path] = {(int(line), int(col)) for line, col in entry.get("links", [])}
    return out


def sort_out(vault: Vault, findings: Sequence[Finding]) -> Sorted:
    """Split `findings` into those to report and those the fixer already rewrote."""
    store = _store(vault)
    if store is None or not any(f.code in LINK_CODES for f in findings):
        return Sorted(tuple(findings), ())
    try:
        data = json.loads(store.get("fix", str(vault.root)) or "null")
    except ValueError:
        return Sorted(tuple(findings), ())
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return Sorted(tuple(findings), ())
    fixed_at = _valid(vault, data.get("files") or {})
    kept: list[Finding] = []
    fixed: list[Finding] = []
    for f in findings:
        done = f.code in LINK_CODES and (f.line, f.col) in fixed_at.get(f.path, ())
        (fixed if done else kept).append(f)
    return Sorted(tuple(kept), tuple(fixed))
