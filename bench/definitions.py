"""Does `kbase concept X --definition` pick a sentence that defines X?
`python -m bench.definitions [--vaults V,...] [--tuned V,...]`.

The judged set is bench/data/definitions-VAULT.tsv, one term a line:

    term <TAB> path <TAB> expected <TAB> why

`path` is the note holding the expected sentence (` || ` between copies of one text),
`expected` is the defining sentence of `term` chosen by a person reading the notes, as an
excerpt of its text (several accepted sentences are separated by ` || `), or `-` when
the notes hold no sentence that defines the term (then the right answer is no
definition). How the terms were drawn and judged, before kbase was run on them, is in
each file's header; `--draw VAULT` prints the drawn candidates with the notes' text to
judge (it reads files only: kbase is not run).

Each term is asked in a fresh clone of the vault (bench/freshclone.py, BM25 only: the
answer is model-free). The first sentence of `definition[]` is what an agent reads
first: it is right when it is in the expected note and contains the expected excerpt
(compared case-folded, punctuation and Markdown aside), or when `-` was expected and
the answer has no definition. The share right is printed per vault, the vaults the
rules were tuned on (`--tuned`) apart from the others (out of sample).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.freshclone import fresh_clone, kbase
from bench.workloads import CORPORA

DATA = Path(__file__).resolve().parent / "data"
VAULTS = ("vaultofknowledge", "obsidian-tasks-docs", "data-engineering-wiki", "dnd-5e-srd",
          "dendron-site", "tldr-pages")
TUNED = ("vaultofknowledge", "dendron-site")
"""The vaults the extraction rules were written on (reported apart, in sample). The
others' seed-39 sets were measured first by the rules' first version and then seen
while fixing it; the seed-40 sets were judged later (docs/concepts.md has which rules
each set measured out of sample)."""
ONLY = {"tldr-pages": "pages"}
"""A vault's folder that is indexed (tldr-pages: the English pages only)."""
SEED = 39
TITLES, HEADINGS = 15, 5
"""Terms drawn per vault: note titles, then section headings."""
_HEADING = re.compile(r"^ {0,3}#{2,6}[ \t]+(.+?)[ \t#]*$")
_FRONT_TITLE = re.compile(r"^title:[ \t]*['\"]?(.*?)['\"]?[ \t]*$", re.MULTILINE)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Judged:
    term: str
    paths: tuple[str, ...]
    """The notes holding the expected sentence (copies of one text)."""
    expected: tuple[str, ...]
    """Accepted excerpts; empty: no sentence of the notes defines the term."""
    why: str


def judged(vault: str, judged_set: str = "") -> list[Judged]:
    path = DATA / f"definitions-{vault}{'.' + judged_set if judged_set else ''}.tsv"
    out = []
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                term, note, expected, why = [*line.split("\t"), "", "", ""][:4]
                accepted = () if expected.strip() == "-" else tuple(
                    e.strip() for e in expected.split(" || ") if e.strip())
                paths = tuple(p.strip() for p in note.split(" || "))
                out.append(Judged(term, paths, accepted, why))
    return out


def words(text: str) -> str:
    """Text compared: case-folded words, single-spaced (punctuation, Markdown aside)."""
    return " ".join(_WORD.findall(text.casefold().replace("_", " ")))


def right(case: Judged, first: dict[str, object] | None) -> bool:
    if not case.expected:
        return first is None
    if first is None or first.get("path") not in case.paths:
        return False
    got = words(str(first.get("text", "")))
    return any(words(e) in got or (len(got) > 40 and got in words(e)) for e in case.expected)


# -- drawing the terms to judge (files only) ------------------------------------------

def _notes(vault: str) -> list[Path]:
    root = CORPORA / vault / "vault"
    if vault in ONLY:
        root = root / ONLY[vault]
    return sorted(p for p in root.rglob("*.md") if not any(
        part.startswith(".") for part in p.relative_to(root).parts))


def _title(vault: str, path: Path) -> str:
    """The name a reader sees: the file name, or Dendron's frontmatter `title`."""
    if vault == "dendron-site":
        head = path.read_text(encoding="utf-8", errors="replace")[:2000]
        m = _FRONT_TITLE.search(head.split("\n---", 1)[0]) if head.startswith("---") else None
        if m:
            return m.group(1)
    return path.stem


