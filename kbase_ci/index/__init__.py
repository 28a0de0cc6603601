"""`kbase index`: deterministic, verifiable index artifacts in `.kbase/`: planned into
shards (`shards`, `sizes`), built per shard (`shardbuild`: `chunks`, `tokens`, `bm25`,
`embedder`, `vectors`, `background`), assembled (`assemble`: `tables`, `notetable`,
`similar`, `mentions`) and swapped in (`swap`), every file named once in `layout`; read
back with `reader` after its listing, sizes and hashes (`integrity`) and every table
(`schema`) are checked, published with `publish`. The embedding model is found and
verified by `modelchoice` (downloads: `modelhub`).

Layout and every field: docs/index-format.md. Entry points: `build.build_index`,
`merge.merge_slices`, `reader.open_index`, `manifest.read_manifest`. numpy, bm25s,
and model2vec are imported lazily, only by the functions that need them.
"""

from __future__ import annotations

from kbase_ci.index.manifest import FORMAT_VERSION

__all__ = ["FORMAT_VERSION"]
