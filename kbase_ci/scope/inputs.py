"""What `index.build.build_index(scope=...)` needs from the main index to build a scope:
the model block, the source, the notes outside the scope, and the manifest block."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..index.embed import ModelChoice
from ..index.source import Source
from ..model import ParsedNote


@dataclass(frozen=True)
class ScopeInputs:
    model: ModelChoice
    """The main index's model; its `path` names the vector donor (`donor.py`), so no
    chunk is embedded again."""
    source: Source
    """The main index's source: a scope is of the same commit."""
    outside: tuple[ParsedNote, ...]
    """The main index's other notes, names and anchors only: links resolve as in the
    whole vault, and those landing outside become `out_of_scope`."""
    manifest: dict[str, Any]
    """The manifest's `scope` block: name, selectors, main index digest and commit."""
