"""`kbase index`: deterministic, verifiable index artifacts in `.kbase/`: planned into shards
(`shards`, `sizes`), built per shard (`shardbuild`: paragraph `chunks`, `tokens`,
`bm25files` read by `bm25` (made comparable across shards by `idf`), vectors from the model
a `modelfolder` holds, static `embedder` (its files read by `staticmodel`) or
`transformer`, each distinct text once across shards (`embedplan`), stored by `vectors`,
with an `ann` graph for large shards, and the semantic baseline `cosinebaseline`),
assembled (`assemble`: `tables`, `storednotes`, `similar`, concept `conceptsfile`, the notes
naming each note in `unlinked`, the fusion weights of `ranking`) and swapped in (`swap`),
every file named once in `layout`, the manifest declared once in `manifest` (its blocks in
`blocks`) and decoded only there; read back with `reader` (its files through `indexfolder`)
after its listing, sizes and hashes (`integrity`) and every table (`validation`) are checked,
published with `publish`. The embedding model is found and verified by `modelchoice`
(downloads: kbase_ci.state.downloads), its files read as an attacker's input by
`modelfiles`.

Layout and every field: docs/index-format.md. Entry points: `build.build_index`,
`merge.merge_slices`, `reader.open_index`, `manifest.read_manifest`,
`modelfolder.open_embedder`. numpy, bm25s, tokenizers, onnxruntime and usearch are
imported lazily, only by the functions that need them.
"""

from __future__ import annotations

from kbase_ci.extras import require

require("search", "kbase_ci.index (index builds and queries)")

from kbase_ci.vault.indextables import FORMAT_VERSION  # noqa: E402  (after the guard)

__all__ = ["FORMAT_VERSION"]
