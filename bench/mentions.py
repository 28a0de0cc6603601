"""Unlinked mentions against a grep: `python -m bench.mentions [--vaults a,b] [--work DIR]`.

The grep is the simple way: per note, drop frontmatter, fenced code, inline code,
wikilinks/embeds, Markdown links, URLs and HTML comments with regexes, then look for each
title and alias as a whole word (`(?<!\\w)...(?!\\w)`, case-insensitive, a space of the
name matching any blanks), and keep (note, mentioning note) pairs of different notes
that are not linked either way. kbase's pairs are `unlinked_mentions` for every note.
Recall and precision are over those pairs, both for every name and for the names kbase
looks for (`kbase_ci.parse.namematch`: it skips names under 3 characters and names made
of common words only, by rule). Also: the build cost of mentions.jsonl (seconds, bytes)
and the query CPU of `links --unlinked` (mean and max over every note).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.query_quality import _repo

VAULTS = ("data-engineering-wiki", "obsidian-tasks-docs", "dnd-5e-srd")
_CLEAN = [re.compile(p, re.DOTALL | re.MULTILINE) for p in (
    r"\A---\n.*?\n---\n", r"^```.*?^```", r"^~~~.*?^~~~", r"<!--.*?-->", r"%%.*?%%",
    r"`[^`\n]*`", r"!?\[\[[^\]\n]*\]\]", r"!?\[[^\]\n]*\]\([^)\n]*\)", r"https?://\S+")]


def _grep_text(text: str) -> str:
    for p in _CLEAN:
        text = p.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    return text


def _grep_pairs(view: Any, linked: dict[str, set[str]], only: set[str] | None
                ) -> dict[tuple[str, str], str]:
    """(note, mentioning note) -> the line where the grep found it."""
    names: dict[str, list[str]] = {}
    for p in view.notes:
        info = view.notes[p]
        for n in {info.title, *info.aliases}:
            if only is None or n in only:
                names.setdefault(n, []).append(p)
    pats = {n: re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, n.split())) + r"(?!\w)",
                          re.IGNORECASE) for n in names if n.split()}
    texts = view.texts(list(view.notes))
    out: dict[tuple[str, str], str] = {}
    for src, text in texts.items():
        clean = _grep_text(text)
        low = clean.casefold()
        for n, pat in pats.items():
            if n.split()[0].casefold() not in low:
                continue
            m = pat.search(clean)
            if m is None:
                continue
            line = clean.count("\n", 0, m.start())
            for target in names[n]:
                if target != src and src not in linked[target]:
                    out.setdefault((target, src), text.splitlines()[line][:160])
    return out


def run(vault_name: str, work: Path) -> dict[str, Any]:
    from kbase_ci.index.indexbuild import build_index
    from kbase_ci.index.layout import MENTIONS_FILE
    from kbase_ci.index.reader import open_index
    from kbase_ci.index.rowfile import offsets_name
    from kbase_ci.parse.namematch import Matcher
    from kbase_ci.query.discovery import IndexSource
    from kbase_ci.query.mentions import unlinked_mentions
    from kbase_ci.query.view import QueryView
    from kbase_ci.vault.notefiles import Vault

    vault = Vault(_repo(vault_name, work))
    out_dir = work / f"{vault_name}-index"
    built = build_index(vault, out_dir)
    view = QueryView(vault, IndexSource(open_index(out_dir), "dir", str(out_dir)))
    linked = {p: {lk.target for lk in view.outgoing(p) if lk.target}
              | {lk.source for lk in view.backlinks(p)} for p in view.notes}
    ours: dict[tuple[str, str], str] = {}
    cpu: list[float] = []
    for p in view.notes:
        t0 = time.process_time()
        found, _ = unlinked_mentions(view, p)
        cpu.append(time.process_time() - t0)
        for u in found:
            ours.setdefault((p, u.path), u.sentence[:160])
    all_names = {n for p in view.notes for n in (view.notes[p].title, *view.notes[p].aliases)}
    skipped = set(Matcher({n: [0] for n in all_names}).skipped)
    row: dict[str, Any] = {
        "vault": vault_name, "notes": len(view.notes), "names": len(all_names),
        "skipped_names": sorted(skipped)[:20], "skipped": len(skipped),
        "build_seconds": round(built.seconds.get("total", 0.0), 2),
        "mentions_seconds": round(built.seconds.get("mentions", 0.0), 3),
        "mentions_bytes": sum((out_dir / f).stat().st_size for f in
                              (MENTIONS_FILE, offsets_name(MENTIONS_FILE))),
        "query_cpu_ms_mean": round(1000 * sum(cpu) / len(cpu), 2),
        "query_cpu_ms_max": round(1000 * max(cpu), 2), "kbase_pairs": len(ours)}
    for label, only in (("all", None), ("kept", all_names - skipped)):
        grep = _grep_pairs(view, linked, only)
        both = set(grep) & set(ours)
        row[label] = {"grep_pairs": len(grep),
                      "recall": round(len(both) / len(grep), 4) if grep else None,
                      "precision": round(len(both) / len(ours), 4) if ours else None}
        if label == "kept":
            row["missed"] = [[*k, grep[k]] for k in sorted(set(grep) - both)[:8]]
            row["extra"] = [[*k, ours[k]] for k in sorted(set(ours) - set(grep))[:8]]
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vaults", default=",".join(VAULTS))
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kbase-mentions-"))
    work.mkdir(parents=True, exist_ok=True)
    for name in args.vaults.split(","):
        row = run(name, work)
        row["load"] = round(os.getloadavg()[0], 2)
        print(json.dumps(row, ensure_ascii=False, indent=1), flush=True)


if __name__ == "__main__":
    main()
