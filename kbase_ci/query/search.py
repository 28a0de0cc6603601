"""`search`: BM25 and vector hits over paragraph chunks, rolled up to notes (a note scores
as its best chunk), and note-level BM25 (`notebm25`), fused by standardised scores
(`fusion`, with the index's per-model weights), each hit judged by its evidence
(kbase_ci.query.evidence): every hit up to the limit is shown with its confidence, and
one verdict (kbase_ci.query.verdict) says whether they answer the query. Chunks of
notes changed since the index are dropped from the committed shards and scored again
from the work tree with the index's own statistics (kbase_ci.query.overlay; vectors
when the model is here).

A query that is exactly a note's title or alias puts that note first: agents often ask
for a note by a name they saw elsewhere.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kbase_ci.errors import ModelRefused, UsageError
from kbase_ci.index import idf as idfmod
from kbase_ci.index import tokens
from kbase_ci.index.bm25 import indexed_text
from kbase_ci.index.ranking import rankers_of
from kbase_ci.query import evidence as ev
from kbase_ci.query import verdict
from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.filters import check_limit, check_tags, domain_key, tag_key
from kbase_ci.query.fusion import fuse
from kbase_ci.query.hits import ChunkHit, NoteHit, rollup
from kbase_ci.query.notebm25 import ranked_notes
from kbase_ci.query.overlay import FreshChunk, Overlay, shard_for, tokenize
from kbase_ci.query.verdict import ConciseHit, Hit, Verdict
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, json_field

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
        self._terms: dict[str, ev.QueryTerms] = {}
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
            # Lazy: the chunker and the parsed records (~15 ms of imports) are for notes
            # changed since the index.
            from kbase_ci.index.chunks import chunk_note

            out = []
            for path in (*self.view.fresh.changed, *self.view.fresh.added):
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
                    dropped.setdefault(core["groups"][core["group"][number]][0], []).append(
                        number)
            fresh = []
            for c in self.fresh_chunks():
                info = view.notes[c.note]
                terms = tokenize(indexed_text(info.title, info.aliases, c.heading_path,
                                              c.text), self.stop, self.stemmer)
                fresh.append(FreshChunk(c, Counter(terms), len(terms),
                                        shard_for(c.note, info.domain, core["groups"])))
            self._overlay = Overlay(reader, self.models, dropped, fresh)
        return self._overlay

    def query_stop(self, query: str) -> list[str]:
        """The stopwords of `query`: the index's and the question words
        (`tokens.QUESTION_WORDS`), unless that leaves no term ("how to" asks for its
        words)."""
        wide = sorted(self.question_stop)
        if tokens.query_terms(query, stop=wide, stem_with=self.stemmer):
            return wide
        return sorted(self.stop)

    def terms(self, query: str) -> ev.QueryTerms:
        """The query's terms as written and indexed, with their IDF over the index as a
        rebuild would have it."""
        if query not in self._terms:
            written = tokens.written_terms(query, stop=self.query_stop(query),
                                           stem_with=self.stemmer)
            terms = [t for _, t in written]
            extra = self._extra(terms)
            _, idf = idfmod.global_idf(list(self.models.values()), terms,
                                        extra_docs=extra[0], extra_df=extra[1])
            self._terms[query] = ev.QueryTerms(tuple(written), idf,
                                               frozenset(self.unknown(terms)))
        return self._terms[query]

    def _extra(self, terms: list[str]) -> tuple[int, dict[str, int]]:
        if not self.skip and not self.view.fresh.added:
            return 0, {}
        ov = self.overlay()
        return ov.extra_docs, ov.extra_df(terms)

    def unknown(self, terms: list[str]) -> list[str]:
        """The terms no chunk holds, indexed or changed since."""
        fresh = self.overlay().fresh if (self.skip or self.view.fresh.added) else []
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
        model = self.models.get(core["groups"][core["group"][number]][0])
        first, count = reader.chunk_span(number)
        if model is None or not count:
            return frozenset()
        span = [(first, first + count)]
        return frozenset(t for t in terms if model.count_in(t, span))

    def _keep(self, hits: list[ChunkHit]) -> list[ChunkHit]:
        return rollup(hits, self.pool)

    # -- BM25 ----------------------------------------------------------------------------
    def bm25(self, query: str) -> list[ChunkHit]:
        terms = tokens.query_terms(query, stop=self.query_stop(query),
                                   stem_with=self.stemmer)
        if not terms:
            return []
        hits: list[ChunkHit] = []
        reader = self.view.source.reader
        models = list(self.models.items())
        extra_docs, extra_df = self._extra(terms)
        weights = idfmod.idf_weights([m for _, m in models], terms, extra_docs=extra_docs,
                                      extra_df=extra_df)
        changed = self.skip or self.view.fresh.added
        moved = self.overlay().moved() if changed else set()
        for (shard, model), weight in zip(models, weights, strict=True):
            best = (self.overlay().top(shard, terms, self.terms(query).idf, POOL)
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
            idf = self.terms(query).idf
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
                                          self.view.vault.config.embeddings.model,
                                          self.model_option, emb)
        if choice is None or choice.path is None:
            return None, notice
        # The index may keep fewer dimensions than the model (`embeddings.dim`).
        return load_index_model(choice.path, emb.dim)

    def semantic(self, query: str, embedder: Any) -> list[ChunkHit]:
        import numpy as np

        q = embedder.encode([query], query=True)[0]
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
        index = reader.vectors(core["groups"][core["group"][number]][0])
        first, count = reader.chunk_span(number)
        if index is None or not count:
            return None
        rows = index.unit_rows()[first:first + count]
        qv = np.asarray(q, dtype=np.float32)
        norm = float(np.linalg.norm(qv))
        return float((rows @ (qv / norm)).max()) if norm else None


def _fuse(lists: dict[str, list[ChunkHit]], block: Any) -> list[NoteHit]:
    """Notes by fused score (`fusion.fuse`, with the fusion settings `block`: the index's,
    or any other, as bench/fusion.py tries); each keeps BM25's section when BM25 found it
    (that chunk holds the words asked for)."""
    rankers = rankers_of(block)
    fused = fuse({r: [(h.path, h.score) for h in hits] for r, hits in lists.items()
                  if r in rankers}, rankers)
    if fused and not lists.get("semantic"):  # BM25 alone: over its best, 1.0 for the top
        top = fused[0][1]
        fused = [(p, s / top if top > 0 else 0.0) for p, s in fused]
    out = {path: NoteHit(path, score, ChunkHit(path, (), 1, 1, 0.0)) for path, score in fused}
    for ranker in ("semantic", "bm25"):  # BM25 last: its section wins
        for rank, h in enumerate(lists.get(ranker, []), 1):
            note = out.get(h.path)
            if note is not None:
                note.ranks[ranker] = (rank, h.score)
                note.section = h
    return sorted(out.values(), key=lambda n: (-n.score, n.path))


def ranked(view: QueryView, query: str, lists: dict[str, list[ChunkHit]], block: Any
           ) -> tuple[list[NoteHit], list[str]]:
    """Notes in answer order: the rankers' lists fused with the fusion settings `block`,
    then the notes named by the query (title or alias) first; and those names."""
    fused = _fuse(lists, block)
    named = view.named(query)
    if named:
        first = {p: i for i, p in enumerate(named)}
        fused.sort(key=lambda n: (n.path not in first, first.get(n.path, 0)))
        have = {n.path for n in fused}
        for p in named:
            if p not in have:
                stub = ChunkHit(p, (), 1, 1, 0.0)
                fused.insert(first[p], NoteHit(p, 0.0, stub, {"name": (1, 1.0)}))
    return fused, named


@dataclass
class Ranking:
    """One query's ranked notes, before any verdict on them."""

    searcher: Searcher
    fused: list[NoteHit]
    named: list[str]
    """Notes whose title or an alias is the query (they lead the ranking)."""
    notices: list[str]


