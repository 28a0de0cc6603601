"""Which sections of a bundle's notes an agent should read first (`kbase context`,
`kbase read --expand-links`): a priority per section, from how well the section matches
the question and what role its links play in the bundle.

- Query: BM25 of the query's terms (tokenized and stemmed as the index does) over the
  bundle's sections, scaled so the best section scores 1.
- Links: a section holding a link that connects its note with another note of the bundle
  (the seed's links to its neighbours, a neighbour's link back to the note it was reached
  from) is why the neighbour is there: 1 for such a section, else 0.
- A note's opening section (its lead: what the note is) gets `LEAD`.

A section's priority is its note's weight times `BASE` + that relevance: a seed's
weakest section still comes before nothing, and a neighbour's matching section can come
before a seed's unrelated one. The weights are set, not fitted (docs/context.md).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from kbase_ci.query.pieces import NoteSections
from kbase_ci.query.view import QueryView

BASE = 0.25
"""A section's priority before any relevance (times its note's weight)."""
LEAD = 0.3
"""Added for a note's opening section."""
QUERY_SHARE = 0.7
"""With a query: the share of BM25 in a section's relevance (the rest: its links)."""
K1, B = 1.2, 0.75


def _bm25(docs: list[list[str]], terms: Sequence[str]) -> list[float]:
    if not docs or not terms:
        return [0.0] * len(docs)
    mean = sum(map(len, docs)) / len(docs) or 1.0
    df = Counter(t for d in docs for t in set(d))
    idf = {t: math.log(1 + (len(docs) - df[t] + 0.5) / (df[t] + 0.5)) for t in set(terms)}
    out = []
    for d in docs:
        tf = Counter(d)
        norm = K1 * (1 - B + B * len(d) / mean)
        out.append(sum(idf[t] * tf[t] * (K1 + 1) / (tf[t] + norm) for t in idf if tf[t]))
    return out


def query_relevance(view: QueryView, query: str, notes: Sequence[NoteSections]
                    ) -> list[list[float]]:
    """BM25 of `query` per section of each note, the best section of all scaled to 1."""
    # Lazy: the index's tokenizer and stemmer load for a query only, not a note's links
    from kbase_ci.index import tokens
    from kbase_ci.query.overlay import tokenize

    setup = view.manifest.tokenizer
    stop = frozenset(setup.stopwords)
    terms = tokens.query_terms(query, stop=sorted(stop), stem_with=setup.stemmer)
    docs = [tokenize(p[3], stop, setup.stemmer) for n in notes for p in n.pieces]
    flat = _bm25(docs, terms)
    top = max(flat, default=0.0) or 1.0
    out, at = [], 0
    for n in notes:
        out.append([s / top for s in flat[at:at + len(n.pieces)]])
        at += len(n.pieces)
    return out


def link_relevance(view: QueryView, notes: Sequence[NoteSections]) -> list[list[float]]:
    """1 for a section holding a link between its note and another note of the bundle
    that one of the two was reached through (see the module), else 0."""
    paths = {n.reached.path for n in notes}
    related: dict[str, set[str]] = {p: set() for p in paths}
    for n in notes:
        for parent, _ in n.reached.parents:
            if parent in paths:
                related[n.reached.path].add(parent)
                related[parent].add(n.reached.path)
    out = []
    for n in notes:
        lines = [lk.line for lk in view.outgoing(n.reached.path)
                 if lk.target in related[n.reached.path]]
        out.append([1.0 if any(p[1] <= ln <= p[2] for ln in lines) else 0.0
                    for p in n.pieces])
    return out


def priorities(weights: Sequence[float], relevance: Sequence[Sequence[float]]
               ) -> list[list[float]]:
    """Each section's priority: its note's weight times (`BASE` + its relevance, + `LEAD`
    for the note's first section)."""
    return [[w * (BASE + r + (LEAD if i == 0 else 0.0)) for i, r in enumerate(rel)]
            for w, rel in zip(weights, relevance, strict=True)]


def blend(by_query: Sequence[Sequence[float]], by_links: Sequence[Sequence[float]]
          ) -> list[list[float]]:
    """A query's relevance: mostly BM25, partly the links (`QUERY_SHARE`)."""
    return [[QUERY_SHARE * q + (1 - QUERY_SHARE) * k for q, k in zip(qs, ks, strict=True)]
            for qs, ks in zip(by_query, by_links, strict=True)]
