"""`.kbase.yml`: typed sections built from YAML, every error located at file, line and key.

Sections are frozen records (`yamlconfig.Section`); `yamlconfig.build_section` turns a
YAML mapping into one by reading the class's type hints, so adding a section is declaring
a class. Every
section's schema lives in this package (note types in `notetypes`/`typeconfig`, scopes in
`scopeconfig`), so one parse validates the whole file and the layers above only read it.
The round-trip loader is used (not the faster safe one) because only it keeps the
line/column of every key; a config file is small, so speed does not matter here.
"""

from __future__ import annotations

import hashlib
import json
import typing
from pathlib import Path
from typing import Any, ClassVar

from kbase_ci.errors import ConfigError, InputRefused
from kbase_ci.state.bounded import read_input
from kbase_ci.typedjson.record import json_field
from kbase_ci.vault.checkconfig import ChecksConfig, FrontmatterConfig, Level, TagsConfig
from kbase_ci.vault.globs import match
from kbase_ci.vault.notetypes import BUILTIN, NoteTypes
from kbase_ci.vault.yamlconfig import (
    MAX_CONFIG_BYTES,
    Pos,
    Section,
    SectionParser,
    build_section,
    check_shape,
)

if typing.TYPE_CHECKING:
    from kbase_ci.vault.scopeconfig import ScopeSpec

CONFIG_NAME = ".kbase.yml"


class VaultConfig(Section):
    """`vault:` in `.kbase.yml`: which files are notes."""

    folders: tuple[str, ...] = (".",)
    """Folders (relative to the vault root) whose Markdown files are notes."""
    exclude: tuple[str, ...] = ()
    """Globs of paths that are never notes (`templates/**`, `*.excalidraw.md`)."""
    max_note_bytes: int = 8_000_000
    """Larger notes are reported (KB003) and not parsed, so one file cannot stall a hook."""
    include_dot_folders: bool = False
    """Files and folders whose name starts with `.` (`.github/`, `.obsidian/`) are not in
    the vault, as in Obsidian: not notes, not link targets, not checked. True reads them
    as notes and files like any other."""
    untracked: bool = True
    """Queries and `kbase handover check` see untracked (not ignored) notes of the work
    tree; hooks, `kbase check` and `kbase index` judge tracked files only."""


class LinksConfig(Section):
    """`links:` in `.kbase.yml`: how links resolve."""

    resolve_aliases: bool = True
    """`[[alias]]` resolves to the note whose frontmatter lists that alias."""
    markdown_links: bool = True
    """Check `[text](note.md)` links as well as wikilinks."""
    ignore_targets: tuple[str, ...] = ()
    """Globs of link targets never reported as unresolved (`templates/*`)."""
    unresolved: Level = "error"
    """Links to notes that do not exist (KB101/KB102 naming a note, not an attachment)
    and that no rename or deletion in this change broke: a forward link to a note not
    yet written. `warning` reports without failing, `off` not at all."""
    unresolved_per_path: dict[str, Level] = json_field(default_factory=dict)
    """path glob -> `unresolved` for the notes it matches (the first matching glob, in
    the order written, wins): `ideas/**: off`."""

    def unresolved_at(self, path: str) -> Level:
        """The `unresolved` level for links written in note `path`."""
        for glob, level in self.unresolved_per_path.items():
            if match(glob, path):
                return level
        return self.unresolved


class IndexConfig(Section):
    """`index:` in `.kbase.yml`: how the index is sharded and tokenized."""

    domain: str = "folder"
    """How notes are grouped into shards: `folder` (top-level folder) or `frontmatter:KEY`."""
    shard_max_bytes: int = 4_000_000
    """A domain with more Markdown than this is split into 2, 4, 8... shards."""
    similar: int = 5
    """Precomputed similar notes kept per note (0: none)."""
    stemmer: typing.Literal["english", "none"] = "english"
    """BM25 word stemming: `english` (Snowball) lets `tasks` find `task` and helps
    paraphrased questions; `none` matches words as written, which ranks verbatim
    lookups (a heading's or an example's own words) higher. docs/query.md has the
    measured difference."""


