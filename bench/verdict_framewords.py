"""The frame-word list (kbase_ci.query.framewords) checked on question sets it was not made
from: `python -m bench.verdict_framewords`.

The list is MySQL's copy of the SMART stopword list plus issue 37's frame words; none of
the shared question sets below was read to make it. For each set (the natural and absent
sets of ../shared/corpora/qa, our tldr-pages paraphrases and absent topics), printed: the
questions, their words (as the index tokenizes them, its stopwords left out), the words
the list takes as frame, and the frame words that are a word of an answering note's
title (a topic word the evidence would then ignore), with the questions they are in.
Needs no index.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench.search_targets import DATA, NATURAL, QA, _load

SETS = [QA / f"{kind}-{vault}.jsonl" for vault in NATURAL for kind in ("natural", "absent")] + [
    DATA / "paraphrases-tldr-pages.jsonl", DATA / "absent-tldr-pages.jsonl"]


def check(path: Path) -> tuple[int, int, int, list[tuple[str, str]]]:
    """(questions, words, frame words, frame words in an answer's title with the query)."""
    from kbase_ci.index import tokens
    from kbase_ci.query.framewords import frame_words

    frame = frame_words(tokens.STEMMER)
    stop = tokens.stopwords()
    rows = _load(path)
    words = dropped = 0
    topical: list[tuple[str, str]] = []
    for r in rows:
        got = [w.lower() for w, _ in tokens.written_terms(r["query"], stop=stop)]
        titles = {t for a in r.get("answers", []) for t in tokens.split(Path(a).stem)}
        words += len(got)
        dropped += sum(w in frame for w in got)
        topical += [(w, r["query"]) for w in got if w in frame and w in titles]
    return len(rows), words, dropped, topical


def main(argv: list[str] | None = None) -> int:
    del argv
    print("| set | questions | words | frame words | frame words in an answer's title |")
    print("| --- | --- | --- | --- | --- |")
    for path in SETS:
        if not path.is_file():
            continue
        n, words, dropped, topical = check(path)
        shown = "; ".join(f"{w} ({q})" for w, q in topical) or "none"
        print(f"| {path.name} | {n} | {words} | {dropped} | {shown} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
