"""Re-spelling one link: a new target or anchor in the link's own style.

`relink` edits a link's own text: only the target, anchor or alias changes; the `!`,
`.md`, `<angle>` or %-encoding, title and spacing stay as written, and the result must
parse back to the intended parts. `retarget` picks the spelling of a new target in the
link's own style and proves it by resolving it. (`fileedit` puts the result in files.)
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import quote

from kbase_ci.errors import UsageError
from kbase_ci.parse.linksyntax import (
    closing_bracket,
    link_from_raw,
    markdown_link,
    wikilink_from_raw,
    wikilink_spans,
)
from kbase_ci.parsed import Link
from kbase_ci.vault.resolver import Resolver

# Characters a Markdown destination cannot hold literally (or that change its meaning).
_UNSAFE = frozenset(" \t<>()[]#?%\\\"'|`{}")
_ENCODED_NON_ASCII = re.compile(r"%[89A-Fa-f][0-9A-Fa-f]")


# -- one link's text ------------------------------------------------------------------

def relink(link: Link, target: str | None = None, subpath: str | None = None, *,
           alias: str | None = None) -> str | None:
    """`link.raw` with the target, subpath and/or alias (wikilink alias or Markdown link
    text; "" drops a wikilink alias) replaced; None when the new parts cannot be written
    in this link's syntax (a `|` in a wikilink target, a `>` inside `<...>`, ...)."""
    if link.style == "wiki":
        new = _wiki(link.raw, target, subpath, alias)
    else:
        new = _markdown(link.raw, target, subpath, alias)
    if new is None or not _reads_back(link, new, target, subpath, alias):
        return None
    return new


def _wiki(raw: str, target: str | None, subpath: str | None,
          alias: str | None) -> str | None:
    bang = "!" if raw.startswith("!") else ""
    body = raw[len(bang):]
    if not (body.startswith("[[") and body.endswith("]]")):
        return None
    inner = body[2:-2]
    bar = inner.find("|")
    head_end = len(inner) if bar < 0 else bar - 1 if bar > 0 and inner[bar - 1] == "\\" else bar
    head, rest = inner[:head_end], inner[head_end:]
    hash_at = head.find("#")
    tpart, spart = (head, "") if hash_at < 0 else (head[:hash_at], head[hash_at:])
    if target is not None:
        tpart = _keep_space(tpart, target)
    if subpath is not None:
        spart = f"#{subpath}" if subpath else ""
    if alias is not None:
        sep = "\\|" if rest.startswith("\\|") else "|"  # a table cell keeps its escape
        rest = sep + alias if alias else ""
    return f"{bang}[[{tpart}{spart}{rest}]]"


def _keep_space(old: str, new: str) -> str:
    stripped = old.strip()
    if not stripped:
        return new
    lead = old[:len(old) - len(old.lstrip())]
    trail = old[len(old.rstrip()):]
    return f"{lead}{new}{trail}"


def _text_end(raw: str) -> int | None:
    """Index of the `]` closing a Markdown link's text (or a definition's label)."""
    start = 1 if raw.startswith("!") else 0
    if raw[start:start + 1] != "[":
        return None
    end = closing_bracket(raw, start)
    return None if end < 0 else end


def _dest_region(raw: str) -> tuple[int, int] | None:
    """Start and end of the destination inside a Markdown link or reference definition."""
    i = _text_end(raw)
    if i is None:
        return None
    if raw[i + 1:i + 2] == "(" and raw.endswith(")"):
        return i + 2, len(raw) - 1
    if raw[i + 1:i + 2] == ":":
        return i + 2, len(raw)
    return None


def _markdown(raw: str, target: str | None, subpath: str | None,
              alias: str | None) -> str | None:
    region = _dest_region(raw)
    if region is None:
        return None
    if alias is not None:
        start = 2 if raw.startswith("!") else 1
        close = _text_end(raw)
        assert close is not None
        raw = raw[:start] + alias + raw[close:]
        region = _dest_region(raw)
        if region is None:
            return None
    a, b = region
    dest = raw[a:b]
    lead = len(dest) - len(dest.lstrip())
    body = dest[lead:]
    if body.startswith("<"):
        close = body.find(">")
        if close < 0:
            return None
        token, after = body[1:close], body[close:]
        angle = True
    else:
        end = next((i for i, c in enumerate(body) if c.isspace()), len(body))
        token, after = body[:end], body[end:]
        angle = False
    path, sep, frag = token.partition("#")
    full = bool(_ENCODED_NON_ASCII.search(token))
    if target is not None:
        enc = _encode(target, angle=angle, full=full, fragment=False)
        if enc is None:
            return None
        path = enc
    if subpath is not None:
        if subpath:
            enc = _encode(subpath, angle=angle, full=full, fragment=True)
            if enc is None:
                return None
            sep, frag = "#", enc
        else:
            sep, frag = "", ""
    token = f"{path}{sep}{frag}"
    if not token and not angle:
        return None
    new_dest = dest[:lead] + (f"<{token}" if angle else token) + after
    return raw[:a] + new_dest + raw[b:]


