"""What a release uploads (docs/release.md): the sdist and the wheel built from this
working tree's files, their contents and metadata, and the version written once."""

from __future__ import annotations

import email
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

from kbase_ci import __version__
from tests.conftest import REPO, source_tree

pytestmark = pytest.mark.slow
pytest.importorskip("build")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("release")
    src, out = base / "kbase-ci", base / "dist"
    source_tree(src)
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(src)],
                          capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "deprecated" not in proc.stderr.lower(), proc.stderr
    return out


def test_the_sdist_is_the_package_without_tests(dist: Path) -> None:
    (sdist,) = dist.glob("kbase_ci-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    top = {n.split("/")[0] for n in names}
    assert top == {"LICENSE", "README.md", "pyproject.toml", "PKG-INFO", "kbase_ci"}, top
    tracked = subprocess.run(["git", "ls-files", "kbase_ci"], cwd=REPO, capture_output=True,
                             text=True, check=True).stdout.split()
    assert set(tracked) <= names, sorted(set(tracked) - names)


def test_the_wheel_says_licence_urls_extras_and_pythons(dist: Path) -> None:
    (wheel,) = dist.glob("kbase_ci-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        meta_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(zf.read(meta_name))
        names = zf.namelist()
    assert meta["Version"] == __version__
    assert meta["License-Expression"] == "MIT"
    assert meta["License-File"] == "LICENSE"
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "kbase_ci/py.typed" in names
    classifiers = meta.get_all("Classifier") or []
    for minor in ("3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {minor}" in classifiers
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert {"Source", "Issues", "Changelog", "Documentation"} <= set(urls)
    assert set(meta.get_all("Provides-Extra") or []) >= {"search", "transformer", "mcp",
                                                          "ci", "all", "test"}
    core = [r for r in meta.get_all("Requires-Dist") or [] if "extra ==" not in r]
    assert not [r for r in core if re.match(r"(numpy|onnxruntime|usearch|mcp)\b", r)], core


def test_the_version_is_written_once() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"rev: v{__version__}\n" in readme
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## {re.escape(__version__)} \(", changelog, re.M)
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in pyproject["project"]
    assert pyproject["project"]["dynamic"] == ["version"]
    # flit_core reads `__version__` from the module it builds (the wheel's Version above).
    assert pyproject["build-system"]["build-backend"] == "flit_core.buildapi"
    assert pyproject["tool"]["flit"]["module"]["name"] == "kbase_ci"
