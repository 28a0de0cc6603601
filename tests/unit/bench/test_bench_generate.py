"""The benchmark vault generator: deterministic, and its stats match what it wrote.

Links are counted and resolved here with plain regexes on purpose: the project's parser
is what the vault is meant to benchmark, so it must not be the judge.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

from bench.generate import VaultStats, generate_vault
from kbase_ci.errors import UsageError
from tests.conftest import REPO

WIKI = re.compile(r"!?\[\[([^\[\]\n]+)\]\]")
MD = re.compile(r"(?<![!\]])\[[^\[\]\n]*\]\((<[^>\n]+>|[^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")
CODE_SPAN = re.compile(r"`[^`\n]+`")
HEADING = re.compile(r"^#{1,6} (.+)$")
BLOCK_ID = re.compile(r" \^([A-Za-z0-9-]+)$")


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


def prose_lines(text: str) -> list[str]:
    """Lines outside fenced code, with inline code spans blanked."""
    out, fenced = [], False
    for line in text.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            out.append(CODE_SPAN.sub("``", line))
    return out


def links_of(text: str) -> list[tuple[str, str]]:
    """("wiki", inner) and ("md", destination) for internal links outside code."""
    found: list[tuple[str, str]] = []
    for line in prose_lines(text):
        found += [("wiki", m.group(1)) for m in WIKI.finditer(line)]
        for m in MD.finditer(line):
            dest = m.group(1).strip("<>")
            if not re.match(r"[a-z]+:", dest) and dest.endswith(".md"):
                found.append(("md", dest))
    return found


def unresolved(files: dict[str, bytes]) -> list[tuple[str, str]]:
    """Links that point at no note, heading, block or attachment (Obsidian's rules)."""
    notes = {rel[:-3]: b.decode("utf-8") for rel, b in files.items() if rel.endswith(".md")}
    by_name: dict[str, list[str]] = {}
    for stem in notes:
        by_name.setdefault(stem.rsplit("/", 1)[-1], []).append(stem)
    headings = {s: {m.group(1) for line in prose_lines(t) if (m := HEADING.match(line))}
                for s, t in notes.items()}
    blocks = {s: {m.group(1) for line in prose_lines(t) if (m := BLOCK_ID.search(line))}
              for s, t in notes.items()}
    attachments = {rel.rsplit("/", 1)[-1] for rel in files if not rel.endswith(".md")}
    bad: list[tuple[str, str]] = []
    for src, text in notes.items():
        folder = src.rpartition("/")[0]
        for style, raw in links_of(text):
            if style == "md":
                path = os.path.normpath(os.path.join(folder, unquote(raw)))
                if path not in files:
                    bad.append((src, raw))
                continue
            target, _, anchor = raw.split("|")[0].partition("#")
            if target.endswith(".png"):
                ok = target.rsplit("/", 1)[-1] in attachments and (
                    "/" not in target or target in files)
            else:
                same_name = by_name.get(target, [])
                stem = (src if not target else target if target in notes
                        else same_name[0] if len(same_name) == 1 else "")
                ok = bool(stem) and (
                    not anchor
                    or (anchor[1:] in blocks[stem] if anchor.startswith("^")
                        else all(part in headings[stem] for part in anchor.split("#"))))
            if not ok:
                bad.append((src, raw))
    return bad


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, VaultStats]:
    out = tmp_path_factory.mktemp("gen") / "vault"
    return out, generate_vault(out, 60, seed=7)


def git_head(root: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                          text=True, check=True).stdout.strip()


def test_same_seed_gives_identical_tree_and_commit_across_hash_seed_and_locale(
        vault: tuple[Path, VaultStats], tmp_path: Path) -> None:
    first, stats = vault
    second = tmp_path / "again"
    env = {**os.environ, "PYTHONHASHSEED": "12345", "LC_ALL": "C", "TZ": "Asia/Kolkata",
           "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "bench.generate", str(second), "--notes",
                           "60", "--seed", "7"], cwd=REPO, env=env, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert f"links={stats.links} broken_links={stats.broken_links}" in proc.stdout
    assert tree(first) == tree(second)
    assert git_head(first) == git_head(second)


