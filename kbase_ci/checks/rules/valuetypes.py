"""Frontmatter value types named in `frontmatter.types` of `.kbase.yml`.

Values arrive JSON-safe from the parser: YAML dates are ISO strings already, so `date`
accepts an ISO date (or date-time) string whether or not the YAML quoted it.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from kbase_ci.parse.linksyntax import wikilink_spans

DESCRIPTIONS = {
    "string": "text",
    "number": "a number (integer or decimal)",
    "integer": "an integer",
    "boolean": "true or false",
    "date": "an ISO date (YYYY-MM-DD, or a date-time)",
    "list": "a list",
    "mapping": "a mapping of keys to values",
    "link": 'a quoted wikilink ("[[Note]]")',
    "list[string]": "a list of texts",
    "list[link]": 'a list of quoted wikilinks (- "[[Note]]")',
}


def type_problem(value: Any, kind: str) -> str | None:
    """Why `value` is not of `kind`, or None when it is."""
    if kind.startswith("list[") and kind.endswith("]"):
        if not isinstance(value, list):
            return f"must be {DESCRIPTIONS[kind]}, not {describe(value)}"
        inner = kind[5:-1]
        for i, item in enumerate(value):
            why = type_problem(item, inner)
            if why is not None:
                return f"item {i + 1} {why}"
        return None
    if _is(value, kind):
        return None
    hint = ""
    if kind == "link" and _bare_wikilink(value):
        hint = ' (an unquoted [[...]] is a nested YAML list: write "[[...]]")'
    return f"must be {DESCRIPTIONS[kind]}, not {describe(value)}{hint}"


def _is(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "date":
        return isinstance(value, str) and _is_date(value)
    if kind == "list":
        return isinstance(value, list)
    if kind == "mapping":
        return isinstance(value, dict)
    if kind == "link":
        return isinstance(value, str) and len(wikilink_spans(value)) == 1
    raise ValueError(f"unknown value type {kind!r}")  # config validation makes this a bug


def _is_date(text: str) -> bool:
    s = text.strip()
    try:
        dt.date.fromisoformat(s)
        return True
    except ValueError:
        pass
    try:
        # A bare year or time is not a date, although fromisoformat may accept it.
        return len(s) >= 10 and dt.datetime.fromisoformat(s) is not None
    except ValueError:
        return False


def _bare_wikilink(value: Any) -> bool:
    """YAML reads `up: [[Note]]` as [["Note"]]."""
    return (isinstance(value, list) and len(value) == 1 and isinstance(value[0], list)
            and len(value[0]) == 1 and isinstance(value[0][0], str))


def describe(value: Any) -> str:
    if value is None:
        return "an empty value"
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the text {shown!r}"
    if isinstance(value, list):
        return "a list"
    return "a mapping"