def rank(view: QueryView, query: str, *, mode: str = "hybrid", model: Path | None = None,
         embedder: Any = None, model_notice: str | None = None) -> Ranking:
    """The notes for `query`, best first: each ranker's chunk hits, fused, with title and
    alias matches first. `embedder`: an already loaded model of this index (a long-lived
    server keeps one); None looks for the index's model, unless `model_notice` says it
    was looked for already and why it is not here."""
    searcher = Searcher(view, model)
    lists: dict[str, list[ChunkHit]] = {}
    notices: list[str] = []
    notice = model_notice
    if mode in ("hybrid", "semantic") and embedder is None and notice is None:
        # The model first: loading it imports numpy, and BM25 then sums its postings
        # with numpy too (at paragraph grain ~50 ms less for a 10k-note vault).
        embedder, notice = searcher.embedder()
    if mode in ("hybrid", "bm25"):
        lists["bm25"] = searcher.bm25(query)
    if mode in ("hybrid", "semantic"):
        if embedder is None:
            if mode == "semantic":
                raise UsageError("semantic search needs the index's embedding model: "
                                 + (notice or "this index has no vectors") +
                                 "; or use --mode bm25")
            notices.append(notice or _no_vectors(view))
        else:
            try:
                lists["semantic"] = searcher.semantic(query, embedder)
            except ModelRefused as exc:  # the model failed on this query (fence)
                if mode == "semantic":
                    raise
                notices.append(f"{exc}: ranked by BM25 only")
    if mode == "hybrid" and "semantic" in lists and "notes" in rankers_of(view.manifest.fusion):
        lists["notes"] = [ChunkHit(p, (), 1, 1, score)
                          for p, score in ranked_notes(searcher, query, POOL)]
    fused, named = ranked(view, query, lists, view.manifest.fusion)
    return Ranking(searcher, fused, named, notices)


