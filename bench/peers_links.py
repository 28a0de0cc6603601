"""Link-checking peers against `kbase check`: remark-validate-links (remark-cli) and
markdown-link-check from npm, on the real wikilinked vaults and a generated vault whose
deliberately broken links are known. Neither peer reads [[wikilinks]]: the table counts
what each reports and what it misses of kbase's findings (matched by file and line for
remark, by file for markdown-link-check, which reports no line numbers)."""

from __future__ import annotations

import json
import re
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from bench.figure import clock, run_cmd
from bench.workloads import git_copy, kbase

_REMARK_FILE = re.compile(r"^(\S.*\.md)$")
_REMARK_WARN = re.compile(r"^\s*(\d+):(\d+)(?:-\d+:\d+)?\s+warning\s")
_MLC_DEAD = re.compile(r"ERROR: (\d+) dead links? found in (.+\.md) !")
EXTERNAL = {"ignorePatterns": [{"pattern": "^https?://"}, {"pattern": "^mailto:"},
                               {"pattern": "^ftp:"}]}


def kbase_findings(repo: Path) -> tuple[list[tuple[str, int, bool]], float, float]:
    """(path, line, is_wikilink) of each broken-link finding, wall s, CPU s."""
    wall, cpu, proc = clock(lambda: run_cmd([*kbase(), "check", "--all", "--format", "json"],
                                            repo))
    out = []
    for f in json.loads(proc.stdout)["findings"]:
        if f["code"].startswith("KB1"):
            wiki = f["message"].lstrip("!").startswith("[[")
            out.append((f["path"], int(f["line"]), wiki))
    return out, wall, cpu


def remark(bin_dir: Path, repo: Path) -> tuple[list[tuple[str, int]], float, float]:
    # remark resolves plugin names from the working folder: give it the file.
    plugin = bin_dir.parent / "remark-validate-links" / "index.js"
    # repository:false: the copies have no `origin` remote (remark would refuse every file).
    cmd = [str(bin_dir / "remark"), "--use", f"{plugin}=repository:false", "--no-stdout",
           "--no-color", "--quiet", "."]
    wall, cpu, proc = clock(lambda: run_cmd(cmd, repo, ok=(0, 1)))
    found: list[tuple[str, int]] = []
    current = ""
    for line in proc.stderr.splitlines():
        if m := _REMARK_FILE.match(line):
            current = m[1]
        elif (m := _REMARK_WARN.match(line)) and current:
            found.append((current, int(m[1])))
        elif line.strip().startswith("error "):
            raise RuntimeError(f"remark failed on {current}: {line.strip()}")
    return found, wall, cpu


def markdown_link_check(bin_dir: Path, repo: Path) -> tuple[list[str], float, float]:
    config = repo.parent / "mlc.json"
    config.write_text(json.dumps(EXTERNAL), encoding="utf-8")
    files = sorted(str(p.relative_to(repo)) for p in repo.rglob("*.md")
                   if ".git" not in p.parts)
    cmd = [str(bin_dir / "markdown-link-check"), "-q", "-c", str(config), *files]
    wall, cpu, proc = clock(lambda: run_cmd(cmd, repo, ok=(0, 1)))
    found: list[str] = []
    for m in _MLC_DEAD.finditer(proc.stdout + proc.stderr):
        found.extend([m[2]] * int(m[1]))
    return found, wall, cpu


def compare(name: str, repo: Path, bin_dir: Path, known: int | None) -> list[dict[str, Any]]:
    kb, kb_wall, kb_cpu = kbase_findings(repo)
    wiki = sum(1 for _, _, w in kb if w)
    base = {"workload": name, "known_broken": known, "unit": "s", "n": 1, "min": None,
            "max": None}
    rows = [{**base, "name": "kbase check --all", "median": round(kb_wall, 2),
             "cpu": round(kb_cpu, 2), "reports": len(kb), "wikilink_reports": wiki,
             "markdown_reports": len(kb) - wiki, "missed_vs_kbase": 0,
             "reads_wikilinks": True, "command": "kbase check --all --format json"}]
    kb_lines = {(p, ln) for p, ln, _ in kb}
    found, wall, cpu = remark(bin_dir, repo)
    rows.append({**base, "name": "remark-validate-links", "median": round(wall, 2),
                 "cpu": round(cpu, 2), "reports": len(found),
                 "missed_vs_kbase": len(kb_lines - set(found)),
                 "not_in_kbase": len(set(found) - kb_lines), "reads_wikilinks": False,
                 "command": "remark --use remark-validate-links=repository:false --no-stdout ."})
    mlc_found, wall, cpu = markdown_link_check(bin_dir, repo)
    per_file = Counter(mlc_found)
    kb_files = Counter(p for p, _, _ in kb)
    rows.append({**base, "name": "markdown-link-check", "median": round(wall, 2),
                 "cpu": round(cpu, 2), "reports": len(mlc_found),
                 "missed_vs_kbase": sum(max(0, n - per_file[f]) for f, n in kb_files.items()),
                 "not_in_kbase": sum(max(0, n - kb_files[f]) for f, n in per_file.items()),
                 "reads_wikilinks": False,
                 "command": "markdown-link-check -q -c CONFIG(no external URLs) FILES..."})
    return rows


def measure(bin_dir: Path, vaults: list[tuple[str, Path, int | None, bool]]
            ) -> list[dict[str, Any]]:
    """vaults: (name, folder, known broken links or None, is a git repo already)."""
    figs: list[dict[str, Any]] = []
    for name, folder, known, is_repo in vaults:
        with tempfile.TemporaryDirectory(prefix="kbase-bench-links-") as tmp:
            if is_repo:
                repo = Path(tmp) / "v"
                run_cmd(["git", "clone", "-q", "--local", str(folder), str(repo)], Path(tmp),
                        ok=(0,))
            else:
                repo = git_copy(folder, Path(tmp) / "v")
            figs.extend(compare(name, repo, bin_dir, known))
    return figs
