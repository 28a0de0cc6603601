"""Indexed real corpora shared by the quality and peer-search groups: each corpus is
copied into a scratch git repo and indexed once (bench/query_quality.py's `_view`), and
that build is timed: the tldr build is the slowest step of the suite, so it runs once."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import query_quality
from bench.figure import clock
from bench.workloads import QA


@dataclass
class Indexed:
    name: str
    view: Any
    repo: Path
    seconds: float
    cpu: float


@dataclass
class Corpora:
    """Lazily built views under `work` (a scratch folder the caller removes)."""

    work: Path
    built: dict[str, Indexed] = field(default_factory=dict)

    def get(self, name: str) -> Indexed:
        if name not in self.built:
            wall, cpu, view = clock(lambda: query_quality._view(name, self.work))
            self.built[name] = Indexed(name, view, self.work / name, wall, cpu)
        return self.built[name]


def load_rows(name: str) -> list[dict[str, Any]]:
    path = QA / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def sample(rows: list[dict[str, Any]], limit: int, seed: int = 0) -> list[dict[str, Any]]:
    """A seeded sample in file order (0 = all rows)."""
    if limit <= 0 or limit >= len(rows):
        return rows
    keep = set(random.Random(seed).sample(range(len(rows)), limit))
    return [r for i, r in enumerate(rows) if i in keep]


def tldr_hard(limit: int) -> list[dict[str, Any]]:
    """qa/README's harder subset: examples with one answer that do not name the command."""
    rows = [r for r in load_rows("tldr-en") if r["kind"] == "example" and r.get("unique")
            and not r.get("mentions_command")]
    return [{**r, "kind": "example (hard subset)"} for r in sample(rows, limit)]


def tldr_xlang(limit: int) -> list[dict[str, Any]]:
    """Cross-language queries twice: the translated page as answer, then the English one."""
    rows = sample(load_rows("tldr-xlang"), limit)
    same = [{**r, "kind": "translated -> same-language page"} for r in rows]
    english = [{**r, "kind": "translated -> English page", "answers": r["en_answers"]}
               for r in rows if r.get("en_answers")]
    return same + english
