"""docs/checks.md is generated from the check registry; this keeps it from going stale."""

from __future__ import annotations

from ruamel.yaml import YAML

from kbase_ci.checks import hookfile
from kbase_ci.checks.checkdocs import FRONTMATTER_EXAMPLE, TAGS_EXAMPLE, render
from kbase_ci.checks.checkregistry import REGISTRY
from kbase_ci.vault.checkconfig import FrontmatterConfig, TagsConfig
from kbase_ci.vault.config import parse_config
from tests.conftest import REPO


def test_docs_checks_md_matches_the_registry() -> None:
    path = REPO / "docs" / "checks.md"
    current = path.read_text(encoding="utf-8") if path.is_file() else ""
    assert current == render(), (
        "docs/checks.md is out of date with the check registry; regenerate it with "
        "`python -m kbase_ci.checks.checkdocs > docs/checks.md`")


def test_every_code_is_documented_once_with_its_check() -> None:
    text = render()
    for check in REGISTRY:
        assert f"| `{check.name}` | `{check.hook_id}` |" in text
        for code in check.codes:
            assert text.count(f"| {code} |") == 1, code


def test_config_examples_in_the_docs_are_valid_and_not_defaults() -> None:
    cfg = parse_config(TAGS_EXAMPLE + FRONTMATTER_EXAMPLE, "docs/checks.md")
    assert cfg.tags != TagsConfig() and cfg.frontmatter != FrontmatterConfig()
    assert cfg.tags.vocabularies["status"] == ("active", "done", "blocked")
    assert cfg.frontmatter.types["related"] == "list[link]"


def test_hooks_file_matches_the_registry_and_the_docs() -> None:
    """.pre-commit-hooks.yaml and docs/checks.md both come from the registry: every hook
    id the docs name is defined, and every check has its hook."""
    path = REPO / ".pre-commit-hooks.yaml"
    assert path.read_text(encoding="utf-8") == hookfile.render(), (
        ".pre-commit-hooks.yaml is out of date with the check registry; regenerate it with "
        "`python -m kbase_ci.checks.hookfile > .pre-commit-hooks.yaml`")
    hooks = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    defined = [h["id"] for h in hooks]
    assert defined == hookfile.hook_ids()
    docs = (REPO / "docs" / "checks.md").read_text(encoding="utf-8")
    named = {cells[2].strip().strip("`") for line in docs.splitlines()
             if (cells := line.split("|"))[2:3] and cells[2].strip().startswith("`kbase-")}
    assert named == {c.hook_id for c in REGISTRY} and named <= set(defined)
    for h in hooks:
        if h["id"].removeprefix("kbase-") in {c.name for c in REGISTRY}:
            assert h["entry"] == f"kbase check --staged --select {h['id'][6:]}"
