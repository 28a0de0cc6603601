"""The searcher: one query's rankers over the index (paragraph BM25 and the vectors,
per shard, with the overlay of notes changed since the index), given the query's terms
made once (kbase_ci.query.queryterms.QueryTerms, whose making asks `idf`, `unknown`,
`near_terms` and `together` of it), the chunk hits each note got, and what evidence
asks of them (`note_terms`, `cosine`). `kbase_ci.query.search` fuses and judges what
it finds.
"""


from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from kbase_ci.index import tokens
from kbase_ci.index.bm25 import indexed_text
from kbase_ci.index.idf import Frequencies
from kbase_ci.query import evidence as ev
from kbase_ci.query.hits import ChunkHit, rollup
from kbase_ci.query.overlay import FreshChunk, Overlay, shard_for, tokenize
from kbase_ci.query.queryterms import QueryTerms
from kbase_ci.query.view import QueryView

POOL = 200
"""Chunk hits taken from each shard and ranker before rolling up to notes."""
BM25_DIGITS = 4
"""BM25 chunk scores are compared at this many decimals (as `--explain` shows them): a
shard's float32 sums and the overlay's, for the same chunk after a rebuild, differ in
their last bits, and paragraph chunks of equal text must tie (then the path decides)
whichever way they were scored."""


