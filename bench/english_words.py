"""The English words kbase never reads as a misspelling (kbase_ci/query/english-words.txt):
`python -m bench.english_words [--model DIR]`.

Made from the WordPiece vocabulary of BERT uncased (google-research/bert, Apache-2.0) as
all-MiniLM-L6-v2 ships it (sentence-transformers, Apache-2.0; its `tokenizer.json` in
../shared/models/minilm-l6-onnx): the whole words of it (not `##` pieces) of lower-case
ASCII letters and at least `misspell.SHORTEST` - 1 letters (a plural's singular), one
a line, sorted. The
vocabulary holds the words frequent in English Wikipedia and books, so a word of it that
no note holds is a word the vault does not use, not a slip of one it does ("pasta",
"lawn", "contract"), and codespell's misspellings are none of them (bench/search_typos.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench.search_targets import MODELS, ROOT

OUT = ROOT / "kbase_ci" / "query" / "english-words.txt"
HEADER = ("# English words kbase never reads as a misspelling (kbase_ci.query.misspell): the\n"
          "# whole words of BERT uncased's WordPiece vocabulary (google-research/bert,\n"
          "# Apache-2.0, as sentence-transformers' all-MiniLM-L6-v2 ships it), lower-case\n"
          "# ASCII letters, 3 letters or more. Made by `python -m bench.english_words`.\n")


def words(tokenizer: Path, shortest: int) -> list[str]:
    vocab = json.loads(tokenizer.read_text(encoding="utf-8"))["model"]["vocab"]
    return sorted(w for w in vocab if w.isascii() and w.isalpha() and w.islower()
                  and len(w) >= shortest)


def main(argv: list[str] | None = None) -> int:
    from kbase_ci.query.misspell import SHORTEST

    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, default=MODELS["transformer"])
    args = ap.parse_args(argv)
    got = words(args.model / "tokenizer.json", SHORTEST - 1)  # a plural's singular too
    OUT.write_text(HEADER + "".join(w + "\n" for w in got), encoding="utf-8")
    print(f"{OUT}: {len(got)} words", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
