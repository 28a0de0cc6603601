"""The config digest an index records: byte-identical across changes to how the config
classes are declared (a change would make every published index look built under
another config). The expected values were computed on main e574b9c, when the sections
were frozen dataclasses and the digest was made by `dataclasses.asdict`."""

from __future__ import annotations

import pytest

from kbase_ci.errors import ConfigError
from kbase_ci.vault.checkconfig import ChecksConfig
from kbase_ci.vault.config import Config, _with_digest, parse_config
from kbase_ci.vault.notetypes import NoteTypes

CONFIGS = {
    "empty": "",
    "vault-links": """\
vault:
  folders: [notes, docs]
  exclude: ["templates/**", "*.excalidraw.md"]
  max_note_bytes: 1000000
  include_dot_folders: true
  untracked: false
links:
  resolve_aliases: false
  markdown_links: false
  ignore_targets: ["templates/*"]
  unresolved: warning
  unresolved_per_path: {"ideas/**": "off", "drafts/**": warning}
index:
  domain: "frontmatter:area"
  shard_max_bytes: 1000
  similar: 0
  stemmer: none
embeddings: {model: null, dim: 64}
handover: {folder: hand/, threshold: 70}
query: {max_tokens: 0}
""",
    "checks-tags-frontmatter": """\
checks:
  select: [KB1, KB201]
  ignore: [KB003]
  severity: {KB101: warning, KB2: "off"}
  per_path: {"archive/**": [KB101, KB102]}
tags:
  allowed: ["project/*", status, rust]
  pattern: "[a-z/]+"
  vocabularies: {status: [active, done]}
  required: {"projects/**": [project]}
  case_duplicates: false
frontmatter:
  required: {"people/**": [name, role]}
  types: {due: date, count: integer, links: "list[link]"}
  allowed: {status: [draft, 1, true]}
scopes:
  api: {include: ["path: api/**"]}
""",
    "note-types": """\
types:
  handover:
    fields: {reviewer: {type: string}, completes: {required: false}}
    sections: {Risks: {weight: 5}, Key Decisions: {aliases: [Choices]}}
    drop: [Discovered Issues]
  incident:
    extends: discovery
    match: {type: [incident], paths: ["incidents/**"]}
    fields: {severity: {type: enum, values: [low, high], weight: 7}}
  memo:
    match: {tags: [memo]}
    sections: {Summary: {content: paths, required: true}}
""",
}

EXPECTED = {
    'default': 'ede06b2b5d8286df5423acf54db839d32740df2968197b295dd9ae2bcd5c5c87',
    'empty': 'ede06b2b5d8286df5423acf54db839d32740df2968197b295dd9ae2bcd5c5c87',
    'vault-links': '28ef40a8e3f64d71ca4d314f446decb4355b09914ed2843cb5b4eadc7eacc4c9',
    'checks-tags-frontmatter': '70b34042b0f6feaaf64380b077b053f7e1ad1b67a4cc829b631637d12c4fb980',
    'note-types': '46a94c743b9cd76f36ac6362ed4bc89527c61e3303978bd511477b060b9603ca',
}


def test_default_config_digest() -> None:
    assert _with_digest(Config()).digest == EXPECTED["default"]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_config_digest_unchanged(name: str) -> None:
    assert parse_config(CONFIGS[name]).digest == EXPECTED[name]


def test_sections_stay_frozen_with_their_own_mutable_defaults() -> None:
    a, b = Config(), Config()
    with pytest.raises(AttributeError):
        a.vault.untracked = False  # type: ignore[misc]
    assert a == b and a.links.unresolved_per_path is not b.links.unresolved_per_path
    assert a.checks.severity is not b.checks.severity
    assert a.types == NoteTypes.builtin() and a.types.types[0].name == "handover"
    assert hash(a.vault) == hash(b.vault)


def test_check_positions_are_neither_compared_nor_shown() -> None:
    placed = parse_config("checks:\n  select: [KB101]\n").checks
    assert placed.where == {"select[0]": (2, 12)}
    bare = ChecksConfig(select=("KB101",))
    assert placed == bare and "where" not in repr(placed)
    assert repr(placed) == "ChecksConfig(select=('KB101',), ignore=(), severity={}, per_path={})"
    assert bare._replace(ignore=("KB2",)) != bare


TOP = "vault, links, checks, index, embeddings, handover, types, tags, frontmatter, scopes, query"


@pytest.mark.parametrize(("text", "message"), [
    ("digest: x\n", f"1:1: KB900 unknown key `digest`; known keys: {TOP}"),
    ("source: x\n", f"1:1: KB900 unknown key `source`; known keys: {TOP}"),
    ("checks:\n  where: {}\n", "2:3: KB900 unknown key `checks.where`; known keys: select, "
     "ignore, severity, per_path"),
    ("query:\n  max_tokens: -1\n", "2:15: KB900 `query.max_tokens` must be a whole number"),
    ("types:\n  x:\n    fields: {a: {type: enum}}\n",
     "3:14: KB900 `types.x.fields.a`: an enum field needs `values`"),
])
def test_errors_as_before(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(text)
    assert message in str(err.value)


def test_the_config_says_who_named_the_model_without_changing_the_digest() -> None:
    """A query downloads kbase's default model only when someone chose it: the config
    says which file named `embeddings.model` (None: nobody, the default), a code-only
    field that neither YAML sets nor the index's digest sees."""
    default = parse_config("", ".kbase.yml")
    named = parse_config("embeddings:\n  model: minishlab/potion-base-8M\n", "docs/.kbase.yml")
    dim_only = parse_config("embeddings:\n  dim: 64\n")
    assert default.embeddings.named_in is None and dim_only.embeddings.named_in is None
    assert named.embeddings.named_in == "docs/.kbase.yml"
    assert named.embeddings.model == default.embeddings.model
    assert named.digest == default.digest  # the same index either way
    with pytest.raises(ConfigError, match=r"unknown key `embeddings\.named_in`"):
        parse_config("embeddings:\n  named_in: x\n")