def _budget(value: Any, display: str, where: str, pos: tuple[int, int]) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"`{where}` must be a whole number of tokens, 0 for no limit, "
                          f"not {value!r}", display, *pos)
    return value


class QueryConfig(Section):
    """`query:` in `.kbase.yml`: how query commands answer."""

    max_tokens: int = 8000
    """The budget of a query command's answer when `--max-tokens` is not given, as MCP's
    tools default to 8000: lists are cut from their least relevant end and `truncated`
    says what went. 0: no limit."""

    parsers: ClassVar[dict[str, SectionParser]] = {"max_tokens": _budget}


class EmbeddingsConfig(Section):
    """`embeddings:` in `.kbase.yml`: the vector model."""

    model: str | None = "minishlab/potion-base-8M"
    """Embedding model, a model2vec (static) or ONNX (transformer) folder: a local folder
    (relative to the vault root) or a Hugging Face id found in the local cache; null
    disables vectors."""
    dim: int | None = None
    """Keep only the first N dimensions (PCA-distilled models order them by variance):
    a smaller index for somewhat worse semantic recall. Default: all."""
    named_in: str | None = None
    """The file that names `model` (None: nobody did, `model` is kbase's default): a
    query downloads the default only for an index built with it
    (kbase_ci.index.modelchoice)."""

    code_only = frozenset({"named_in"})

    @classmethod
    def from_config(cls, value: Any, display: str, where: str, pos: Pos
                    ) -> EmbeddingsConfig:
        got: EmbeddingsConfig = build_section(cls, value, display, where, pos)
        return got._replace(named_in=display) if "model" in value else got


class HandoverConfig(Section):
    """`handover:` in `.kbase.yml`: where handover notes live and when they are complete."""

    folder: str = "handovers/"
    """Where `kbase new handover` writes (vault-relative)."""
    threshold: int = 80
    """`kbase handover check` fails when a note scores below this (0-100)."""



class ScopesConfig(Section):
    """`scopes:` -> named scopes (docs/scopes.md); parsed by `kbase_ci.vault.scopeconfig`."""

    named: dict[str, ScopeSpec] = json_field(default_factory=dict)

    @classmethod
    def from_config(cls, value: Any, display: str, where: str, pos: Pos) -> ScopesConfig:
        # Lazy: only a file that declares scopes needs their parser (hook start-up).
        from kbase_ci.vault.scopeconfig import parse_scopes

        return cls(parse_scopes(value, display, where, pos))


def _parse_types(value: Any, display: str, where: str, pos: Pos) -> NoteTypes:
    """`types:`: note types merged over the built-ins."""
    # Lazy: only a file with a `types:` section needs its parser (hook start-up).
    from kbase_ci.vault.typeconfig import parse_types

    return NoteTypes(parse_types(value, display, where, pos, BUILTIN))


class Config(Section):
    """The whole `.kbase.yml`, defaults filled in."""

    vault: VaultConfig = json_field(default_factory=VaultConfig)
    links: LinksConfig = json_field(default_factory=LinksConfig)
    checks: ChecksConfig = json_field(default_factory=ChecksConfig)
    index: IndexConfig = json_field(default_factory=IndexConfig)
    embeddings: EmbeddingsConfig = json_field(default_factory=EmbeddingsConfig)
    handover: HandoverConfig = json_field(default_factory=HandoverConfig)
    types: NoteTypes = json_field(default_factory=NoteTypes.builtin)
    """Note types (handover, question, ...): built-ins merged with `types:`."""
    tags: TagsConfig = json_field(default_factory=TagsConfig)
    frontmatter: FrontmatterConfig = json_field(default_factory=FrontmatterConfig)
    scopes: ScopesConfig = json_field(default_factory=ScopesConfig)
    query: QueryConfig = json_field(default_factory=QueryConfig)
    source: str | None = None
    """Path of the file this came from (None: defaults)."""
    digest: str = ""
    """sha256 of the effective settings, recorded in index manifests."""

    parsers: ClassVar[dict[str, SectionParser]] = {"types": _parse_types}
    code_only = frozenset({"source", "digest"})


