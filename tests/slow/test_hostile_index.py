"""Issue 22, the index as untrusted input: a forged index branch (its manifest's hashes
recomputed, as anyone who can push to it can) is refused with the file it got wrong and
the query answered from an in-memory build; `--index` at a forged folder exits 2; no
bad data ends in exit 3. Readers keep the generation they opened while a build swaps
`.kbase/`; a query killed while building its temporary index leaves no temp folder behind."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from kbase_ci.index import swap
from kbase_ci.index.layout import LINK_ROWS_FILE, NOTE_ROWS_FILE
from kbase_ci.index.reader import open_index
from tests.conftest import GIT_ENV, REPO, git, kbase_process, run_kbase, write
from tests.indexkit import commit_index_branch

Repo = Callable[..., Path]
NOTES = {"A.md": "# A\n\nsee [[B]] and [[C]] and [[nowhere]]\n", "B.md": "# B\n\n[[A]]\n",
         "C.md": "# C\n\nback to [[A]]\n", ".gitignore": ".kbase/\n"}


def _npy(data: bytes, change: Callable[[np.ndarray], np.ndarray]) -> bytes:
    import io

    arr = np.load(io.BytesIO(data), allow_pickle=False)
    out = io.BytesIO()
    np.save(out, change(arr).astype(arr.dtype), allow_pickle=False)
    return out.getvalue()


def _same_length(replacement: bytes) -> Callable[[bytes], bytes]:
    """The first row replaced by `replacement` padded to its length (offsets stay)."""
    def edit(data: bytes) -> bytes:
        first, _, rest = data.partition(b"\n")
        return replacement.ljust(len(first)) + b"\n" + rest
    return edit


FORGERIES: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    "out-of-range name id": ("names.json", lambda d: b'{"a":[999999]}\n'),
    "out-of-range backlink": ("backlinks.ids.npy", lambda d: _npy(d, lambda a: a + 999)),
    "shifted offsets": ("notes.offsets.npy", lambda d: _npy(d, lambda a: a + 1)),
    "mention row not a list": ("mentions.jsonl", lambda d: b"99" + d[2:]),
    "100k-deep JSON": ("unresolved.json", lambda d: b"[" * 100_000 + b"]" * 100_000),
    "wrong row type": (NOTE_ROWS_FILE, _same_length(b'"x"')),
    "wrong link row": (LINK_ROWS_FILE, _same_length(b'[0,1,1,"x","wiki",true,"y"]')),
    "passwd note path": ("notes.json", lambda d: d.replace(b'"A.md"',
                                                           b'"../../../../etc/passwd"')),
    "bm25 garbage": ("shards/_root/bm25/terms.npy",
                     lambda d: d[:128] + bytes(255 - b for b in d[128:])),
    "chunk ending before it starts": ("shards/_root/chunks.lines.npy",
                                      lambda d: _npy(d, lambda a: a + (np.arange(len(a)) == 0))),
    "unknown model kind": ("manifest.json", lambda d: d.replace(b'"kind": null',
                                                                b'"kind": "pickle"')),
}



def _forge(root: Path, rel: str, edit: Callable[[bytes], bytes], folder: Path) -> None:
    """`.kbase/` with `rel` edited and the manifest's hashes recomputed, committed as the
    index branch and written to `folder`; `.kbase/` itself removed."""
    index = root / ".kbase"
    files = {p.relative_to(index).as_posix(): p.read_bytes()
             for p in sorted(index.rglob("*")) if p.is_file()}
    files[rel] = edit(files[rel])
    manifest = json.loads(files["manifest.json"])
    manifest["files"] = {r: hashlib.sha256(d).hexdigest() for r, d in files.items()
                         if r != "manifest.json"}
    files["manifest.json"] = json.dumps(manifest).encode()
    commit_index_branch(root, files)
    write(folder, dict(files))
    for p in sorted(index.rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    index.rmdir()


@pytest.mark.parametrize("case", list(FORGERIES))
def test_forged_index_is_refused_and_the_answer_built_in_memory(
        make_repo: Repo, tmp_path: Path, case: str) -> None:
    rel, edit = FORGERIES[case]
    named = rel.rpartition("bm25/")[0] + "bm25/" if "bm25/" in rel else rel  # its folder
    root = make_repo(NOTES)
    assert run_kbase("index", cwd=root).returncode == 0
    forged = tmp_path / "forged"
    _forge(root, rel, edit, forged)
    proc = run_kbase("backlinks", "A", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert "is not a valid index" in proc.stderr and named in proc.stderr
    assert json.loads(proc.stdout)["index"]["origin"] == "temporary"
    assert "passwd" not in proc.stdout
    direct = run_kbase("backlinks", "A", "--index", str(forged), cwd=root)
    assert direct.returncode == 2 and named in direct.stderr, direct.stderr
    assert "Traceback" not in direct.stderr


def test_a_huge_blob_is_refused_by_its_size_unread(make_repo: Repo) -> None:
    root = make_repo(NOTES)
    assert run_kbase("index", cwd=root).returncode == 0
    files = {p.relative_to(root / ".kbase").as_posix(): p.read_bytes()
             for p in (root / ".kbase").rglob("*") if p.is_file()}
    commit_index_branch(root, files)  # the real index, then names.json swapped for 270 MB
    env = {**os.environ, **GIT_ENV}
    with subprocess.Popen(["git", "hash-object", "-w", "--stdin"], cwd=root, env=env,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        for _ in range(270):
            proc.stdin.write(b" " * 1_000_000)
        proc.stdin.write(b"{}")
        proc.stdin.close()
        big = proc.stdout.read().decode().strip()
    lines = [ln if not ln.endswith("\tnames.json") else f"100644 blob {big}\tnames.json"
             for ln in git(root, "ls-tree", "kbase-index").splitlines()]
    mk = subprocess.run(["git", "mktree"], cwd=root, env=env, check=True, text=True,
                        input="\n".join(lines) + "\n", capture_output=True).stdout.strip()
    commit = git(root, "commit-tree", mk, "-m", "huge").strip()
    git(root, "update-ref", "refs/heads/kbase-index", commit)
    for p in sorted((root / ".kbase").rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    (root / ".kbase").rmdir()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc2 = kbase_process("backlinks", "A", cwd=root)
    assert proc2.returncode == 0, proc2.stderr
    assert "names.json is 270000002 bytes" in proc2.stderr
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    assert max(peak, before) < 1_000_000  # KiB: the blob was never read into memory


def test_a_reader_keeps_its_generation_while_a_build_swaps(make_repo: Repo) -> None:
    root = make_repo(NOTES)
    assert run_kbase("index", cwd=root).returncode == 0
    reader = open_index(root / ".kbase", git_dir=root / ".git")
    paths = reader.core().paths
    write(root, {"D.md": "# D\n\n[[A]] [[B]]\n"})
    git(root, "add", "-A")
    git(root, "commit", "-qm", "D")
    assert run_kbase("index", "--no-cache", cwd=root).returncode == 0
    # Every table the old reader had not read yet is still its own generation's.
    assert len(reader.rows(LINK_ROWS_FILE)) == 5 and reader.core().paths == paths
    assert [p.name for p in root.iterdir() if p.name.startswith(".kbase.retired-")]
    # ...and git never sees it (`.kbase/` in .gitignore does not match that name)
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    reader.close()
    assert run_kbase("index", cwd=root).returncode == 0  # no reader: retired ones go
    assert [p.name for p in root.iterdir() if p.name.startswith(".kbase")] == [".kbase"]
    assert len(open_index(root / ".kbase").rows(LINK_ROWS_FILE)) == 7


def test_a_build_temp_folder_is_hidden_from_git_and_never_in_the_index(make_repo: Repo
                                                                       ) -> None:
    root = make_repo(NOTES)
    tmp = swap.temp_dir_for(root / ".kbase")  # what `kbase index` builds into
    write(tmp, {"notes.json": "{}", "shards/a/b.npy": "x"})
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    shutil.rmtree(tmp)
    assert run_kbase("index", cwd=root).returncode == 0
    index = root / ".kbase"
    assert not (index / ".gitignore").exists()
    assert ".gitignore" not in json.loads((index / "manifest.json").read_text())["files"]


_REBUILD = """
import os, subprocess, sys
stop, log = sys.argv[1], sys.argv[2]
n = 0
while not os.path.exists(stop) and n < 100:
    done = subprocess.run([sys.executable, "-m", "kbase_ci", "index", "--no-cache"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"build {n} exit {done.returncode}: {done.stderr[-2000:]}")
        sys.exit(1)
    n += 1
    with open(log, "a") as fh:  # the test counts the builds done so far
        fh.write("built\\n")
print(n)
"""


def test_queries_during_rebuilds_never_fail(make_repo: Repo) -> None:
    root = make_repo({**NOTES, **{f"n{i}.md": f"# N{i}\n\n[[A]] [[n{i + 1}]]\n"
                                  for i in range(60)}})
    assert run_kbase("index", cwd=root).returncode == 0
    env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV}
    # The builder rebuilds until told to stop, which is once the queries have overlapped
    # at least two whole builds: a count, not a time, so a loaded machine tests the same.
    stop, log = root.parent / "stop", root.parent / "builds"
    builder = subprocess.Popen([sys.executable, "-c", _REBUILD, str(stop), str(log)],
                               cwd=root, env=env, stdout=subprocess.PIPE, text=True)
    codes = []
    try:
        while builder.poll() is None:
            proc = run_kbase("backlinks", "A", cwd=root)
            codes.append((proc.returncode, proc.stderr[-300:]))
            built = log.read_text().count("built") if log.exists() else 0
            if len(codes) >= 5 and built >= 2:
                stop.touch()
    finally:
        stop.touch()
        out = builder.communicate(timeout=300)[0]
    assert builder.returncode == 0, out  # a build failed while queries read
    builds = int(out)
    assert builds >= 2 and len(codes) >= 5
    assert all(code == 0 and "built for this query" not in err for code, err in codes), codes


def test_sigterm_while_building_in_memory_leaves_no_temp_folder(make_repo: Repo,
                                                                tmp_path: Path) -> None:
    root = make_repo({f"n{i}.md": f"# Note {i}\n\n" + "words and [[links]] " * 200
                      for i in range(400)})
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV, "TMPDIR": str(temp)}
    for sig in (signal.SIGTERM, signal.SIGKILL):
        proc = subprocess.Popen([sys.executable, "-m", "kbase_ci", "search", "words"],
                                cwd=root, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        # Synchronised on the build writing inside its scratch folder (`index.tmp-PID`),
        # not on the folder appearing: a signal between its mkdir and the registration
        # of its cleanup is another case (a killed process's folder, swept next time).
        deadline = time.monotonic() + 300
        while not list(temp.glob("kbase-query-*/index*")) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert list(temp.glob("kbase-query-*/index*")), "the in-memory build never started"
        proc.send_signal(sig)
        proc.communicate(timeout=60)
        if sig == signal.SIGTERM:
            assert proc.returncode == 128 + signal.SIGTERM
            assert list(temp.glob("kbase-query-*")) == []
    # Killed outright: the next build that needs one sweeps it away.
    assert list(temp.glob("kbase-query-*"))
    done = subprocess.run([sys.executable, "-m", "kbase_ci", "search", "words"], cwd=root,
                          env=env, capture_output=True, timeout=300, check=False)
    assert done.returncode == 0
    assert list(temp.glob("kbase-query-*")) == []