def draw(vault: str, seed: int = SEED) -> tuple[list[tuple[str, Path]], list[tuple[str, Path]]]:
    """(titles, headings) in the seeded order a person judges them in; the first
    `TITLES` and `HEADINGS` that name a term are kept (the file's header says which
    were skipped and why)."""
    rng = random.Random(f"{seed}:{vault}")
    notes = _notes(vault)
    titles = [(_title(vault, p), p) for p in notes]
    rng.shuffle(titles)
    title_keys = {words(t) for t, _ in titles}
    seen: dict[str, list[tuple[str, Path]]] = {}
    for p in notes:
        for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
            m = _HEADING.match(line)
            if m:
                seen.setdefault(words(m.group(1)), []).append((m.group(1), p))
    # A heading that one note of the vault has and that is no note's title
    heads = sorted(v[0] for k, v in seen.items() if len(v) == 1 and k and k not in title_keys)
    rng.shuffle(heads)
    return titles, heads


def _show(path: Path, heading: str | None, lines: int = 45) -> str:
    text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    start = 0
    if heading is not None:
        start = next((i for i, t in enumerate(text) if (m := _HEADING.match(t))
                      and m.group(1) == heading), 0)
    return "\n".join(f"{n + 1:4}| {t[:220]}" for n, t in enumerate(text[start:start + lines],
                                                                   start))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vaults", default=",".join(VAULTS))
    parser.add_argument("--tuned", default=",".join(TUNED))
    parser.add_argument("--draw", metavar="VAULT", help="print candidates to judge")
    parser.add_argument("--count", type=int, default=40, help="candidates --draw prints")
    parser.add_argument("--seed", type=int, default=SEED, help="--draw's seed")
    parser.add_argument("--set", default="", dest="judged_set",
                        help="another judged set: bench/data/definitions-VAULT.SET.tsv "
                             "(seed40: a second draw judged after the rules were fixed)")
    parser.add_argument("--out", type=Path, default=None, help="keep the clones here")
    parser.add_argument("--verbose", action="store_true", help="print every miss")
    args = parser.parse_args(argv)
    if args.draw:
        titles, heads = draw(args.draw, args.seed)
        root = CORPORA / args.draw / "vault"
        for kind, rows in (("title", titles), ("heading", heads)):
            for term, path in rows[:args.count]:
                print(f"=== {kind}: {term}\t{path.relative_to(root)}")
                print(_show(path, term if kind == "heading" else None))
        return 0
    return run([v for v in args.vaults.split(",") if v], set(args.tuned.split(",")),
               args.out, args.verbose, args.judged_set)


def run(vaults: list[str], tuned: set[str], out: Path | None, verbose: bool,
        judged_set: str = "") -> int:
    work = out or Path(tempfile.mkdtemp(prefix="kbase-definitions-"))
    rows: list[tuple[str, int, int]] = []
    for vault in vaults:
        cases = judged(vault, judged_set)
        if not cases or not (CORPORA / vault / "vault").is_dir():
            print(f"{vault}: skipped (no judged set or no ../shared vault)")
            continue
        clone = fresh_clone(vault, work, only=ONLY.get(vault), reuse=True,
                            index_args=("--offline",))
        good = 0
        for case in cases:
            proc = kbase("concept", case.term, "--definition", "--max-tokens", "0",
                         cwd=clone, env={"KBASE_OFFLINE": "1"})
            answer = json.loads(proc.stdout) if proc.stdout.strip() else {}
            found = answer.get("definition") or []
            first = found[0] if found else None
            ok = right(case, first)
            good += ok
            if verbose and not ok:
                got = f"{first['path']}:{first['line']}: {first['text']}" if first else "none"
                print(f"  miss {vault}: {case.term!r}\n    want {' || '.join(case.paths)}: "
                      f"{' || '.join(case.expected) or '-'}\n    got  {got}")
        rows.append((vault, good, len(cases)))
    print("| vault | sample | terms | right | share |\n| --- | --- | --- | --- | --- |")
    for vault, good, n in rows:
        where = "tuned on (in sample)" if vault in tuned else "out of sample"
        print(f"| {vault} | {where} | {n} | {good} | {good / n:.0%} |")
    for label, keep in (("out of sample", lambda v: v not in tuned),
                        ("in sample", lambda v: v in tuned)):
        good = sum(g for v, g, _ in rows if keep(v))
        n = sum(c for v, _, c in rows if keep(v))
        if n:
            worst = min((g / c, v) for v, g, c in rows if keep(v))
            print(f"{label}: {good}/{n} = {good / n:.0%} (worst: {worst[1]} {worst[0]:.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
