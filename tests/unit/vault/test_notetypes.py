"""Note types: matching, `.kbase.yml` overrides, and malformed schemas located at file,
line and key (also through the CLI, exit 2)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.errors import ConfigError
from kbase_ci.parse.parser import parse_note
from kbase_ci.vault.config import parse_config
from kbase_ci.vault.notetypes import NoteTypes
from tests.conftest import run_kbase


@pytest.mark.parametrize(("path", "text", "expected"), [
    ("a.md", "---\ntype: handover\n---\n", "handover"),
    ("a.md", "---\ntype: Question\n---\n", "question"),
    ("a.md", "---\ntype: adr\n---\n", "decision"),
    ("a.md", "Ends a session. #handover/track-3\n", "handover"),
    # Only `#handover` is specific enough to match by tag; `#decision`, `#question` are
    # everyday tags, so the other built-ins match by `type:` or folder only.
    ("a.md", "---\ntags: [decision]\n---\n", None),
    ("a.md", "Is this right? #question\n", None),
    ("handovers/x.md", "text\n", "handover"),
    ("deep/handovers/x.md", "text\n", None),
    ("discoveries/x.md", "text\n", "discovery"),
    ("questions/x.md", "---\ntype: answer\n---\n", "answer"),
    ("handovers/x.md", "---\ntype: meeting\n---\n", None),
    ("notes/x.md", "#handovers are nice\n", None),
])
def test_builtin_matching(path: str, text: str, expected: str | None) -> None:
    t = NoteTypes.builtin().type_of(parse_note(path, text.encode()))
    assert (t.name if t else None) == expected


def test_overrides_merge_over_the_builtins() -> None:
    cfg = parse_config(
        "types:\n"
        "  handover:\n"
        "    fields:\n"
        "      reviewer: {type: string, weight: 3}\n"
        "      completes: {required: false}\n"
        "    sections:\n"
        "      Risks: {weight: 5}\n"
        "      Key Decisions: {aliases: [Choices]}\n"
        "    drop: [Discovered Issues]\n"
        "  question:\n"
        "    fields:\n"
        "      urgency: {values: [now, later]}\n"
        "  incident:\n"
        "    extends: discovery\n"
        "    match: {paths: ['incidents/**']}\n"
        "  decision:\n"
        "    enabled: false\n")
    types = cfg.types
    h = types.get("handover")
    assert h is not None
    assert [f.name for f in h.fields] == ["completes", "track", "date", "reviewer"]
    assert h.field_spec("completes").required is False  # type: ignore[union-attr]
    assert h.field_spec("completes").kind == "ref"  # type: ignore[union-attr]
    assert h.section_spec("Discovered Issues") is None
    assert h.section_spec("Choices") is h.section_spec("Key Decisions")
    risks = h.section_spec("risks")
    assert risks is not None and risks.weight == 5 and risks.required
    assert h.rules == types.get("handover").rules  # type: ignore[union-attr]
    q = types.get("question")
    assert q is not None and q.field_spec("urgency").values == ("now", "later")  # type: ignore[union-attr]
    inc = types.get("incident")
    assert inc is not None and [s.name for s in inc.sections] == ["Finding", "Evidence", "Action"]
    assert types.type_of(parse_note("incidents/db.md", b"x\n")) is inc
    assert types.get("decision") is None
    assert types.type_of(parse_note("a.md", b"---\ntype: decision\n---\n")) is None
    assert cfg.digest != parse_config("").digest


def test_defaults_need_no_configuration() -> None:
    cfg = parse_config("")
    assert [t.name for t in cfg.types.types] == ["handover", "question", "answer",
                                                 "discovery", "decision"]
    assert cfg.handover.folder == "handovers/" and cfg.handover.threshold == 80


MALFORMED = [
    ("types:\n  handover:\n    feilds: {a: {}}\n", 3, 5,
     "unknown key `types.handover.feilds`; did you mean `fields`?"),
    ("types:\n  handover:\n    fields:\n      reviewer: {type: text}\n", 4, 24,
     "`types.handover.fields.reviewer.type` must be one of string | integer"),
    ("types:\n  handover:\n    fields:\n      level: {type: enum}\n", 4, 7,
     "`types.handover.fields.level`: an enum field needs `values`"),
    ("types:\n  handover:\n    rules:\n      - when: {status: [partial]}\n"
     "        require: [Next Steps, Risks]\n", 5, 31,
     "`types.handover.rules[0].require[1]`: `handover` has no field or section `Risks`"),
    ("types:\n  handover:\n    rules:\n      - when: {status: [done]}\n"
     "        require: [Next Steps]\n", 4, 24,
     "`types.handover.rules[0].when.status`: `done` is not one of complete | partial"),
    ("types:\n  handover:\n    rules:\n      - when: {mood: [good]}\n"
     "        require: [Next Steps]\n", 4, 16,
     "`types.handover.rules[0].when.mood`: `handover` has no field or section `mood`"),
    ("types:\n  handover:\n    rules:\n      - require: [Next Steps]\n", 4, 9,
     "`types.handover.rules[0]` needs both `when` and `require`"),
    ("types:\n  incident:\n    extends: discovry\n", 3, 14,
     "`types.incident.extends`: no note type `discovry`"),
    ("types:\n  answer:\n    fields:\n      answers: {target: questoin}\n", 4, 25,
     "`types.answer.fields.answers.target`: no note type `questoin`"),
    ("types:\n  handover:\n    drop: [Status, Nope]\n", 3, 20,
     "`types.handover.drop[1]`: `handover` has no field or section `Nope`"),
    ("types:\n  handover:\n    sections:\n      Risks: 5\n", 4, 14,
     "`types.handover.sections.Risks` must be a mapping"),
    ("types:\n  handover:\n    sections:\n      Risks: {weight: -1}\n", 4, 23,
     "`types.handover.sections.Risks.weight` must not be negative"),
    ("types:\n  handover:\n    sections:\n      Risks: {content: prose}\n", 4, 24,
     "`types.handover.sections.Risks.content` must be one of text | paths | commands"),
    ("types:\n  handover:\n    match: {}\n", 3, 5,
     "`types.handover.match` needs `type`, `tags` or `paths`"),
    ("types: [handover]\n", 1, 8, "`types` must be a mapping of type names"),
    ("handover:\n  threshold: high\n", 2, 14, "`handover.threshold` must be an integer"),
]


@pytest.mark.parametrize(("text", "line", "col", "words"), MALFORMED)
def test_malformed_schemas_are_located(text: str, line: int, col: int, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "cfg/.kbase.yml")
    err = info.value
    assert (err.path, err.line, err.col) == ("cfg/.kbase.yml", line, col)
    assert words in str(err)


@pytest.mark.parametrize("case", [0, 4, 8])
def test_malformed_schema_exits_2_through_the_cli(case: int,
                                                  make_repo: Callable[..., Path]) -> None:
    text, line, col, words = MALFORMED[case]
    root = make_repo({".kbase.yml": text, "a.md": "# A\n"})
    for args in (["handover", "check"], ["check", "--select", "handover"],
                 ["new", "handover"]):
        proc = run_kbase(*args, cwd=root)
        assert proc.returncode == 2, proc.stderr
        assert f".kbase.yml:{line}:{col}: KB900 " in proc.stderr
        assert words in proc.stderr


def test_override_changes_what_is_checked(make_repo: Callable[..., Path]) -> None:
    cfg = ("handover:\n  threshold: 50\n  folder: notes/sessions/\n"
           "types:\n  handover:\n    drop: [Discovered Issues, Key Decisions]\n"
           "    sections:\n      Risks: {weight: 10}\n"
           "  incident:\n    match: {paths: ['incidents/**']}\n"
           "    fields: {severity: {values: [low, high]}}\n"
           "    sections: {Timeline: {}}\n")
    root = make_repo({".kbase.yml": cfg,
                      "incidents/db.md": "---\nseverity: medium\n---\n# DB\n\n## Timeline\n"
                                         "- 10:02 alerts fire\n"})
    proc = run_kbase("handover", "check", "incidents/db.md", "--format", "json", cwd=root)
    assert proc.returncode == 0, proc.stderr  # 67 >= handover.threshold 50
    note = json.loads(proc.stdout)["notes"][0]
    # severity (weight 5) is wrong, Timeline (default weight 10) is there: 10 of 15
    assert note["type"] == "incident" and note["score"] == 67
    strict = run_kbase("handover", "check", "incidents/db.md", "--threshold", "70", cwd=root)
    assert strict.returncode == 1, strict.stderr
    assert [(m["code"], m["rule"]) for m in note["missing"]] == [("KB404", "field severity")]
    new = run_kbase("new", "handover", "--track", "2", "--date", "2025-05-01", cwd=root)
    assert new.returncode == 0, new.stderr
    assert new.stdout.strip() == "notes/sessions/2025-05-01-handover-track-2.md"
    skeleton = (root / new.stdout.strip()).read_text(encoding="utf-8")
    assert "## Risks" in skeleton and "## Key Decisions" not in skeleton
    check = run_kbase("handover", "check", new.stdout.strip(), "--format", "json", cwd=root)
    rules = {m["rule"] for m in json.loads(check.stdout)["notes"][0]["missing"]}
    assert "section Risks" in rules and "section Key Decisions" not in rules
