"""Models downloaded from a Hugging Face hub into its cache: the only code in kbase that
downloads one, through huggingface_hub (`hf_hub_download`), guarded by
kbase_ci.state.hubclient.

`download_model(model_id, kind, intent=...)`, step by step:

1. Offline (`--offline`, `KBASE_OFFLINE`, `HF_HUB_OFFLINE`): UsageError, no request.
2. One lock per model (`<cache>/.locks/models--ORG--NAME/kbase-download.lock`): two
   processes never download one model at once; the second waits, then finds the files
   in the cache (the hub's blobs are named by their etag) and fetches nothing again.
3. The hub's listing of the model at `main` (`model_info` with file sizes) gives the
   commit and each file's size. The files a kind needs (`hubcache.KIND_FILES`) must be
   listed; their total must be within the size cap (`Limits.max_bytes`,
   `KBASE_MODEL_MAX_BYTES`) before one byte of them is fetched.
4. Each file is fetched at that commit, optional files first and required ones last
   (so an interrupted download never looks complete, see hubcache), each body capped
   at its listed size while it streams. The library writes `<etag>.<random>.incomplete`
   and renames it into place, deleting it on any error; one a killed process left is
   deleted by the next download of the model, once no one holds its blob's lock.
5. `refs/main` names the commit (written whole, under the lock).

Whose choice the model was is the caller's to say (`Intent`); which intents may
download is the callers' policy, not this module's.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from kbase_ci.errors import UsageError
from kbase_ci.state.bounded import load_json_file
from kbase_ci.state.files import write_atomic
from kbase_ci.state.hubcache import KIND_FILES, cache_root, endpoint, hub_offline, repo_dir
from kbase_ci.state.locks import exclusive

if TYPE_CHECKING:  # imports httpx2: loaded only by a download
    from kbase_ci.state.hubclient import Limits

Intent = Literal["build", "configured", "manifest"]
"""Why a model is downloaded: `build` (`kbase index` embeds with the model the user
chose: `--model`, `embeddings.model`), `configured` (a query needs the user's own
configured model), `manifest` (a query needs the model an index's manifest names:
chosen by whoever wrote the index, not by the user)."""
WHY: dict[str, str] = {"build": "for the index build", "configured": "configured here",
                       "manifest": "named by the index"}
Progress = Callable[[str, int, int], None]
"""`progress(stage, done, total)`, as an index build reports its stages (bytes here)."""
MAX_BYTES_ENV = "KBASE_MODEL_MAX_BYTES"
REVISION = "main"
"""The revision of a model that is downloaded (its listing, then its files at the commit
the listing names)."""
_COMMIT = re.compile(r"[0-9a-f]{40}")
_REPORTER: Callable[[], AbstractContextManager[Progress]] | None = None


def report_downloads(reporter: Callable[[], AbstractContextManager[Progress]] | None
                     ) -> None:
    """How downloads that were given no `progress` show it: the command line installs
    its progress display (kbase_ci.report.terminal.StageProgress); None: silently."""
    global _REPORTER
    _REPORTER = reporter


def default_limits() -> Limits:
    """`hubclient.Limits` with the size cap of `KBASE_MODEL_MAX_BYTES` when set."""
    from kbase_ci.state.hubclient import Limits  # imports httpx2: only a download

    raw = os.environ.get(MAX_BYTES_ENV, "").strip()
    if not raw:
        return Limits()
    try:
        return Limits(max_bytes=int(raw))
    except ValueError:
        raise UsageError(f"{MAX_BYTES_ENV}={raw!r}: not a number of bytes") from None


def download_model(model_id: str, kind: str | None, *, intent: Intent,
                   progress: Progress | None = None, limits: Limits | None = None) -> Path:
    """Fetch `model_id` into the hub cache and return its snapshot folder (`kind` None:
    as its `config.json` says). UsageError when the network is off, the hub cannot be
    reached, lacks a needed file, or breaks a limit (size, time)."""
    if hub_offline():
        raise UsageError("offline (--offline, KBASE_OFFLINE or HF_HUB_OFFLINE): not "
                         "downloaded")
    limits = limits if limits is not None else default_limits()
    lock = cache_root() / ".locks" / repo_dir(model_id).name / "kbase-download.lock"
    with ExitStack() as stack:
        try:
            if progress is None and _REPORTER is not None:
                progress = stack.enter_context(_REPORTER())
            stack.enter_context(exclusive(lock, timeout=limits.total_seconds,
                                          what=f"downloading {model_id}"))
            return _fetch(model_id, kind, intent, progress, limits)
        except UsageError:
            raise
        except Exception as exc:  # the library's, the network's, the disk's, of any kind
            raise UsageError(f"cannot download {model_id} ({WHY[intent]}) from "
                             f"{endpoint()}: {_reason(exc, limits)}") from None


def _fetch(model_id: str, kind: str | None, intent: Intent, progress: Progress | None,
           limits: Limits) -> Path:
    from huggingface_hub import HfApi, hf_hub_download  # ~300 ms: only a download

    from kbase_ci.state.hubclient import HubRefused, guarded  # only a download

    repo, cache, hub = repo_dir(model_id), cache_root(), endpoint()
    _drop_stale_parts(repo)
    with guarded(limits) as budget:
        info = HfApi(endpoint=hub).model_info(model_id, revision=REVISION, files_metadata=True)
        commit = str(info.sha or "")
        if not _COMMIT.fullmatch(commit):
            raise HubRefused(f"the hub named no commit of {model_id} (got {commit[:60]!r})")
        sizes = {s.rfilename: (s.lfs.size if s.lfs is not None else s.size)
                 for s in info.siblings or []}

        def fetch(name: str) -> Path:
            size = sizes.get(name)
            budget.expect, budget.label = size, name
            stage = f"downloading {model_id} {name}"
            path = hf_hub_download(model_id, name, revision=commit, cache_dir=cache,
                                   endpoint=hub, tqdm_class=_ticks(progress, stage, size))
            return Path(path)

        got: set[str] = set()
        if kind not in KIND_FILES:  # the kind from config.json, then that kind's files
            kind = _config_kind(fetch("config.json") if "config.json" in sizes else None)
            got.add("config.json")
        need, extra = KIND_FILES[kind]
        missing = [n for n in need if n not in sizes]
        if missing:
            raise UsageError(f"cannot download {model_id} ({WHY[intent]}) from {hub}: the "
                             f"hub has no {', '.join(missing)} for a {kind} model")
        names = [n for n in extra if n in sizes] + list(need)  # required ones last
        total = sum(sizes[n] or 0 for n in names)
        if total > limits.max_bytes:
            raise UsageError(f"cannot download {model_id} ({WHY[intent]}): its files are "
                             f"{total} bytes, more than the cap of {limits.max_bytes} "
                             f"(set {MAX_BYTES_ENV} to allow more)")
        for name in names:
            if name not in got:
                fetch(name)
    snapshot = repo / "snapshots" / commit
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    write_atomic(repo / "refs" / "main", commit.encode())
    return snapshot


def _drop_stale_parts(repo: Path) -> None:
    """Delete `*.incomplete` files a killed download left in the model's blobs, each only
    when no process holds the hub library's lock on that blob."""
    blobs = repo / "blobs"
    for part in sorted(blobs.glob("*.incomplete")) if blobs.is_dir() else []:
        blob_lock = cache_root() / ".locks" / repo.name / f"{part.name.split('.')[0]}.lock"
        try:
            with exclusive(blob_lock, timeout=0):
                part.unlink(missing_ok=True)
        except (UsageError, OSError):
            continue  # being written right now, or not ours to delete


