"""Which embedding model: found, verified by content hash, or why there is none.

Two kinds of model, told apart by their files (`modelfolder`): `model2vec` (static) and
`onnx` (a transformer sentence model). A build takes `--model PATH`, else
`embeddings.model` in `.kbase.yml`: a folder of the repository, or a hub id
(`minishlab/potion-base-8M`, the default) looked up in each folder of
`KBASE_MODEL_PATH`, then the local hub cache, then downloaded once into that cache
(kbase_ci.state.downloads) unless offline. Without it the build goes on BM25-only
and says why. A folder that is named explicitly but missing is an error.

The manifest records the model's id, kind and content hash (`digest`). The index branch
never decides what is loaded or downloaded (issue 28): a query loads only a model the user
chose, `--model`, then `KBASE_MODEL_PATH` (a folder holding it, by name or by hash), then
`embeddings.model` of the checked-out `.kbase.yml` (a folder, or a hub id in the hub
cache), and uses the manifest's hash only to check it is the same model
(`locate_index_model`). The one download a query may start is of the hub id a
`.kbase.yml` names (intent `configured`), or, when none names a model, of kbase's default
for an index built with that default (intent `manifest`: the index can only ask for the
default), never while offline (`find_index_model`), and not again for `MISS_RETRY`
seconds after it failed (the queries meanwhile rank by BM25 at once, saying so). A
folder whose hash differs is
refused; without the model the query ranks by BM25 and gives one notice, `BM25 only: no
model (...)`, saying where the model names came from and the command or setting that
fixes it; `kbase status` says the same (`availability`). Loading a model is
kbase_ci.index.modelfolder's business, not this module's.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kbase_ci.errors import ConfigError, GitError, InputRefused, UsageError
from kbase_ci.git.repo import git_dir
from kbase_ci.index import modelfiles
from kbase_ci.index.blocks import Embeddings
from kbase_ci.index.modelfolder import STATIC, model_files, model_kind
from kbase_ci.state import hubcache
from kbase_ci.state.downloads import REVISION, Intent, Progress, download_model
from kbase_ci.vault.config import CONFIG_NAME, EmbeddingsConfig

if TYPE_CHECKING:
    from kbase_ci.state.memos import StateStore

DEFAULT_MODEL = "minishlab/potion-base-8M"
PATH_ENV = "KBASE_MODEL_PATH"


@dataclass(frozen=True, slots=True)
class ModelChoice:
    id: str | None
    """What the manifest calls the model: the hub id, the folder as configured, or the
    folder's name for `--model`."""
    path: Path | None
    """Local folder to load; None when there are no embeddings."""
    reason: str | None
    """Why there are no embeddings (None when there are)."""
    sha256: str | None = None
    """`digest` of the model: shards embedded by another model are rebuilt."""
    kind: str = STATIC
    """`modelfolder.STATIC` or `modelfolder.TRANSFORMER`."""


def kind_of(folder: Path) -> str | None:
    """The model's kind from its files (`modelfolder.model_kind`), else None."""
    return model_kind(folder)


_DIGESTS: dict[tuple[str, tuple[tuple[str, int, int], ...]], str] = {}


def digest(folder: Path) -> str:
    """sha256 over the files that decide the vectors (`modelfolder.model_files`: name,
    then bytes), remembered per file stat within a process (a server checks the same
    model on every call). UsageError for a folder that holds no model."""
    files = [(p.relative_to(folder).as_posix(), p) for p in model_files(folder)]
    stats = tuple((n, (st := p.stat()).st_size, st.st_mtime_ns) for n, p in files)
    key = (str(folder.resolve()), stats)
    if key not in _DIGESTS:
        h = hashlib.sha256()
        for name, path in files:
            h.update(name.encode() + b"\0")
            for block in modelfiles.blocks(path, folder):  # capped, as model_files checked
                h.update(block)
        _DIGESTS[key] = h.hexdigest()
    return _DIGESTS[key]


def _local(name: str, folder: Path) -> ModelChoice:
    sha = digest(folder)  # raises the error that says what a model folder holds
    return ModelChoice(name, folder, None, sha, kind_of(folder) or STATIC)


