"""What a person at a terminal (and a CI log) sees: `kbase index` progress for every
stage (a bar on a terminal, one timed line per stage elsewhere), and colours that follow
`--color` and NO_COLOR, with warnings yellow and errors red."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import GIT_ENV, REPO, git, run_kbase, write
from indexkit import make_tiny_model, small_vault

from bench.index_progress import run_on_terminal
from kbase_ci.index.indexbuild import build_index
from kbase_ci.report.terminal import color_wanted
from kbase_ci.vault.notefiles import Vault

MakeRepo = Callable[..., Path]
SGR_COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-9]|9[0-7]|38;[25])[0-9;]*m")
STAGES = ["prepare", "build", "links", "similar", "notes", "concepts"]


def _on_terminal(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    """Run `kbase ARGS` on a pseudo-terminal; everything it drew."""
    out = bytearray()
    run_on_terminal([sys.executable, "-m", "kbase_ci", *args], cwd, env,
                    lambda _t, data: out.extend(data), timeout=300)
    return out.decode("utf-8", "replace")


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV, "TERM": "xterm", **extra}
    if "NO_COLOR" not in extra:
        env.pop("NO_COLOR", None)
    return env


def test_every_build_stage_reports_progress(make_repo: MakeRepo, tmp_path: Path) -> None:
    model = make_tiny_model(tmp_path / "tiny")
    root = make_repo(small_vault())
    calls: list[tuple[str, int, int]] = []
    build_index(Vault(root), root / ".kbase", model=model,
                progress=lambda stage, done, total: calls.append((stage, done, total)))
    seen = list(dict.fromkeys(stage for stage, _, _ in calls))
    assert seen == STAGES  # the vault-wide part (was one silent "assemble 0/1") included
    for stage in STAGES:  # each stage ends complete
        last = [c for c in calls if c[0] == stage][-1]
        assert last[1] == last[2] > 0, last
    build = [d for s, d, _ in calls if s == "build"]
    assert build == sorted(build) and len(set(build)) > 2  # moves within the shards


def test_off_a_terminal_one_line_per_stage(make_repo: MakeRepo) -> None:
    root = make_repo(small_vault())
    proc = subprocess.run([sys.executable, "-m", "kbase_ci", "index"], cwd=root, env=_env(),
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines()
             if re.fullmatch(r"kbase index: \w+ \d+/\d+ in \d+\.\d s", ln)]
    assert [ln.split()[2] for ln in lines] == ["prepare", "build", "links", "notes",
                                               "concepts"]  # no model: no similar notes
    assert "kbase index: build 8/8 in " in proc.stderr
    assert not SGR_COLOUR.search(proc.stderr)


def test_on_a_terminal_a_bar_that_respects_no_color(make_repo: MakeRepo) -> None:
    root = make_repo({**small_vault(), "Bad.md": b"# Bad\n\xff\xfe not utf-8\n"})
    drawn = _on_terminal(["index"], root, _env())
    assert "build" in drawn and "concepts" in drawn and "\r" in drawn  # redrawn in place
    assert "\x1b[33mBad.md:" in drawn  # a parse warning: yellow
    plain = _on_terminal(["index", "--out", str(root / "other")], root, _env(NO_COLOR="1"))
    assert "Bad.md:" in plain and not SGR_COLOUR.search(plain)
    never = _on_terminal(["--color", "never", "index", "--out", str(root / "third")], root,
                         _env())
    assert "Bad.md:" in never and not SGR_COLOUR.search(never)


def test_check_colours_warnings_yellow_and_errors_red(make_repo: MakeRepo) -> None:
    root = make_repo({"A.md": "# A\n#Rust [[Nowhere]]\n", "B.md": "# B\n#rust\n",
                      "C.md": "# C\n#rust\n"})
    proc = run_kbase("--color", "always", "check", "--all", cwd=root)
    assert proc.returncode == 1
    assert "\x1b[31mKB101\x1b[0m" in proc.stdout  # error: red
    assert "\x1b[33mKB205 (warning)\x1b[0m" in proc.stdout  # warning: yellow, not red
    proc = run_kbase("--color", "never", "check", "--all", cwd=root)
    assert "KB205 (warning)" in proc.stdout and "\x1b[" not in proc.stdout
    git(root, "add", "-A")  # the default (auto) on a pipe: no colour
    assert "\x1b[" not in run_kbase("check", "--all", cwd=root).stdout
    write(root, {"A.md": "# A\n"})
    proc = run_kbase("--color", "always", "check", "--all", cwd=root)
    assert proc.returncode == 0 and "\x1b[" not in proc.stdout
    assert run_kbase("--color", "sometimes", "check", cwd=root).returncode == 2


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("choice", "no_color", "tty", "expected"), [
    ("auto", "", True, True), ("auto", "1", True, False), ("auto", "", False, False),
    ("always", "1", False, True), ("never", "", True, False), ("auto", "0", True, False),
])
def test_color_policy(monkeypatch: pytest.MonkeyPatch, choice: str, no_color: str, tty: bool,
                      expected: bool) -> None:
    """NO_COLOR (any non-empty value) turns `auto` off; an explicit `--color always`
    wins over it (no-color.org: user-level configuration beats the variable)."""
    monkeypatch.setenv("NO_COLOR", no_color)
    stream = _Terminal() if tty else io.StringIO()
    assert color_wanted(stream, choice) is expected
