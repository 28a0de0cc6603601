"""Chunk embeddings with a model2vec static model: no torch, no network, ~10k chunks/s.

Which model: `--model PATH`, else `embeddings.model` in `.kbase.yml` (a folder relative
to the vault root, or a Hugging Face id), else `minishlab/potion-base-8M`. An id is only
used when it is already in the local Hugging Face cache: an index build in CI must not
stall on a download, so without the model the build goes on BM25-only and says why.
A folder that is named explicitly but missing is an error, not a silent fallback.
Loading and encoding live in `encoder`, which is imported only when a model is used.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from kbase_ci.errors import ConfigError, UsageError

DEFAULT_MODEL = "minishlab/potion-base-8M"
# Files that change what a model computes; README and model cards do not.
_WEIGHT_FILES = ("config.json", "model.safetensors", "tokenizer.json", "modules.json")


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
                           "or pass --model PATH to a model2vec folder")
    return _local(value, cached)


def _local(name: str, folder: Path) -> ModelChoice:
    h = hashlib.sha256()
    found = False
    for fname in _WEIGHT_FILES:
        p = folder / fname
        if p.is_file():
            found = True
            h.update(fname.encode() + b"\0")
            with p.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
    if not found:
        raise UsageError(f"{folder} is not a model2vec model folder (no model.safetensors)")
    return ModelChoice(name, folder, None, h.hexdigest())


def _hub_cache(model_id: str) -> Path | None:
    """The newest snapshot of `model_id` in the Hugging Face cache, without any download."""
    hub = os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache",
                                                  "huggingface"), "hub")
    snapshots = Path(hub) / f"models--{model_id.replace('/', '--')}" / "snapshots"
    if not snapshots.is_dir():
        return None
    found = sorted((p for p in snapshots.iterdir() if (p / "model.safetensors").is_file()),
                   key=lambda p: (p.stat().st_mtime, p.name))
    return found[-1] if found else None