def _held(model_id: str, kind: str | None = None) -> Iterator[Path]:
    """Folders of `KBASE_MODEL_PATH` that may hold `model_id`: the entry itself, a
    subfolder named by the id or its last part, or the id in the hub's layout."""
    for entry in filter(None, os.environ.get(PATH_ENV, "").split(os.pathsep)):
        base = Path(entry).expanduser()
        hub = base / f"models--{model_id.replace('/', '--')}" / "snapshots"
        for folder in (base, base / model_id, base / model_id.rsplit("/", 1)[-1],
                       *(sorted(hub.iterdir()) if hub.is_dir() else [])):
            if folder.is_dir() and (got := _kind_or_none(folder)) is not None \
                    and kind in (None, got):
                yield folder


def _kind_or_none(folder: Path) -> str | None:
    """`kind_of`, None for a folder kbase refuses to read: one of `KBASE_MODEL_PATH`'s
    candidates, passed over (the folders it searches are the user's)."""
    try:
        return kind_of(folder)
    except InputRefused:
        return None


def choose_model(root: Path, configured: str | None, option: Path | None,
                 progress: Progress | None = None) -> ModelChoice:
    """The model a build embeds with (see the module docstring); `progress` hears of a
    download."""
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
    if not hubcache.is_hub_id(value):
        raise ConfigError(f"`embeddings.model`: no model folder at {value}")
    found = next(_held(value), None) or hubcache.cached(value, None)
    if found is None and hubcache.hub_offline():
        return ModelChoice(value, None, f"embedding model {value} is not available offline "
                           f"(not in {PATH_ENV} or the Hugging Face cache); "
                           f"{fix_hint(value)}")
    if found is None:
        try:
            found = download_model(value, None, intent="build", progress=progress)
        except UsageError as exc:
            return ModelChoice(value, None, f"embedding model {value} could not be "
                               f"downloaded ({exc}); {fix_hint(value)}")
    return _local(value, found)


def fix_hint(model_id: str, sha: str | None = None, configured: str | None = None,
             folder_here: bool = False) -> str:
    """The command or setting that makes `model_id` available here (`configured`: the
    query's `embeddings.model`; a query downloads only that one, never the model an
    index names; `folder_here`: `model_id` is a folder of the repository, which is
    never downloaded, so its files are what to mend)."""
    name = model_id.rsplit("/", 1)[-1]
    which = f" (sha256 {sha[:12]})" if sha else ""
    if folder_here:
        return (f"fix: the repository's folder {model_id}/ is not the index's model{which}: "
                f"restore its files, or rebuild the index from it (`kbase index`), or pass "
                f"`--model PATH/TO/{name}`")
    if configured is not None and configured != model_id:
        setting = (f", or set `embeddings.model: {model_id}` in .kbase.yml if you trust "
                   "it (a search then downloads it once)") if hubcache.is_hub_id(model_id) \
            else ""
        return (f"fix: `export {PATH_ENV}=DIR` with DIR holding {name}/{which}"
                f"{',' if setting else ' or'} pass `--model PATH/TO/{name}`{setting}")
    if hubcache.is_hub_id(model_id):
        return (f"fix: run once with network access (kbase downloads {model_id}{which} "
                f"into the Hugging Face cache), or `export {PATH_ENV}=DIR` with DIR "
                f"holding {name}/")
    return (f"fix: `export {PATH_ENV}=DIR` with DIR holding the folder {name}/{which}, "
            f"or pass `--model PATH/TO/{name}`")


NO_MODEL = "BM25 only: no model"
"""How a search's notice begins when it ranks without the index's model (`--format
text` prints it first)."""


def no_model(why: str) -> str:
    """The search notice for a query ranked without the index's model: why, and what
    fixes it."""
    return f"{NO_MODEL} ({why})"


@dataclass(frozen=True, slots=True)
class IndexModel:
    """Whether the index's model is available here (`locate_index_model`), and why."""

    choice: ModelChoice | None
    """The folder holding it (hash checked), else None."""
    why: str
    """Where it was found, or why it is not available."""
    fix: str | None = None
    """What makes it available (None when it is)."""
    download: str | None = None
    """A hub id a query may download (not yet in the cache): the user's own
    `embeddings.model`, or kbase's default when the index was built with it; None when
    there is nothing to download."""
    intent: Intent = "configured"
    """Whose choice `download` is (kbase_ci.state.downloads)."""

    def notice(self) -> str | None:
        """The one search notice (None when the model is in use)."""
        if self.choice is not None:
            return None
        return no_model(f"{self.why}; {self.fix}" if self.fix else self.why)


