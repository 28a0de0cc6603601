"""Build beside the target, then swap: an interrupted or failed build never leaves a
half-written index where the previous good one was, and a swap never replaces or deletes
anything that is not a kbase index.

The new tree is written to `<target>.tmp-<pid>` in the same folder (same file system,
so renames are atomic). On Linux the two directories are exchanged in one
`renameat2(RENAME_EXCHANGE)` call; elsewhere the old one is renamed aside first, which
leaves a moment with no target, repaired by `recover` on the next build. The old
generation is deleted once no reader holds it (kbase_ci.state.generations); temp folders
of builds that were killed are removed once their process is gone.

What may be replaced (`check_target`): nothing, an empty folder, or a kbase index: a real
folder (not a link, no link inside) whose manifest says `format: kbase-index` and which
holds only the manifest, the files it lists and `scopes/`. Anything else (`--out` at a
folder of someone's files, a committed `.kbase -> ..`, a note moved into `.kbase/`) is
refused with the path that is in the way.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from kbase_ci.errors import InputRefused, UnsafePathError
from kbase_ci.index.layout import SCOPES_DIR
from kbase_ci.index.manifest import MANIFEST_NAME, listed_files
from kbase_ci.state.bounded import read_input
from kbase_ci.state.files import exchange, replace
from kbase_ci.state.folders import (
    GIT_HIDE,
    TEMP_MARK,
    hide_from_git,
    is_our_temp,
    make_temp_dir,
    process_alive,
)
from kbase_ci.state.generations import discard, in_use
from kbase_ci.vault.safefs import foreign_entry, links_between

_TMP = ".tmp-"
_OLD = ".old-"
_RETIRED = ".retired-"
_MAX_MANIFEST = 64 << 20


def index_foreign(folder: Path) -> str | None:
    """What makes `folder` not a kbase index kbase may replace (None: it is one, or it
    is empty): a missing or foreign manifest, or the first file it does not list."""
    try:
        entries = os.listdir(folder)
    except FileNotFoundError:
        return None
    if not entries:
        return None
    manifest = folder / MANIFEST_NAME
    if not os.path.lexists(manifest):
        first = foreign_entry(folder, lambda rel: False) or sorted(entries)[0]
        return f"{first} and no {MANIFEST_NAME}"
    try:
        files = listed_files(read_input(manifest, _MAX_MANIFEST, follow_links=False))
    except InputRefused:
        return f"{MANIFEST_NAME} (a link, a FIFO or device, or too large)"
    except OSError:  # O_NOFOLLOW refusing a link
        return f"{MANIFEST_NAME} (a link, or unreadable)"
    if files is None:
        return f"a {MANIFEST_NAME} that is not a kbase index's"
    return foreign_entry(folder, lambda rel: rel in (MANIFEST_NAME, GIT_HIDE) or rel in files
                         or rel.startswith(SCOPES_DIR))


def check_target(target: Path, repo_root: Path | None) -> None:
    """UnsafePathError unless building into `target` can only replace a kbase index:
    not the repository or a folder holding it, no symbolic link on the way inside the
    repository, and nothing at `target` but an index (or nothing)."""
    if repo_root is not None and (target == repo_root or repo_root.is_relative_to(target)):
        raise UnsafePathError(f"{target}: the index folder cannot be the repository or a "
                              "folder holding it")
    link = links_between(repo_root, target) if repo_root is not None else None
    if link is not None or target.is_symlink():
        raise UnsafePathError(f"{target}: {link or target.name} is a symbolic link; kbase "
                              "does not build an index through one (it may lead outside "
                              "the repository)")
    if not os.path.lexists(target):
        return
    if not target.is_dir():
        raise UnsafePathError(f"{target} exists and is not a folder; not replacing it")
    foreign = index_foreign(target)
    if foreign is not None:
        raise UnsafePathError(
            f"{target} is not a kbase index kbase may replace: it holds {foreign}. Move "
            "that out of the way, or build somewhere else with --out")


def temp_dir_for(target: Path) -> Path:
    tmp = target.parent / f"{target.name}{_TMP}{os.getpid()}"
    if os.path.lexists(tmp):
        if not is_our_temp(tmp):
            raise UnsafePathError(f"{tmp} is in the way and is not a kbase temp folder")
        shutil.rmtree(tmp)
    target.parent.mkdir(parents=True, exist_ok=True)
    return make_temp_dir(tmp)


def recover(target: Path) -> None:
    """Undo what killed builds left: restore a target renamed aside, drop dead temps and
    old generations no reader holds. Only folders that are provably kbase's are touched."""
    parent = target.parent
    if not parent.is_dir() or target.is_symlink():
        return
    for entry in sorted(parent.iterdir()):
        name = entry.name
        for marker in (_TMP, _OLD, _RETIRED):
            if not name.startswith(target.name + marker):
                continue
            tail = name[len(target.name) + len(marker):]
            if marker == _RETIRED:
                if index_foreign(entry) is None and not in_use(entry, MANIFEST_NAME):
                    shutil.rmtree(entry, ignore_errors=True)
            elif not tail.isdigit() or process_alive(int(tail)):
                continue
            elif marker == _TMP:
                if is_our_temp(entry):
                    shutil.rmtree(entry, ignore_errors=True)
            elif index_foreign(entry) is None:
                if not os.path.lexists(target):
                    with contextlib.suppress(FileNotFoundError):
                        (entry / GIT_HIDE).unlink()
                    replace(entry, target)  # the swap died between its two renames
                else:
                    _discard(entry, target)


def _discard(old: Path, target: Path) -> None:
    """Delete a replaced generation, or (a reader still holds it) retire it for later:
    hidden from git first, as it sits beside the index under another name."""
    hide_from_git(old)
    n = 0
    while os.path.lexists(aside := target.parent / f"{target.name}{_RETIRED}"
                          f"{os.getpid()}-{n}"):
        n += 1
    discard(old, MANIFEST_NAME, aside)


def swap_into(tmp: Path, target: Path, repo_root: Path | None = None) -> None:
    """Make `tmp` the new `target`; the old target (if any) is deleted afterwards, once no
    reader holds it. Checked again here: the build took a while."""
    check_target(target, repo_root)
    for rel in (TEMP_MARK, GIT_HIDE):  # the index is the manifest's files, nothing else
        with contextlib.suppress(FileNotFoundError):
            (tmp / rel).unlink()
    if not os.path.lexists(target):
        replace(tmp, target)
        return
    if exchange(tmp, target):
        _discard(tmp, target)  # tmp now holds the old index
        return
    aside = target.parent / f"{target.name}{_OLD}{os.getpid()}"
    if os.path.lexists(aside):
        if index_foreign(aside) is not None:
            raise UnsafePathError(f"{aside} is in the way and is not a kbase index")
        _discard(aside, target)
    replace(target, aside)
    hide_from_git(aside)
    replace(tmp, target)
    _discard(aside, target)
