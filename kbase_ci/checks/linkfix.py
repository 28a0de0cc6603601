"""Repairing links a move broke: `kbase fix` (moves staged in this commit) and `kbase mv`.

Both find the broken links with `breakage` (what a link found before the move, what
it finds now) and take the rewrite it proves: the same target, alias, anchor and
style, pointing at the new path. Files are rewritten whole through a temp file, and
only when every edit found its old text at the parser's position and the result
parses back to the intended links; otherwise the file is left as it was.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from kbase_ci.checks.breakage import Breakage
from kbase_ci.checks.fixmemo import remember
from kbase_ci.checks.hookbatch import staged_share
from kbase_ci.checks.notechanges import NoteChanges
from kbase_ci.checks.stagedchanges import load_change
from kbase_ci.checks.swappedstore import overlay
from kbase_ci.errors import ChangedError, UnsafePathError, UsageError
from kbase_ci.git.diff import FileChange
from kbase_ci.parse.parser import parse_note
from kbase_ci.state.bounded import NotRegular, read_input
from kbase_ci.state.files import write_atomic
from kbase_ci.vault.fileedit import Edit, apply_edits
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.resolver import Resolver
from kbase_ci.vault.safefs import confine
from kbase_ci.vault.scanner import open_store


@dataclass(frozen=True)
class FixReport:
    edits: tuple[Edit, ...]
    """Rewrites made (or, in a dry run, that would be made), in file order."""
    changed: tuple[str, ...]
    """Vault-relative files rewritten (or that would be)."""
    skipped: tuple[tuple[str, str], ...]
    """(file, why) for files left alone although they hold broken links."""
    unfixable: tuple[Breakage, ...]
    """Links broken by a move that no spelling of the new path can repair."""


def fix_staged_moves(vault: Vault, changes: Sequence[FileChange],
                     files: Sequence[str] | None = None, *, dry_run: bool = False,
                     anchors: bool = False, base: str = "HEAD") -> FixReport:
    """Rewrite links broken by the renames in `changes` (the staged change set, against
    HEAD or against commit `base`: `kbase fix --base`); with `anchors`, also links to a
    heading or block id the change renamed (`kbase fix --suggestions`).

    With `files` (a hook's argv) only those notes are rewritten, plus, in the one
    process `hookbatch` elects, every note no process was given.
    """
    focus: Collection[str] = ()
    inbound, elsewhere = True, frozenset[str]()
    if files:
        scope = staged_share(vault, changes, files)
        focus, inbound, elsewhere = scope.focus, scope.inbound, scope.elsewhere
    when = "in this commit" if base == "HEAD" else f"since {base}"
    change = load_change(vault, changes, inbound=inbound, elsewhere=elsewhere, base=base,
                         when=when)
    if not change.renames and not (anchors and change.modified):
        return FixReport((), (), (), ())
    # A fresh clone's first fix, as its first check: notes no rename touches are taken
    # from a published index at the same blob ids instead of being parsed.
    store, _stats = open_store(vault, hints=True)
    resolver = Resolver(store, vault.files, resolve_aliases=vault.config.links.resolve_aliases,
                        include_dot=vault.config.vault.include_dot_folders)
    broken = change.breakage(store, vault.files, resolver, focus)
    report = apply_fixes(vault, list(broken.values()), dry_run=dry_run, anchors=anchors)
    if report.changed and not dry_run and vault.mode == "git-index":
        # For `kbase check` in this run: only rewrites that now resolve whole. One whose
        # heading or block the commit also removed is still broken, so the check must
        # keep reporting it rather than call the rest "no other problems".
        remember(vault, [e for e in report.edits if _resolves(resolver, e)], report.changed)
    return report


def _resolves(resolver: Resolver, edit: Edit) -> bool:
    """Whether the rewritten link `edit.new`, written in `edit.path`, finds its target
    and its heading or block id in the staged vault."""
    links = parse_note(edit.path, edit.new.encode("utf-8")).links
    if len(links) != 1:
        return False
    found = resolver.resolve(edit.path, links[0])
    return found.status == "ok" and found.anchor_found is not False


def plan_move(vault: Vault, old: str, new: str) -> list[Breakage]:
    """Links (in every note) that moving note `old` to `new` would break, each with its
    rewrite (`Breakage.suggestion`)."""
    store, _stats = open_store(vault)
    moved = store.get(old)
    if moved is None:
        raise UsageError(f"{old} is not a tracked note of this vault")
    title = new.rpartition("/")[2]
    after = overlay(store, [old], {new: moved._replace(
        path=new, title=title[:-3] if title.lower().endswith(".md") else title)})
    files = [new if f == old else f for f in vault.files]
    change = NoteChanges({old: new}, (), (), (), {old: moved},
                    resolve_aliases=vault.config.links.resolve_aliases)
    resolver = Resolver(after, files, resolve_aliases=vault.config.links.resolve_aliases,
                        include_dot=vault.config.vault.include_dot_folders)
    return list(change.breakage(after, files, resolver, ()).values())


def apply_fixes(vault: Vault, broken: Sequence[Breakage], *, dry_run: bool = False,
                anchors: bool = False) -> FixReport:
    """Apply the rewrites of the fixable `broken` links, file by file, in the work tree;
    with `anchors`, also the new name of a heading or block id the change renamed (the
    hook names it, but "renamed" is read from its place among the note's headings: a
    guess, so only with `--suggestions`)."""
    edits: list[Edit] = []
    unfixable: list[Breakage] = []
    for b in sorted(broken, key=lambda b: b.key):
        renamed = anchors and b.reason == "anchor-renamed"
        if (b.fixable or renamed) and b.suggestion is not None:
            edits.append(Edit(b.source, b.link.line, b.link.col, b.link.raw, b.suggestion))
        elif b.reason in ("renamed", "moved"):
            unfixable.append(b)
    return _apply(vault, edits, tuple(unfixable), dry_run=dry_run)


def fix_suggestions(vault: Vault, files: Sequence[str] | None = None, *,
                    skip: Collection[tuple[str, int, int]] = (), dry_run: bool = False
                    ) -> FixReport:
    """Apply the "did you mean" of every link and anchor finding that has one (`kbase fix
    --suggestions`): confident guesses, each proven to resolve (kbase_ci.checks.
    suggestions), so only on request. `files`: the notes to rewrite (default: all);
    `skip`: (path, line, col) of links already rewritten."""
    from kbase_ci.checks.checker import check_vault  # the whole check run, only here

    report = check_vault(vault, files, select=["links", "sections"])
    wanted = [f for f in report.findings if f.suggestion is not None
              and (f.path, f.line, f.col) not in skip]
    store, _stats = open_store(vault, [n for n in vault.notes
                                       if n.path in {f.path for f in wanted}])
    edits: list[Edit] = []
    for f in wanted:
        note = store.get(f.path)
        link = next((ln for ln in note.links if (ln.line, ln.col) == (f.line, f.col)),
                    None) if note is not None else None
        if link is not None and f.suggestion is not None:
            edits.append(Edit(f.path, f.line, f.col, link.raw, f.suggestion))
    return _apply(vault, sorted(set(edits), key=lambda e: (e.path, e.line, e.col)), (),
                  dry_run=dry_run)


def _apply(vault: Vault, edits: Sequence[Edit], unfixable: tuple[Breakage, ...], *,
           dry_run: bool) -> FixReport:
    by_file: dict[str, list[Edit]] = {}
    for e in edits:
        by_file.setdefault(e.path, []).append(e)
    done: list[Edit] = []
    changed: list[str] = []
    skipped: list[tuple[str, str]] = []
    for path, mine in sorted(by_file.items()):
        try:  # never through a link, into a submodule or the index folder
            full = confine(vault.root, path, gitlinks=vault.gitlinks)
        except UnsafePathError as exc:
            skipped.append((path, exc.args[0]))
            continue
        why = _rewrite_file(full, path, mine, dry_run=dry_run)
        if why is None:
            done.extend(mine)
            changed.append(path)
        else:
            skipped.append((path, why))
    return FixReport(tuple(done), tuple(changed), tuple(skipped), unfixable)


def _rewrite_file(full: Path, path: str, edits: list[Edit], *, dry_run: bool) -> str | None:
    """Rewrite one file; the reason it was left alone, or None when it was rewritten."""
    try:
        data = read_input(full)
    except NotRegular:
        return "not a regular file (a FIFO, socket or device): skipped"
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    new, missed = apply_edits(data, edits)
    if missed:
        return ("it changed since it was read (the link is not where the parser saw it); "
                "stage it and run again")
    # The edits replaced whole links at their own positions; proving that the file still
    # holds exactly the links intended costs two parses of one note.
    expected = Counter(ln.raw for ln in parse_note(path, data).links)
    for e in edits:
        expected[e.old] -= 1
        expected[e.new] += 1
    if Counter(ln.raw for ln in parse_note(path, new).links) != +expected:
        return "the rewritten text would not parse back to the same links"
    if not dry_run:
        try:  # only if it still holds what was read and edited (compare-and-swap)
            write_atomic(full, new, expect=data)
        except ChangedError as exc:
            return str(exc).removeprefix(f"{full}: ") + "; stage it and run again"
        except UnsafePathError as exc:
            return str(exc).removeprefix(f"{full}: ")
        except OSError as exc:
            return f"cannot write it: {exc.strerror or exc}"
    return None