_SKIP_FIELDS = {"source", "digest"}


def load_config(root: Path, path: Path | None = None) -> Config:
    """Read `root/.kbase.yml` (or `path`); a missing default file means defaults."""
    cfg_path = path if path is not None else root / CONFIG_NAME
    display = display_path(cfg_path, root)
    if not cfg_path.is_file():
        if path is not None:
            raise ConfigError(f"config file not found: {display}", display)
        return default_config()
    data = read_config_file(root, cfg_path, explicit=path is not None, display=display)
    return parse_config(config_text(data, display), display)


def config_text(data: bytes, display: str = CONFIG_NAME) -> str:
    """The config's bytes as text; a ConfigError at the first byte that is not UTF-8
    (decoded with replacement characters, the YAML parser reported some other error, or
    none: `caf\xe9` is a fine scalar, so the file was "not a mapping")."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        col = len(data[line_start:exc.start].decode("utf-8", "replace")) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"the file is not UTF-8 (byte 0x{data[exc.start]:02x} here); "
                          "save it as UTF-8", display, line, col) from None


def read_config_file(root: Path, cfg_path: Path, *, explicit: bool,
                     display: str | None = None) -> bytes:
    """The bytes of a `.kbase.yml` (kbase_ci.state.bounded): a regular file of at most
    `MAX_CONFIG_BYTES`, and the repository's own unless `explicit` (`--config PATH`):
    no link out of `root`. A located config error otherwise."""
    try:
        return read_input(cfg_path, MAX_CONFIG_BYTES, within=None if explicit else root)
    except InputRefused as exc:
        raise ConfigError(f"not read: {exc.detail.removesuffix('; not read')}",
                          display or display_path(cfg_path, root)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read it: {exc.strerror or exc}",
                          display or display_path(cfg_path, root)) from None


def default_config() -> Config:
    """The settings without a `.kbase.yml`."""
    return _with_digest(Config())


def parse_config(text: str, display: str = CONFIG_NAME) -> Config:
    check_shape(text, display)  # size, depth and values before ruamel sees it
    try:
        return _parse_config(text, display)
    except RecursionError:  # `[[[[...` 50k deep: a PR's config is refused, not a crash
        raise ConfigError("nested too deeply to be a kbase config", display) from None


def _parse_config(text: str, display: str) -> Config:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    yaml = YAML(typ="rt")
    try:
        data = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise ConfigError(f"invalid YAML: {exc.problem or exc}", display, line, col) from None
    except YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", display) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("the top level must be a mapping of sections", display)
    cfg = build_section(Config, data, display, "")
    return _with_digest(cfg._replace(source=display))


def display_path(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _with_digest(cfg: Config) -> Config:
    settings = {name: _plain(getattr(cfg, name)) for name in cfg._fields
                # Scopes and query settings do not change the main index: declaring one
                # must not make it stale.
                if name not in _SKIP_FIELDS and name not in ("scopes", "query")}
    for section, keys in _NOT_INDEXED.items():
        for key in keys:
            settings[section].pop(key, None)
    blob = json.dumps(settings, sort_keys=True, default=list).encode()
    return cfg._replace(digest=hashlib.sha256(blob).hexdigest())


def _plain(value: Any) -> Any:
    """A section as nested dicts, as `dataclasses.asdict` made it when the sections were
    dataclasses: every field (even `checks.where`), tuples kept (JSON lists), so the
    digest an index records is unchanged (tests/unit/vault/test_config_digest.py)."""
    if isinstance(value, Section):
        return {name: _plain(getattr(value, name)) for name in value._fields}
    if isinstance(value, tuple | list):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    return value


_NOT_INDEXED = {"checks": ("severity", "per_path", "where"),
                "links": ("unresolved", "unresolved_per_path"),
                "embeddings": ("named_in",)}
"""Settings that weigh findings, or say where a setting came from, but change nothing an
index holds: left out of the digest, so adopting them (or moving their lines) does not
make an index stale."""
