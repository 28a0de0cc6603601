"""Precision and recall of "did you mean" on rename-and-typo cases from the shared vaults.

Usage: python -m bench.typos [--per-vault 150] [--seed 19] [--sweep]

Every case is a broken link the suggester (kbase_ci.checks.suggestions) is asked about,
and the answer it should give:

- `typo`: a note's name with a slip (a letter dropped, doubled, swapped, replaced by a
  keyboard neighbour, two slips in long names, a stray trailing `.`): the note.
- `rename`: a note renamed, the link still using the old name (a word dropped or added,
  words reordered, kebab-case, a plural `s`, `-` for a space): the note.
- `folder`: `[[folder/name]]` with a slip in the name, the note in that folder: the note.
- `heading`, `block`: a slip in a heading or block id of an existing note: that anchor.
- `attachment`: `![[name.ext]]` with a slip in an attachment's name: the file.
- `unwritten`: no answer is right. Names of notes held out of the vault (10%, so their
  neighbours remain), names from another vault, `[[other-folder/name]]` for a note that
  lives elsewhere, headings of another note, names of attachments held out (20%, among
  files named much like them), and every broken link kbase reports on the vault as it
  is.

A suggestion is right when the link it proposes resolves to the expected note (and
anchor). Precision = right / all suggestions; recall = right / cases with an answer.
`--sweep` prints both for other cutoffs and margins of the similarity rule, `--rules`
measures one rule alone (the module constants are patched: a bench, not the product).
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from bench.workloads import corpus_vault
from kbase_ci.checks import suggestions
from kbase_ci.checks.suggestions import Suggester
from kbase_ci.parse.anchors import normalize_heading
from kbase_ci.parse.parser import parse_note
from kbase_ci.parsed import Link, ParsedNote
from kbase_ci.vault.notefiles import is_hidden
from kbase_ci.vault.resolver import Resolver

VAULTS = ("obsidian-tasks-docs", "data-engineering-wiki", "dnd-5e-srd", "tldr-pages")
_NEIGHBOURS = dict(zip("qwertyuiopasdfghjklzxcvbnm",
                       ["wa", "qes", "wrd", "etf", "ryg", "tuh", "yij", "uok", "ipl", "ol",
                        "qsz", "awdx", "sefc", "drgv", "fthb", "gyjn", "hukm", "jil", "kol",
                        "asx", "zdc", "xfv", "cgb", "vhn", "bjm", "nk"], strict=True))


@dataclass(frozen=True)
class Case:
    vault: str
    kind: str
    source: str
    link: str
    """The broken link as written, `[[...]]` or `[...](...)`."""
    expected: str | None
    """The path (with `#anchor`) a right suggestion reaches; None: no suggestion is right."""
    held_out: bool = False


@dataclass
class Vault:
    name: str
    notes: list[ParsedNote]
    files: list[str]


def load(name: str, parse: bool) -> Vault | None:
    root = corpus_vault(name)
    if root is None:
        return None
    paths = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))
    paths = [p for p in paths if not is_hidden(p)]
    if parse:
        notes = [parse_note(p, (root / p).read_bytes()) for p in paths]
    else:
        notes = [ParsedNote(p, p.rpartition("/")[2][:-3]) for p in paths]
    listed = root.parent / "attachments.txt"
    attachments = [ln.strip() for ln in listed.read_text(encoding="utf-8").splitlines()
                   if ln.strip() and not ln.startswith("#")] if listed.is_file() else []
    return Vault(name, notes, sorted({*paths, *attachments}))


# -- damage ------------------------------------------------------------------------------

def slip(rng: random.Random, text: str) -> str:
    """One typing slip at a letter of `text`."""
    letters = [i for i, c in enumerate(text) if c.isalpha()]
    if not letters:
        return text
    i = rng.choice(letters)
    c = text[i]
    kind = rng.choice(("drop", "double", "swap", "near"))
    if kind == "drop":
        return text[:i] + text[i + 1:]
    if kind == "double":
        return text[:i] + c + text[i:]
    if kind == "swap" and i + 1 < len(text) and text[i + 1] != c:
        return text[:i] + text[i + 1] + c + text[i + 2:]
    near = _NEIGHBOURS.get(c.lower())
    if near:
        repl = rng.choice(near)
        return text[:i] + (repl.upper() if c.isupper() else repl) + text[i + 1:]
    return text[:i] + text[i + 1:]


def typo(rng: random.Random, name: str) -> str:
    if rng.random() < 0.08:
        return name + "."  # `[[Guide.]]`: a sentence's full stop inside the brackets
    out = slip(rng, name)
    if len(name) >= 12 and rng.random() < 0.35:
        out = slip(rng, out)
    return out


def rename(rng: random.Random, name: str, words: list[str]) -> str | None:
    """An older name of a note now called `name`; None when no rename of the kind fits."""
    parts = name.split()
    kind = rng.choice(("drop", "add", "order", "kebab", "plural", "hyphen"))
    if kind == "drop" and len(parts) >= 3:
        del parts[rng.randrange(1, len(parts))]
        return " ".join(parts)
    if kind == "add" and len(parts) >= 2:
        parts.insert(rng.randrange(1, len(parts) + 1), rng.choice(words))
        return " ".join(parts)
    if kind == "order" and len(parts) >= 2:
        i = rng.randrange(len(parts) - 1)
        parts[i], parts[i + 1] = parts[i + 1], parts[i]
        return " ".join(parts)
    if kind == "kebab" and len(parts) >= 2:
        return "-".join(p.lower() for p in parts)
    if kind == "plural" and name[-1:].isalpha():
        return name[:-1] if name.endswith("s") else name + "s"
    if kind == "hyphen" and "-" in name:
        return name.replace("-", " ")
    return None


# -- cases -------------------------------------------------------------------------------

def cases(vault: Vault, others: list[Vault], per: int, rng: random.Random) -> list[Case]:
    notes = [n for n in vault.notes]
    names = Counter(n.title.lower() for n in notes)
    unique = [n for n in notes if names[n.title.lower()] == 1 and len(n.title) >= 4]
    words = sorted({w for n in notes for w in n.title.split() if w.isalpha() and len(w) > 3})
    out: list[Case] = []
    src = "Source.md"
    for note in rng.sample(unique, min(per, len(unique))):
        out.append(Case(vault.name, "typo", src, f"[[{typo(rng, note.title)}]]", note.path))
    for note in rng.sample(unique, min(per, len(unique))):
        old = rename(rng, note.title, words)
        if old is not None and old.lower() != note.title.lower():
            out.append(Case(vault.name, "rename", src, f"[[{old}]]", note.path))
    foldered = [n for n in unique if "/" in n.path]
    for note in rng.sample(foldered, min(per // 3, len(foldered))):
        folder = note.path.rpartition("/")[0].rpartition("/")[2]
        out.append(Case(vault.name, "folder", src, f"[[{folder}/{typo(rng, note.title)}]]",
                        note.path))
        other = rng.choice(sorted({n.path.rpartition("/")[0] for n in notes} - {
            note.path.rpartition("/")[0]} or {"elsewhere"}))
        out.append(Case(vault.name, "unwritten", src,
                        f"[[{other.rpartition('/')[2] or 'x'}/{note.title}]]", None))
    out.extend(_anchor_cases(vault, per, rng))
    out.extend(_attachment_cases(vault, per, rng))
    held = rng.sample(unique, min(per // 2, len(unique) // 10))
    out.extend(Case(vault.name, "unwritten", src, f"[[{n.title}]]", None, held_out=True)
               for n in held)
    for other in others:
        titles = sorted({n.title for n in other.notes} - set(names))
        out.extend(Case(vault.name, "unwritten", src, f"[[{t}]]", None)
                   for t in rng.sample(titles, min(per // 6, len(titles))))
    return out


def _anchor_cases(vault: Vault, per: int, rng: random.Random) -> Iterator[Case]:
    with_heads = [n for n in vault.notes if len(n.headings) >= 2]
    for note in rng.sample(with_heads, min(per // 2, len(with_heads))):
        h = rng.choice(note.headings)
        keys = {normalize_heading(x.text) for x in note.headings}
        bad = typo(rng, h.text)
        if normalize_heading(bad) in keys or len(h.text) < 4:
            continue
        yield Case(vault.name, "heading", "Source.md", f"[[{note.title}#{bad}]]",
                   f"{note.path}#{normalize_heading(h.text)}")
        other = rng.choice(with_heads)
        stranger = rng.choice(other.headings).text
        if normalize_heading(stranger) not in keys:
            yield Case(vault.name, "unwritten", "Source.md", f"[[{note.title}#{stranger}]]",
                       None)
    with_blocks = [n for n in vault.notes if n.block_ids]
    for note in rng.sample(with_blocks, min(per // 4, len(with_blocks))):
        b = rng.choice(note.block_ids)
        bad = slip(rng, b.id)
        if bad.lower() != b.id.lower():
            yield Case(vault.name, "block", "Source.md", f"[[{note.title}#^{bad}]]",
                       f"{note.path}#^{b.id.lower()}")


def _attachment_cases(vault: Vault, per: int, rng: random.Random) -> Iterator[Case]:
    """`![[name.ext]]` with a slip in the name (the file), and names of attachments held
    out of the vault (no answer: they sit among files named much like them, the
    `item-*-sprite.png` of issue 29)."""
    files = [f for f in vault.files if not f.lower().endswith(".md")]
    names = Counter(f.rpartition("/")[2].lower() for f in files)
    unique = [f for f in files if names[f.rpartition("/")[2].lower()] == 1
              and "." in f.rpartition("/")[2].strip(".")
              and len(f.rpartition("/")[2].rpartition(".")[0]) >= 4]
    for path in rng.sample(unique, min(per // 3, len(unique))):
        stem, _, ext = path.rpartition("/")[2].rpartition(".")
        yield Case(vault.name, "attachment", "Source.md",
                   f"![[{typo(rng, stem).rstrip('.')}.{ext}]]", path)
    for path in rng.sample(unique, min(per // 6, len(unique) // 5)):
        yield Case(vault.name, "unwritten", "Source.md", f"![[{path.rpartition('/')[2]}]]",
                   None, held_out=True)


def real_broken(vault: Vault) -> list[Case]:
    """Every broken link of the vault as it is: none is a slip (verified in issue 19's
    note), so any suggestion for one is wrong."""
    resolver = Resolver(vault.notes, vault.files, resolve_aliases=False)
    out = []
    for note in vault.notes:
        for r in resolver.resolve_all(note):
            if r.status in ("unresolved", "escapes") or r.anchor_found is False:
                out.append(Case(vault.name, "unwritten", note.path, r.link.raw, None))
    return out


# -- scoring -----------------------------------------------------------------------------

@dataclass
class Tally:
    cases: int = 0
    answerable: int = 0
    suggested: int = 0
    right: int = 0

    def add(self, expected: str | None, got: str | None) -> None:
        self.cases += 1
        self.answerable += expected is not None
        self.suggested += got is not None
        self.right += got is not None and got == expected


def _reached(resolver: Resolver, case: Case, link: Link, text: str) -> str | None:
    """Where the suggested link text goes: `path`, `path#heading key` or `path#^id`."""
    from kbase_ci.vault.rewrite import link_for

    got = resolver.resolve(case.source, link_for(link, text))
    if got.target is None:
        return None
    new = link_for(link, text)
    if new.anchor_kind == "block":
        return f"{got.target}#^{new.subpath[1:].lower()}"
    if new.anchor_kind == "heading" and got.anchor_found:
        return f"{got.target}#{normalize_heading(new.heading_path[-1])}"
    return got.target


def answer(vault: Vault, resolver: Resolver, suggester: Suggester, case: Case
           ) -> tuple[str | None, bool]:
    """(where the suggestion goes or None, whether the link was broken at all)."""
    from kbase_ci.parse.linksyntax import link_from_raw

    link = link_from_raw(case.link)
    r = resolver.resolve(case.source, link)
    if r.status == "ok" and r.anchor_found is not False:
        return None, False  # the "damage" left a working link: not a case
    if r.status == "ok" and r.target is not None:
        note = resolver.note(r.target)
        text = suggester.for_anchor(r, note) if note is not None else None
    else:
        text = suggester.for_target(r)
    return (None if text is None else _reached(resolver, case, link, text)), True


def evaluate(vaults: list[Vault], all_cases: list[Case], held: dict[str, set[str]]
             ) -> dict[str, Tally]:
    tallies: dict[str, Tally] = {}
    for vault in vaults:
        full = Resolver(vault.notes, vault.files, resolve_aliases=False)
        kept = [n for n in vault.notes if n.path not in held[vault.name]]
        part = Resolver(kept, [f for f in vault.files if f not in held[vault.name]],
                        resolve_aliases=False)
        tools = {False: (full, Suggester(full, [n.path for n in vault.notes])),
                 True: (part, Suggester(part, [n.path for n in kept]))}
        for case in (c for c in all_cases if c.vault == vault.name):
            resolver, suggester = tools[case.held_out]
            got, broken = answer(vault, resolver, suggester, case)
            if broken:
                for key in (case.kind, "all", f"{vault.name}"):
                    tallies.setdefault(key, Tally()).add(case.expected, got)
    return tallies


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:5.1f}%" if b else "    -"


def report(tallies: dict[str, Tally]) -> None:
    print(f"{'cases':24s} {'n':>5s} {'answer':>6s} {'sugg':>5s} {'right':>5s} "
          f"{'precision':>9s} {'recall':>7s}")
    for key in sorted(tallies, key=lambda k: (k == "all", k in VAULTS, k)):
        t = tallies[key]
        print(f"{key:24s} {t.cases:5d} {t.answerable:6d} {t.suggested:5d} {t.right:5d} "
              f"{_pct(t.right, t.suggested):>9s} {_pct(t.right, t.answerable):>7s}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-vault", type=int, default=150)
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--rules", choices=("both", "slip", "similarity"), default="both",
                    help="measure one of the two rules of `closest` alone")
    args = ap.parse_args()
    if args.rules == "similarity":
        suggestions.SLIPS = ((1 << 30, -1),)  # no key is ever a slip away
    elif args.rules == "slip":
        suggestions.CUTOFF = 101  # no key is ever similar enough
    vaults = [v for v in (load(n, parse=n != "tldr-pages") for n in VAULTS) if v is not None]
    if not vaults:
        print("../shared/corpora is not available: nothing to measure")
        return
    rng = random.Random(args.seed)
    all_cases: list[Case] = []
    for v in vaults:
        all_cases += cases(v, [o for o in vaults if o is not v], args.per_vault, rng)
        all_cases += real_broken(v)
    held: dict[str, set[str]] = {}
    for v in vaults:
        titles = {c.link[2:-2] for c in all_cases if c.vault == v.name and c.held_out
                  and not c.link.startswith("!")}
        files = {c.link[3:-2] for c in all_cases if c.vault == v.name and c.held_out
                 and c.link.startswith("!")}
        held[v.name] = {n.path for n in v.notes if n.title in titles} | {
            f for f in v.files if f.rpartition("/")[2] in files}
    print(f"{len(all_cases)} cases (seed {args.seed}); cutoff {suggestions.CUTOFF}, "
          f"margin {suggestions.MARGIN}, at least {suggestions.MIN_CHARS} characters")
    report(evaluate(vaults, all_cases, held))
    if args.sweep:
        print("\ncutoff margin  precision  recall  (all cases)")
        for cutoff in (70, 75, 80, 84, 86, 88, 90, 92, 95):
            for margin in (0, 3, 6, 10):
                suggestions.CUTOFF, suggestions.MARGIN = cutoff, margin
                t = evaluate(vaults, all_cases, held)["all"]
                print(f"{cutoff:6d} {margin:6d}  {_pct(t.right, t.suggested):>9s} "
                      f"{_pct(t.right, t.answerable):>7s}")


if __name__ == "__main__":
    main()
