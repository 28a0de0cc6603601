"""A shared vault as an agent meets it: `python -m bench.freshclone NAME [--out DIR]
[--model PATH] [--only FOLDER] [--reuse]`.

The corpus's vault (or one folder of it: `--only pages` for tldr-pages' English pages)
becomes a git repository, `kbase index` builds it (with `--model`, else as configured),
`kbase publish --push` sends the index to a local bare remote, and a `git clone
--single-branch` of that remote (then `git fetch origin kbase-index`, which fills only
FETCH_HEAD) is what queries run in: no `.kbase/`, the index read from what the fetch
brought. Attachments are not copied (the corpora hold Markdown only), as in the clones
issue 23 was reported from. `--reuse` keeps a clone already built there (index builds of
the shared vaults with the transformer take minutes).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from bench.workloads import CORPORA, GIT, ROOT

KBASE = [sys.executable, "-m", "kbase_ci"]
DONE = "fresh-clone-done"
"""Written last into a finished work folder: `reuse` trusts only those."""


def kbase(*args: str, cwd: Path, env: dict[str, str] | None = None,
          check: bool = True) -> subprocess.CompletedProcess[str]:
    """The real `kbase` command in a new process (this checkout's code)."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    proc = subprocess.run([*KBASE, *args], cwd=cwd, env=full_env, text=True,
                          capture_output=True)
    if check and proc.returncode not in (0, 1):
        raise SystemExit(f"kbase {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
    return proc


def fresh_clone(name: str, work: Path, *, index_args: tuple[str, ...] = (),
                only: str | None = None, reuse: bool = False) -> Path:
    """`work/NAME/clone`: a single-branch clone of the corpus NAME (`only`: that folder
    of its vault) with its published index fetched; `reuse`: a finished one already
    there is kept."""
    base = work / name
    src, remote, clone = base / "src", base / "remote.git", base / "clone"
    if reuse and (base / DONE).is_file():
        return clone
    shutil.rmtree(base, ignore_errors=True)
    vault = CORPORA / name / "vault"
    if only is None:
        shutil.copytree(vault, src)
    else:
        shutil.copytree(vault / only, src / only)
    (src / ".gitignore").write_text(".kbase/\n", encoding="utf-8")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "corpus"]):
        subprocess.run([*GIT, *args], cwd=src, check=True)
    subprocess.run([*GIT, "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    subprocess.run([*GIT, "remote", "add", "origin", str(remote)], cwd=src, check=True)
    subprocess.run([*GIT, "push", "-q", "origin", "main"], cwd=src, check=True)
    kbase("index", *index_args, cwd=src)
    kbase("publish", "--push", cwd=src)
    subprocess.run([*GIT, "clone", "-q", "--single-branch", str(remote), str(clone)],
                   check=True)
    subprocess.run([*GIT, "fetch", "-q", "origin", "kbase-index"], cwd=clone, check=True)
    (base / DONE).write_text("", encoding="utf-8")
    return clone


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("name", help="a folder of ../shared/corpora")
    parser.add_argument("--out", type=Path, default=Path("/tmp/kbase-fresh"))
    parser.add_argument("--model", type=Path, default=None, help="kbase index --model")
    parser.add_argument("--only", default=None, help="one folder of the vault")
    parser.add_argument("--reuse", action="store_true", help="keep a finished clone")
    args = parser.parse_args(argv)
    index_args = ("--model", str(args.model)) if args.model else ()
    print(fresh_clone(args.name, args.out, index_args=index_args, only=args.only,
                      reuse=args.reuse))
    return 0


if __name__ == "__main__":
    sys.exit(main())
