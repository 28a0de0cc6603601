"""Pictures of a graph answer: Mermaid flowcharts and Graphviz DOT.

Node ids are generated (`n0`, `n1`, ... in answer order), so a note's path never has
to be a valid identifier; labels are the titles, escaped for each format (a title may
hold quotes, brackets, `#`, `<`, backticks or, from frontmatter, newlines). A title
shared by two shown notes is replaced by their paths, so the picture tells them apart.
Clusters become subgraphs.
"""

from __future__ import annotations

from typing import Any

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


def _labels(answer: dict[str, Any]) -> list[str]:
    nodes = answer["nodes"]
    seen: dict[str, int] = {}
    for n in nodes:
        seen[n["title"]] = seen.get(n["title"], 0) + 1
    return [n["title"] if seen[n["title"]] == 1 else n["path"].removesuffix(".md")
            for n in nodes]


def _groups(answer: dict[str, Any]) -> list[tuple[int, str, list[int]]]:
    """(cluster id, caption, node ids) for a clusters answer, else nothing."""
    members: dict[int, list[int]] = {}
    for i, n in enumerate(answer["nodes"]):
        if "cluster" in n:
            members.setdefault(n["cluster"], []).append(i)
    return [(c["id"], f"cluster {c['id']}: {', '.join(c['terms']) or c['central']}",
             members.get(c["id"], [])) for c in answer.get("clusters", [])]


def mermaid(answer: dict[str, Any]) -> str:
    ids = {n["path"]: f"n{i}" for i, n in enumerate(answer["nodes"])}
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
    lines.extend(f"  {ids[e['source']]} --> {ids[e['target']]}" for e in answer.get("edges", ())
                 if e["source"] in ids and e["target"] in ids)
    return "\n".join(lines) + "\n"


def dot(answer: dict[str, Any]) -> str:
    ids = {n["path"]: f"n{i}" for i, n in enumerate(answer["nodes"])}
    labels = _labels(answer)
    lines = ["digraph kbase {", "  rankdir=LR;", "  node [shape=box];"]
    for i, n in enumerate(answer["nodes"]):
        lines.append(f"  n{i} [label={dot_string(labels[i])}, "
                     f"tooltip={dot_string(n['path'])}];")
    for cid, caption, nodes in _groups(answer):
        lines.append(f"  subgraph cluster_{cid} {{")
        lines.append(f"    label={dot_string(caption)};")
        lines.extend(f"    n{i};" for i in nodes)
        lines.append("  }")
    lines.extend(f"  {ids[e['source']]} -> {ids[e['target']]};" for e in answer.get("edges", ())
                 if e["source"] in ids and e["target"] in ids)
    lines.append("}")
    return "\n".join(lines) + "\n"