def _origin(embeddings: EmbeddingsConfig) -> str:
    """Where the query's model name comes from, as a notice says it."""
    value = (embeddings.model or "").strip()
    if embeddings.named_in is None:
        return f"embeddings.model is kbase's default {value} (no {CONFIG_NAME} names a model)"
    if not value:
        return f"embeddings.model is null in {embeddings.named_in}"
    return f"embeddings.model is {value} ({embeddings.named_in})"


def locate_index_model(root: Path, embeddings: EmbeddingsConfig, option: Path | None,
                       emb: Embeddings) -> IndexModel | None:
    """The index's model (`emb`: the manifest's `embeddings`) among the models the user
    chose (`embeddings`: the query's `.kbase.yml` section), with no download (None: an
    index without vectors). The manifest only says which weights to check for; it never
    names what is looked up in the hub cache or downloaded. `--model` with other weights
    is an error: asked for, not found.

    What may be downloaded (`IndexModel.download`): a hub id `.kbase.yml` names, or
    kbase's default when no `.kbase.yml` names a model and the index was built with that
    default; never a default nobody chose for an index built with another model (every
    query of such a clone tried to, 5.8 s without a network: issue 37)."""
    want, model_id = emb.sha256, emb.model or ""
    kind = emb.kind or STATIC
    if not emb.dim or not want:
        return None
    configured = embeddings.model
    if option is not None:
        got = choose_model(root, None, option)
        if got.sha256 != want:
            raise UsageError(f"--model {option}: not the model this index was built with "
                             f"({model_id}, sha256 {str(want)[:12]}; this folder's is "
                             f"{str(got.sha256)[:12]}): refused")
        return IndexModel(got, f"--model {option}")
    refused: list[str] = []
    for folder, named in _candidates(root, configured, model_id, kind, refused):
        try:
            same = digest(folder) == want
        except InputRefused as exc:  # a file of it kbase does not read: named, not used
            refused.append(f"{folder} ({exc})")
            continue
        if same:
            return IndexModel(ModelChoice(model_id, folder, None, want, kind), str(folder))
        if named:
            refused.append(str(folder))
    value = (configured or "").strip()
    chosen = embeddings.named_in is not None or value == model_id
    # A folder of the repository named like a hub id (`models/good`) is that folder, as
    # for a build (`choose_model`): never a download.
    here = bool(value) and (root / value).is_dir()
    fetch = value if chosen and hubcache.is_hub_id(value) and not here \
        and hubcache.cached(value, kind) is None else None
    why = f"; other weights refused: {', '.join(refused)}" if refused else ""
    skipped = "" if chosen or not value else ", not the index's model: not downloaded"
    return IndexModel(None, f"the index's embedding model {model_id or '(unnamed)'} "
                      f"({kind}, named by the index) is not available here (looked for in "
                      f"{PATH_ENV}, embeddings.model and the Hugging Face cache){why}; "
                      f"{_origin(embeddings)}{skipped}",
                      fix_hint(model_id, str(want), configured=value,
                               folder_here=here and value == model_id), fetch,
                      "configured" if embeddings.named_in is not None else "manifest")


def find_index_model(root: Path, embeddings: EmbeddingsConfig, option: Path | None,
                     emb: Embeddings) -> tuple[ModelChoice | None, str | None]:
    """The index's model for a query, or None and one notice saying what to do. Only a
    model the user chose is loaded (`locate_index_model`); the one download a query may
    start is of the user's own `embeddings.model` (a hub id not yet in the cache), or of
    kbase's default for an index built with it, and only while the network is allowed;
    it is used only if its weights are the index's."""
    found = locate_index_model(root, embeddings, option, emb)
    if found is None:
        return None, None
    if found.choice is not None or found.download is None or hubcache.hub_offline():
        return found.choice, found.notice()
    kind = emb.kind or STATIC
    store, key = _miss_store(root), _miss_key(found.download)
    missed = _missed(store, key)
    if missed is not None:
        return None, no_model(f"{found.why}; {missed}; {found.fix}")
    try:
        folder = download_model(found.download, kind, intent=found.intent)
    except UsageError as exc:
        store.put("model_miss", key, json.dumps({"at": time.time(), "why": str(exc)}))
        return None, no_model(f"{found.why}; download failed: {exc}; {found.fix}")
    if digest(folder) == emb.sha256:
        return ModelChoice(emb.model, folder, None, emb.sha256, kind), None
    return None, no_model(f"{found.why}; other weights refused: {folder} (downloaded "
                          f"{found.download} from the hub); {found.fix}")


