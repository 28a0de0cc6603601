"""A generated vault of the shape issue 40 measured and no shared vault has: one hub note
linked from thousands of others, frontmatter on most notes (`python -m bench.generate
OUT --hub`, or `python -m bench.compare --vault hub`).

Deterministic (seeded `random.Random`, no clock, no set iteration): 6,000 notes of ~2 KB
(14 MB, the size of the 6.6k-note vault of issue 40) in 40 folders; 90% open with YAML
frontmatter (title, a date, tags, aliases on some, a `type`, a quoted `up:` link on
some); 2,200 link to `Hub Topic` in the spellings people use (`[[Hub Topic]]`, with a
heading, an alias, an embed, a Markdown link, a frontmatter property), the rest to each
other. The hub is the most linked note, so `bench.compare`'s renames pick it.
"""

from __future__ import annotations

import random
from pathlib import Path

HUB = "Hub Topic"
WORDS = (
    "system", "data", "model", "query", "index", "note", "graph", "vector", "search",
    "link", "table", "schema", "cache", "commit", "branch", "review", "field", "value",
    "parser", "token", "shard", "build", "report", "check", "stream", "batch", "window",
    "event", "metric", "trace", "alert", "policy",
)
SPELLINGS = ("[[Hub Topic]]", "[[Hub Topic#Overview]]", "[[Hub Topic|the hub]]",
             "![[Hub Topic#Overview]]", "[hub](../Hub%20Topic.md)", "[[hub topic]]")


def _prose(rng: random.Random, words: int) -> str:
    out = [rng.choice(WORDS) for _ in range(words)]
    out[0] = out[0].capitalize()
    return " ".join(out) + "."


def hub_files(notes: int = 6000, hub_links: int = 2200, seed: int = 40
              ) -> list[tuple[str, bytes]]:
    """(path, bytes) of every file, in path order."""
    rng = random.Random(seed)
    names = [f"f{i % 40:02}/Note {i:05}" for i in range(notes - 1)]
    linking = set(rng.sample(range(len(names)), min(hub_links, len(names))))
    files = [(f"{HUB}.md", ("---\ntitle: Hub Topic\naliases: [The Hub]\ntags: [hub]\n---\n"
                            "# Hub Topic\n\n## Overview\n\n" + _prose(rng, 80) +
                            "\n\n## Details\n\n" + _prose(rng, 80) + "\n").encode())]
    for i, name in enumerate(names):
        parts = []
        if rng.random() < 0.9:
            up = f'up: "[[{names[rng.randrange(len(names))].rsplit("/", 1)[1]}]]"\n' \
                if rng.random() < 0.3 else ""
            alias = f"aliases: [N{i}]\n" if rng.random() < 0.2 else ""
            parts.append(f"---\ntitle: {name.rsplit('/', 1)[1]}\ndate: 2024-{1 + i % 12:02}-"
                         f"{1 + i % 28:02}\ntags: [{rng.choice(WORDS)}, {rng.choice(WORDS)}]\n"
                         f"{alias}type: {rng.choice(('topic', 'log', 'howto'))}\n{up}---\n")
        parts.append(f"# {name.rsplit('/', 1)[1]}\n")
        for section in range(4):
            parts.append(f"\n## Part {section}\n\n{_prose(rng, 60)}")
            for _ in range(2):
                other = names[rng.randrange(len(names))].rsplit("/", 1)[1]
                parts.append(f" See [[{other}]]. {_prose(rng, 12)}")
            parts.append("\n")
        if i in linking:
            spelling = SPELLINGS[i % len(SPELLINGS)]
            parts.append(f"\nRelated: {spelling} and {_prose(rng, 8)}\n")
        files.append((f"{name}.md", "".join(parts).encode()))
    return sorted(files)


def write_hub_vault(out: Path, notes: int = 6000, hub_links: int = 2200, seed: int = 40
                    ) -> tuple[int, int]:
    """Write the vault under `out`: (notes, bytes)."""
    total = 0
    files = hub_files(notes, hub_links, seed)
    for rel, data in files:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
        total += len(data)
    return len(files), total
