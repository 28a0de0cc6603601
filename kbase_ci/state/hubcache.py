"""Models in the local Hugging Face hub cache, and whether the network may be used.

The cache has the hub's own layout (`HF_HUB_CACHE`, else `HF_HOME/hub`, else
`~/.cache/huggingface/hub`): `models--ORG--NAME/blobs/<etag>` holds the bytes,
`snapshots/<commit>/<file>` links to them and `refs/main` names the commit, so a model
downloaded by kbase (kbase_ci.state.downloads) is found by other tools, and theirs by
kbase. Reading it needs no import of huggingface_hub: that import costs 250-330 ms,
more than a whole query, and a query looks its model up here every time.

A snapshot counts when it holds every file its kind needs (`KIND_FILES`). A download
fetches a kind's required files after its optional ones, so an interrupted one never
looks complete.

`offline()`: `--offline` or `KBASE_OFFLINE=1` mean no network at all (no download, no
index branch fetch); `HF_HUB_OFFLINE=1`, the hub libraries' own switch, means no
download (`hub_offline()`). Both are read when asked, not at import.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from kbase_ci.state.bounded import read_input

KIND_FILES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "model2vec": (("config.json", "model.safetensors", "tokenizer.json"), ("modules.json",)),
    # An ONNX sentence model as sentence-transformers and BAAI publish theirs: the
    # export under onnx/, the tokenizer and the settings that change pooling and cuts.
    "onnx": (("tokenizer.json", "onnx/model.onnx"),
             ("config.json", "tokenizer_config.json", "special_tokens_map.json",
              "sentence_bert_config.json", "config_sentence_transformers.json",
              "1_Pooling/config.json")),
}
"""Per model kind (kbase_ci.index.modelfolder): the files a download needs, and those it
takes when the hub has them. A download of an id of unknown kind reads `config.json`
first (kbase_ci.state.downloads)."""
ENDPOINT = "https://huggingface.co"
_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")


def _set(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def offline() -> bool:
    """Whether kbase must not use the network (`--offline` sets KBASE_OFFLINE)."""
    return _set("KBASE_OFFLINE")


def hub_offline() -> bool:
    """Whether models must not be downloaded."""
    return offline() or _set("HF_HUB_OFFLINE")


def endpoint() -> str:
    """The hub to download from: `HF_ENDPOINT`, else huggingface.co."""
    return (os.environ.get("HF_ENDPOINT") or ENDPOINT).rstrip("/")


def is_hub_id(value: str) -> bool:
    """`org/name`: a hub id, not a path (paths start with `.`, `/` or `~`, or have more
    than one `/`)."""
    return bool(_ID.fullmatch(value)) and not value.startswith((".", "/", "~"))


def cache_root() -> Path:
    hub = os.environ.get("HF_HUB_CACHE")
    if hub:
        return Path(hub)
    home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache",
                                                     "huggingface")
    return Path(home) / "hub"


def repo_dir(model_id: str) -> Path:
    return cache_root() / f"models--{model_id.replace('/', '--')}"


def complete(folder: Path, kind: str | None) -> bool:
    """Whether `folder` holds every file `kind` needs (None: the files of some kind)."""
    kinds = [KIND_FILES[kind][0]] if kind in KIND_FILES else \
        [need for need, _ in KIND_FILES.values()]
    return any(all((folder / f).is_file() for f in need) for need in kinds)


def cached(model_id: str, kind: str | None = "model2vec") -> Path | None:
    """The snapshot of `model_id` that `refs/main` names, else the newest one, holding
    the files its kind (None: any kind) needs; None when the cache has none."""
    repo = repo_dir(model_id)
    snapshots = repo / "snapshots"
    if not snapshots.is_dir():
        return None
    found = [p for p in snapshots.iterdir() if complete(p, kind)]
    try:
        main = read_input(repo / "refs" / "main", 1024).decode("utf-8", "replace").strip()
    except OSError:  # InputRefused included: a revision is 40 characters
        main = ""
    found.sort(key=lambda p: (p.name == main, p.stat().st_mtime, p.name))
    return found[-1] if found else None