MISS_RETRY = 600.0
"""Seconds a failed download of a model is remembered (the `model_miss` memo of the state
store): the queries meanwhile rank by BM25 at once, where each tried the download again
(5.8 s each without a network: issue 37)."""


def _miss_store(root: Path) -> StateStore:
    """The state store of the repository holding `root` (one that keeps nothing outside
    a repository)."""
    from kbase_ci.state.memos import state_store  # lazy: SQLite, for a download only

    try:
        return state_store(git_dir(root) / "kbase")
    except GitError:
        return state_store(None)


def _miss_key(model_id: str) -> str:
    """The memo's key: the hub asked, the model and the revision downloaded."""
    return f"{hubcache.endpoint()} {model_id}@{REVISION}"


def _missed(store: StateStore, key: str) -> str | None:
    """What a notice says of a download of `key` that failed less than `MISS_RETRY`
    seconds ago (None: it did not, or long enough ago to try again)."""
    try:
        row = json.loads(store.get("model_miss", key) or "null")
        at, why = float(row["at"]), str(row["why"])
    except (ValueError, TypeError, KeyError):
        return None  # nothing remembered, or not a row this code wrote
    now = time.time()
    if not now - MISS_RETRY < at <= now:
        return None
    retry = time.strftime("%H:%M:%S UTC", time.gmtime(at + MISS_RETRY))
    return (f"its download failed {round(now - at)} s ago ({why}): not tried again "
            f"before {retry}")


def availability(root: Path, embeddings: EmbeddingsConfig, option: Path | None,
                 emb: Embeddings) -> tuple[bool | None, str]:
    """For `kbase status`: whether the index's model is available here (None: the index
    has no vectors) and why, without downloading anything."""
    if not emb.dim or not emb.sha256:
        return None, f"the index has no vectors ({emb.reason or 'no embedding model'})"
    try:
        found = locate_index_model(root, embeddings, option, emb)
    except (UsageError, ConfigError) as exc:
        return False, str(exc)
    assert found is not None
    if found.choice is not None:
        return True, f"{emb.model} (sha256 {str(emb.sha256)[:12]}) found at {found.why}"
    if found.download is not None and not hubcache.hub_offline():
        missed = _missed(_miss_store(root), _miss_key(found.download))
        if missed is not None:
            return False, f"{found.why}; {found.download}: {missed}; {found.fix}"
        return False, (f"{found.why}; the next search downloads embeddings.model "
                       f"{found.download} and uses it if its weights are the index's")
    return False, f"{found.why}; {found.fix}"


def _candidates(root: Path, configured: str | None, model_id: str, kind: str,
                refused: list[str]) -> Iterator[tuple[Path, bool]]:
    """Folders that may hold the index's model, in search order, each once, and whether
    they are named as it (a folder scanned by hash is not); `refused` hears of a folder
    whose files kbase does not read (kbase_ci.index.modelfiles)."""
    seen: set[Path] = set()

    def fresh(folder: Path) -> bool:
        if not folder.is_dir():
            return False
        try:
            if kind_of(folder) != kind:
                return False
        except InputRefused as exc:
            refused.append(f"{folder} ({exc})")
            return False
        key = folder.resolve()
        if key in seen:
            return False
        seen.add(key)
        return True

    for folder in _held(model_id, kind):
        if fresh(folder):
            yield folder, True
    value = (configured or "").strip()
    if value:
        path = Path(value).expanduser()
        local = path if path.is_absolute() else root / path
        if fresh(local):
            yield local, True
        if hubcache.is_hub_id(value):
            other = hubcache.cached(value, kind)
            if other is not None and fresh(other):
                yield other, True
    for entry in filter(None, os.environ.get(PATH_ENV, "").split(os.pathsep)):
        base = Path(entry).expanduser()  # by hash: a folder holding it under any name
        for folder in sorted(base.iterdir()) if base.is_dir() else []:
            if fresh(folder):
                yield folder, False
