"""Which notes go into which shard, and which shards a `--shard K/N` slice builds.

A shard is one domain (top-level folder, or a frontmatter value); a domain holding more
Markdown than `index.shard_max_bytes` is split into 2, 4, 8... parts by a hash of each
note's path. Hashing (not ranges of sorted paths) keeps a note in the same shard when
others are added or removed, so an edit rebuilds one shard; doubling means the split
only changes when a domain grows past a power-of-two multiple of the limit.
The plan needs only paths and sizes (and frontmatter in `frontmatter:KEY` mode), so a
slice can plan the whole vault without parsing notes it does not build.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kbase_ci.errors import ConfigError, UsageError


@dataclass(frozen=True, slots=True)
class ShardSpec:
    id: str
    """Directory name under `shards/`: `<slug>-<hash>` or `<slug>-<hash>.<i>of<n>`."""
    domain: str
    notes: tuple[str, ...]
    """Vault-relative paths, sorted."""
    bytes: int


@dataclass(frozen=True, slots=True)
class DomainRule:
    kind: str
    """`folder` or `frontmatter`."""
    key: str = ""

    @classmethod
    def parse(cls, text: str) -> DomainRule:
        if text == "folder":
            return cls("folder")
        kind, _, key = text.partition(":")
        if kind == "frontmatter" and key.strip():
            return cls("frontmatter", key.strip())
        raise ConfigError(f"`index.domain` must be `folder` or `frontmatter:KEY`, not {text!r}")

    @property
    def needs_frontmatter(self) -> bool:
        return self.kind == "frontmatter"

    def domain(self, path: str, frontmatter: Mapping[str, Any] | None = None) -> str:
        if self.kind == "folder":
            head, sep, _ = path.partition("/")
            return head if sep else ""
        value = (frontmatter or {}).get(self.key)
        if isinstance(value, list):
            value = value[0] if value else None
        if isinstance(value, bool) or value is None or isinstance(value, dict):
            return ""
        return str(value).strip()


def _slug(domain: str, rule: DomainRule) -> str:
    if not domain:
        return "_root" if rule.kind == "folder" else "_none"
    ascii_text = unicodedata.normalize("NFKD", domain).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:40] or "d"
    # The hash keeps `Foo Bar`, `foo-bar` and `FOO BAR` apart on any file system.
    return f"{slug}-{hashlib.sha256(domain.encode()).hexdigest()[:6]}"


def bucket(path: str, parts: int) -> int:
    """Which of a split domain's `parts` a note at `path` goes to (0-based)."""
    return int(hashlib.sha256(path.encode()).hexdigest()[:8], 16) % parts


def plan_shards(notes: Sequence[tuple[str, int, str]], rule: DomainRule,
                max_bytes: int) -> list[ShardSpec]:
    """Shards for (path, size, domain) triples, sorted by id."""
    if max_bytes <= 0:
        raise ConfigError("`index.shard_max_bytes` must be positive")
    by_domain: dict[str, list[tuple[str, int]]] = {}
    for path, size, domain in notes:
        by_domain.setdefault(domain, []).append((path, size))
    out: list[ShardSpec] = []
    for domain, members in by_domain.items():
        total = sum(size for _, size in members)
        parts = 1
        while total > parts * max_bytes:
            parts *= 2
        base = _slug(domain, rule)
        buckets: list[list[tuple[str, int]]] = [[] for _ in range(parts)]
        for path, size in members:
            buckets[bucket(path, parts) if parts > 1 else 0].append((path, size))
        for i, part in enumerate(buckets):
            if not part:
                continue
            sid = base if parts == 1 else f"{base}.{i + 1}of{parts}"
            out.append(ShardSpec(sid, domain, tuple(sorted(p for p, _ in part)),
                                 sum(s for _, s in part)))
    out.sort(key=lambda s: s.id)
    return out


def parse_slice(text: str) -> tuple[int, int]:
    """`K/N` with 1 <= K <= N."""
    k, sep, n = text.partition("/")
    try:
        ki, ni = int(k), int(n)
    except ValueError:
        ki = ni = 0
    if not sep or ni < 1 or not 1 <= ki <= ni:
        raise UsageError(f"--shard wants K/N with 1 <= K <= N (like 2/4), not {text!r}")
    return ki, ni


def slice_shards(plan: Sequence[ShardSpec], k: int, n: int) -> list[ShardSpec]:
    """The shards slice `k` of `n` builds: largest first onto the least-loaded slice,
    ties to the lowest slice number, so every slice computes the same assignment."""
    loads = [0] * n
    owner: dict[str, int] = {}
    for spec in sorted(plan, key=lambda s: (-s.bytes, s.id)):
        target = min(range(n), key=lambda i: (loads[i], i))
        loads[target] += spec.bytes
        owner[spec.id] = target
    return [s for s in plan if owner[s.id] == k - 1]
