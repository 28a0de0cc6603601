"""kbase_ci.report.escape: untrusted text (note names, headings, config keys) made inert
for each place it lands, one table of cases per sink. (Hostile text end to end: the PR
comment in tests/unit/ci/test_ci_render.py, random text in tests/slow/test_fuzz.py.)"""

from __future__ import annotations

import pytest

from kbase_ci.report.escape import (
    ZWJ,
    ZWSP,
    command_data,
    command_property,
    log_text,
    md_text,
    md_url,
    mermaid_label,
    terminal_text,
)

TERMINAL = [
    ("plain name.md", "plain name.md"),
    ("a\x1b[31mred", "a\\x1b[31mred"),  # no escape sequence reaches the terminal
    ("one\ntwo", "one\\x0atwo"),
    ("over\rwrite", "over\\x0dwrite"),
    ("tab\tkept", "tab\tkept"),
    ("\u202eevil.md", "\\u202eevil.md"),  # bidi override shown, not obeyed
    ("c1\x85next", "c1\\x85next"),
    ("\ufeffbom", "\\ufeffbom"),
    ("::error::forged", "./::error::forged"),  # never a workflow command
    ("  ::warning::indented", "./  ::warning::indented"),
    ("a::b in the middle", "a::b in the middle"),
]


@pytest.mark.parametrize(("text", "shown"), TERMINAL)
def test_terminal_text(text: str, shown: str) -> None:
    assert terminal_text(text) == shown


@pytest.mark.parametrize(("text", "shown"), [
    ("one\ntwo", "one\ntwo"),
    ("ok\n::set-output name=x::y", "ok\n./::set-output name=x::y"),
    ("line\r\nbreak", "line\\x0d\nbreak"),
])
def test_terminal_text_keeping_lines(text: str, shown: str) -> None:
    assert terminal_text(text, lines=True) == shown


MARKDOWN = [
    ("plain words", "plain words"),
    ("**bold** _it_", "\\*\\*bold\\*\\* \\_it\\_"),
    ("[x](https://evil.example)", f"\\[x\\]\\(https:{ZWSP}//evil.example\\)"),
    ("see www.evil.example", f"see www{ZWSP}.evil.example"),
    ("WWW.CAPS.EXAMPLE", f"WWW{ZWSP}.CAPS.EXAMPLE"),
    ("ftp://x", f"ftp:{ZWSP}//x"),
    ("fixes #12", f"fixes \\#{ZWJ}12"),
    ("@org/team", f"@{ZWJ}org/team"),
    ("a | b", "a \\| b"),
    ("`code` ~strike~ $math$", "\\`code\\` \\~strike\\~ \\$math\\$"),
    ("<details>", "&lt;details&gt;"),
    ('say "hi" & go', "say &quot;hi&quot; &amp; go"),
    ("two\nlines", "two lines"),
    ("\u202eevil", "evil"),
    ("row\u2028break", "rowbreak"),
]


@pytest.mark.parametrize(("text", "shown"), MARKDOWN)
def test_md_text(text: str, shown: str) -> None:
    assert md_text(text) == shown


@pytest.mark.parametrize(("path", "url"), [
    ("notes/a b.md", "notes/a%20b.md"),
    ("notes/c#d?.md", "notes/c%23d%3F.md"),
    ("100%.md", "100%25.md"),
    ("x)y].md", "x%29y%5D.md"),
    ("Ünï.md", "%C3%9Cn%C3%AF.md"),
    ("x\udcffy.md", "x%FFy.md"),  # a non-UTF-8 name: its own byte
])
def test_md_url(path: str, url: str) -> None:
    assert md_url("https://github.com/o/r/blob/abc/", path) == \
        "https://github.com/o/r/blob/abc/" + url


@pytest.mark.parametrize(("text", "label"), [
    ("Plain name-1_2./x", "Plain name-1_2./x"),
    ("Café", "Café"),
    ('Say "Cheese"', "Say #34;Cheese#34;"),
    ("a[b]{c}", "a#91;b#93;#123;c#125;"),
    ("two\nlines", "two lines"),
    ("\u202eevil", "evil"),
])
def test_mermaid_label(text: str, label: str) -> None:
    assert mermaid_label(text) == label


@pytest.mark.parametrize(("text", "line"), [
    ("::error::x", f":{ZWSP}:error:{ZWSP}:x"),
    ("one\ntwo\rthree", "one two three"),
    ("plain", "plain"),
])
def test_log_text(text: str, line: str) -> None:
    assert log_text(text) == line


# Issue 28: GitHub cross-references `GH-N` too; an annotation's message is shown in the
# log and on the PR, so an escape sequence in a note's text must arrive inert.
@pytest.mark.parametrize(("text", "shown"), [
    ("fixes GH-12", "fixes GH\u200b-12"),
    ("gh-7 and Gh-8", "gh\u200b-7 and Gh\u200b-8"),
    ("XGH-4 GH-x", "XGH-4 GH-x"),
])
def test_md_text_breaks_gh_references(text: str, shown: str) -> None:
    assert md_text(text) == shown


@pytest.mark.parametrize(("text", "data"), [
    ("a\x1b[31mred", "a\\x1b[31mred"),
    ("bell\x07 and \x9b", "bell\\x07 and \\x9b"),
    ("two\nlines 100%", "two%0Alines 100%25"),
    ("cr\r\nhere", "cr%0D%0Ahere"),
    ("\u202eevil", "\\u202eevil"),
])
def test_command_data_shows_control_characters(text: str, data: str) -> None:
    assert command_data(text) == data
    assert "\x1b" not in command_property(text) and "\r" not in command_property(text)
