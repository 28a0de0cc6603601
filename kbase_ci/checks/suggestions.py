"""Confident "did you mean" for broken links, headings and block ids.

A suggestion is offered only when one name stands out (`closest`: a slip or two away,
or very similar, and clearly nearer than any other). The thresholds were measured on
rename-and-typo cases generated from the shared vaults, where any suggestion for a
link to an unwritten note counts against precision (`python -m bench.typos`,
docs/checks.md "Suggestions"). A suggested link is proven before it is offered: it must
resolve, to that file, unambiguously, and with its heading or block found. So it is
never an alias, never a name two notes share, never a note outside the folder the link
named, and never the same link again.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import cached_property

from kbase_ci.parse.anchors import github_slugs, heading_link_text, normalize_heading
from kbase_ci.parsed import Link, ParsedNote
from kbase_ci.vault.resolver import ResolvedLink, Resolver
from kbase_ci.vault.rewrite import link_for, relink, retarget

CUTOFF = 88
"""Similarity rule: least rapidfuzz `ratio` (0-100) of the written and the suggested key."""
MARGIN = 6
"""Similarity rule: how far the best candidate must score above the runner-up."""
SLIPS = ((10, 1), (1_000_000, 2))
"""Slip rule: (keys shorter than N characters, most edits allowed)."""
MIN_CHARS = 4
"""Shorter keys are too easy to mistype into another name: no suggestion."""

_SEPARATORS = re.compile(r"[\s_\-.]+")
_URLISH = re.compile(r"^[a-z][a-z0-9+.-]*:|//|^www\.", re.IGNORECASE)
_SLUG = re.compile(r"^[a-z0-9_-]+$")
_EXTENSION = re.compile(r"^[a-z0-9]{1,8}$")


def suggestion_key(name: str) -> str:
    """How names are compared for a suggestion: NFC, lower case, and `-`, `_`, `.` and
    whitespace runs as one space, so `Data_Warehouse` is close to `Data Warehouse`."""
    text = name if name.isascii() else unicodedata.normalize("NFC", name)
    return _SEPARATORS.sub(" ", text.lower()).strip()


def closest(wanted: str, keys: Sequence[str]) -> int | None:
    """Index of the one key close enough to `wanted`, or None.

    Two rules, each demanding a clear winner; when both pick, they must agree:
    - slips: at most 1 edit (2 from 10 characters on; an edit is a letter dropped,
      added, replaced or two swapped), the same first letter (people seldom slip there,
      and `Fear`/`Gear`, `Mending`/`Sending` are different things), and no other key
      within one more edit;
    - similarity: a rapidfuzz `ratio` of at least `CUTOFF`, `MARGIN` above any other
      (renames: `Batch Processing` for `Batch Data Processing`).
    """
    if len(wanted) < MIN_CHARS or not keys:
        return None
    # rapidfuzz, not difflib: over 10k names difflib takes ~0.3 s a suggestion and
    # rapidfuzz ~1 ms (docs/checks.md, "Suggestions").
    from rapidfuzz import fuzz, process
    from rapidfuzz.distance import OSA

    limit = next(edits for below, edits in SLIPS if len(wanted) < below)
    slip = None
    near = process.extract(wanted, keys, scorer=OSA.distance, limit=2,
                           score_cutoff=limit + 1)
    if near and near[0][1] <= limit and near[0][0][:1] == wanted[:1] and (
            len(near) == 1 or near[1][1] > near[0][1]):
        slip = int(near[0][2])
    similar = None
    top = process.extract(wanted, keys, scorer=fuzz.ratio, limit=2,
                          score_cutoff=CUTOFF - MARGIN)
    if top and top[0][1] >= CUTOFF and (len(top) == 1 or top[1][1] <= top[0][1] - MARGIN):
        similar = int(top[0][2])
    if slip is not None and similar is not None and slip != similar:
        return None
    return slip if slip is not None else similar


def same_file(written: str, name: str) -> bool:
    """Whether attachment name `written` (a suggestion key) is a slip of `name` and not
    another file of the same series. Attachments come in series sharing a long prefix
    and suffix (`auto-suggest-menu-after-due-date.png`, `...-due-emoji.png`;
    `dialog-1.png`, `dialog-2.png`), which makes any two look alike as whole strings
    (issue 29: `item-tr-high-power-sprite.png` scored as `item-bright-powder-sprite.png`),
    so the words they do not share are judged on their own: each must be a slip of the
    other (`_word_slip`). When the words do not pair up, the part between the shared
    prefix and suffix must lie inside one word and be at most two characters."""
    ours, theirs = written.split(), name.split()
    if len(ours) == len(theirs):
        pairs = [(a, b) for a, b in zip(ours, theirs, strict=True) if a != b]
        return bool(pairs) and all(_word_slip(a, b) for a, b in pairs)
    p = 0
    while p < min(len(written), len(name)) and written[p] == name[p]:
        p += 1
    s = 0
    while s < min(len(written), len(name)) - p and written[-1 - s] == name[-1 - s]:
        s += 1
    inside = (p > 0 and written[p - 1] != " ") or (s > 0 and written[len(written) - s] != " ")
    return inside and max(len(written), len(name)) - p - s <= 2


def _word_slip(a: str, b: str) -> bool:
    """`a` is `b` mistyped: at most two edits, fewer than either word has letters, the
    same digits (`v1` is not `v2`), and the same first letter unless both are long."""
    from rapidfuzz.distance import OSA

    if sorted(c for c in a if c.isdigit()) != sorted(c for c in b if c.isdigit()):
        return False
    edits = OSA.distance(a, b)
    return edits <= 2 and edits < min(len(a), len(b)) and (
        a[:1] == b[:1] or min(len(a), len(b)) >= 5)


def _stem(path: str) -> str:
    name = path.rpartition("/")[2]
    return name[:-3] if name.lower().endswith(".md") else name


class _Names:
    """Names a link may be suggested, indexed once so that a finding looks only at those
    it can reach (issue 40: a cold `check --all` spent 6% of its CPU normalising every
    path's folder for every broken link): by key length (a slip or a similar name is
    about as long as what was written), by the folders a path lies in, by extension."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.keys, self.paths = _unique(pairs)
        self._lengths: dict[int, list[int]] = {}
        for i, key in enumerate(self.keys):
            self._lengths.setdefault(len(key), []).append(i)

    @cached_property
    def _folders(self) -> dict[str, list[int]]:
        """Each folder ending (`a/b`, `b`) of the paths, as a suggestion key -> rows."""
        out: dict[str, list[int]] = {}
        for i, path in enumerate(self.paths):
            parts = suggestion_key(path.rpartition("/")[0]).split("/")
            for start in range(len(parts)):
                out.setdefault("/".join(parts[start:]), []).append(i)
        return out

    @cached_property
    def _extensions(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for i, path in enumerate(self.paths):
            out.setdefault(path.rpartition(".")[2].lower(), []).append(i)
        return out

    def in_folder(self, named: str) -> list[int]:
        """Rows of the paths in the folder a link named: its last whole folders
        (`[[sub/Note]]` fits `lib/sub/`), so `[[a/Note]]` never becomes a note of
        `data/`, nor of `a/b/`."""
        return self._folders.get(named, [])

    def with_extension(self, ext: str) -> list[int]:
        return self._extensions.get(ext, [])

    def near(self, wanted: str, rows: list[int] | None) -> list[int]:
        """The rows (all, or of `rows`) whose key `closest` can pick for `wanted`: a
        `ratio` of CUTOFF - MARGIN needs the lengths within about 0.7x-1.44x, a slip
        of up to 3 edits within 3 characters (with a character to spare each way)."""
        size = len(wanted)
        low = min(size - 4, int(size * 0.69) - 1)
        high = max(size + 4, int(size * 1.45) + 1)
        if rows is not None:
            return [i for i in rows if low <= len(self.keys[i]) <= high]
        return sorted(i for n in range(max(low, 0), high + 1) for i in self._lengths.get(n, ()))


class Suggester:
    """Suggestions over one vault (state: the name tables, built on the first broken link)."""

    def __init__(self, resolver: Resolver, notes: Sequence[str]) -> None:
        self._resolver = resolver
        self._notes = notes

    @cached_property
    def _note_names(self) -> _Names:
        """The notes whose name no other note has."""
        return _Names([(suggestion_key(_stem(p)), p) for p in self._notes])

    @cached_property
    def _file_names(self) -> _Names:
        """The other files whose name (with extension) is unique."""
        return _Names([(suggestion_key(f.rpartition("/")[2]), f)
                       for f in self._resolver.attachments])

    # -- a link to a missing note or file ------------------------------------------

    def for_target(self, r: ResolvedLink) -> str | None:
        """A replacement for a link that finds no file, or None when none is confident."""
        link = r.link
        written = link.target.strip()
        if not written or _URLISH.search(written):
            return None  # a (mistyped) URL is not a misspelled note
        folder, _, name = written.rstrip("/").rpartition("/")
        name = name.rstrip(" .") or name  # `[[Guide.]]`: a full stop inside the brackets
        names = self._note_names
        query = _stem(name)
        ext = name.rpartition(".")[2].lower() if "." in name else ""
        rows: list[int] | None = None  # None: every name of the table
        attachment = False
        if _EXTENSION.match(ext) and ext != "md":
            same = self._file_names.with_extension(ext)
            if same:  # else a note name with a dot (`Release 2.0`)
                names, rows, query, attachment = self._file_names, same, name, True
        if folder:
            # A link that names a folder means that folder: only files in it qualify.
            inside = set(names.in_folder(
                suggestion_key(folder.rpartition("../")[2].lstrip("./"))))
            rows = [i for i in (rows if rows is not None else sorted(inside)) if i in inside]
        wanted = suggestion_key(query)
        reach = names.near(wanted, rows)
        keys = [names.keys[i] for i in reach]
        hit = closest(wanted, keys)
        if hit is None or (attachment and not same_file(wanted, keys[hit])):
            return None
        return self._prove_target(r, names.paths[reach[hit]], folder)

    def _prove_target(self, r: ResolvedLink, path: str, folder: str) -> str | None:
        link = r.link
        if link.style == "wiki":
            name = path.rpartition("/")[2]
            if not link.target.lower().endswith(".md") and name.lower().endswith(".md"):
                name = name[:-3]
            spelled = f"{folder}/{name}" if folder else name
            text = relink(link, spelled)
            if text is not None and self._proves(r, text, path):
                return text
        text = retarget(link, r.source, path, self._resolver)
        return text if text is not None and self._proves(r, text, path) else None

    def _proves(self, r: ResolvedLink, text: str, path: str) -> bool:
        """`text`, written where `r.link` is, finds `path` unambiguously, anchor and all."""
        if text == r.link.raw:
            return False
        got = self._resolver.resolve(r.source, link_for(r.link, text))
        return (got.status == "ok" and got.target == path and not got.ambiguous
                and got.via != "alias" and got.anchor_found is not False)

    # -- a link to a heading or block the note does not have ----------------------

    def for_anchor(self, r: ResolvedLink, note: ParsedNote) -> str | None:
        """A replacement naming a heading or block `note` has, or None."""
        link = r.link
        if link.anchor_kind == "block":
            ids = [b.id for b in note.block_ids]
            hit = closest(link.subpath[1:].lower(), [i.lower() for i in ids])
            return None if hit is None else self._prove_anchor(r, [f"^{ids[hit]}"])
        parts = list(link.heading_path)
        if not parts or not note.headings:
            return None
        # Compared as Obsidian compares headings, with `-` and `_` as spaces too, so a
        # mistyped GitHub slug (`#step-1-instal`) finds its heading as well.
        hit = closest(_heading_key(parts[-1]), [_heading_key(h.text) for h in note.headings])
        if hit is None:
            return None
        written = _anchor_text(link, note, hit)
        if written is None:
            return None
        # The heading under the parts written before it, else on its own.
        return self._prove_anchor(r, ["#".join([*parts[:-1], written]), written])

    def _prove_anchor(self, r: ResolvedLink, subpaths: list[str]) -> str | None:
        for subpath in dict.fromkeys(subpaths):
            text = relink(r.link, subpath=subpath)
            if text is not None and self._proves(r, text, r.target or ""):
                got = self._resolver.resolve(r.source, link_for(r.link, text))
                if got.anchor_found:
                    return text
        return None


def _heading_key(text: str) -> str:
    return " ".join(normalize_heading(text).replace("-", " ").replace("_", " ").split())


def _anchor_text(link: Link, note: ParsedNote, i: int) -> str | None:
    """Heading `i` of `note` as the link should name it: as Obsidian's heading suggester
    writes it, or as a GitHub slug where the author wrote a slug in a Markdown link."""
    if link.style == "markdown" and _SLUG.match(link.heading_path[-1]):
        return github_slugs(h.text for h in note.headings)[i]
    return heading_link_text(note.headings[i].text)


def _unique(pairs: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """The (key, path) pairs whose key occurs once: a shared name is never suggested."""
    count: dict[str, int] = {}
    for key, _path in pairs:
        count[key] = count.get(key, 0) + 1
    kept = [(k, p) for k, p in pairs if count[k] == 1 and k]
    return [k for k, _ in kept], [p for _, p in kept]
