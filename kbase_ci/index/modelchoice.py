"""Which embedding model an index uses: a model2vec (static) or ONNX (transformer) folder,
told apart by its files (`modelfolder`); no torch, no network.

Which model: `--model PATH`, else `embeddings.model` in `.kbase.yml` (a folder relative
to the vault root, or a Hugging Face id), else `minishlab/potion-base-8M`. An id is only
used when it is already in the local Hugging Face cache: an index build in CI must not
stall on a download, so without the model the build goes on BM25-only and says why.
A folder that is named explicitly but missing is an error, not a silent fallback.
Loading and encoding live in `modelfolder.open_embedder`, imported only when a model is
used.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from kbase_ci.errors import ConfigError, UsageError
from kbase_ci.index.modelfolder import model_files, model_kind

DEFAULT_MODEL = "minishlab/potion-base-8M"


@dataclass(frozen=True, slots=True)
class ModelChoice:
    id: str | None
    """What the manifest calls the model: the id, or the folder as configured."""
    path: Path | None
    """Local folder to load; None when there are no embeddings."""
    reason: str | None
    """Why there are no embeddings (None when there are)."""
    sha256: str | None = None
    """Digest of the model's weight files: shards embedded by another model are rebuilt."""
    kind: str | None = None
    """`modelfolder.STATIC` or `modelfolder.TRANSFORMER` (None without embeddings)."""


def choose_model(root: Path, configured: str | None, option: Path | None) -> ModelChoice:
    if option is not None:
        folder = option.expanduser()
        if not folder.is_dir():
            raise UsageError(f"--model: no model folder at {option}")
        return _local(folder.name, folder)
    if configured is None or not configured.strip():
        return ModelChoice(None, None, "embeddings are disabled (`embeddings.model` is null)")
    value = configured.strip()
    folder = Path(value).expanduser()
    folder = folder if folder.is_absolute() else root / folder
    if folder.is_dir():
        return _local(value, folder)
    if value.startswith((".", "/", "~")) or value.count("/") != 1:
        raise ConfigError(f"`embeddings.model`: no model folder at {value}")
    cached = _hub_cache(value)
    if cached is None:
        return ModelChoice(value, None, f"embedding model {value} is not available offline "
                           "(not in the local Hugging Face cache); set `embeddings.model` "
                           "or pass --model PATH to a model2vec or ONNX model folder")
    return _local(value, cached)


def _local(name: str, folder: Path) -> ModelChoice:
    h = hashlib.sha256()
    for p in model_files(folder):  # raises UsageError for a folder without a model
        h.update(p.relative_to(folder).as_posix().encode() + b"\0")
        with p.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return ModelChoice(name, folder, None, h.hexdigest(), model_kind(folder))


def _hub_cache(model_id: str) -> Path | None:
    """The newest snapshot of `model_id` in the Hugging Face cache, without any download."""
    hub = os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache",
                                                  "huggingface"), "hub")
    snapshots = Path(hub) / f"models--{model_id.replace('/', '--')}" / "snapshots"
    if not snapshots.is_dir():
        return None
    found = sorted((p for p in snapshots.iterdir() if model_kind(p) is not None),
                   key=lambda p: (p.stat().st_mtime, p.name))
    return found[-1] if found else None
