"""The pre-commit hook environment a user gets: `pre-commit install-hooks` from a clone
of this repository at a commit, in a fresh PRE_COMMIT_HOME, timed, and the growth of its
site-packages over a fresh virtualenv's, seeded as pre-commit seeds it (issue 30's
targets: <= 40 MB, <= 15 s).

    python -m bench.hook_env [--rev REV] [--pip-cache warm|cold]

`warm`: the user's pip cache (wheels already downloaded, as on a second machine set-up);
`cold`: an empty one (every wheel downloaded). Prints one line per figure.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          check=False, timeout=1800)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()
               and not p.is_symlink())


def _site_packages(env_root: Path) -> Path:
    found = sorted(env_root.glob("**/site-packages"))
    if not found:
        sys.exit(f"no site-packages under {env_root}")
    return found[0]


def measure(rev: str, cache: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="kbase-hookenv-") as tmp:
        base = Path(tmp)
        env = {**os.environ, "PRE_COMMIT_HOME": str(base / "pre-commit"),
               "PIP_DISABLE_PIP_VERSION_CHECK": "1",
               "VIRTUALENV_OVERRIDE_APP_DATA": str(base / "virtualenv")}
        if cache == "cold":
            env["PIP_CACHE_DIR"] = str(base / "pip")
        hooks = base / "kbase-ci"
        _run(["git", "clone", "-q", "--no-local", str(REPO), str(hooks)], base, env)
        _run(["git", "checkout", "-q", rev], hooks, env)
        sha = _run(["git", "rev-parse", "HEAD"], hooks, env).strip()
        vault = base / "vault"
        vault.mkdir()
        _run(["git", "init", "-q"], vault, env)
        (vault / ".pre-commit-config.yaml").write_text(
            f"repos:\n  - repo: {hooks}\n    rev: {sha}\n    hooks:\n      - id: kbase-check\n",
            encoding="utf-8")
        # What pre-commit starts from: a virtualenv seeded with pip (and setuptools on
        # 3.11), made as pre-commit makes it.
        empty = base / "empty"
        _run([sys.executable, "-m", "virtualenv", "-q", str(empty)], base, env)
        floor = _size(_site_packages(empty))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        _run([sys.executable, "-m", "pre_commit", "install-hooks"], vault, env)
        seconds = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        envs = [p for p in (base / "pre-commit").glob("repo*/py_env-*") if p.is_dir()]
        if len(envs) != 1:
            sys.exit(f"expected one hook environment, found {envs}")
        site = _site_packages(envs[0])
        dists = len(list(site.glob("*.dist-info")))
        total = _size(site)
        return {"seconds": seconds, "cpu": cpu, "load": os.getloadavg()[0],
                "mb": (total - floor) / 1e6, "total": total / 1e6, "dists": dists,
                "sha": float(int(sha[:8], 16))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.hook_env", description=__doc__)
    parser.add_argument("--rev", default="HEAD", help="commit of this repository (HEAD)")
    parser.add_argument("--pip-cache", choices=("warm", "cold"), default="warm")
    args = parser.parse_args(argv)
    got = measure(args.rev, args.pip_cache)
    print(f"hook environment at {int(got['sha']):08x} ({args.pip_cache} pip cache): "
          f"{got['seconds']:.1f} s `pre-commit install-hooks` ({got['cpu']:.1f} s CPU, load "
          f"average {got['load']:.1f}), site-packages "
          f"+{got['mb']:.1f} MB over a fresh virtualenv ({got['total']:.1f} MB in all), "
          f"{int(got['dists'])} distributions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
