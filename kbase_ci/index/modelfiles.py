"""A model folder's files as an attacker's input: a committed `models/x/` named by
`.kbase.yml` is the repository's, written by whoever wrote the commit.

Each file is read through the bounded reader (kbase_ci.state.bounded): a regular file
(`config.json -> /dev/zero` made `kbase index`, `search` and `status` read for ever:
issue 38), inside the model's folder, or for a Hugging Face cache snapshot inside its
cached repository (whose snapshot files link into `blobs/`), and under a cap by kind:
settings JSON `SETTINGS_MAX`, a tokenizer `TOKENIZER_MAX`, weights `WEIGHTS_MAX`. Files a
library opens by its path (an ONNX graph, a tokenizer) are checked the same way first
(`check`), when the folder's files are listed (`modelfolder.model_files`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from kbase_ci.state.bounded import check_input, decode_json, input_blocks, read_input

SETTINGS_MAX = 1 << 20
"""A model's JSON settings (`config.json`, `tokenizer_config.json`, ...): a few KB."""
TOKENIZER_MAX = 128 << 20
"""tokenizer.json of a 250k-token multilingual vocabulary is ~17 MB."""
WEIGHTS_MAX = 4 << 30
"""`model.safetensors`, `model*.onnx`: the models kbase runs are 30-500 MB."""


def cap(path: Path) -> int:
    """The size cap of a model file, by its name."""
    if path.name == "tokenizer.json":
        return TOKENIZER_MAX
    return SETTINGS_MAX if path.suffix == ".json" else WEIGHTS_MAX


def tree(folder: Path) -> Path:
    """The folder a model's files must stay in (after following every link): its own, or
    for a cache snapshot (`models--ORG--NAME/snapshots/REV/`) the cached repository."""
    return _tree(os.fspath(folder))


@lru_cache(maxsize=64)
def _tree(folder: str) -> Path:
    # Remembered: a query checks each file of its model twice (hash, load), and each
    # resolution is an lstat per part of the path.
    real = Path(os.path.realpath(folder))
    if real.parent.name == "snapshots" and real.parent.parent.name.startswith("models--"):
        return real.parent.parent
    return real


def check(path: Path, folder: Path) -> int:
    """`path`'s size once it passed the checks (InputRefused otherwise); for a file a
    library will open by path."""
    return check_input(path, cap(path), within=tree(folder))


def read(path: Path, folder: Path) -> bytes:
    """The bytes of model file `path` of `folder`, checked."""
    return read_input(path, cap(path), within=tree(folder))


def blocks(path: Path, folder: Path) -> Iterator[bytes]:
    """The bytes of model file `path` in blocks (hashing), checked."""
    return input_blocks(path, cap(path), within=tree(folder))


def settings(path: Path, folder: Path) -> Any:
    """A JSON settings file of `folder` decoded; InputRefused when it cannot be read or is
    not JSON, FileNotFoundError when it is absent."""
    return decode_json(read(path, folder), str(path))
