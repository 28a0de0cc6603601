"""`.kbase.yml`: typed sections built from YAML, every error located at file, line and key.

Sections are frozen dataclasses; `build_section` turns a YAML mapping into one by
reading the dataclass's type hints, so adding a section is declaring a dataclass.
The round-trip loader is used (not the faster safe one) because only it keeps the
line/column of every key; a config file is small, so speed does not matter here.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .notetypes import NoteTypes

if typing.TYPE_CHECKING:
    from .scope.spec import ScopeSpec

CONFIG_NAME = ".kbase.yml"


@dataclass(frozen=True)
class VaultConfig:
    """`vault:` in `.kbase.yml`: which files are notes."""

    folders: tuple[str, ...] = (".",)
    """Folders (relative to the vault root) whose Markdown files are notes."""
    exclude: tuple[str, ...] = ()
    """Globs of paths that are never notes (`templates/**`, `*.excalidraw.md`)."""
    max_note_bytes: int = 8_000_000
    """Larger notes are reported (KB003) and not parsed, so one file cannot stall a hook."""


@dataclass(frozen=True)
class LinksConfig:
    """`links:` in `.kbase.yml`: how links resolve."""

    resolve_aliases: bool = True
    """`[[alias]]` resolves to the note whose frontmatter lists that alias."""
    markdown_links: bool = True
    """Check `[text](note.md)` links as well as wikilinks."""
    ignore_targets: tuple[str, ...] = ()
    """Globs of link targets never reported as unresolved (`templates/*`)."""


@dataclass(frozen=True)
class ChecksConfig:
    """`checks:` in `.kbase.yml`: which checks run."""

    select: tuple[str, ...] = ()
    """Codes or check names to run (empty: all)."""
    ignore: tuple[str, ...] = ()
    """Codes or check names to skip."""


@dataclass(frozen=True)
class IndexConfig:
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


@dataclass(frozen=True)
class EmbeddingsConfig:
    """`embeddings:` in `.kbase.yml`: the vector model."""

    model: str | None = "minishlab/potion-base-8M"
    """model2vec model: a local folder (relative to the vault root) or a Hugging Face id
    found in the local cache; null disables vectors."""
    dim: int | None = None
    """Keep only the first N dimensions (PCA-distilled models order them by variance):
    a smaller index for somewhat worse semantic recall. Default: all."""


@dataclass(frozen=True)
class HandoverConfig:
    """`handover:` in `.kbase.yml`: where handover notes live and when they are complete."""

    folder: str = "handovers/"
    """Where `kbase new handover` writes (vault-relative)."""
    threshold: int = 80
    """`kbase handover check` fails when a note scores below this (0-100)."""


ValueType = typing.Literal["string", "number", "integer", "boolean", "date", "list", "mapping",
                           "link", "list[string]", "list[link]"]


@dataclass(frozen=True)
class TagsConfig:
    """`tags:` in `.kbase.yml`: the tag policy."""

    allowed: tuple[str, ...] = ()
    """Tag names every tag must be (case-insensitive; `*` matches any text: `project/*`)."""
    pattern: str | None = None
    """Regular expression every tag name (without `#`) must match in full."""
    vocabularies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """prefix -> values: `status: [active, done]` allows `#status/active`, not `#status/x`."""
    required: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """path glob -> tags each matching note carries (`project` is met by `project/alpha`)."""
    case_duplicates: bool = True
    """Report a tag spelled in another case elsewhere in the vault (`#Rust` vs `#rust`)."""

    @classmethod
    def from_config(cls, value: Any, display: str, where: str,
                    pos: tuple[int, int]) -> TagsConfig:
        import re

        section: TagsConfig = build_section(cls, value, display, where, pos)
        if section.pattern is not None:
            try:
                re.compile(section.pattern)
            except re.error as exc:
                raise ConfigError(f"`{where}.pattern` is not a valid regular expression: "
                                  f"{exc.msg} (at position {exc.pos})", display,
                                  *_value_pos(value, "pattern", pos)) from None
        return section


@dataclass(frozen=True)
class FrontmatterConfig:
    """`frontmatter:` in `.kbase.yml`: required keys and value types."""

    required: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """path glob -> keys each matching note's frontmatter must have (non-empty)."""
    types: dict[str, ValueType] = field(default_factory=dict)
    """key -> type its value must have, wherever the key appears."""
    allowed: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    """key -> the values it may take (each item, for a list value)."""

    @classmethod
    def from_config(cls, value: Any, display: str, where: str,
                    pos: tuple[int, int]) -> FrontmatterConfig:
        section: FrontmatterConfig = build_section(cls, value, display, where, pos)
        raw = value.get("allowed") if isinstance(value, dict) else None
        for key, values in section.allowed.items():
            for i, v in enumerate(values):
                if v is None or isinstance(v, dict | list):
                    seq = raw.get(key) if isinstance(raw, dict) else None
                    at = _item_pos(seq, i, _value_pos(raw, key, pos))
                    raise ConfigError(f"`{where}.allowed.{key}[{i}]` must be a string, number "
                                      f"or boolean, not {v!r}", display, *at)
        return section


@dataclass(frozen=True)
class ScopesConfig:
    """`scopes:` -> named scopes (docs/scopes.md); parsed by `kbase_ci.scope.spec`."""

    named: dict[str, ScopeSpec] = field(default_factory=dict)

    @classmethod
    def from_config(cls, value: Any, display: str, where: str,
                    pos: tuple[int, int]) -> ScopesConfig:
        from .scope.spec import parse_scopes

        return cls(parse_scopes(value, display, where, pos))


