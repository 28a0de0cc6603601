"""Worker of bench/parse_compare.py: parse every note under some folders with whichever
`kbase_ci` is first on the import path, and print one JSON object: the parser's CPU
seconds, the bytes parsed, and a digest of each note's ParsedNote.

It is run as a script (`python bench/parse_digest.py FOLDER...`), never as `-m bench...`:
a script puts only its own folder on the path, so PYTHONPATH chooses the tree under test
(an older commit's worktree has no copy of this file).

Usage: PYTHONPATH=TREE python bench/parse_digest.py FOLDER [FOLDER ...]
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path


def main(folders: list[str]) -> None:
    import kbase_ci

    try:
        from kbase_ci.parse.parser import parse_note
    except ImportError:  # a tree before the parse package (e.g. 3360284)
        from kbase_ci.parser import parse_note  # type: ignore[no-redef,import-not-found,unused-ignore]

    notes: list[tuple[str, bytes]] = []
    for folder in folders:
        root = Path(folder)
        notes += [(f"{root.name}/{p.relative_to(root).as_posix()}", p.read_bytes())
                  for p in sorted(root.rglob("*.md"))]
    parse_note("warm-up.md", b"# a\n[[b]] `c` [d](e) <f> #g ^h\n")  # grammar and regexes
    start = time.process_time()
    parsed = [parse_note(rel, data) for rel, data in notes]
    cpu = time.process_time() - start
    digests = {note.path: hashlib.sha256(repr(note).encode()).hexdigest()[:16]
               for note in parsed}
    json.dump({"tree": str(Path(kbase_ci.__file__).parents[1]), "cpu": cpu,
               "bytes": sum(len(d) for _, d in notes), "notes": len(notes),
               "digests": digests}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
