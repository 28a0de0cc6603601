from __future__ import annotations

from pathlib import Path

import pytest

from kbase_ci.cli.main import exit_code_for
from kbase_ci.errors import ConfigError
from kbase_ci.vault.config import Config, load_config, parse_config


def test_defaults_when_missing(tmp_path: Path) -> None:
    cfg = load_config(tmp_path)
    assert cfg == Config(digest=cfg.digest)
    assert cfg.links.resolve_aliases is True
    assert len(cfg.digest) == 64


def test_values_are_read_and_lists_become_tuples() -> None:
    cfg = parse_config("vault:\n  folders: [notes, docs]\n  exclude: templates/**\n"
                       "links:\n  resolve_aliases: false\n")
    assert cfg.vault.folders == ("notes", "docs")
    assert cfg.vault.exclude == ("templates/**",)
    assert cfg.links.resolve_aliases is False


def test_digest_depends_on_settings() -> None:
    a = parse_config("links:\n  resolve_aliases: false\n")
    b = parse_config("links:\n  resolve_aliases: true\n")
    assert a.digest != b.digest
    assert parse_config("# only a comment\n").digest == b.digest


@pytest.mark.parametrize(("text", "line", "col", "words"), [
    ("vault:\n  folderz: [a]\n", 2, 3, ["unknown key `vault.folderz`", "did you mean `folders`"]),
    ("links:\n  resolve_aliases: maybe\n", 2, 20,
     ["`links.resolve_aliases` must be true or false"]),
    ("vault:\n  max_note_bytes: big\n", 2, 19, ["must be an integer"]),
    ("vault:\n  folders:\n    - a\n    - 3\n", 4, 7, ["`vault.folders[1]` must be a string"]),
    ("nonsense: 1\n", 1, 1, ["unknown key `nonsense`"]),
    ("vault: [1, 2]\n", 1, 8, ["`vault` must be a mapping"]),
    ("vault:\n  folders: [a\n", 3, 1, ["invalid YAML"]),
    ("- a\n- b\n", 1, 1, ["top level must be a mapping"]),
])
def test_errors_name_file_line_and_key(text: str, line: int, col: int, words: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "sub/.kbase.yml")
    err = info.value
    assert (err.path, err.line, err.col) == ("sub/.kbase.yml", line, col)
    assert str(err).startswith(f"sub/.kbase.yml:{line}:{col}: KB900 ")
    for w in words:
        assert w in str(err)
    assert exit_code_for(err) == 2


def test_explicit_missing_config_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path, tmp_path / "nope.yml")


@pytest.mark.parametrize(("data", "line", "col", "byte"), [
    (b"caf\xe9 \xff\n", 1, 4, "0xe9"),  # read as a scalar, it was "not a mapping"
    (b"vault:\n  folders: [\"caf\xe9\"]\n", 2, 17, "0xe9"),
    (b"\xff\xfe\x00\x01garbage", 1, 1, "0xff"),  # a UTF-16 mark: "invalid YAML" before
])
def test_a_config_that_is_not_utf8_says_so(tmp_path: Path, data: bytes, line: int, col: int,
                                          byte: str) -> None:
    (tmp_path / ".kbase.yml").write_bytes(data)
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert (info.value.line, info.value.col) == (line, col)
    assert str(info.value) == (f".kbase.yml:{line}:{col}: KB900 the file is not UTF-8 "
                               f"(byte {byte} here); save it as UTF-8")
