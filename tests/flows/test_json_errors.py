"""An agent asking for JSON gets JSON on stdout on every exit: an error (a bad
`.kbase.yml`, a command line argparse refused, an unknown note) or no answer at all
(`handover latest` with none) is `{"error": {...}}` with the exit code it comes with,
and the line on stderr stays as it was. Without `--format json` stdout stays empty on
an error (exit 2); an answer that found nothing (exit 1) says so on stdout in its text
form. argparse's refusals name the command's own usage, not `kbase`'s."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import run_kbase

NOTES = {"a.md": "# A\n\nSee [[b]].\n", "b.md": "# B\n"}


def _error(stdout: str) -> dict[str, object]:
    assert stdout.count("\n") == 1, stdout  # one line: one JSON document
    body = json.loads(stdout)
    assert list(body) == ["error"]
    error: dict[str, object] = body["error"]
    return error


def test_a_config_error_names_its_place(make_repo: Callable[..., Path]) -> None:
    root = make_repo({**NOTES, ".kbase.yml": "vault:\n  folderz: x\n"})
    for argv in (["search", "b", "--format", "json"], ["check", "--format=json"]):
        proc = run_kbase(*argv, cwd=root)
        error = _error(proc.stdout)
        assert proc.returncode == 2 and error["exit_code"] == 2
        assert (error["kind"], error["path"], error["line"], error["col"]) == (
            "config", ".kbase.yml", 2, 3)
        assert "KB900 unknown key `vault.folderz`" in str(error["message"])
        assert "kbase: error: .kbase.yml:2:3: KB900" in proc.stderr


def test_a_refused_command_line_is_a_usage_error(make_repo: Callable[..., Path]) -> None:
    root = make_repo(NOTES)
    proc = run_kbase("search", "b", "--limit", "x", "--format", "json", cwd=root)
    error = _error(proc.stdout)
    assert proc.returncode == 2 and error == {
        "kind": "usage", "exit_code": 2,
        "message": "kbase search: argument --limit: invalid int value: 'x'"}
    # argparse's own words on stderr, unchanged
    assert proc.stderr.startswith("usage: kbase search")
    assert "kbase search: error: argument --limit: invalid int value: 'x'" in proc.stderr


def test_an_unknown_note_and_no_handover(make_repo: Callable[..., Path]) -> None:
    root = make_repo(NOTES)
    proc = run_kbase("read", "nothere", "--format", "json", cwd=root)
    assert proc.returncode == 2
    assert _error(proc.stdout) == {"kind": "usage", "exit_code": 2,
                                   "message": "no note named nothere"}
    proc = run_kbase("handover", "latest", "--format", "json", cwd=root)
    error = _error(proc.stdout)
    assert proc.returncode == 1 and (error["kind"], error["exit_code"], error["message"]) == (
        "not-found", 1, "no handover")
    assert "none is written yet" in str(error["hint"])
    assert proc.stderr == "kbase: no handover\n"


@pytest.mark.parametrize("argv", [
    ["read", "nothere"],
    ["read", "nothere", "--format", "text"],
    ["read", "--", "--format"],  # after `--`, `--format` is a note name, not the option
])
def test_the_text_form_keeps_stdout_empty(make_repo: Callable[..., Path],
                                          argv: list[str]) -> None:
    root = make_repo(NOTES)
    proc = run_kbase(*argv, cwd=root)
    assert proc.returncode in (1, 2) and proc.stdout == "" and proc.stderr


def test_no_handover_in_text_says_so_on_stdout(make_repo: Callable[..., Path]) -> None:
    """Issue 39: `handover latest` with none printed nothing in its text form."""
    root = make_repo(NOTES)
    proc = run_kbase("handover", "latest", cwd=root)
    assert proc.returncode == 1 and proc.stderr == ""
    assert proc.stdout.startswith("no handover: a handover is a note with `type: handover`")


@pytest.mark.parametrize(("argv", "usage", "bad"), [
    (["graph", "clusters", "--bogus"], "kbase graph clusters", "--bogus"),
    (["search", "b", "--bogus", "x"], "kbase search", "--bogus x"),
    (["tags", "suggest", "a", "--bogus"], "kbase tags suggest", "--bogus"),
    (["handover", "latest", "--bogus"], "kbase handover latest", "--bogus"),
    (["check", "--bogus"], "kbase check", "--bogus"),
])
def test_an_unknown_option_gets_its_commands_usage(make_repo: Callable[..., Path],
                                                   argv: list[str], usage: str,
                                                   bad: str) -> None:
    """Issue 39: an option a subcommand does not take printed `kbase`'s usage (the list
    of commands) instead of the subcommand's (its options)."""
    root = make_repo(NOTES)
    proc = run_kbase(*argv, cwd=root)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(f"usage: {usage} "), proc.stderr
    assert f"{usage}: error: unrecognized arguments: {bad}" in proc.stderr
    proc = run_kbase(*argv, "--format", "json", cwd=root)
    assert _error(proc.stdout)["message"] == f"{usage}: unrecognized arguments: {bad}"
