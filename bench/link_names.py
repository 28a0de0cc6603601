"""Which links name an added or deleted attachment (`query/linknames`), at the size of a
200k-link vault: the lookup queries use against the scan per name it replaced.

Usage: python -m bench.link_names [--links N] [--names 4,40,400]

The links are synthetic (wikilinks with folders and aliases, one in five a Markdown image
link), the names file names with extensions, a few of which the links use. Prints CPU
seconds of both and their ratio per count of names; both must find the same links.
"""

from __future__ import annotations

import argparse
import random
import string
import sys
import time

from bench.machine import load
from kbase_ci.query.linknames import attachment_names, links_naming


def _word(rng: random.Random) -> str:
    return "".join(rng.choices(string.ascii_lowercase + " ", k=rng.randint(5, 20)))


def links(n: int, rng: random.Random) -> list[str]:
    return [f"[[{_word(rng)}/{_word(rng)}|{_word(rng)}]]" if rng.random() < 0.8
            else f"![{_word(rng)}](img/{_word(rng)}.png)" for _ in range(n)]


def scan(raws: list[str], names: set[str]) -> list[int]:
    """The scan `freshness._attachment_relinks` ran before: every name in every link."""
    return [i for i, raw in enumerate(raws) if any(n in raw.casefold() for n in names)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--links", type=int, default=200_000)
    parser.add_argument("--names", default="4,40,400")
    args = parser.parse_args(argv)
    rng = random.Random(32)
    raws = links(args.links, rng)
    print(f"load average at start: {load()}; {len(raws)} links")
    for count in (int(c) for c in args.names.split(",")):
        files = [f"attachments/{_word(rng)}.png" for _ in range(count)]
        image = next(r for r in reversed(raws) if r.endswith(".png)"))
        files[0] = "img/" + image.rsplit("/", 1)[-1].rstrip(")")  # some link names it
        names = attachment_names(files)
        t0 = time.process_time()
        fast = links_naming(raws, names)
        t1 = time.process_time()
        slow = scan(raws, names)
        t2 = time.process_time()
        if fast != slow:
            print(f"{count} names: the lookup and the scan differ", file=sys.stderr)
            return 1
        print(f"{count} names: lookup {t1 - t0:.3f} s CPU, scan {t2 - t1:.3f} s CPU, "
              f"ratio {(t1 - t0) / (t2 - t1):.3f} ({len(fast)} links name them)")
    print(f"load average at end: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
