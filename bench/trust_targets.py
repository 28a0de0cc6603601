"""Issue 20's targets on the shared vaults: `python -m bench.trust_targets [--work DIR]`.

Per vault (each copied into a git repository, indexed, published with `kbase publish` and
cloned, so queries answer from the clone's `origin/kbase-index` as an agent's would):
- the size of `kbase context --max-tokens 1500 --format json` (characters / 4, and the
  budget's own count) for the 15 best-linked notes and 5 questions from the vault's
  known-answer set, and how many bundles came back empty (exit 1);
- whether a note written after the index, committed, staged or untracked, is the top
  hit for its own distinctive words (`kbase search`, default mode);
- which index each answer came from (`index.origin`).
Whole `kbase` processes, as an agent runs them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
SETS = ("obsidian-tasks-docs", "data-engineering-wiki", "dnd-5e-srd", "tldr-pages")
_GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@kbase.invalid",
        "-c", "commit.gpgsign=false", "-c", "gc.auto=0"]
NEW = {"Committed Wombat.md": ("wombat ledger", "The wombat ledger reconciles nightly "
                               "exports of every list."),
       "Staged Quokka.md": ("quokka checkpoints", "Quokka checkpoints keep a snapshot of "
                            "every result."),
       "Untracked Narwhal.md": ("narwhal sharding archive", "Narwhal sharding splits the "
                                "archive by year and month.")}


def kbase(cwd: Path, *args: str) -> tuple[int, Any, str]:
    proc = subprocess.run([sys.executable, "-m", "kbase_ci", *args], cwd=cwd,
                          capture_output=True, text=True, check=False,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
                               "HF_HUB_OFFLINE": "1"})
    out = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else proc.stdout
    return proc.returncode, out, proc.stderr


def git(cwd: Path, *args: str) -> None:
    subprocess.run([*_GIT, *args], cwd=cwd, check=True, capture_output=True)


def clone_of(corpus: str, work: Path) -> Path:
    src, cl = work / f"{corpus}-src", work / f"{corpus}-clone"
    if cl.is_dir():
        shutil.rmtree(cl)
    if not (src / ".git").is_dir():
        shutil.copytree(CORPORA / corpus / "vault", src)
        (src / ".gitignore").write_text(".kbase/\n", encoding="utf-8")
        for cmd in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "corpus"]):
            git(src, *cmd)
        for args in (["index"], ["publish"]):
            code, _, err = kbase(src, *args)
            if code != 0:
                raise SystemExit(f"{corpus}: kbase {args[0]} failed: {err}")
    git(work, "clone", "-q", "--single-branch", "--branch", "main", str(src), str(cl))
    return cl


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--sets", nargs="*", default=list(SETS))
    args = ap.parse_args()
    from kbase_ci.query.payload import cost

    work = args.work or Path(tempfile.mkdtemp(prefix="kbase-targets-"))
    work.mkdir(parents=True, exist_ok=True)
    for corpus in args.sets:
        cl = clone_of(corpus, work)
        _, hubs, _ = kbase(cl, "graph", "hubs", "--limit", "15", "--min-links", "1")
        qa = CORPORA / "qa" / f"{'tldr-en' if corpus == 'tldr-pages' else corpus}.jsonl"
        questions = [json.loads(ln)["query"] for ln in
                     qa.read_text(encoding="utf-8").splitlines()[:5]] if qa.is_file() else []
        sizes, origins = [], set()
        for start in [["NOTE", n["path"]] for n in hubs["nodes"]] + [
                ["--query", q] for q in questions]:
            target = start[1:] if start[0] == "NOTE" else start
            code, out, err = kbase(cl, "context", *target, "--max-tokens", "1500")
            text = json.dumps(out, ensure_ascii=False, separators=(",", ":"))
            sizes.append((len(text) / 4, cost(text), code))
            origins.add(out["index"]["origin"] if isinstance(out, dict) else err)
        worst = max(sizes)
        print(f"{corpus:22} context --max-tokens 1500 --format json over {len(sizes)}: "
              f"max chars/4 {worst[0]:.0f}, max budget count {max(s[1] for s in sizes)}, "
              f"empty {sum(s[2] == 1 for s in sizes)}; origins {sorted(origins)}",
              flush=True)
        for path, (_, text) in NEW.items():
            (cl / path).write_text(f"# {path[:-3]}\n\n{text}\n", encoding="utf-8")
        git(cl, "add", "Committed Wombat.md")
        git(cl, "commit", "-qm", "wombat")
        git(cl, "add", "Staged Quokka.md")
        for path, (query, _) in NEW.items():
            code, out, _ = kbase(cl, "search", query)
            top = out["results"][0] if code == 0 else {}
            print(f"{'':22} {path.split()[0].lower():9} note: top hit for {query!r}: "
                  f"{top.get('path') == path} ({top.get('confidence')}); origin "
                  f"{out['index']['origin']}", flush=True)


if __name__ == "__main__":
    main()
