"""`kbase index`: build `.kbase/` (notes, links, BM25 and vector shards) for the vault.

Only argument handling and output live here; the library is `kbase_ci.index`, imported
when the command runs so that `kbase check` never loads numpy or the model code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.cli.common import open_vault
from kbase_ci.cli.queryargs import add_offline
from kbase_ci.errors import EXIT_OK
from kbase_ci.git.listing import is_ignored
from kbase_ci.git.repo import toplevel
from kbase_ci.report.escape import terminal_text

if TYPE_CHECKING:
    from kbase_ci.index.manifest import Manifest


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "index", help="build the search index (.kbase/) for agents",
        description="Build .kbase/: notes and links tables, BM25 and vector shards, "
                    "similar notes, and a manifest with the sha256 of every file. Two "
                    "builds of one commit are byte-identical; unchanged shards are reused "
                    "from the previous .kbase/. Exit 0 built, 2 usage or config error.")
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="output folder (default: ROOT/.kbase; with --shard, "
                        "ROOT/.kbase-slice-K-of-N)")
    p.add_argument("--model", type=Path, default=None, metavar="PATH",
                   help="embedding model folder: model2vec (static) or ONNX sentence model "
                        "(transformer) (default: embeddings.model in .kbase.yml, a "
                        "repository folder or a hub id found in KBASE_MODEL_PATH, the "
                        "hub cache, or downloaded once)")
    p.add_argument("--shard", default=None, metavar="K/N",
                   help="build only slice K of N of the shards (for parallel CI jobs)")
    p.add_argument("--merge", nargs="+", type=Path, default=None, metavar="DIR",
                   help="combine the slice folders built with --shard into one index")
    p.add_argument("--jobs", type=int, default=None,
                   help="worker processes (default: one per core for large builds)")
    p.add_argument("--no-cache", action="store_true", help="ignore the parse cache")
    add_offline(p)
    p.add_argument("--no-scopes", action="store_true",
                   help="do not rebuild the scopes .kbase.yml declares (they are then "
                        "reported stale)")


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.errors import UsageError
    from kbase_ci.index.shards import parse_slice

    if args.merge and args.shard:
        raise UsageError("--merge and --shard do not go together")
    if args.merge and args.model:
        raise UsageError("--merge uses the slices' vectors; --model does not apply")
    vault = open_vault(args)
    shard = parse_slice(args.shard) if args.shard else None
    out: Path = args.out if args.out is not None else vault.root / (
        f".kbase-slice-{shard[0]}-of-{shard[1]}" if shard else ".kbase")
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.report.terminal import StageProgress, color_wanted, paint

    color = color_wanted(sys.stderr, args.color)
    with StageProgress(sys.stderr, tty=sys.stderr.isatty(), color=color,
                       prefix="kbase index") as report:
        if args.merge:
            # Lazy: `kbase --help` builds every command's parser; the library loads on use.
            from kbase_ci.index.merge import merge_slices

            result = merge_slices(vault, list(args.merge), out, progress=report)
        else:
            # Lazy: `kbase --help` builds every command's parser; the library loads on use.
            from kbase_ci.index.indexbuild import build_index

            result = build_index(vault, out, model=args.model, shard=shard, jobs=args.jobs,
                                 progress=report, use_cache=not args.no_cache)
    for w in result.warnings:  # notes that parsed with problems: yellow, not red
        print(paint(terminal_text(w), "warning", color), file=sys.stderr)
    if result.previous:
        print(f"kbase: note: {terminal_text(result.previous)}", file=sys.stderr)
    if result.embeddings_reason:
        print(f"kbase: note: no vectors: {terminal_text(result.embeddings_reason)}",
              file=sys.stderr)
    print(summary(result.manifest, result.out_dir, len(result.shards_built),
                  len(result.shards_reused), result.seconds.get("total", 0.0)))
    rate = result.chunks_per_second
    if rate is not None:
        print(f"kbase index: embedded {result.embedded} chunks ({result.texts_embedded} "
              f"distinct texts) in {result.embed_seconds:.1f} s ({rate:.0f} chunks/s)",
              file=sys.stderr)
    if shard is None:
        with StageProgress(sys.stderr, tty=sys.stderr.isatty(), color=color,
                           prefix="kbase index") as report:
            lines = _scopes(vault, result.out_dir, rebuild=not args.no_scopes,
                            progress=report)
        for line in lines:
            print(f"kbase index: {line}")
    if shard is None and args.out is None and not _ignored(vault.root, out):
        print("kbase: hint: .kbase/ is not ignored by git; add `.kbase/` to .gitignore "
              "(`kbase publish` commits it to its own branch)", file=sys.stderr)
    return EXIT_OK


def _scopes(vault: Any, out: Path, *, rebuild: bool,
            progress: Callable[[str, int, int], None]) -> tuple[str, ...]:
    """A rebuilt main index leaves every scope built from the old one stale: rebuild the
    declared ones (`scope.build.build_declared`), and name the stale ones left."""
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.index.scopes import states

    declared = vault.config.scopes.named
    if not declared and not (out / "scopes").is_dir():
        return ()
    if rebuild:
        from kbase_ci.scope.scopebuild import build_declared  # builds only: scope code is big

        return build_declared(vault.root, out, declared, progress=progress)
    return tuple(f"scope {s.name}: stale (built from the previous index): rebuild it "
                 f"with `kbase scope build {s.name}`" if s.why == "index" else
                 f"scope {s.name}: stale ({s.reason})"
                 for s in states(out, declared) if s.stale)


def summary(manifest: Manifest, out: Path, built: int, reused: int,
            seconds: float) -> str:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.index.manifest import IndexManifest

    emb = manifest.embeddings
    vec = f"{emb.model} ({emb.dim}d)" if emb.dim else "none"
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    if isinstance(manifest, IndexManifest):
        c = manifest.counts
        what, chunks, links = "index", c.chunks, c.links
    else:  # a slice counts its notes and shards only
        what, chunks, links = "slice", 0, 0
    return (f"kbase {what}: {manifest.counts.notes} notes, {chunks} chunks, "
            f"{links} links, {built + reused} shards ({built} built, {reused} "
            f"reused), vectors: {vec} -> {out} ({size / 1e6:.1f} MB) in {seconds:.1f} s")


def _ignored(root: Path, out: Path) -> bool:
    """True when git ignores `out` (or `root` is not a git work tree)."""
    if toplevel(root) is None:
        return True
    # `status --ignored` rather than `check-ignore`, which rejects the literal pathspecs
    # gitio always asks for.
    rel = out.relative_to(root).as_posix() if out.is_relative_to(root) else str(out)
    return is_ignored(root, rel)