def _config_kind(config: Path | None) -> str:
    """`onnx` when the repository has no `config.json` or it names a transformer
    architecture (`model_type` other than model2vec: every transformers config has
    one), else `model2vec` (whose older configs name none)."""
    try:  # a hub repository's file: read as any input (regular, 1 MiB at most)
        data = load_json_file(config, 1 << 20) if config is not None else None
    except OSError:  # InputRefused included
        data = None
    if not isinstance(data, dict):
        return "onnx"
    return "model2vec" if data.get("model_type") in (None, "model2vec") else "onnx"


def _reason(exc: BaseException, limits: Limits) -> str:
    """One line saying why a download failed, from the error or the one it came from."""
    import httpx2  # what the download itself loads

    from kbase_ci.state.hubclient import HubRefused  # what the download itself loads

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, HubRefused):
            return str(seen)
        if isinstance(seen, httpx2.TimeoutException):
            return f"no answer within {limits.read_seconds:.0f} s"
        if isinstance(seen, httpx2.TransportError):
            return f"cannot reach it ({type(seen).__name__})"
        status = getattr(getattr(seen, "response", None), "status_code", None)
        if status is not None:
            return f"HTTP {status}"
        seen = seen.__cause__ or seen.__context__
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return first[:200]


def _ticks(progress: Progress | None, stage: str, size: int | None) -> type:
    """A class the hub library takes for its progress bar (it calls `update(n)` per
    chunk), reporting bytes to `progress` as `stage`."""

    class Ticks:
        def __init__(self, *args: object, **kwargs: Any) -> None:
            self.n = int(kwargs.get("initial") or 0)
            self.total = size if size is not None else int(kwargs.get("total") or 0)
            if progress is not None:
                progress(stage, self.n, self.total)

        def update(self, n: float | None = 1) -> None:
            self.n += int(n or 0)
            if progress is not None:
                progress(stage, self.n, max(self.total, self.n))

        def __enter__(self) -> Ticks:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def close(self) -> None:
            return None

    return Ticks
