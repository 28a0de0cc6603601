"""`kbase scope build NAME [--plan]` and `kbase scope list`: scoped indexes (docs/scopes.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kbase_ci.errors import EXIT_FINDINGS, EXIT_OK, UsageError
from kbase_ci.report.escape import terminal_text

_KIND_OPTIONS = ("domain", "path", "tag", "type", "note")


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "scope", help="scoped indexes: a separate index holding only some notes",
        description="Build a scoped index from the main index (.kbase/): the notes a "
                    "scope selects, their links (links leaving the scope are kept as "
                    "out_of_scope, with no target), BM25, vectors copied from the main "
                    "index, similar notes within the scope. Query it with --scope NAME.")
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    b = acts.add_parser("build", help="build (or with --plan, preview) one scope")
    b.add_argument("name", metavar="NAME", help="a scope declared under `scopes:` in "
                   ".kbase.yml, or any name with selector options (ad-hoc)")
    b.add_argument("--plan", action="store_true",
                   help="print what would be included and write nothing")
    for kind in _KIND_OPTIONS:
        b.add_argument(f"--{kind}", action="append", default=[], metavar="VALUE",
                       help=f"include notes by {kind} (repeatable, comma-separated, `*` "
                            "wildcards)")
    b.add_argument("--exclude", action="append", default=[], metavar="KIND:VALUE",
                   help="exclude notes (`tag:draft`, `path:archive/**`; repeatable)")
    _common(b)
    ls = acts.add_parser("list", help="declared and built scopes, and whether they are stale")
    _common(ls)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--index", type=Path, default=None, metavar="DIR",
                   help="the main index folder (default: .kbase/, else the published "
                        "kbase-index branch, as queries find it)")
    p.add_argument("--format", choices=("json", "text"), default="json",
                   help="output format (default: %(default)s)")


def _spec(args: argparse.Namespace, declared: dict[str, Any]) -> Any:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.vault.scopeconfig import KINDS, ScopeSpec, split_values

    include = [(k, v) for k in _KIND_OPTIONS for v in split_values(getattr(args, k))]
    exclude = []
    for text in split_values(args.exclude):
        kind, sep, value = text.partition(":")
        if not sep or kind.strip() not in KINDS:
            raise UsageError(f"--exclude {text!r}: write KIND:VALUE with KIND one of "
                             f"{', '.join(KINDS)}")
        exclude.append((kind.strip(), value.strip()))
    if include or exclude:
        spec = ScopeSpec.from_pairs(include, exclude)
        if not spec.include:
            raise UsageError("an ad-hoc scope needs at least one of --domain, --path, --tag, "
                             "--type, --note")
        return spec
    if args.name not in declared:
        known = ", ".join(sorted(declared)) or "none"
        raise UsageError(f"no scope named {args.name} in .kbase.yml (declared: {known}); "
                         "declare it under `scopes:` or give selectors (--domain, --tag, "
                         "...)")
    return declared[args.name]


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.cli.common import open_vault, vault_root
    from kbase_ci.scope.source import main_index_dir

    vault = open_vault(args)
    if args.action == "list":
        local = args.index if args.index is not None else vault_root(args) / ".kbase"
        try:
            main_dir = main_index_dir(vault, args.index)
        except UsageError:  # nothing built or published: only declarations to list
            main_dir = local
        return _list(args, vault.config.scopes.named, main_dir)
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.scope.scopebuild import build_scope
    from kbase_ci.vault.scopeconfig import check_name

    check_name(args.name)
    spec = _spec(args, vault.config.scopes.named)
    result = build_scope(vault.root, args.name, spec, index_dir=main_index_dir(vault, args.index),
                         plan=args.plan)
    answer = result.to_json()
    if args.format == "json":
        sys.stdout.write(json.dumps(answer, ensure_ascii=False, indent=2) + "\n")
    else:
        verb = "would include" if result.plan else result.outcome
        print(f"scope {result.name}: {verb} {len(result.selection.paths)} notes -> "
              f"{result.folder}")
        for c in result.components:
            print(terminal_text(f"  {c.component:8} {c.status:7} {c.message}"))
        for u in result.selection.unmatched:  # selectors from .kbase.yml
            print(terminal_text(f"  {u.side} `{u.selector}` matched nothing: {u.hint}"))
    return EXIT_OK if result.ok else EXIT_FINDINGS


def _list(args: argparse.Namespace, declared: dict[str, Any], main_dir: Path) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.index.scopes import states

    built = {s.name: s for s in (states(main_dir, declared) if main_dir.is_dir() else [])}
    rows = [{"name": n, "declared": n in declared,
             "selectors": declared[n].to_json() if n in declared else None,
             "built": n in built, "stale": built[n].stale if n in built else None,
             "reason": built[n].reason if n in built else None}
            for n in sorted({*declared, *built})]
    if args.format == "json":
        sys.stdout.write(json.dumps({"scopes": rows}, ensure_ascii=False, indent=2) + "\n")
    else:
        for r in rows:
            state = "not built" if not r["built"] else ("stale" if r["stale"] else "current")
            print(f"{r['name']}: {'declared, ' if r['declared'] else 'ad-hoc, '}{state}")
    return EXIT_OK if rows else EXIT_FINDINGS
