"""Incremental builds reuse the previous index's links table and concepts table instead of
recomputing them; what they write must be exactly what a fresh build of the same commit
writes, whatever the edit did to headings, links, unresolved targets and concept terms."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git, write
from indexkit import ONNX_MODEL, make_tiny_model, snapshot

from kbase_ci.index.assemble import link_inputs
from kbase_ci.index.conceptsfile import _patched
from kbase_ci.index.indexbuild import build_index
from kbase_ci.index.linkdelta import patched_links
from kbase_ci.index.manifest import read_manifest
from kbase_ci.index.previous import PreviousIndex
from kbase_ci.index.tables import links_table
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.scanner import scan

MakeRepo = Callable[..., Path]

VAULT: dict[str, str | bytes] = {
    "Alpha.md": "# Alpha\n\nSee [[Beta#Setup]] and [[Gamma]]. Uses `compost.heap`.\n",
    "Beta.md": "# Beta\n\n## Setup\n\nSteps. Back to [[Alpha]] and [[Nowhere]].\n",
    "Gamma.md": "# Gamma\n\nGamma links [[Beta#Missing]] and [[Delta]]. `compost.heap`\n",
    "Delta.md": "# Delta\n\nDelta mentions [[Ghost]] twice: [[Ghost]]. `compost.heap`\n",
    "Epsilon.md": "# Epsilon\n\nLinks [[Zeta]], [[Ghost]] and ![[pic.png]].\n",
    "Zeta.md": "# Zeta\n\n## Usage\n\nZeta talks about Apache Kafka and Apache Kafka.\n",
    "Eta.md": "# Eta\n\nEta links [[Zeta#Usage]] and [[Alpha]]. Apache Kafka again.\n",
    "Theta.md": "# Theta\n\nTheta has no links. `other.term` here.\n",
    "pic.png": b"\x89PNG\r\n",
}

EDITS: dict[str, dict[str, str | bytes]] = {
    # Beta loses `## Setup` (Alpha's anchor breaks) and gains `## Missing` (Gamma's works),
    # and now has more links, so every later link number moves.
    "headings": {"Beta.md": "# Beta\n\n## Missing\n\nNow [[Alpha]], [[Gamma]], [[Nowhere]], "
                            "[[Ghost]] and [[Also Nowhere]].\n"},
    # Delta's links go: the unresolved `Ghost` keeps only the references of others.
    "fewer links": {"Delta.md": "# Delta\n\nNo links left. `compost.heap`\n"},
    # A new backticked term appears: the concept terms are numbered again.
    "new term": {"Theta.md": "# Theta\n\nTheta has `brand.new` and `other.term`.\n"},
}


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_model(tmp_path_factory.mktemp("model") / "tiny")


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_incremental_build_equals_a_fresh_one(make_repo: MakeRepo, tiny_model: Path,
                                              edit: str) -> None:
    root = make_repo(VAULT)
    build_index(Vault(root), root / ".kbase", model=tiny_model)
    write(root, EDITS[edit])
    git(root, "commit", "-qam", edit)
    build_index(Vault(root), root / ".kbase", model=tiny_model)
    build_index(Vault(root), root.parent / "fresh", model=tiny_model)
    assert snapshot(root / ".kbase") == snapshot(root.parent / "fresh")


@pytest.mark.parametrize("tier", ["static", "transformer"])
def test_a_rebuilt_shard_embeds_only_its_changed_notes(make_repo: MakeRepo,
                                                      tiny_model: Path,
                                                      tmp_path: Path, tier: str) -> None:
    # One domain, one shard: editing Beta rebuilds it, but the other notes' vector rows
    # are copied from the previous build; the bytes equal a fresh build's. Both tiers:
    # a transformer embeds each chunk alone, so a copied row is the row it would compute.
    model = tiny_model if tier == "static" else ONNX_MODEL
    if not model.is_dir():
        pytest.skip(f"{model} absent")
    root = make_repo(VAULT)
    first = build_index(Vault(root), root / ".kbase", model=model)
    assert first.embedded == first.manifest.counts.chunks
    write(root, EDITS["headings"])
    git(root, "commit", "-qam", "edit")
    again = build_index(Vault(root), root / ".kbase", model=model)
    fresh = build_index(Vault(root), tmp_path / "fresh", model=model)
    beta = 2  # Beta's new text: the `## Missing` heading and its paragraph
    assert again.shards_built and again.embedded == beta < fresh.embedded
    assert snapshot(root / ".kbase") == snapshot(tmp_path / "fresh")
    # Another model: nothing of the previous vectors is reused.
    other = make_tiny_model(tmp_path / "other", seed=8)
    swapped = build_index(Vault(root), root / ".kbase", model=other)
    assert swapped.embedded == swapped.manifest.counts.chunks


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_patched_links_equal_resolving_everything(make_repo: MakeRepo, edit: str) -> None:
    root = make_repo(VAULT)
    build_index(Vault(root), root / ".kbase")
    previous = PreviousIndex(root / ".kbase", read_manifest(root / ".kbase"))
    write(root, EDITS[edit])
    git(root, "commit", "-qam", edit)
    vault = Vault(root)
    notes, _ = scan(vault)
    key = link_inputs(notes, vault.files, True)
    got = patched_links(previous, notes, vault.files, True, key,
                        {nf.path: nf.sha for nf in vault.notes})
    assert got is not None  # same names, one note of eight changed: the table is reused
    assert got == links_table(notes, vault.files)


def test_links_are_resolved_again_when_names_change(make_repo: MakeRepo) -> None:
    root = make_repo(VAULT)
    build_index(Vault(root), root / ".kbase")
    previous = PreviousIndex(root / ".kbase", read_manifest(root / ".kbase"))
    write(root, {"Ghost.md": "# Ghost\n\nNow it exists.\n"})
    git(root, "add", "-A")
    git(root, "commit", "-qm", "ghost")
    vault = Vault(root)
    notes, _ = scan(vault)
    key = link_inputs(notes, vault.files, True)
    assert patched_links(previous, notes, vault.files, True, key,
                         {nf.path: nf.sha for nf in vault.notes}) is None


def test_concepts_table_is_patched_only_while_terms_stay_the_same(make_repo: MakeRepo
                                                                  ) -> None:
    root = make_repo(VAULT)
    build_index(Vault(root), root / ".kbase")
    previous = PreviousIndex(root / ".kbase", read_manifest(root / ".kbase"))

    def patched_after(files: dict[str, str | bytes]) -> object:
        write(root, files)
        git(root, "commit", "-qam", "edit")
        vault = Vault(root)
        notes, _ = scan(vault)
        return _patched(vault, [n.path for n in notes],
                        [[h.text for h in n.headings] for n in notes], previous)

    assert patched_after(EDITS["fewer links"]) is not None
    assert patched_after(EDITS["new term"]) is None


def test_note_sizes_from_the_previous_index_equal_gits(make_repo: MakeRepo) -> None:
    from kbase_ci.index.sizes import note_sizes

    root = make_repo({**VAULT, "big.md": "# Big\n\n" + "word " * 5000 + "\n",
                      "bin.md": b"\x00\x01binary\x00"})
    build_index(Vault(root), root / ".kbase")
    write(root, EDITS["headings"])
    git(root, "commit", "-qam", "edit")
    previous = PreviousIndex(root / ".kbase", read_manifest(root / ".kbase"))
    known = previous.blob_sizes()
    vault = Vault(root)
    assert len(known) == len([p for p in VAULT if p.endswith(".md")]) + 2
    assert note_sizes(vault, known) == note_sizes(vault)
    # The edited note's new blob is not known: git is asked about it.
    assert {n.sha for n in vault.notes if n.path == "Beta.md"}.isdisjoint(known)
