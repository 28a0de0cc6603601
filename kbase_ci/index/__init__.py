"""`kbase index`: deterministic, verifiable index artifacts in `.kbase/`.

Layout and every field: docs/index-format.md. Entry points: `build.build_index`,
`merge.merge_slices`, `reader.open_index`, `manifest.read_manifest`. numpy, bm25s,
and model2vec are imported lazily, only by the functions that need them.
"""

from __future__ import annotations

from .manifest import FORMAT_VERSION

__all__ = ["FORMAT_VERSION"]
