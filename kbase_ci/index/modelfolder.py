"""A model folder: which kind of embedding model it holds, the files that decide what it
computes, and the embedder that runs it.

Two kinds, told apart by their files:
- **static** (a model2vec folder): `model.safetensors` + `tokenizer.json`; a vector is the
  mean of the text's token vectors (`embedder.Embedder`, ~10k chunks/s, read by kbase:
  `staticmodel`).
- **transformer** (ONNX sentence-embedding model): a `model*.onnx` (in the folder or its
  `onnx/` subfolder) + `tokenizer.json`, as Hugging Face repositories such as
  `sentence-transformers/all-MiniLM-L6-v2` or `BAAI/bge-small-en-v1.5` ship them and
  fastembed caches them; run with onnxruntime (`transformer.TransformerEmbedder`,
  60-90 chunks/s per core on real notes, ranks paraphrased questions better).

How a folder is *found* (a `--model` path, `embeddings.model`, a hub cache) is
`modelchoice`'s business; this module only needs the folder. Both embedders import
their libraries (numpy, onnxruntime) when a model is loaded, never on `kbase check`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from kbase_ci.errors import ModelRefused, UsageError
from kbase_ci.index import modelfiles
from kbase_ci.index.embedder import Embedder
from kbase_ci.index.fence import fenced
from kbase_ci.index.transformer import TransformerEmbedder, onnx_file

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

STATIC = "model2vec"
TRANSFORMER = "onnx"
_STATIC_FILES = ("config.json", "model.safetensors", "tokenizer.json", "modules.json")
# Files beside an ONNX model that change what it computes (README and cards do not).
_TRANSFORMER_FILES = ("tokenizer.json", "config.json", "tokenizer_config.json",
                      "special_tokens_map.json", "sentence_bert_config.json",
                      "config_sentence_transformers.json", "1_Pooling/config.json")
class TextEmbedder(Protocol):
    """What the index build and search need of a model."""

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str], *, query: bool = False
               ) -> npt.NDArray[np.float16]:
        """Unit-length rows as float16 (zero rows for text the model knows nothing of);
        `query`: the texts are search queries (some models prefix those)."""
        ...


def model_kind(folder: Path) -> str | None:
    """STATIC, TRANSFORMER, or None when the folder holds neither. A Hugging Face
    repository of a transformer often has both its PyTorch `model.safetensors` and
    `onnx/model*.onnx`: the ONNX model wins unless `config.json` says model2vec.
    InputRefused when `config.json` is no file kbase reads (kbase_ci.index.modelfiles)."""
    if onnx_file(folder) is not None and _config_type(folder) != "model2vec":
        return TRANSFORMER
    if (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file():
        return STATIC
    return None


def _config_type(folder: Path) -> str | None:
    try:
        data = modelfiles.settings(folder / "config.json", folder)
    except FileNotFoundError:
        return None
    kind = data.get("model_type") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) else None


def model_files(folder: Path) -> list[Path]:
    """The files whose bytes decide the vectors (what the manifest's `sha256` covers), in
    a fixed order, each checked as kbase_ci.index.modelfiles says (InputRefused: a
    FIFO, a device, a link out of the folder, a file above its cap); raises UsageError
    for a folder that holds no model."""
    kind = model_kind(folder)
    if kind == STATIC:
        return _checked(folder, [folder / n for n in _STATIC_FILES])
    if kind == TRANSFORMER:
        model = onnx_file(folder)
        assert model is not None
        return _checked(folder, [model, *(folder / n for n in _TRANSFORMER_FILES)])
    raise UsageError(f"{folder} is not an embedding model folder: expected a model2vec "
                     "model (model.safetensors + tokenizer.json) or an ONNX sentence model "
                     "(model*.onnx + tokenizer.json)")


def _checked(folder: Path, paths: list[Path]) -> list[Path]:
    """`paths` that exist (a link counts: one to a device or out of the folder is
    refused, not skipped), each checked."""
    out = []
    for path in paths:
        if not os.path.lexists(path):
            continue
        try:
            modelfiles.check(path, folder)
        except FileNotFoundError:  # a link to nothing: absent, as before
            continue
        out.append(path)
    return out


def library(kind: str | None) -> str | None:
    """What runs a model of `kind` (the manifest's `embeddings.library`)."""
    return {STATIC: "kbase", TRANSFORMER: "onnxruntime"}.get(kind or "")


STATIC_ENCODER = 2
"""Bumped when the static encoder's vectors change for a model: 2, kbase reads int8 and
vocabulary-quantized tables itself (model2vec computed those before, in float32)."""


def encoder_key(kind: str | None) -> str:
    """What a shard's model key adds for `kind`: a changed encoder rebuilds shards
    instead of mixing old and new vectors."""
    return f"/static{STATIC_ENCODER}" if kind == STATIC else ""


def open_embedder(folder: Path, dim: int | None = None, *, threads: int = 1) -> TextEmbedder:
    """The embedder for the model in `folder`, keeping its first `dim` dimensions
    (`embeddings.dim`; None: all). `threads`: onnxruntime's threads for a transformer
    (vectors do not depend on it; a build runs one per worker process). Fenced: any
    failure of the libraries that load or run it is a ModelRefused (kbase_ci.index.fence),
    and so is an answer of the wrong shape or with a NaN."""
    kind = model_kind(folder)
    model_files(folder)  # every file a library opens by path checked first
    if kind == STATIC:
        return Fenced(folder, lambda: Embedder(folder, dim))
    if kind == TRANSFORMER:
        return Fenced(folder, lambda: TransformerEmbedder(folder, dim, threads=threads))
    raise AssertionError("unreachable: model_files raised what a model folder holds")


def load_index_model(folder: Path, dim: int | None) -> tuple[TextEmbedder | None, str | None]:
    """For a query: the index's model loaded, or None and the notice saying why not (a
    model that fails to load is refused, and the query ranks by BM25)."""
    try:
        return open_embedder(folder, dim), None
    except UsageError as exc:
        return None, f"{exc}: ranked by BM25 only"


class Fenced:
    """A loaded model whose every call goes through `fence.fenced` (state: the model)."""

    def __init__(self, folder: Path, load: Callable[[], TextEmbedder]) -> None:
        self.folder = folder
        self._model = fenced(f"cannot load the embedding model in {folder}", load,
                             ModelRefused)

    @property
    def dim(self) -> int:
        return self._model.dim

    def encode(self, texts: Sequence[str], *, query: bool = False
               ) -> npt.NDArray[np.float16]:
        import numpy as np

        what = f"the embedding model in {self.folder} failed"
        out = fenced(what, lambda: self._model.encode(texts, query=query), ModelRefused)
        if not isinstance(out, np.ndarray) or out.shape != (len(texts), self.dim) or \
                not bool(np.isfinite(out).all()):
            raise ModelRefused(f"{what}: it gave {getattr(out, 'shape', type(out).__name__)}"
                               f", not {len(texts)} finite rows of {self.dim} numbers")
        return out
