"""A built scope as the index a query answers from: found where `open_source` looks for
the main index, refused when stale, with the freshness overlay limited to its notes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kbase_ci.errors import IndexFormatError, UsageError
from kbase_ci.git.indexbranch import BRANCH
from kbase_ci.index.manifest import MANIFEST_NAME
from kbase_ci.index.reader import IndexReader, open_index
from kbase_ci.query.discovery import FETCH_COMMAND, IndexSource, committed, open_source

if TYPE_CHECKING:
    from kbase_ci.index.blocks import Scope
    from kbase_ci.parsed import ParsedNote
    from kbase_ci.vault.notefiles import Vault

# The scope modules (selectors, domains, scope state: ~30 modules with the model choice)
# are imported where a scope is asked for: every query without `--scope` passes here.

class ScopeMember:
    """`freshness.Member` for a scope (state: the main index's blob per path, and the
    selectors): a note unchanged since the main index and left out then is left out
    without parsing; any other note is judged by the selectors on its fresh parse."""

    def __init__(self, vault: Vault, main: IndexReader, block: Scope) -> None:
        # Lazy: a query without `--scope` never loads the scope modules (see the top).
        from kbase_ci.index.shards import DomainRule
        from kbase_ci.vault.scopeconfig import ScopeSpec

        self._reader = main
        self.main: dict[str, str] = dict(zip(main.core().paths, main.blobs(), strict=True))
        sel = block.selectors
        self._spec = ScopeSpec.from_pairs(
            [(k, v) for k, vs in sel.include.items() for v in vs],
            [(k, v) for k, vs in sel.exclude.items() for v in vs])
        self._rule = DomainRule.parse(vault.config.index.domain)

    def known_outside(self, path: str, sha: str) -> bool:
        return self.main.get(path) == sha

    def light(self, paths: list[str]) -> list[ParsedNote]:
        # The rows the scope's build resolved its links against (`ScopeInputs.outside`).
        from kbase_ci.index.scopes import light_note  # lazy: see the top

        number = self._reader.note_numbers()
        rows = self._reader.notes()
        return [light_note(rows[number[p]]) for p in paths]

    def __call__(self, note: ParsedNote) -> bool:
        from kbase_ci.scope.select import NoteFacts, selected  # lazy: see the top

        return selected(self._spec, NoteFacts.from_parsed(
            note, self._rule.domain(note.path, note.frontmatter)))


def open_scope_source(vault: Vault, index_dir: Path | None, name: str, *,
                      stale_ok: bool = False) -> IndexSource:
    """The scope NAME of an index found as `open_source` finds it (`--index DIR`, else
    `.kbase/`, the index branches, FETCH_HEAD, a bounded fetch: `discovery.committed`):
    the first of those that holds it. Missing or stale (unless `stale_ok`): UsageError
    (exit 2)."""
    # Lazy: see the top.
    from kbase_ci.index.scopes import scope_dir, state
    from kbase_ci.vault.scopeconfig import check_name

    check_name(name)
    problems: list[str] = []
    mains = [IndexSource(open_index(index_dir, git_dir=vault.git_dir), "dir",
                         str(index_dir))] if index_dir is not None \
        else committed(vault, problems)
    for main in mains:
        folder = main.reader.root
        if not (scope_dir(folder, name) / MANIFEST_NAME).is_file():
            continue
        info = state(folder, name, vault.config.scopes.named)
        if info.stale and not stale_ok:
            raise UsageError(str(info.reason))
        reader = open_index(scope_dir(folder, name), git_dir=vault.git_dir)
        block = reader.manifest.scope
        if block is None:
            raise IndexFormatError(f"{scope_dir(folder, name)}: not a scoped index")
        return IndexSource(reader, main.origin, f"{main.location} scope {name}",
                           scope={"name": name, "stale": info.stale, "reason": info.reason},
                           member=ScopeMember(vault, main.reader, block))
    declared = sorted(vault.config.scopes.named)
    hint = f" (declared in .kbase.yml: {', '.join(declared)})" if declared else ""
    extra = f"; {'; '.join(problems)}" if problems else ""
    raise UsageError(f"no scope named {name} has been built{hint}: build it with "
                     f"`kbase scope build {name}`{extra}")


def main_index_dir(vault: Vault, index_dir: Path | None = None) -> Path:
    """The main index folder a scope is cut from (and built into): `--index DIR`, else
    `.kbase/`, else the published index as queries find it (`discovery.committed`: the
    index branches, FETCH_HEAD, a bounded fetch), in its folder under the git dir. A
    fresh clone builds its scopes there without a local `kbase index`."""
    if index_dir is not None:
        return index_dir
    local = vault.root / ".kbase"
    if (local / MANIFEST_NAME).is_file() or vault.repo_root is None:
        return local  # a broken one is reported by the build, not passed over
    problems: list[str] = []
    for main in committed(vault, problems):
        return main.reader.root
    extra = f" ({'; '.join(problems)})" if problems else ""
    raise UsageError(f"no index to cut a scope from: no {local}, no {BRANCH} branch"
                     f"{extra}; build one with `kbase index`, or fetch the published one "
                     f"with `{FETCH_COMMAND}`")


def open_index_source(vault: Vault, index_dir: Path | None = None, scope: str | None = None,
                      *, stale_ok: bool = False) -> IndexSource:
    """What a query answers from: `open_source`, or with `scope` that scoped index of the
    same index (never a fallback; stale is refused unless `stale_ok`)."""
    if scope is None:
        return open_source(vault, index_dir)
    return open_scope_source(vault, index_dir, scope, stale_ok=stale_ok)
