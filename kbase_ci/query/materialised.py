"""An index branch's tree as a folder a query can read: written once, from one `git
cat-file --batch`, into `<git dir>/kbase/index/<tree id>/` (content-addressed, so a second
query reuses it and numpy can memory-map the files), beside its final name and renamed
into place after every file was checked against the manifest and the tables validated,
so a killed query never leaves a half-written index that looks complete. A tree refused
once is refused again unread (`integrity.remember_refusal`).
"""


from __future__ import annotations

from pathlib import Path

from kbase_ci.errors import IndexFormatError
from kbase_ci.git.listing import ls_tree
from kbase_ci.git.objects import blob_sizes, write_blobs
from kbase_ci.git.repo import git_dir, tree_of
from kbase_ci.index.integrity import check_sizes, refused_before, remember_refusal
from kbase_ci.index.reader import open_index
from kbase_ci.state.files import replace
from kbase_ci.state.folders import fresh_dir
from kbase_ci.vault.safefs import unsafe_part


def materialise(repo: Path, ref: str, tree: str = "") -> Path:
    """The index at `ref` (whose tree is `tree`, when known) as a verified folder under
    the git dir (created once)."""
    if not tree or tree.strip("0123456789abcdef"):  # not a commit, or not listed yet
        tree = tree_of(repo, ref)
    base = git_dir(repo) / "kbase" / "index"
    final = base / tree
    if (final / "manifest.json").is_file():
        return final
    why = refused_before(git_dir(repo), tree)  # the same bytes: the same verdict, unread
    if why is not None:
        raise IndexFormatError(f"{why} (refused before)")
    try:
        return _materialise(repo, ref, tree, base, final)
    except IndexFormatError as exc:
        remember_refusal(git_dir(repo), tree, str(exc))
        raise


def _materialise(repo: Path, ref: str, tree: str, base: Path, final: Path) -> Path:
    entries: list[tuple[str, str]] = []
    for e in ls_tree(repo, tree):
        rel, sha = e.path, e.sha
        if e.mode not in ("100644", "100755"):
            raise IndexFormatError(f"{ref}: {rel} is not a plain file: not a kbase index")
        if unsafe_part(rel) is not None:
            raise IndexFormatError(f"{ref}: unsafe path {rel}: not a kbase index")
        entries.append((rel, sha))
    # Sizes from object headers, before a byte is read: a forged 1.5 GB blob is refused,
    # and what is read is streamed to disk, never held in memory whole.
    sizes = blob_sizes(repo, [sha for _, sha in entries])
    check_sizes(f"index branch {ref}", {rel: sizes.get(sha, 0) for rel, sha in entries})
    base.mkdir(parents=True, exist_ok=True)
    import shutil

    # Lazy: the table checks run once per branch tree, when it is materialised here.
    from kbase_ci.index.validation import validate

    tmp = fresh_dir(base, f".{tree}.tmp-")
    try:
        for rel, _sha in entries:
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        write_blobs(repo, [(sha, tmp / rel) for rel, sha in entries])
        try:  # once: later queries skip the hashing and the validation
            reader = open_index(tmp, validated=True)
            reader.verify_all()
            validate(reader)
            reader.close()
        except IndexFormatError as exc:
            raise IndexFormatError(
                f"index branch {ref} is not a valid index: {_strip(str(exc), tmp)}") from None
        try:
            replace(tmp, final)
        except OSError:
            if not (final / "manifest.json").is_file():  # lost a race to nobody: a real error
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def _strip(message: str, folder: Path) -> str:
    return message.replace(f"{folder}: ", "")
