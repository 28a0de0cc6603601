"""Reader for the policy case tables under fixtures/checks/ (shared by the check tests).

A case line is `<section flow YAML> || <path>: <text> || ... ⇒ <findings>`; see the
header of fixtures/checks/tags.txt. In note text, ↵ is a newline and \\xNN a byte.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from kbase_ci.checks.checker import check_vault
from kbase_ci.vault.notefiles import Vault
from tests import tables

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "checks"


@dataclass(frozen=True)
class Case:
    lineno: int
    section: str
    files: dict[str, str | bytes]
    expected: set[str]


def load(name: str) -> list[Case]:
    cases: list[Case] = []
    for i, body, want in tables.arrows(FIXTURES / name):
        section, *notes = body.strip().split(" || ")
        files: dict[str, str | bytes] = {}
        for note in notes:
            path, _, text = note.partition(": ")
            files[path.strip()] = _content(text + "↵")
        cases.append(Case(i, section.strip(), files, set(tables.items(want))))
    return cases


def _content(text: str) -> str | bytes:
    """`\\xNN` in a case stands for that byte (binary or non-UTF-8 notes): bytes then."""
    data = tables.decode(text)
    return data if "\\x" in text else data.decode("utf-8")


def params(name: str) -> list[object]:
    return [pytest.param(c, id=f"{name}:{c.lineno}") for c in load(name)]


def run_case(case: Case, section: str, check: str,
             make_repo: Callable[..., Path]) -> set[str]:
    """Findings of `check` on the case's vault as `path:line:col CODE[ ~suggestion]`."""
    root = make_repo({".kbase.yml": f"{section}: {case.section}\n", **case.files})
    report = check_vault(Vault(root), None, select=[check], use_cache=False)
    return {f"{f.path}:{f.line}:{f.col} {f.code}" + (f" ~{f.suggestion}" if f.suggestion else "")
            for f in report.findings}
