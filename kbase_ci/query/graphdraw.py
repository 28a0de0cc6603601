"""Pictures of a graph answer: Mermaid flowcharts and Graphviz DOT.

Node ids are generated (`n0`, `n1`, ... in answer order), so a note's path never has
to be a valid identifier; labels are the titles, escaped for each format (a title may
hold quotes, brackets, `#`, `<`, backticks or, from frontmatter, newlines). A title
shared by two shown notes is replaced by their paths, so the picture tells them apart.
Clusters become subgraphs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kbase_ci.query.graph import ClusterRecord, Edge


class _Node(Protocol):
    @property
    def path(self) -> str: ...

    @property
    def title(self) -> str | None: ...


class Drawable(Protocol):
    """A graph answer with nodes (kbase_ci.query.graphanswer, graphmap)."""

    @property
    def nodes(self) -> Sequence[_Node] | None: ...

    @property
    def edges(self) -> Sequence[Edge] | None: ...

# Mermaid reads `#35;` (a decimal code point) as a character inside quoted labels;
# whatever could end the quote, start markup or look like an entity is written so.
_MERMAID = {ch: f"#{ord(ch)};" for ch in "\"#<>`&"}


def _one_line(text: str) -> str:
    return " ".join(text.split())


def mermaid_label(text: str) -> str:
    return '"' + "".join(_MERMAID.get(ch, ch) for ch in _one_line(text)) + '"'


def dot_string(text: str) -> str:
    """A DOT quoted string; backslashes are doubled so `\\n` in a title stays text."""
    return '"' + _one_line(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _nodes(answer: Drawable) -> Sequence[_Node]:
    return answer.nodes or ()


def _labels(answer: Drawable) -> list[str]:
    nodes = _nodes(answer)
    seen: dict[str | None, int] = {}
    for n in nodes:
        seen[n.title] = seen.get(n.title, 0) + 1
    return [n.title if n.title is not None and seen[n.title] == 1
            else n.path.removesuffix(".md") for n in nodes]


def _groups(answer: Drawable) -> list[tuple[int, str, list[int]]]:
    """(cluster id, caption, node ids) for a clusters answer, else nothing."""
    members: dict[int, list[int]] = {}
    for i, n in enumerate(_nodes(answer)):
        cluster = getattr(n, "cluster", None)
        if cluster is not None:
            members.setdefault(cluster, []).append(i)
    clusters: list[ClusterRecord] = getattr(answer, "clusters", [])
    return [(c.id, f"cluster {c.id}: {', '.join(c.terms) or c.central}",
             members.get(c.id, [])) for c in clusters]


def mermaid(answer: Drawable) -> str:
    ids = {n.path: f"n{i}" for i, n in enumerate(_nodes(answer))}
    labels = _labels(answer)
    lines = ["flowchart LR"]
    grouped: set[int] = set()
    for cid, caption, nodes in _groups(answer):
        lines.append(f"  subgraph c{cid}[{mermaid_label(caption)}]")
        lines.extend(f"    n{i}[{mermaid_label(labels[i])}]" for i in nodes)
        lines.append("  end")
        grouped.update(nodes)
    lines.extend(f"  n{i}[{mermaid_label(labels[i])}]"
                 for i in range(len(labels)) if i not in grouped)
    lines.extend(f"  {ids[e.source]} --> {ids[e.target]}" for e in answer.edges or ()
                 if e.source in ids and e.target in ids)
    return "\n".join(lines) + "\n"


def dot(answer: Drawable) -> str:
    ids = {n.path: f"n{i}" for i, n in enumerate(_nodes(answer))}
    labels = _labels(answer)
    lines = ["digraph kbase {", "  rankdir=LR;", "  node [shape=box];"]
    for i, n in enumerate(_nodes(answer)):
        lines.append(f"  n{i} [label={dot_string(labels[i])}, "
                     f"tooltip={dot_string(n.path)}];")
    for cid, caption, nodes in _groups(answer):
        lines.append(f"  subgraph cluster_{cid} {{")
        lines.append(f"    label={dot_string(caption)};")
        lines.extend(f"    n{i};" for i in nodes)
        lines.append("  }")
    lines.extend(f"  {ids[e.source]} -> {ids[e.target]};" for e in answer.edges or ()
                 if e.source in ids and e.target in ids)
    lines.append("}")
    return "\n".join(lines) + "\n"