def test_another_seed_gives_another_vault(vault: tuple[Path, VaultStats],
                                          tmp_path: Path) -> None:
    generate_vault(tmp_path / "other", 60, seed=8, git=False)
    assert tree(vault[0]) != tree(tmp_path / "other")
    assert not (tmp_path / "other" / ".git").exists()


def test_stats_match_the_files(vault: tuple[Path, VaultStats]) -> None:
    root, stats = vault
    files = tree(root)
    md = {rel: b.decode("utf-8") for rel, b in files.items() if rel.endswith(".md")}
    assert stats.notes == len(md) == 60
    assert stats.attachments == sum(rel.startswith("attachments/") for rel in files) > 0
    assert stats.bytes == sum(len(b) for b in files.values())
    found = [link for text in md.values() for link in links_of(text)]
    assert stats.links == len(found)
    # Link-shaped text inside code exists, so the count above really excluded it.
    wiki = sum(style == "wiki" for style, _ in found)
    assert sum(text.count("[[") for text in md.values()) > wiki > 0


def test_only_the_deliberate_links_are_broken(vault: tuple[Path, VaultStats]) -> None:
    root, stats = vault
    bad = unresolved(tree(root))
    assert len(bad) == stats.broken_links >= 1, bad


def test_every_image_embed_has_its_file(vault: tuple[Path, VaultStats]) -> None:
    root, _ = vault
    embeds = [inner.split("|")[0] for p in root.rglob("*.md")
              for style, inner in links_of(p.read_text(encoding="utf-8"))
              if style == "wiki" and inner.split("|")[0].endswith(".png")]
    assert embeds
    for name in embeds:
        assert (root / name).is_file() or (root / "attachments" / name).is_file(), name


def test_vault_has_the_obsidian_features_checkers_need(vault: tuple[Path, VaultStats]) -> None:
    root, _ = vault
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.md")))
    for needle in ("\nup: \"[[", "|", "#^", "![[", "](", "\n```", "\n## ", "\n### ", " #",
                   "\ntags:", "\naliases:"):
        assert needle in text, needle
    assert re.search(r"\[\[[^\]|#]+/[^\]|#]+\]\]", text), "no path-qualified wikilink"
    assert re.search(r"\[\[[^\]|]+#[^\^\]|][^\]|]*\]\]", text), "no heading link"


def test_commit_holds_every_file(vault: tuple[Path, VaultStats]) -> None:
    root, _ = vault
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True,
                            text=True, check=True).stdout
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True,
                            text=True, check=True).stdout.split("\0")
    assert status == ""
    assert sorted(p for p in listed if p) == sorted(tree(root))


def test_refuses_tiny_vaults_and_non_empty_directories(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        generate_vault(tmp_path / "tiny", 5, git=False)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.md").write_text("x", encoding="utf-8")
    with pytest.raises(UsageError):
        generate_vault(tmp_path / "full", 60, git=False)


def test_the_hub_vault_is_deterministic_and_its_hub_the_most_linked(tmp_path: Path) -> None:
    """Issue 40's shape (bench/hubvault.py): the same files every time, one note linked
    from the share asked for, frontmatter on most notes, and `bench.compare` renames the
    hub (its most linked note)."""
    from bench.compare import most_linked
    from bench.hubvault import HUB, hub_files

    files = hub_files(300, 120, seed=7)
    assert files == hub_files(300, 120, seed=7) and len(files) == 300
    texts = {path: data.decode() for path, data in files}
    linking = [p for p, t in texts.items() if p != f"{HUB}.md" and
               re.search(r"\[\[hub topic|Hub%20Topic", t, re.IGNORECASE)]
    assert len(linking) == 120
    assert sum(t.startswith("---\n") for t in texts.values()) > 0.8 * len(texts)
    for path, data in files:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(data)
    assert most_linked(tmp_path)[0] == f"{HUB}.md"
