"""Byte size of every note without reading it: shard planning needs sizes for the whole
vault, while a `--shard K/N` slice reads only the notes it builds.

`git cat-file --batch-check` answers for all blobs in one process; notes edited in the
work tree (not in the object store yet) and directory-walk vaults are read instead.
"""

from __future__ import annotations

from .. import gitio
from ..vault import Vault


def note_sizes(vault: Vault) -> dict[str, int]:
    notes = list(vault.notes)
    if not notes:
        return {}
    by_sha: dict[str, int] = {}
    if vault.repo_root is not None:
        shas = list(dict.fromkeys(n.sha for n in notes))
        out = gitio.git(["cat-file", "--batch-check"], vault.root,
                        input=("\n".join(shas) + "\n").encode())
        for line in out.decode().splitlines():
            parts = line.split(" ")
            if len(parts) == 3 and parts[1] == "blob":
                by_sha[parts[0]] = int(parts[2])
    unknown = [n for n in notes if n.sha not in by_sha]
    contents = vault.read(unknown)
    for n in unknown:
        by_sha[n.sha] = len(contents[n.path])
    return {n.path: by_sha[n.sha] for n in notes}
