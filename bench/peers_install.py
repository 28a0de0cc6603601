"""Peers installed by the suite itself when missing (pip into the running venv, npm into
the out dir); a peer that cannot be installed is skipped with a note, never an error."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

NPM_PACKAGES = ("remark-cli", "remark-validate-links", "markdown-link-check")
# ripgrep's newest PyPI release is a source package that needs a Rust toolchain and the
# crates registry; the binary wheel is what `pip install ripgrep` is meant to give.
PIP_SPECS = {"rank_bm25": "rank-bm25", "tantivy": "tantivy", "matplotlib": "matplotlib"}


def python_module(module: str, *, install: bool) -> tuple[bool, str | None]:
    """(importable, note)."""
    try:
        importlib.import_module(module)
        return True, None
    except ImportError:
        pass
    if not install:
        return False, f"{PIP_SPECS.get(module, module)} not installed (quick run: no installs)"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                           PIP_SPECS.get(module, module)], capture_output=True, text=True,
                          check=False, timeout=600)
    importlib.invalidate_caches()
    try:
        importlib.import_module(module)
        return True, None
    except ImportError:
        return False, (f"{PIP_SPECS.get(module, module)} could not be installed: "
                       f"{proc.stderr.strip().splitlines()[-1:] or ''}")


def ripgrep(*, install: bool) -> tuple[str | None, str | None]:
    """(path of rg, note)."""
    local = Path(sys.executable).parent / "rg"
    found = shutil.which("rg") or (str(local) if local.exists() else None)
    if found or not install:
        return found, None if found else "rg not installed (quick run: no installs)"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--only-binary", ":all:",
                    "ripgrep"], capture_output=True, check=False, timeout=600)
    if local.exists():
        return str(local), None
    return None, "rg could not be installed (pip install --only-binary :all: ripgrep failed)"


def npm_tools(prefix: Path, *, install: bool) -> tuple[Path | None, str | None]:
    """(node_modules/.bin with the link checkers, note)."""
    bin_dir = prefix / "node_modules" / ".bin"
    wanted = ("remark", "markdown-link-check")
    if all((bin_dir / w).exists() for w in wanted):
        return bin_dir, None
    if not install:
        return None, "npm link checkers not installed (quick run: no installs)"
    if shutil.which("npm") is None:
        return None, "npm not found: link-checker peers skipped"
    prefix.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix",
                           str(prefix), *NPM_PACKAGES], capture_output=True, text=True,
                          check=False, timeout=900)
    if all((bin_dir / w).exists() for w in wanted):
        return bin_dir, None
    return None, f"npm install failed: {proc.stderr.strip()[-300:]}"


def npm_versions(prefix: Path) -> dict[str, str]:
    import json

    out: dict[str, str] = {}
    for name in NPM_PACKAGES:
        pkg = prefix / "node_modules" / name / "package.json"
        if pkg.is_file():
            out[name] = json.loads(pkg.read_text(encoding="utf-8")).get("version", "?")
    return out
