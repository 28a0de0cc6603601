"""Text to vectors with an ONNX sentence-embedding model (the transformer tier): tokenizers
turns text into ids, onnxruntime runs the model, the token states are pooled as the
model's sentence-transformers configuration says (mean over the attention mask unless
`1_Pooling/config.json` asks for the CLS token), then normalised. No torch.

One text per model call. Int8 models quantize their activations with a scale taken from
the whole input batch, so a chunk's vector depended on which chunks shared its batch
(components differed by up to 0.2 between batches of 1 and of 32); an incremental build,
a `--shard` slice and a full build must give the same bytes. Measured on 2 cores
(../shared/models/minilm-l6-onnx, paragraph chunks of ~44 tokens): batches of 32 sorted
by length ran at 118 chunks/s per thread, batches of 1 at 116, so determinism costs
nothing: short texts waste no padding. Vectors did not depend on the thread count.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.errors import InputRefused, UsageError
from kbase_ci.extras import require
from kbase_ci.index import modelfiles

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_MAX_TOKENS = 256
"""Where texts are cut when the model folder does not say (sentence-transformers cuts
all-MiniLM-L6-v2 at 256): a paragraph chunk is at most ~1,000 characters (~250 tokens);
longer ones are code, whose tail says little."""
_POOLING = "1_Pooling/config.json"
# Which ONNX file of a folder runs: an int8 export first (about 3x faster on a CPU than
# float32 and, measured on our question sets, as good), then the plain export.
_ONNX_PREFERENCE = ("model_quantized.onnx", "model_int8.onnx", "model.onnx",
                    "model_optimized.onnx")


def onnx_file(folder: Path) -> Path | None:
    """The ONNX model of a transformer folder, or None."""
    found = [p for d in (folder, folder / "onnx") if d.is_dir()
             for p in sorted(d.glob("model*.onnx")) if p.is_file()]
    if not found or not (folder / "tokenizer.json").is_file():
        return None
    rank = {name: i for i, name in enumerate(_ONNX_PREFERENCE)}
    # Deterministic: by preference, then the folder itself before onnx/, then by name.
    return min(found, key=lambda p: (rank.get(p.name, len(rank)), p.parent != folder,
                                     p.name))


def _json(folder: Path, name: str) -> dict[str, Any]:
    """A settings file of the model (absent: {}), read as an attacker's input
    (kbase_ci.index.modelfiles: a FIFO, a device or a file above 1 MiB is refused)."""
    path = folder / name
    try:
        data = modelfiles.settings(path, folder)
    except FileNotFoundError:
        return {}
    except InputRefused:
        raise  # its message names the file; a UsageError
    except OSError as exc:
        raise UsageError(f"{path}: unreadable model configuration: "
                         f"{exc.strerror or exc}") from None
    return data if isinstance(data, dict) else {}


def max_tokens(folder: Path) -> int:
    """Where texts are cut: the sentence-transformers setting (`max_seq_length`), else
    `_MAX_TOKENS`; never past the tokenizer's and the model's own limits."""
    seq = _json(folder, "sentence_bert_config.json").get("max_seq_length")
    limits = [seq if isinstance(seq, int) and seq > 0 else _MAX_TOKENS]
    for value in (_json(folder, "tokenizer_config.json").get("model_max_length"),
                  _json(folder, "config.json").get("max_position_embeddings")):
        if isinstance(value, int) and value > 0:
            limits.append(value)
    return min(limits)


def pooling(folder: Path) -> str:
    """`mean` or `cls`, from the sentence-transformers pooling settings (mean without)."""
    cfg = _json(folder, _POOLING)
    if cfg.get("pooling_mode_cls_token"):
        return "cls"
    modes = [k for k, v in cfg.items() if k.startswith("pooling_mode_") and v]
    if modes and modes != ["pooling_mode_mean_tokens"]:
        raise UsageError(f"{folder / _POOLING}: pooling {', '.join(modes)} is not supported "
                         "(kbase pools by mean or CLS token)")
    return "mean"


def query_prefix(folder: Path) -> str:
    """What the model wants before a search query (sentence-transformers `prompts`)."""
    prompts = _json(folder, "config_sentence_transformers.json").get("prompts")
    got = prompts.get("query") if isinstance(prompts, dict) else None
    return got if isinstance(got, str) else ""


class TransformerEmbedder:
    """A loaded ONNX model (state: the session and the tokenizer)."""

    def __init__(self, folder: Path, dim: int | None = None, *, threads: int = 1) -> None:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        model = onnx_file(folder)
        if model is None:
            raise UsageError(f"{folder}: no model*.onnx and tokenizer.json")
        require("transformer", f"the transformer model in {folder}")
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.pooling = pooling(folder)
        self.max_tokens = max_tokens(folder)
        self.prefix = query_prefix(folder)
        try:
            tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
            # Exports often save padding to a fixed length: one text at a time needs none.
            tok.no_padding()
            tok.enable_truncation(self.max_tokens)
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = max(1, threads)
            opts.inter_op_num_threads = 1
            opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            # A waiting onnxruntime thread spins by default: on a machine whose cores are
            # busy (CI runners, the build's own workers) 2 intra-op threads cost 1.66x
            # the CPU of one, 1.08x without spinning (issue 40). One thread per process
            # (workers give the parallelism), and none spins should `threads` be more.
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
            opts.log_severity_level = 3
            session = ort.InferenceSession(str(model), opts,
                                           providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime and tokenizers raise many kinds
            raise UsageError(f"cannot load embedding model from {folder}: {exc}") from exc
        self._tok = tok
        self._session = session
        self._inputs = {i.name for i in session.get_inputs()}
        if "input_ids" not in self._inputs:
            raise UsageError(f"{model}: the model has no `input_ids` input")
        outputs = [o.name for o in session.get_outputs()]
        self._pooled = "sentence_embedding" in outputs
        self._output = "sentence_embedding" if self._pooled else outputs[0]
        width = int(self._run("dimension probe").shape[-1])
        if dim is not None and not 0 < dim <= width:
            raise UsageError(f"embeddings.dim must be between 1 and the model's {width}, "
                             f"not {dim}")
        self._dim = width if dim is None else dim

    @property
    def dim(self) -> int:
        return self._dim

    def _run(self, text: str) -> npt.NDArray[np.float64]:
        """The pooled, unnormalised vector of one text (float64)."""
        import numpy as np

        enc = self._tok.encode(text)
        ids = np.asarray([enc.ids], dtype=np.int64)
        feed = {"input_ids": ids}
        if "attention_mask" in self._inputs:
            feed["attention_mask"] = np.asarray([enc.attention_mask], dtype=np.int64)
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.asarray([enc.type_ids], dtype=np.int64)
        out = np.asarray(self._session.run([self._output], feed)[0], dtype=np.float64)
        if self._pooled:
            pooled: npt.NDArray[np.float64] = out[0]
        elif self.pooling == "cls":
            pooled = out[0, 0]
        else:  # one unpadded text: every token counts
            pooled = out[0].mean(axis=0)
        return pooled

    def encode(self, texts: Sequence[str], *, query: bool = False
               ) -> npt.NDArray[np.float16]:
        """Unit-length rows as float16; `query`: prefix the model's query prompt."""
        import numpy as np

        out = np.zeros((len(texts), self._dim), dtype=np.float64)
        for i, text in enumerate(texts):
            if text.strip():
                out[i] = self._run(self.prefix + text if query else text)[:self._dim]
        norms = np.sqrt(np.einsum("ij,ij->i", out, out))[:, None]
        unit = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
        half: npt.NDArray[np.float16] = unit.astype(np.float16)
        return half
