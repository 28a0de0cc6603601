"""A shared vault as an agent meets it: `python -m bench.freshclone NAME [--out DIR]`.

The corpus's vault becomes a git repository, `kbase index` builds it, `kbase publish
--push` sends the index to a local bare remote, and a fresh `git clone` of that remote
(with `git fetch origin kbase-index`) is what queries then run in: no `.kbase/`, the
index read from the remote-tracking branch. Attachments are not copied (the corpora
hold Markdown only), as in the clones issue 23 was reported from.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from bench.workloads import CORPORA, GIT

KBASE = [sys.executable, "-m", "kbase_ci"]
ROOT = Path(__file__).resolve().parents[1]


def kbase(*args: str, cwd: Path, env: dict[str, str] | None = None,
          check: bool = True) -> subprocess.CompletedProcess[str]:
    """The real `kbase` command in a new process (this checkout's code)."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    proc = subprocess.run([*KBASE, *args], cwd=cwd, env=full_env, text=True,
                          capture_output=True)
    if check and proc.returncode not in (0, 1):
        raise SystemExit(f"kbase {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
    return proc


def fresh_clone(name: str, work: Path, *, index_args: tuple[str, ...] = ()) -> Path:
    """`work/NAME/clone`: a clone of the corpus NAME with its published index fetched."""
    base = work / name
    shutil.rmtree(base, ignore_errors=True)
    src, remote, clone = base / "src", base / "remote.git", base / "clone"
    shutil.copytree(CORPORA / name / "vault", src)
    (src / ".gitignore").write_text(".kbase/\n", encoding="utf-8")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "corpus"]):
        subprocess.run([*GIT, *args], cwd=src, check=True)
    subprocess.run([*GIT, "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    subprocess.run([*GIT, "remote", "add", "origin", str(remote)], cwd=src, check=True)
    subprocess.run([*GIT, "push", "-q", "origin", "main"], cwd=src, check=True)
    kbase("index", *index_args, cwd=src)
    kbase("publish", "--push", cwd=src)
    subprocess.run([*GIT, "clone", "-q", str(remote), str(clone)], check=True)
    subprocess.run([*GIT, "fetch", "-q", "origin", "kbase-index"], cwd=clone, check=True)
    return clone


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("name", help="a folder of ../shared/corpora")
    parser.add_argument("--out", type=Path, default=Path("/tmp/kbase-fresh"))
    args = parser.parse_args(argv)
    print(fresh_clone(args.name, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