def _no_vectors(view: QueryView) -> str:
    reason = view.manifest.embeddings.reason
    return "this index has no vectors" + (f" ({reason})" if reason else "") + \
        ": ranked by BM25 only"


class SearchAnswer(Record):
    query: str = json_field(keep=True)
    mode: str = json_field(keep=True)
    results: list[Hit] | list[ConciseHit] = json_field(primary=True)
    """The ranked notes up to the limit, each with its confidence (those below
    `min_confidence` left out)."""
    verdict: Verdict = json_field(keep=True)
    hidden: int | None = json_field(omit=True)
    """Hits left out for being below `min_confidence` (None: none were)."""
    notices: list[str] = json_field(keep=True)
    index: IndexInfo


def search_answer(view: QueryView, query: str, *, mode: str = "hybrid", limit: int = 5,
                  tags: list[str] | None = None, domain: str | None = None,
                  snippets: bool = False, concise: bool = False, explain: bool = False,
                  model: Path | None = None, embedder: Any = None,
                  model_notice: str | None = None,
                  min_confidence: str = "none") -> SearchAnswer:
    """The `search` answer: the ranking up to `limit`, hits below `min_confidence` left
    out, and the verdict on it."""
    check_limit(limit)
    if min_confidence not in ev.LEVELS:
        raise UsageError(f"min_confidence {min_confidence!r} is none of "
                         + ", ".join(ev.LEVELS))
    domain = domain_key(view, domain)
    tag_list = [tag_key(t) for t in tags or [] if tag_key(t)]
    r = rank(view, query, mode=mode, model=model, embedder=embedder,
             model_notice=model_notice)
    q = r.searcher.terms(query)
    judged = verdict.judge(view, r.searcher, r.fused, q, query, set(r.named), tag_list,
                           domain, limit, min_confidence)
    if not judged.judged and tag_list:
        check_tags(view, tag_list)  # no such tag anywhere: a usage error, not "none"
    if judged.hits:
        view.texts(n.path for n, _ in judged.hits)  # one git process for all
        verdict.add_fields(view, r.searcher, judged.hits)
    results = [verdict.record(view, n, e, q, query, concise, snippets, explain)
               for n, e in judged.hits]
    said = verdict.decide(r.searcher, q, judged, tag_list, domain)
    return SearchAnswer(query, mode, results, said,  # type: ignore[arg-type]
                        judged.hidden or None, r.notices, view.index_info())
