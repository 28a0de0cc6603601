"""What `kbase fix --staged` rewrote in the work tree, so that `kbase check --staged` in
the same pre-commit run does not report those links a second time.

pre-commit runs `kbase-fix-links` and then `kbase-check` on the same staged change. The
fixer rewrites the work-tree copy (pre-commit has stashed any other unstaged edits), so
the staged copy still holds the broken links, and the check would repeat every one of
them. The fixer leaves a memo in `.git/kbase/fixed.json`: per rewritten note, its staged
blob id, the blob id of what it wrote, and the positions of the links it rewrote that now resolve
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
from pathlib import Path

from kbase_ci.git.objects import blob_sha
from kbase_ci.model import Finding
from kbase_ci.vault.fileedit import Edit
from kbase_ci.vault.files import Vault
from kbase_ci.vault.safefs import write_atomic

VERSION = 1
LINK_CODES = frozenset(("KB101", "KB102", "KB106", "KB111", "KB112"))
"""Findings a rewritten link may have had."""


def _memo_path(vault: Vault) -> Path | None:
    return vault.git_dir / "kbase" / "fixed.json" if vault.git_dir is not None else None


def remember(vault: Vault, edits: Sequence[Edit], changed: Iterable[str]) -> None:
    """Record the rewrites `kbase fix` just made to the files `changed` (vault paths)."""
    memo = _memo_path(vault)
    if memo is None:
        return
    files: dict[str, dict[str, object]] = {}
    for path in sorted(set(changed)):
        staged = vault.note(path)
        try:
            written = blob_sha((vault.root / path).read_bytes())
        except OSError:
            continue
        files[path] = {"staged": staged.sha if staged is not None else None,
                       "written": written, "root": str(vault.root),
                       "links": sorted([e.line, e.col] for e in edits if e.path == path)}
    memo.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(memo, json.dumps({"version": VERSION, "files": files}, sort_keys=True,
                                  separators=(",", ":")).encode())


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
            if blob_sha((vault.root / path).read_bytes()) != entry.get("written"):
                continue
        except OSError:
            continue
        out[path] = {(int(line), int(col)) for line, col in entry.get("links", [])}
    return out


def sort_out(vault: Vault, findings: Sequence[Finding]) -> Sorted:
    """Split `findings` into those to report and those the fixer already rewrote."""
    memo = _memo_path(vault)
    if memo is None or not any(f.code in LINK_CODES for f in findings) or not memo.is_file():
        return Sorted(tuple(findings), ())
    try:
        data = json.loads(memo.read_bytes())
    except (OSError, ValueError):
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
