"""What a section lists: file paths (Changes Made) and commands with outcomes (Build
Verification), read from the judged lines of `placeholders.read_body`.

Both are read leniently, the way people write them: a path is a code span, a link
destination, or the first word of a bullet when it looks like a path (a code span or a
`<...>` destination keeps its spaces: `notes/My Note.md` is one path); a command is a
code span, a `$ cmd` line, or a fenced block, and its outcome is a word like
"passed", "3 failed", "exit 0" or "OK" on the same line, in the block's output, or
on the line right after.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

from kbase_ci.handover.placeholders import Body, BodyLine, read_body, strip_marker
from kbase_ci.parse.anchors import normalize_heading
from kbase_ci.parse.linksyntax import is_external
from kbase_ci.parse.outline import sections, split_lines
from kbase_ci.parsed import ParsedNote
from kbase_ci.vault.globs import MAX_GLOB
from kbase_ci.vault.globs import match as glob_match

_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# `[t](<a b.md>)` keeps its spaces; `[t](a.md "title")` ends at the space.
_MD_DEST = re.compile(r"\]\(\s*(?:<([^>\n]+)>|([^)\s>]+))")
_WIKI = re.compile(r"\[\[([^\]|#]+)")
_SEPARATOR = re.compile(r"\s+(?:-|–|—|:|=>|->)\s+")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_DONE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[[xX]\]")
_EXT = re.compile(r"\.[A-Za-z0-9_]{1,12}$")
_BARE_FILES = {"makefile", "dockerfile", "justfile", "license", "readme", "gemfile",
               "procfile", "rakefile", "vagrantfile", "jenkinsfile", "codeowners"}
_OUTCOME = re.compile(
    r"\b(?:pass(?:ed|es|ing)?|fail(?:ed|s|ing|ures?)?|ok|green|red|succe(?:ss|ssful|ssfully"
    r"|eded|eds)|errors?|clean|built|broken|skipped|exit(?:ed)?(?: with)?(?: code| status)?"
    r" ?\d+|\d+ (?:tests?|checks?|passed|failed|errors?|warnings?|files?)|no (?:errors|issues"
    r"|warnings|findings|problems))\b|[✓✔✗✘❌✅]", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ListedPath:
    path: str
    line: int
    col: int


@dataclass(frozen=True, slots=True)
class Command:
    text: str
    line: int
    col: int
    outcome: str | None
    """The words that say how it went; None when nothing does."""


# First words of a command, which a code span in Changes Made may hold instead of a path.
_COMMAND_WORDS = frozenset(("git", "python", "python3", "pytest", "pip", "uv", "make", "npm",
                            "npx", "yarn", "pnpm", "node", "cargo", "go", "bash", "sh",
                            "kbase", "ruff", "mypy", "docker", "just", "rm", "mv", "cp"))


def _spaced_path(s: str) -> bool:
    """A delimited text with spaces (a code span, a `<...>` link destination) that names
    a file or folder ("notes/My Note.md", "Daily Notes/"), not a command ("pytest a.py")."""
    words = s.split()
    return (s == s.strip() and (bool(_EXT.search(s)) or s.endswith("/"))
            and not any(w.startswith("-") for w in words) and not set(s) & set("|&;$=<>")
            and words[0].lower() not in _COMMAND_WORDS)


def looks_like_path(s: str, *, delimited: bool = False) -> bool:
    """`delimited`: `s` was written between delimiters (backticks, `<...>`), so it may hold
    spaces as a file name does."""
    if not s or s.startswith("-") or is_external(s):
        return False
    if any(c.isspace() for c in s) and not (delimited and _spaced_path(s)):
        return False
    if s.endswith(")") or s.startswith(("$", "#", "@")):
        return False
    name = s.rstrip("/").rsplit("/", 1)[-1]
    return "/" in s or bool(_EXT.search(s)) or name.lower() in _BARE_FILES


def _clean(p: str) -> str:
    p = p.strip().strip("\"'")
    if p.startswith("./"):
        p = p[2:]
    return p


def listed_paths(body: Body) -> list[ListedPath]:
    """Paths a Changes Made section names, in order, each once."""
    out: list[ListedPath] = []
    seen: set[str] = set()
    for ln in body.content:
        if ln.code:
            continue
        found: list[tuple[int, str]] = []
        for m in _CODE_SPAN.finditer(ln.text):
            if looks_like_path(m.group(2).strip(), delimited=True):
                found.append((m.start(2), m.group(2)))
        for m in _MD_DEST.finditer(ln.text):
            group = 1 if m.group(1) is not None else 2
            raw = m.group(group).strip().partition("#")[0]
            dest = unquote(raw)  # a%20b.md: the spaces were escaped, so they belong to it
            if looks_like_path(dest, delimited=group == 1 or dest != raw):
                found.append((m.start(group), dest))
        for m in _WIKI.finditer(ln.text):
            if looks_like_path(m.group(1).strip()):
                found.append((m.start(1), m.group(1).strip()))
        if not found and _BULLET.match(ln.text):
            rest = strip_marker(ln.text)
            word = _bullet_path(rest)
            if word is not None:
                found.append((len(ln.text) - len(rest), word))
        for col, raw in sorted(found):
            p = _clean(raw)
            if p and p not in seen:
                seen.add(p)
                out.append(ListedPath(p, ln.line, col + 1))
    return out


def _bullet_path(rest: str) -> str | None:
    """The path a bullet starts with. The whole bullet first (up to a ` - `, `: ` or
    ` (` that starts a comment), so `Ideas/New idea.md` stays one path; else its first word
    (`src/a.py fixed the parser`). A spaced path must end like a file or folder, and no
    earlier word may (`a.md and b.md` are two)."""
    for cut in (_SEPARATOR.split(rest, maxsplit=1)[0], rest.split(": ", 1)[0],
                rest.split(" (", 1)[0]):
        text = cut.strip().rstrip(":,;.").strip("*_")
        words = text.split()
        if len(words) > 1 and not any(_EXT.search(w) or w.endswith("/") for w in words[:-1]) \
                and looks_like_path(text, delimited=True):
            return text
    word = rest.split()[0] if rest.split() else ""
    word = word.rstrip(":,;.").strip("*_")
    return word if looks_like_path(word) else None


def path_matches(listed: str, path: str) -> bool:
    """`listed` names `path`: the same file, a folder holding it, or a glob matching it."""
    if listed == path or path.startswith(listed.rstrip("/") + "/"):
        return True
    return any(c in listed for c in "*?[") and len(listed) <= MAX_GLOB and \
        glob_match(listed, path)


def commands(body: Body) -> list[Command]:
    """Commands a Build Verification section names, with the outcome given for each."""
    out: list[Command] = []
    lines = list(body.content)
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.code:  # a fenced block: one command group, its output may say how it went
            block = [ln]
            while i + 1 < len(lines) and lines[i + 1].fence == ln.fence:
                i += 1
                block.append(lines[i])
            first = block[0].text.strip().removeprefix("$ ").strip()
            outcome = _outcome_in(" ".join(b.text for b in block[1:]) or "") \
                or _outcome_near(lines, i)
            out.append(Command(first, block[0].line, 1, outcome))
            i += 1
            continue
        cmds = [(m.start(2), m.group(2).strip()) for m in _CODE_SPAN.finditer(ln.text)]
        rest = _CODE_SPAN.sub(" ", ln.text)
        text = strip_marker(ln.text).strip()
        if not cmds and text.startswith("$ "):
            # `$ make test - 3 failed`: the outcome follows a dash or colon separator.
            parts = _SEPARATOR.split(text[2:], maxsplit=1)
            cmds = [(ln.text.find("$ ") + 2, parts[0].strip())]
            rest = parts[1] if len(parts) > 1 else ""
        if cmds:
            outcome = _outcome_in(rest) or _continuation_outcome(lines, i)
            out.extend(Command(c, ln.line, col + 1, outcome) for col, c in cmds[:1])
            # Several code spans on one line are one command and its arguments, usually.
        i += 1
    return out


def _outcome_in(text: str) -> str | None:
    m = _OUTCOME.search(text)
    return m.group() if m else None


def _outcome_near(lines: list[BodyLine], i: int) -> str | None:
    """The prose line right after a fenced block may say how it went."""
    if i + 1 < len(lines) and not lines[i + 1].code and not _CODE_SPAN.search(lines[i + 1].text):
        return _outcome_in(lines[i + 1].text)
    return None


def _continuation_outcome(lines: list[BodyLine], i: int) -> str | None:
    """An indented line under a bullet, without a command of its own, may give the result."""
    j = i + 1
    if j < len(lines) and not lines[j].code and lines[j].line == lines[i].line + 1 and \
            lines[j].text.startswith((" ", "\t")) and not _CODE_SPAN.search(lines[j].text):
        return _outcome_in(lines[j].text)
    return None


def section_items(note: ParsedNote, text: str, names: tuple[str, ...]) -> list[str]:
    """The open items of a section: bullets (checked `[x]` ones dropped) or lines."""
    wanted = {normalize_heading(n) for n in names}
    sec = next((s for s in sections(note, text, nested=True) if s.heading is not None
                and normalize_heading(s.heading.text) in wanted), None)
    if sec is None:
        return []
    body = read_body(split_lines(text), sec.start_line + 1, sec.end_line, sec.title)
    items: list[str] = []
    done = False  # inside a checked `- [x]` item: its continuation lines are done too
    for ln in body.content:
        if ln.code:
            continue
        if _BULLET.match(ln.text):
            done = bool(_DONE.match(ln.text))
            if not done:
                items.append(strip_marker(ln.text).strip())
        elif ln.text[:1] in " \t" and (done or items):
            if not done:
                items[-1] = f"{items[-1]} {ln.text.strip()}"
        else:
            done = False
            items.append(ln.text.strip())
    return items
