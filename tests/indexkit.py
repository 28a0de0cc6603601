"""Helpers for the index tests: a tiny model2vec-format model built on the spot, a small vault,
and byte-level snapshots of index folders."""

from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
from pathlib import Path
from typing import Any

from conftest import GIT_ENV, SHARED

REAL_MODEL = SHARED / "models" / "minilm-static-256"
ONNX_MODEL = SHARED / "models" / "minilm-l6-onnx"

# Words in one group get nearby vectors, so notes about one topic come out similar.
TOPICS = {
    "python": "python context manager contextlib generator decorator import module "
              "function class exception yield",
    "database": "database index query table sql postgres transaction replica shard "
                "schema join",
    "garden": "garden tomato seed soil water compost plant harvest flower bean sun",
}


def write_safetensors(path: Path, tensors: dict[str, Any]) -> None:
    """A safetensors file as the format defines it (8-byte header length, JSON header,
    little-endian data), written here so tests need no safetensors package."""
    import numpy as np

    codes = {"float16": "F16", "float32": "F32", "float64": "F64", "int8": "I8",
             "int32": "I32", "int64": "I64"}
    header: dict[str, Any] = {}
    blobs, at = [], 0
    for name, arr in tensors.items():
        data = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": codes[arr.dtype.name], "shape": list(arr.shape),
                        "data_offsets": [at, at + len(data)]}
        blobs.append(data)
        at += len(data)
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))


def save_static_model(folder: Path, table: Any, tokenizer: Any, *, mapping: Any = None,
                      weights: Any = None, **config: Any) -> Path:
    """A model2vec folder (model.safetensors, tokenizer.json, config.json, modules.json)
    laid out as `StaticModel.save_pretrained` writes it."""
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {"embeddings": table}
    if weights is not None:
        tensors["weights"] = weights
    if mapping is not None:
        tensors["mapping"] = mapping
    write_safetensors(folder / "model.safetensors", tensors)
    tokenizer.save(str(folder / "tokenizer.json"), pretty=False)
    cfg = {"model_type": "model2vec", "architectures": ["StaticModel"], "normalize": True,
           "max_length": 512, "embedding_dtype": table.dtype.name, **config}
    (folder / "config.json").write_text(json.dumps(cfg, indent=4))
    (folder / "modules.json").write_text(json.dumps(
        [{"idx": 0, "name": "0", "path": ".",
          "type": "sentence_transformers.models.StaticEmbedding"}], indent=4))
    return folder


def read_static_table(folder: Path) -> Any:
    """The `embeddings` table of a model2vec folder (float16/32 only: the shared model)."""
    import numpy as np

    raw = (folder / "model.safetensors").read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    entry = json.loads(raw[8:8 + n])["embeddings"]
    start, end = entry["data_offsets"]
    dtype = {"F16": "<f2", "F32": "<f4"}[entry["dtype"]]
    return np.frombuffer(raw[8 + n + start:8 + n + end], dtype=dtype).reshape(entry["shape"])


def quantized_models(src: Path, out: Path) -> dict[str, Path]:
    """`src` saved as a user can download it quantized: `int8` (model2vec's
    `quantize_to="int8"`: one scale, rint, clip to +-127) and `vocab` (vocabulary
    quantization: 97 shared rows, a `mapping` per token and a float32 `weights` per token),
    built deterministically here instead of committing big files."""
    import numpy as np
    from tokenizers import Tokenizer

    table = read_static_table(src)
    tok = Tokenizer.from_file(str(src / "tokenizer.json"))
    scale = np.max(np.abs(table)) / 127.0
    int8 = np.clip(np.rint(table.astype(np.float16) / scale), -127, 127).astype(np.int8)
    full = table.astype(np.float32)
    mapping = (np.arange(len(full), dtype=np.int64) * 7919) % 97
    shared = np.stack([full[mapping == k].mean(0) for k in range(97)]).astype(np.float16)
    weights = np.linalg.norm(full, axis=1).astype(np.float32)
    return {"int8": save_static_model(out / "int8", int8, tok),
            "vocab": save_static_model(out / "vocab", shared, tok, mapping=mapping,
                                       weights=weights, vocabulary_quantization=97)}


def make_tiny_model(folder: Path, dim: int = 16, seed: int = 7) -> Path:
    """A model2vec static model over the topic words (+ a few fillers), saved to `folder`."""
    import numpy as np
    from tokenizers import Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordLevel

    rng = np.random.default_rng(seed)
    words = ["[UNK]", "[PAD]", "the", "and", "notes", "about", "see"]
    rows = [np.zeros(dim), np.zeros(dim), *(rng.normal(0, 0.2, dim) for _ in range(5))]
    for topic in sorted(TOPICS):
        centre = rng.normal(0, 1, dim)
        for w in TOPICS[topic].split():
            if w not in words:
                words.append(w)
                rows.append(centre + rng.normal(0, 0.3, dim))
    vocab = {w: i for i, w in enumerate(words)}
    tok = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return save_static_model(folder, np.asarray(rows, dtype=np.float32), tok)


def small_vault() -> dict[str, str | bytes]:
    return {
        "Home.md": "# Home\n\nStart at [[Python/Context Managers]] and [[Garden/Tomatoes]].\n",
        "Python/Context Managers.md": (
            "---\naliases: [with statement]\ntags: [python]\n---\n"
            "# Context Managers\n\nUse `contextlib.contextmanager` as a decorator on a "
            "generator function.\n\n## Exceptions\n\nThe generator sees the exception at "
            "the yield. See [[Python/Decorators#Basics]] and [[Missing Note]].\n"),
        "Python/Decorators.md": (
            "# Decorators\n\n## Basics\n\nA decorator wraps a function or class; "
            "functools.wraps keeps the module import name. ^wrap-id\n"),
        "Python/Generators.md": (
            "# Generators\n\nA generator function uses yield; python context manager "
            "helpers in contextlib build on generator objects.\n"),
        "Databases/Replicas.md": (
            "# Replicas\n\nA database replica serves query traffic; each shard of a table "
            "has a replica. Use `snake_case` names and `camelCase` in JSON.\n"),
        "Databases/Indexes.md": (
            "# Indexes\n\nA database index speeds a sql query on a postgres table; a join "
            "across a shard needs the schema. See [[Databases/Replicas]].\n"),
        "Garden/Tomatoes.md": (
            "# Tomatoes\n\nPlant tomato seed in compost soil; water the plant in the sun "
            "before the harvest.\n"),
        "Garden/Beans.md": "# Beans\n\nA bean plant likes sun, water and soil; harvest "
                           "the bean before the flower fades.\n",
        "assets/pic.png": b"\x89PNG",
    }


def snapshot(root: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under `root`."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def commit_index_branch(root: Path, files: dict[str, bytes]) -> None:
    """Commit `files` as the `kbase-index` branch of `root` with git plumbing (a temp git
    index, the work tree untouched): how a forger with push access publishes."""
    env = {**os.environ, **GIT_ENV, "GIT_INDEX_FILE": str(root.parent / "forge.idx")}

    def run(*args: str, data: bytes | None = None) -> str:
        return subprocess.run(["git", *args], cwd=root, env=env, input=data, check=True,
                              capture_output=True).stdout.decode().strip()

    for rel, data in sorted(files.items()):
        sha = run("hash-object", "-w", "--stdin", data=data)
        run("update-index", "--add", "--cacheinfo", f"100644,{sha},{rel}")
    tree = run("write-tree")
    run("update-ref", "refs/heads/kbase-index", run("commit-tree", tree, "-m", "forged"))
    os.unlink(env["GIT_INDEX_FILE"])
