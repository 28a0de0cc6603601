"""Issue 38, item 9: `kbase-ignore-file` was honoured where it is no comment: inside
`$$` math, a link destination, a wikilink alias, an HTML attribute value. A note could
hide all its broken links behind text no reader sees as a comment. Only a real HTML
(or Obsidian `%%`) comment counts (kbase_ci.parse.suppressions); the real ones still
work."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_kbase

HIDDEN = {
    "display math": "$$\n<!-- kbase-ignore-file -->\n$$\n",
    "math on one line": "$$ x <!-- kbase-ignore-file --> y $$\n",
    "inline math": "the sum $a<!-- kbase-ignore-file -->b$ here\n",
    "link destination": "[x](<!-- kbase-ignore-file -->)\n",
    "bare link destination": "[x](a<!--kbase-ignore-file-->)\n",
    "wikilink alias": "[[Home|<!-- kbase-ignore-file -->]]\n",
    "HTML attribute": '<a title="<!-- kbase-ignore-file -->">x</a>\n',
    "escaped": "\\<!-- kbase-ignore-file -->\n",
    "inside another comment": "<!--\n<!-- kbase-ignore-file -->\n",
}
REAL = {
    "HTML comment": "<!-- kbase-ignore-file KB101 -->\n",
    "Obsidian comment": "%% kbase-ignore-file KB101 %%\n",
    "after a tag": "<span>note</span> <!-- kbase-ignore-file KB101 -->\n",
    "in link text": "[<!-- kbase-ignore-file KB101 -->](Home.md)\n",
}


def _check(make_repo: Callable[..., Path], text: str) -> tuple[int, str]:
    root = make_repo({"Home.md": "# Home\n",
                      "A.md": "# A\n\n" + text + "\nSee [[Ghost]].\n"})
    proc = run_kbase("check", cwd=root)
    return proc.returncode, proc.stdout


@pytest.mark.parametrize("case", list(HIDDEN))
def test_a_marker_that_is_no_comment_silences_nothing(make_repo: Callable[..., Path],
                                                      case: str) -> None:
    code, out = _check(make_repo, HIDDEN[case])
    assert code == 1 and "KB101" in out and "[[Ghost]]" in out, out


@pytest.mark.parametrize("case", list(REAL))
def test_a_real_comment_still_silences(make_repo: Callable[..., Path], case: str) -> None:
    code, out = _check(make_repo, REAL[case])
    assert code == 0 and "KB101" not in out, out