@dataclass(frozen=True)
class Config:
    """The whole `.kbase.yml`, defaults filled in."""

    vault: VaultConfig = field(default_factory=VaultConfig)
    links: LinksConfig = field(default_factory=LinksConfig)
    checks: ChecksConfig = field(default_factory=ChecksConfig)
    index: IndexConfig = field(default_factory=IndexConfig)
    embeddings: EmbeddingsConfig = field(default_factory=EmbeddingsConfig)
    handover: HandoverConfig = field(default_factory=HandoverConfig)
    types: NoteTypes = field(default_factory=NoteTypes.builtin)
    """Note types (handover, question, ...): built-ins merged with `types:`."""
    tags: TagsConfig = field(default_factory=TagsConfig)
    frontmatter: FrontmatterConfig = field(default_factory=FrontmatterConfig)
    scopes: ScopesConfig = field(default_factory=ScopesConfig)
    source: str | None = None
    """Path of the file this came from (None: defaults)."""
    digest: str = ""
    """sha256 of the effective settings, recorded in index manifests."""


_SKIP_FIELDS = {"source", "digest"}


def load_config(root: Path, path: Path | None = None) -> Config:
    """Read `root/.kbase.yml` (or `path`); a missing default file means defaults."""
    cfg_path = path if path is not None else root / CONFIG_NAME
    display = _display(cfg_path, root)
    if not cfg_path.is_file():
        if path is not None:
            raise ConfigError(f"config file not found: {display}", display)
        return _with_digest(Config())
    text = cfg_path.read_bytes().decode("utf-8", "replace")
    return parse_config(text, display)


def parse_config(text: str, display: str = CONFIG_NAME) -> Config:
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
    return _with_digest(dataclasses.replace(cfg, source=display))


def build_section(cls: type[Any], data: Any, display: str, where: str,
                  pos: tuple[int, int] = (1, 1)) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"`{where or 'top level'}` must be a mapping", display, *pos)
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls) if f.name not in _SKIP_FIELDS]
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        kpos = _key_pos(data, key)
        dotted = f"{where}.{key}" if where else str(key)
        if key not in names:
            near = difflib.get_close_matches(str(key), names, n=1)
            hint = f"; did you mean `{near[0]}`?" if near else f"; known keys: {', '.join(names)}"
            raise ConfigError(f"unknown key `{dotted}`{hint}", display, *kpos)
        kwargs[key] = convert(hints[key], value, display, dotted, _value_pos(data, key, kpos))
    return cls(**kwargs)


def convert(tp: Any, value: Any, display: str, where: str, pos: tuple[int, int]) -> Any:
    """Check `value` against the annotation `tp` and convert it (lists become tuples)."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return _plain(value)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return convert(inner[0], value, display, where, pos)
    if origin is typing.Literal:
        if value not in args:
            allowed = " | ".join(str(a) for a in args)
            raise ConfigError(f"`{where}` must be one of {allowed}, not {value!r}", display, *pos)
        return value
    hook = getattr(tp, "from_config", None)
    if hook is not None:  # a section that parses itself (it needs the YAML positions)
        return hook(value, display, where, pos)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return build_section(tp, value, display, where, pos)
    if origin is tuple:
        if isinstance(value, str):  # a single value where a list is expected
            value = [value]
        if not isinstance(value, list):
            raise ConfigError(f"`{where}` must be a list", display, *pos)
        return tuple(
            convert(args[0], v, display, f"{where}[{i}]", _item_pos(value, i, pos))
            for i, v in enumerate(value)
        )
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"`{where}` must be a mapping", display, *pos)
        return {
            str(k): convert(args[1], v, display, f"{where}.{k}", _value_pos(value, k, pos))
            for k, v in value.items()
        }
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"`{where}` must be true or false, not {value!r}", display, *pos)
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"`{where}` must be an integer, not {value!r}", display, *pos)
        return int(value)
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"`{where}` must be a number, not {value!r}", display, *pos)
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"`{where}` must be a string, not {value!r}", display, *pos)
        return str(value)
    raise TypeError(f"unsupported config annotation {tp!r}")  # a bug in a section class


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


def _key_pos(data: Any, key: Any) -> tuple[int, int]:
    try:
        line, col = data.lc.key(key)
        return line + 1, col + 1
    except (AttributeError, KeyError, TypeError):
        return (1, 1)


def _value_pos(data: Any, key: Any, fallback: tuple[int, int]) -> tuple[int, int]:
    try:
        line, col = data.lc.value(key)
        return line + 1, col + 1
    except (AttributeError, KeyError, TypeError):
        return fallback


def _item_pos(seq: Any, i: int, fallback: tuple[int, int]) -> tuple[int, int]:
    try:
        line, col = seq.lc.item(i)
        return line + 1, col + 1
    except (AttributeError, KeyError, TypeError, IndexError):
        return fallback


def _display(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _with_digest(cfg: Config) -> Config:
    settings = {f.name: dataclasses.asdict(getattr(cfg, f.name))
                if dataclasses.is_dataclass(getattr(cfg, f.name)) else getattr(cfg, f.name)
                for f in dataclasses.fields(cfg)
                # Scopes do not change the main index: declaring one must not make it stale.
                if f.name not in _SKIP_FIELDS and f.name != "scopes"}
    blob = json.dumps(settings, sort_keys=True, default=list).encode()
    return dataclasses.replace(cfg, digest=hashlib.sha256(blob).hexdigest())
