"""Print parse throughput (MB/s, single process, no cache) for the notes under a folder.

Usage: python bench/parse_speed.py FOLDER [FOLDER ...]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kbase_ci.parse.parser import parse_note


def main(folders: list[str]) -> None:
    for folder in folders:
        root = Path(folder)
        notes = [(p.relative_to(root).as_posix(), p.read_bytes())
                 for p in sorted(root.rglob("*.md"))]
        size = sum(len(d) for _, d in notes)
        start, cpu_start = time.perf_counter(), time.process_time()
        links = 0
        for rel, data in notes:
            links += len(parse_note(rel, data).links)
        secs = time.perf_counter() - start
        cpu = time.process_time() - cpu_start
        # CPU time too: on a shared machine, wall time also measures the neighbours.
        print(f"{folder}: {len(notes)} notes, {size / 1e6:.2f} MB, {links} links, "
              f"{secs:.2f} s wall = {size / 1e6 / secs:.2f} MB/s, "
              f"{cpu:.2f} s CPU = {size / 1e6 / cpu:.2f} MB/s")


if __name__ == "__main__":
    main(sys.argv[1:] or ["."])
