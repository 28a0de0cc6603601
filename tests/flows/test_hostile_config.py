"""Issue 38, item 13: a `.kbase.yml` 1,000-5,000 levels deep in flow lists took 17-27 s
to refuse, and 200k `vault.exclude` globs over 60 s. Counts and depths are capped before
the YAML parser reads the file (kbase_ci.vault.yamlconfig.check_shape), each a located
config error (exit 2) at the place that passes the cap."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_kbase

CONFIGS = {
    "5,000 levels of flow lists": ("vault:\n  exclude: " + "[" * 5000 + "]" * 5000 + "\n",
                                   ".kbase.yml:2:", "nested more than 64 levels deep"),
    "20k exclude globs": ("vault:\n  exclude:\n" + "".join(f"    - \"g{i}/*\"\n"
                                                          for i in range(20_000)),
                          ".kbase.yml:10001:", "more than 10000 values"),
    "1,001 exclude globs": ("vault:\n  exclude:\n" + "".join(f"    - \"g{i}/*\"\n"
                                                            for i in range(1001)),
                            ".kbase.yml:1003:7:", "`vault.exclude` has 1001 items"),
    "3 MB of config": ("vault:\n  exclude:\n    - \"" + "g" * (3 << 20) + "\"\n",
                       ".kbase.yml:1:1:", "more than the 1048576 bytes"),
}


@pytest.mark.parametrize("case", list(CONFIGS))
def test_a_config_past_its_caps_is_a_located_error(make_repo: Callable[..., Path],
                                                   case: str) -> None:
    text, where, what = CONFIGS[case]
    root = make_repo({"A.md": "# A\n\n[[Gone]]\n", ".kbase.yml": text})
    for args in (["check"], ["check", "A.md"], ["search", "a", "--mode", "bm25"]):
        proc = run_kbase(*args, cwd=root)
        assert proc.returncode == 2, (args, proc.stderr)
        assert f"{where}" in proc.stderr and "KB900" in proc.stderr, (args, proc.stderr)
        assert what in proc.stderr, (args, proc.stderr)
