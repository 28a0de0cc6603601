"""Helpers for the index tests: a tiny model2vec model built on the spot, a small vault,
and byte-level snapshots of index folders."""

from __future__ import annotations

import hashlib
from pathlib import Path

from conftest import SHARED

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


def make_tiny_model(folder: Path, dim: int = 16, seed: int = 7) -> Path:
    """A model2vec StaticModel over the topic words (+ a few fillers), saved to `folder`."""
    import numpy as np
    from model2vec import StaticModel
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
    model = StaticModel(np.asarray(rows, dtype=np.float32), tok, normalize=True)
    model.save_pretrained(folder)
    return folder


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