def _encode(text: str, *, angle: bool, full: bool, fragment: bool) -> str | None:
    if angle:
        return None if any(c in text for c in "<>\n\r") else text
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if fragment and ch == "#":
            out.append(ch)  # `#h1#h2`: the parser splits on the first `#` only
        elif ch in _UNSAFE or code < 0x20 or code == 0x7F or (full and code > 0x7E):
            out.append(quote(ch, safe=""))
        else:
            out.append(ch)
    return "".join(out)


def _reads_back(old: Link, new_raw: str, target: str | None, subpath: str | None,
                alias: str | None) -> bool:
    """The new text parses as one link with the intended parts and the old alias."""
    try:
        if old.style == "wiki":
            if wikilink_spans(new_raw) != [(0, len(new_raw))]:
                return False
            got = wikilink_from_raw(new_raw)
        elif _dest_region(new_raw) is not None and new_raw.rstrip().endswith(")"):
            got = link_from_raw(new_raw)
        else:  # reference definition `[label]: dest`
            region = _dest_region(new_raw)
            assert region is not None
            got = markdown_link(new_raw, old.alias or "", new_raw[region[0]:region[1]],
                                False, 1, 1)
    except UsageError:  # not a link at all any more
        return False
    want_target = old.target if target is None else target.strip()
    want_sub = old.subpath if subpath is None else subpath.strip()
    want_alias = old.alias
    if alias is not None:
        want_alias = alias.strip() if alias or old.style == "markdown" else None
    return (got.target == want_target and got.subpath == want_sub and got.alias == want_alias
            and got.embed == old.embed and not got.external)


# -- choosing the spelling of a new target -----------------------------------------------

def _strip_md(name: str) -> str:
    return name[:-3] if name.lower().endswith(".md") else name


def target_spellings(link: Link, source: str, new_path: str, via: str | None) -> list[str]:
    """Ways to write `new_path` from note `source`, the link's own style first: bare name,
    vault path (`/`-rooted if it was) or relative path; `.md` only if it was written."""
    written = link.target
    path = new_path
    if new_path.lower().endswith(".md"):
        # Keep the extension as the user wrote it: none, `.md` or `.MD`.
        path = _strip_md(new_path) + (written[-3:] if written.lower().endswith(".md") else "")
    name = path.rpartition("/")[2]
    folder = source.rpartition("/")[0]
    rel = posixpath.relpath(path, folder or ".")
    if written.startswith("./") and not rel.startswith("../"):
        rel = f"./{rel}"
    if written.startswith("/"):
        order = [f"/{path}", path]
    elif written.startswith(("./", "../")) or written in (".", ".."):
        order = [rel, path]
    elif "/" not in written:
        if link.style == "wiki":
            order = [name, path]
        else:  # a Markdown link is a relative URL first (GitHub reads it so)
            order = [name, rel, path] if via == "basename" else [rel, name, path]
    elif via == "relative":
        order = [rel, path]
    else:
        order = [path, rel]
    return list(dict.fromkeys(order))


def retarget(link: Link, source: str, new_path: str, resolver: Resolver,
             via: str | None = None) -> str | None:
    """`link` re-written to reach `new_path` from `source`, proven by resolving it; None
    when no spelling in the link's syntax finds that file unambiguously."""
    for text in target_spellings(link, source, new_path, via):
        new_raw = relink(link, text)
        if new_raw is None:
            continue
        probe = link_for(link, new_raw)
        r = resolver.resolve(source, probe)
        if r.status == "ok" and r.target == new_path and not r.ambiguous:
            return new_raw
    return None


def link_for(old: Link, new_raw: str) -> Link:
    """The Link record for `new_raw` written where `old` was."""
    if old.style == "wiki":
        got = wikilink_from_raw(new_raw, old.line, old.col)
    else:
        region = _dest_region(new_raw)
        if new_raw.rstrip().endswith(")"):
            got = link_from_raw(new_raw, old.line, old.col)
        else:
            assert region is not None
            got = markdown_link(new_raw, old.alias or "", new_raw[region[0]:region[1]],
                                False, old.line, old.col)
    return Link(got.style, got.embed, got.raw, got.target, got.subpath, got.alias, old.line,
                old.col, got.external, old.frontmatter_key)
