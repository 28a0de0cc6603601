"""Models from a Hugging Face-style hub: found in the local hub cache, or downloaded into
it once, with a progress bar, when the network may be used.

The cache has the hub's own layout (`HF_HUB_CACHE`, else `HF_HOME/hub`, else
`~/.cache/huggingface/hub`): `models--ORG--NAME/blobs/<etag>` holds the bytes,
`snapshots/<commit>/<file>` links to them and `refs/main` names the commit, so a model
downloaded here is found by other tools, and theirs by kbase. Files come from
`HF_ENDPOINT` (default https://huggingface.co) at `/{id}/resolve/main/{file}`; only the
files a model's kind needs are fetched (`KIND_FILES`), each written beside its final
name and renamed into place, so an interrupted download never looks complete.

`offline()`: `--offline` or `KBASE_OFFLINE=1` mean no network at all (no download, no
index branch fetch); `HF_HUB_OFFLINE=1`, the hub libraries' own switch, means no
download (`hub_offline()`).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kbase_ci.errors import UsageError

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
first (`_config_kind`)."""
ENDPOINT = "https://huggingface.co"
TIMEOUT = 15.0
"""Seconds to wait for the hub to answer (connect or read) before going on offline."""
_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")
_CHUNK = 1 << 20


def _set(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def offline() -> bool:
    """Whether kbase must not use the network (`--offline` sets KBASE_OFFLINE)."""
    return _set("KBASE_OFFLINE")


def hub_offline() -> bool:
    """Whether models must not be downloaded."""
    return offline() or _set("HF_HUB_OFFLINE")


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


def _repo_dir(model_id: str) -> Path:
    return cache_root() / f"models--{model_id.replace('/', '--')}"


def cached(model_id: str, kind: str | None = "model2vec") -> Path | None:
    """The snapshot of `model_id` that `refs/main` names, else the newest one, holding
    the files its kind (None: any kind) needs; None when the cache has none."""
    repo = _repo_dir(model_id)
    snapshots = repo / "snapshots"
    if not snapshots.is_dir():
        return None
    kinds = [KIND_FILES[kind][0]] if kind in KIND_FILES else \
        [need for need, _ in KIND_FILES.values()]
    found = [p for p in snapshots.iterdir()
             if any(all((p / f).is_file() for f in need) for need in kinds)]
    try:
        main = (repo / "refs" / "main").read_text(encoding="utf-8").strip()
    except OSError:
        main = ""
    found.sort(key=lambda p: (p.name == main, p.stat().st_mtime, p.name))
    return found[-1] if found else None


def download(model_id: str, kind: str | None = "model2vec") -> Path:
    """Fetch `model_id` into the hub cache and return its snapshot folder (`kind` None:
    as its `config.json` says). UsageError when the network is off, the hub cannot be
    reached, or it lacks a needed file."""
    from urllib.error import HTTPError, URLError
    from urllib.parse import quote
    from urllib.request import Request, urlopen

    if hub_offline():
        raise UsageError("offline (--offline, KBASE_OFFLINE or HF_HUB_OFFLINE): not "
                         "downloaded")
    base = os.environ.get("HF_ENDPOINT", ENDPOINT).rstrip("/")
    repo = _repo_dir(model_id)
    commit = ""
    got: dict[str, Path] = {}
    probe = kind not in KIND_FILES
    kind = kind if kind in KIND_FILES else "model2vec"
    names = ["config.json"] if probe else [*KIND_FILES[kind][0], *KIND_FILES[kind][1]]
    while names:
        name = names.pop(0)
        url = f"{base}/{quote(model_id)}/resolve/main/{quote(name)}"
        try:
            with urlopen(Request(url, headers={"User-Agent": "kbase-ci"}),
                         timeout=TIMEOUT) as resp:
                commit = commit or _safe(resp.headers.get("X-Repo-Commit") or "")
                etag = _safe((resp.headers.get("X-Linked-Etag") or resp.headers.get("ETag")
                              or "").strip('"W/'))
                size = int(resp.headers.get("Content-Length") or 0)
                got[name] = _store(resp, repo / "blobs", etag, f"{model_id} {name}", size)
        except HTTPError as exc:
            if exc.code != 404 or not (probe or name in KIND_FILES[kind][1]):
                raise UsageError(f"cannot download {model_id} from {base}: {name}: HTTP "
                                 f"{exc.code}") from None
        except (URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise UsageError(f"cannot reach {base} to download {model_id}: {reason}") from None
        if probe:  # the kind from config.json, then the rest of that kind's files
            probe, kind = False, _config_kind(got.get(name))
            names = [n for n in (*KIND_FILES[kind][0], *KIND_FILES[kind][1]) if n not in got]
    snap = repo / "snapshots" / (commit or "main")
    snap.mkdir(parents=True, exist_ok=True)
    for name, blob in got.items():
        link = snap / name
        link.parent.mkdir(parents=True, exist_ok=True)  # onnx/model.onnx
        tmp = link.with_name(f".{link.name}.{os.getpid()}.tmp")
        tmp.unlink(missing_ok=True)
        try:
            tmp.symlink_to(os.path.relpath(blob, link.parent))
        except OSError:  # no symlinks here: a copy does
            tmp.write_bytes(blob.read_bytes())
        tmp.replace(link)
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(commit or "main", encoding="utf-8")
    return snap


def _config_kind(config: Path | None) -> str:
    """`onnx` when the repository has no `config.json` or it names a transformer
    architecture (`model_type` other than model2vec: every transformers config has
    one), else `model2vec` (whose older configs name none)."""
    import json

    try:
        data = json.loads(config.read_bytes()) if config is not None else None
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict):
        return "onnx"
    return "model2vec" if data.get("model_type") in (None, "model2vec") else "onnx"


def _safe(text: str) -> str:
    """A header value usable as a file name (hex and word characters only)."""
    return re.sub(r"[^\w.-]", "", text)[:128]


def _store(resp: Any, blobs: Path, etag: str, label: str, size: int) -> Path:
    """Stream `resp` into `blobs/<etag>` (a temp file renamed into place), with a
    progress bar on a terminal and one line otherwise."""
    import hashlib

    blobs.mkdir(parents=True, exist_ok=True)
    tmp = blobs / f".incoming.{os.getpid()}"
    digest = hashlib.sha256()
    with tmp.open("wb") as fh, _progress(label, size) as advance:
        while block := resp.read(_CHUNK):
            fh.write(block)
            digest.update(block)
            advance(len(block))
    final = blobs / (etag or digest.hexdigest())
    tmp.replace(final)
    return final


class _progress:
    """A rich progress bar on stderr when it is a terminal, else one line per file
    (state: the bar while it is shown)."""

    def __init__(self, label: str, size: int) -> None:
        self.label, self.size = label, size
        self._bar: Any = None

    def __enter__(self) -> Callable[[int], None]:
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import DownloadColumn, Progress, TransferSpeedColumn

            bar = Progress(*Progress.get_default_columns(), DownloadColumn(),
                           TransferSpeedColumn(), transient=True,
                           console=Console(stderr=True))
            bar.start()
            task = bar.add_task(f"downloading {self.label}", total=self.size or None)
            self._bar = bar
            return lambda n: bar.advance(task, n)
        mb = f" ({self.size / 1e6:.1f} MB)" if self.size else ""
        print(f"kbase: downloading {self.label}{mb}", file=sys.stderr)
        return lambda n: None

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