class Searcher:
    """Runs one query (state: the view, the overlay of changed notes, built when first
    needed, and every chunk hit per note, which evidence is judged from)."""

    def __init__(self, view: QueryView, model: Path | None = None) -> None:
        self.view = view
        self.model_option = model
        self.skip = {*view.fresh.changed, *view.fresh.deleted}
        self._overlay: Overlay | None = None
        self._fresh_chunks: list[Any] | None = None
        self._frequencies: Frequencies | None = None
        self._near: dict[str, dict[str, int]] = {}
        self._others: dict[tuple[str, ...], dict[str, dict[int, float]]] = {}
        self.pool: dict[str, list[ChunkHit]] = {}
        """Note -> its chunk hits from every ranker (evidence is judged from them)."""
        self._query_vector: Any = None
        self._fresh_cosine: dict[str, float] = {}
        # Queries are tokenized as the index was (its manifest says how).
        self.stemmer = view.manifest.tokenizer.stemmer
        self.stop = ev.stopword_set(view.manifest.tokenizer)
        self.question_stop = tokens.query_stopwords(sorted(self.stop), self.stemmer)
        reader = view.source.reader
        self.models = {shard: m for shard in reader.shards
                       if (m := reader.bm25(shard)) is not None}

    def fresh_chunks(self) -> list[Any]:
        if self._fresh_chunks is None:
            out = []
            paths = (*self.view.fresh.changed, *self.view.fresh.added)
            if paths:
                # Lazy: the chunker and the parsed records (~15 ms of imports) are for
                # notes changed since the index.
                from kbase_ci.index.chunks import chunk_note

                for path in paths:
                    out.extend(chunk_note(self.view.fresh.parsed[path],
                                          self.view.text(path).encode()))
            self._fresh_chunks = out
        return self._fresh_chunks

    def overlay(self) -> Overlay:
        """The changed notes' chunks as the index would hold them after a rebuild."""
        if self._overlay is None:
            view, reader = self.view, self.view.source.reader
            core = reader.core()
            dropped: dict[str, list[int]] = {}
            for path in sorted(self.skip):
                number = view.number.get(path)
                if number is not None:
                    dropped.setdefault(core.groups[core.group[number]][0], []).append(
                        number)
            fresh = []
            for c in self.fresh_chunks():
                info = view.notes[c.note]
                terms = tokenize(indexed_text(info.title, info.aliases, c.heading_path,
                                              c.text), self.stop, self.stemmer)
                fresh.append(FreshChunk(c, Counter(terms), len(terms),
                                        shard_for(c.note, info.domain, core.groups)))
            self._overlay = Overlay(reader, self.models, dropped, fresh)
        return self._overlay

    def frequencies(self) -> Frequencies:
        """The query terms' chunk counts, per shard and over the index as a rebuild would
        have it (each term looked up once per search: both IDFs are read from them)."""
        if self._frequencies is None:
            models = list(self.models.values())
            if self.skip or self.view.fresh.added:
                ov = self.overlay()
                self._frequencies = Frequencies(models, ov.extra_docs, ov.extra_df)
            else:
                self._frequencies = Frequencies(models)
        return self._frequencies

    def idf(self, terms: list[str]) -> tuple[int, dict[str, float]]:
        """(chunks, each term's IDF over them), as a rebuild would have them."""
        got = self.frequencies()
        return got.total, got.idf(terms)

    def near_terms(self, first: str) -> dict[str, int]:
        """The index's terms beginning with `first` (a letter), with the chunks holding
        each: the words a query word beginning so may be a slip of."""
        if first not in self._near:
            got: dict[str, int] = {}
            for model in self.models.values():
                for term, df in model.starting(first):
                    got[term] = got.get(term, 0) + df
            for f in self.fresh():
                for term in f.counts:
                    if term.startswith(first):
                        got[term] = got.get(term, 0) + 1
            self._near[first] = got
        return self._near[first]

    def together(self, term: str, others: tuple[str, ...], idf: dict[str, float]) -> float:
        """The most IDF (`idf`) that one chunk holding `term` holds of `term` and
        `others`: how rarely the vault writes them together (kbase_ci.query.misspell)."""
        if others not in self._others:
            # Per shard, each chunk holding one of `others`: their IDF there (once per
            # query: every near word of the query's unknown ones is read against it).
            self._others = {others: {
                shard: _masses(model, others, idf) for shard, model in self.models.items()}}
        masses = self._others[others]
        reader = self.view.source.reader
        best = 0.0
        for shard, model in self.models.items():
            docs = model.entries(term)[0]
            if not len(docs):
                continue
            owners, held = reader.chunk_notes(shard), masses[shard]
            best = max(best, max((idf[term] + held.get(int(d), 0.0) for d in docs
                                  if owners[int(d)] not in self.skip), default=0.0))
        for f in self.fresh():
            if term in f.counts:
                best = max(best, idf[term] + sum(idf[o] for o in others if o in f.counts))
        return best

    def fresh(self) -> list[FreshChunk]:
        """The overlay's chunks of the notes changed or added since the index; none (and
        no overlay built) when the index is up to date."""
        return self.overlay().fresh if self.skip or self.view.fresh.added else []

    def unknown(self, terms: list[str]) -> list[str]:
        """The terms no chunk holds, indexed or changed since."""
        fresh = self.fresh()
        return [t for t in terms if not any(m.doc_freq(t) for m in self.models.values())
                and not any(t in f.counts for f in fresh)]

    def note_terms(self, path: str, terms: list[str]) -> frozenset[str]:
        """The query terms any chunk of the note holds: a changed or new note's from its
        chunks as a rebuild would make them, an indexed one's from its shard's postings
        (one bisection pair per term over the note's chunk range)."""
        if path in self.skip or path in self.view.fresh.added:
            return frozenset(t for f in self.overlay().fresh if f.chunk.note == path
                             for t in terms if t in f.counts)
        number = self.view.number.get(path)
        if number is None or not terms:
            return frozenset()
        reader = self.view.source.reader
        core = reader.core()
        model = self.models.get(core.groups[core.group[number]][0])
        first, count = reader.chunk_span(number)
        if model is None or not count:
            return frozenset()
        span = [(first, first + count)]
        return frozenset(t for t in terms if model.count_in(t, span))

    def _keep(self, hits: list[ChunkHit]) -> list[ChunkHit]:
        return rollup(hits, self.pool)

    # -- BM25 ----------------------------------------------------------------------------
    def bm25(self, q: QueryTerms) -> list[ChunkHit]:
        terms = list(q.ranked)
        if not terms:
            return []
        # Words read as slips of index words count as those, with a reduced weight.
        more = q.scale
        hits: list[ChunkHit] = []
        reader = self.view.source.reader
        models = list(self.models.items())
        weights = self.frequencies().weights(terms)
        for weight in weights:
            weight.update({t: w * more[t] for t, w in weight.items() if t in more})
        idf = {t: v * more.get(t, 1.0) for t, v in q.idf.items()}
        changed = self.skip or self.view.fresh.added
        moved = self.overlay().moved() if changed else set()
        for (shard, model), weight in zip(models, weights, strict=True):
            best = (self.overlay().top(shard, terms, idf, POOL)
                    if shard in moved else model.top(terms, weight, POOL))
            if not best:
                continue
            notes = reader.chunk_notes(shard)
            for i, score in best:
                note = notes[i]
                if note not in self.skip:
                    hits.append(ChunkHit(note, (), 0, 0, round(score, BM25_DIGITS),
                                         (reader, shard, i)))
        if changed:
            ov = self.overlay()
            for i, score in ov.scores(terms, idf):
                c = ov.fresh[i]
                hits.append(ChunkHit(c.chunk.note, c.chunk.heading_path, c.chunk.start_line,
                                 c.chunk.end_line, round(score, BM25_DIGITS), counts=c.counts))
        return self._keep(hits)

    # -- vectors -------------------------------------------------------------------------
    def embedder(self) -> tuple[Any, str | None]:
        """The index's model loaded, or None and the one notice saying how to get it
        (None, None: an index without vectors)."""
        # Lazy: the model lookup (downloads, model files) is for a search with vectors.
        from kbase_ci.index.modelchoice import find_index_model
        from kbase_ci.index.modelfolder import load_index_model

        emb = self.view.manifest.embeddings
        choice, notice = find_index_model(self.view.vault.root,
                                          self.view.vault.config.embeddings,
                                          self.model_option, emb)
        if choice is None or choice.path is None:
            return None, notice
        # The index may keep fewer dimensions than the model (`embeddings.dim`).
        return load_index_model(choice.path, emb.dim)

    def semantic(self, terms: QueryTerms, embedder: Any) -> list[ChunkHit]:
        import numpy as np

        q = embedder.encode([terms.text], query=True)[0]
        self._query_vector = q
        hits: list[ChunkHit] = []
        reader = self.view.source.reader
        for shard in reader.shards:
            index = reader.vectors(shard)
            if index is None:
                continue
            # One pass over the rows: asking len() first would read them all twice.
            found = index.search(q, POOL)
            if not len(found.keys):
                continue
            owners = reader.chunk_notes(shard)
            for key, dist in zip(found.keys.tolist(), found.distances.tolist(), strict=True):
                note = owners[key]
                if note not in self.skip:
                    hits.append(ChunkHit(note, (), 0, 0, 1.0 - float(dist), (reader, shard, key)))
        chunks = self.fresh_chunks()
        if chunks:
            from kbase_ci.index.chunks import embed_text  # lazy: as in `fresh_chunks`

            notes = self.view.notes
            mat = embedder.encode([embed_text(notes[c.note].title, c) for c in chunks])
            sims = mat.astype(np.float32) @ q.astype(np.float32)
            for c, sim in zip(chunks, sims.tolist(), strict=True):
                self._fresh_cosine[c.note] = max(sim, self._fresh_cosine.get(c.note, -1.0))
            ov = self.overlay()
            hits.extend(ChunkHit(c.note, c.heading_path, c.start_line, c.end_line, float(s),
                             counts=f.counts)
                        for c, f, s in zip(chunks, ov.fresh, sims, strict=True) if s > 0)
        return self._keep(hits)

    def cosine(self, path: str) -> float | None:
        """The best cosine of a note's chunks with the query, for a note the vector
        ranker did not list (None before `semantic` ran, or for a note without vectors)."""
        q = self._query_vector
        if q is None:  # before anything else: a BM25 query never imports numpy
            return None
        import numpy as np

        if path in self._fresh_cosine or path in self.skip or path not in self.view.number:
            return self._fresh_cosine.get(path)
        reader = self.view.source.reader
        number = self.view.number[path]
        core = reader.core()
        index = reader.vectors(core.groups[core.group[number]][0])
        first, count = reader.chunk_span(number)
        if index is None or not count:
            return None
        rows = index.unit_rows()[first:first + count]
        qv = np.asarray(q, dtype=np.float32)
        norm = float(np.linalg.norm(qv))
        return float((rows @ (qv / norm)).max()) if norm else None


def _masses(model: Any, terms: tuple[str, ...], idf: dict[str, float]) -> dict[int, float]:
    """Each chunk of the shard (`model`) holding some of `terms`: their IDF added up."""
    out: dict[int, float] = {}
    for t in terms:
        for d in model.entries(t)[0]:
            out[int(d)] = out.get(int(d), 0.0) + idf[t]
    return out
