"""Where a vault's settings come from: its `.kbase.yml` (remembered by content, so a hook
run need not import the YAML parser), or the file as it is in a commit."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from kbase_ci import __version__
from kbase_ci.errors import KbaseError
from kbase_ci.git.listing import ls_tree
from kbase_ci.git.objects import read_blobs
from kbase_ci.vault.config import (
    CONFIG_NAME,
    Config,
    config_text,
    default_config,
    display_path,
    load_config,
    parse_config,
    read_config_file,
)
from kbase_ci.vault.worktreeblobs import read_contents
from kbase_ci.vault.yamlconfig import build_section

if TYPE_CHECKING:
    from kbase_ci.state.memos import StateStore


def load_vault_config(root: Path, path: Path | None, git_dir: Path | None) -> Config:
    """`load_config` of the work tree's file (or `path`), remembering a valid file's
    settings by content under the git dir (`remembered_config`)."""
    cfg_path = path if path is not None else root / CONFIG_NAME
    if git_dir is None or not cfg_path.is_file():
        return load_config(root, path)
    raw = read_config_file(root, cfg_path, explicit=path is not None)
    return remembered_config(raw, root, cfg_path, git_dir)


def staged_config(root: Path, entry: tuple[str, str, str] | None, git_dir: Path | None
                  ) -> Config:
    """The settings of the `.kbase.yml` staged in git's index (`entry`: its `ls-files`
    row; None: no file is staged, so defaults). A hook judges the tree it is asked about,
    policy included: an unstaged edit of the file must neither loosen nor break the
    check of what is committed (issue 38). A staged symbolic link is read as the work
    tree's file, as before: its target is not the index's to give."""
    if entry is None:
        return default_config()
    _path, sha, mode = entry
    if mode == "120000":
        return load_vault_config(root, None, git_dir)
    raw = read_contents(root, [(CONFIG_NAME, sha)], files=True)[sha]
    if git_dir is None:
        return parse_config(config_text(raw, CONFIG_NAME), CONFIG_NAME)
    return remembered_config(raw, root, root / CONFIG_NAME, git_dir)


def remembered_config(raw: bytes, root: Path, cfg_path: Path, git_dir: Path) -> Config:
    """The config `raw` (the bytes of `cfg_path`) gives, remembered by content.

    Reading YAML means importing ruamel (~100 ms), on every hook run of a vault with a
    `.kbase.yml`. Its plain data (JSON) is kept in the state store's `config` memo, by a
    hash of the file's bytes and the kbase version, and only when the config built from
    it equals the one parsed from YAML: a hit never differs from a parse. An invalid file
    is never remembered: its located error comes from the real parse."""
    from kbase_ci.state.memos import state_store  # lazy: SQLite, for a `.kbase.yml` only

    # The path is in the key too: the config records where it came from (`source`).
    digest = hashlib.sha256(b"\0".join([raw, __version__.encode(),
                                        str(cfg_path).encode("utf-8", "surrogateescape")])
                            ).hexdigest()
    store = state_store(git_dir / "kbase")
    try:
        saved = json.loads(store.get("config", digest) or "null")
        built: Config = build_section(Config, saved["data"], saved["source"], "")
        # Where each `checks:` word was written: a bad code is refused at its line.
        where = {k: (int(v[0]), int(v[1])) for k, v in saved.get("where", {}).items()}
        return built._replace(source=saved["source"], digest=saved["digest"],
                              checks=built.checks._replace(where=where))
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, KbaseError):
        pass  # no memo yet, or a damaged one: parse the file
    display = display_path(cfg_path, root)
    cfg = parse_config(config_text(raw, display), display)
    _remember_config(raw, cfg, store, digest)
    return cfg


def _remember_config(raw: bytes, cfg: Config, store: StateStore, digest: str) -> None:
    from ruamel.yaml import YAML  # already imported by the parse that produced `cfg`

    try:
        data = YAML(typ="safe").load(raw.decode("utf-8", "replace"))
        plain = json.loads(json.dumps({} if data is None else data))
        rebuilt = build_section(Config, plain, cfg.source or CONFIG_NAME, "")
        if rebuilt._replace(source=cfg.source, digest=cfg.digest) != cfg:
            return  # YAML types JSON cannot carry: keep parsing this file each time
        store.put("config", digest, json.dumps({"source": cfg.source, "digest": cfg.digest,
                                                "data": plain, "where": cfg.checks.where}))
    except Exception:  # ruamel's own errors included: a memo must never fail a check
        return


def config_at(root: Path, rev: str) -> Config:
    shas = {e.path: e.sha for e in ls_tree(root, rev, [CONFIG_NAME])}
    if CONFIG_NAME not in shas:
        return parse_config("", f"{rev}:{CONFIG_NAME}")
    data = read_blobs(root, [shas[CONFIG_NAME]])[shas[CONFIG_NAME]]
    display = f"{rev}:{CONFIG_NAME}"
    return parse_config(config_text(data, display), display)
