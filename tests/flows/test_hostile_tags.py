"""Issue 28: a 500-level tag made `tags --tree` exit 3 (recursion). The tree nests at most
`MAX_TREE_DEPTH` levels; a deeper tag is listed under its ancestor at that level, named by
the rest of its path; the JSON and text forms both come out."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import run_kbase

from kbase_ci.query.tagtree import MAX_TREE_DEPTH

DEEP = "/".join(f"t{i}" for i in range(500))


def _depth(nodes: list[dict[str, Any]]) -> int:
    deepest, level = 0, nodes
    while level:
        deepest += 1
        level = [c for n in level for c in n["children"]]
    return deepest


def test_a_500_level_tag_makes_a_bounded_tree(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"Deep.md": f"# Deep\n\n#{DEEP} and #{DEEP[:20]}\n",
                      "Other.md": "# Other\n\n#plain\n"})
    proc = run_kbase("tags", "--tree", "--max-tokens", "0", cwd=root)  # whole
    assert proc.returncode == 0, proc.stderr
    tree = json.loads(proc.stdout)["tree"]
    assert _depth(tree) == MAX_TREE_DEPTH + 1
    level = tree
    for _ in range(MAX_TREE_DEPTH):
        level = next(n for n in level if n["tag"].startswith("t0"))["children"]
    deepest = [n for n in level if n["tag"] == DEEP]
    assert deepest and deepest[0]["name"] == "/".join(DEEP.split("/")[MAX_TREE_DEPTH:])
    text = run_kbase("tags", "--tree", "--format", "text", cwd=root)
    assert text.returncode == 0 and "plain  1" in text.stdout, text.stderr
