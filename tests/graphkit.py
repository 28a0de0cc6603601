"""Helpers for the graph tests: the fixtures/graph/vault repository, and readers that
check a Mermaid or DOT picture is well formed (every edge between declared nodes)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from tests.conftest import FIXTURES, git

VAULT = FIXTURES / "graph" / "vault"


def make_vault(dest: Path) -> Path:
    shutil.copytree(VAULT, dest)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "graph fixture")
    return dest


_MERMAID_NODE = re.compile(r'^\s*n\d+\["[^"\n]*"\]$')
_MERMAID_EDGE = re.compile(r"^\s*(n\d+) --> (n\d+)$")
DOT_STR = r'"(?:[^"\\\n]|\\.)*"'
_DOT_NODE = re.compile(rf"^\s*(n\d+) \[label={DOT_STR}, tooltip={DOT_STR}\];$")
_DOT_EDGE = re.compile(r"^\s*(n\d+) -> (n\d+);$")


def check_mermaid(text: str) -> tuple[set[str], list[tuple[str, str]]]:
    lines = text.splitlines()
    assert lines[0] == "flowchart LR"
    declared: set[str] = set()
    edges: list[tuple[str, str]] = []
    depth = 0
    for line in lines[1:]:
        if re.match(r'^\s*subgraph c\d+\["[^"\n]*"\]$', line):
            depth += 1
        elif line.strip() == "end":
            depth -= 1
            assert depth >= 0
        elif m := _MERMAID_EDGE.match(line):
            assert m[1] in declared and m[2] in declared
            edges.append((m[1], m[2]))
        else:
            assert _MERMAID_NODE.match(line), line
            declared.add(line.split("[", 1)[0].strip())
    assert depth == 0
    return declared, edges


def check_dot(text: str) -> tuple[set[str], list[tuple[str, str]]]:
    lines = text.splitlines()
    assert lines[:3] == ["digraph kbase {", "  rankdir=LR;", "  node [shape=box];"]
    assert lines[-1] == "}"
    declared: set[str] = set()
    edges: list[tuple[str, str]] = []
    depth = 1
    for line in lines[3:-1]:
        if re.match(r"^\s*subgraph cluster_\d+ \{$", line):
            depth += 1
        elif line.strip() == "}":
            depth -= 1
        elif re.match(rf"^\s*label={DOT_STR};$", line) or re.match(r"^\s*n\d+;$", line):
            continue
        elif m := _DOT_EDGE.match(line):
            assert m[1] in declared and m[2] in declared
            edges.append((m[1], m[2]))
        else:
            node = _DOT_NODE.match(line)
            assert node, line
            declared.add(node[1])
    assert depth == 1
    return declared, edges
