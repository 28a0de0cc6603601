"""`search`: BM25 and vector hits over paragraph chunks, rolled up to notes (a note scores
as its best chunk), fused by standardised scores (`fusion`). Chunks of notes changed since
the index are dropped from the committed shards and scored again from the work tree (BM25
always; vectors when the model is here).

A query that is exactly a note's title or alias puts that note first: agents often ask
for a note by a name they saw elsewhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from kbase_ci.errors import UsageError
from kbase_ci.index import bm25 as bm25mod
from kbase_ci.index import tokens
from kbase_ci.index.chunks import chunk_note, embed_text
from kbase_ci.index.modelchoice import choose_model
from kbase_ci.index.modelfolder import open_embedder
from kbase_ci.index.ranking import rankers_of
from kbase_ci.parse.outline import split_lines
from kbase_ci.query.fusion import fuse
from kbase_ci.query.view import QueryView

POOL = 200
"""Chunk hits taken from each shard and ranker before rolling up to notes."""
MODES = ("hybrid", "bm25", "semantic")


class _Hit:
    """A chunk hit. Chunks of the index carry (reader, shard, chunk) and read their
    heading path and lines only when asked: most hits never reach the answer."""

    __slots__ = ("_loc", "_where", "path", "score")

    def __init__(self, path: str, heading_path: tuple[str, ...], start_line: int,
                 end_line: int, score: float, where: tuple[Any, str, int] | None = None
                 ) -> None:
        self.path = path
        self.score = score
        self._loc = None if where else (heading_path, start_line, end_line)
        self._where = where

    def _located(self) -> tuple[tuple[str, ...], int, int]:
        if self._loc is None:
            assert self._where is not None
            reader, shard, chunk = self._where
            heads, lo, hi = reader.chunk_row(shard, chunk)
            self._loc = (tuple(heads), lo, hi)
        return self._loc

    @property
    def heading_path(self) -> tuple[str, ...]:
        return self._located()[0]

    @property
    def start_line(self) -> int:
        return self._located()[1]

    @property
    def end_line(self) -> int:
        return self._located()[2]


@dataclass
class NoteHit:
    path: str
    score: float
    section: _Hit
    ranks: dict[str, tuple[int, float]] = field(default_factory=dict)
    """ranker -> (rank, score), shown by `--explain`."""


def _rollup(hits: list[_Hit]) -> list[_Hit]:
    best: dict[str, _Hit] = {}
    for h in hits:
        if h.path not in best or h.score > best[h.path].score:
            best[h.path] = h
    return sorted(best.values(), key=lambda h: (-h.score, h.path))


def _top(scores: Any, n: int) -> list[int]:
    import numpy as np

    nz = np.flatnonzero(scores > 0)
    if len(nz) > n:
        nz = nz[np.argpartition(-scores[nz], n)[:n]]
    return [int(i) for i in nz[np.argsort(-scores[nz], kind="stable")]]


class Searcher:
    """Runs one query (state: the view, lazily built overlay chunks)."""

    def __init__(self, view: QueryView, model: Path | None = None) -> None:
        self.view = view
        self.model_option = model
        self.skip = {*view.fresh.changed, *view.fresh.deleted}
        self._fresh_chunks: list[Any] | None = None
        # Queries are tokenized as the index was (its manifest says how).
        tok = view.manifest.get("tokenizer")
        self._tokenizer: dict[str, Any] = tok if isinstance(tok, dict) else {}
        stem = self._tokenizer.get("stemmer")
        self._stemmer = stem if isinstance(stem, str) else tokens.STEMMER

    def fresh_chunks(self) -> list[Any]:
        if self._fresh_chunks is None:
            out = []
            for path in (*self.view.fresh.changed, *self.view.fresh.added):
                out.extend(chunk_note(self.view.fresh.parsed[path],
                                      self.view.text(path).encode()))
            self._fresh_chunks = out
        return self._fresh_chunks

    # -- BM25 ----------------------------------------------------------------------------
    def bm25(self, query: str) -> list[_Hit]:
        terms = tokens.query_terms(query, stop=self._tokenizer.get("stopwords"),
                                   stem_with=self._stemmer)
        if not terms:
            return []
        hits: list[_Hit] = []
        reader = self.view.source.reader
        models = [(shard, m) for shard in reader.shards
                  if (m := reader.bm25(shard)) is not None]
        weights = bm25mod.idf_weights([m for _, m in models], terms)
        for (shard, model), weight in zip(models, weights, strict=True):
            best = model.top(terms, weight, POOL)
            if not best:
                continue
            notes = reader.chunk_notes(shard)
            for i, score in best:
                note = notes[i]
                if note not in self.skip:
                    hits.append(_Hit(note, (), 0, 0, score, (reader, shard, i)))
        hits.extend(self._bm25_fresh(terms))
        return _rollup(hits)

    def _bm25_fresh(self, terms: list[str]) -> list[_Hit]:
        """The changed notes' chunks, in a small in-memory BM25 index with the same
        tokenizer and parameters. Its IDF comes from few documents, so its scores are only
        roughly comparable with the shards'; the notes still rank and never go missing."""
        chunks = self.fresh_chunks()
        if not chunks:
            return []
        import bm25s

        notes = self.view.notes
        texts = [bm25mod.indexed_text(notes[c.note].title, notes[c.note].aliases,
                                      c.heading_path, c.text) for c in chunks]
        tok = tokens.make_tokenizer(self._stemmer)
        ids = tok.tokenize(texts, update_vocab=True, return_as="ids", show_progress=False)
        vocab = tok.get_vocab_dict()
        model = bm25s.BM25(**bm25mod.PARAMS)
        model.index((ids, vocab), show_progress=False)
        qids = [model.vocab_dict[t] for t in terms if t in model.vocab_dict]
        if not qids:
            return []
        scores = model.get_scores(qids)
        return [_Hit(chunks[i].note, chunks[i].heading_path, chunks[i].start_line,
                     chunks[i].end_line, float(scores[i])) for i in _top(scores, POOL)]

    # -- vectors -------------------------------------------------------------------------
    def embedder(self) -> Any:
        """The index's model, or None when it is not here (or is another model)."""
        emb = self.view.manifest.get("embeddings") or {}
        if not emb.get("dim"):
            return None
        cfg = self.view.vault.config.embeddings.model
        try:
            choice = choose_model(self.view.vault.root, cfg, self.model_option)
        except UsageError:
            return None
        if choice.path is None or choice.sha256 != emb.get("sha256"):
            return None
        # The index may keep fewer dimensions than the model (`embeddings.dim`).
        return open_embedder(choice.path, dim=int(emb["dim"]))

    def semantic(self, query: str, embedder: Any) -> list[_Hit]:
        import numpy as np

        q = embedder.encode([query], query=True)[0]
        hits: list[_Hit] = []
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
                    hits.append(_Hit(note, (), 0, 0, 1.0 - float(dist), (reader, shard, key)))
        chunks = self.fresh_chunks()
        if chunks:
            notes = self.view.notes
            mat = embedder.encode([embed_text(notes[c.note].title, c) for c in chunks])
            sims = mat.astype(np.float32) @ q.astype(np.float32)
            hits.extend(_Hit(c.note, c.heading_path, c.start_line, c.end_line, float(s))
                        for c, s in zip(chunks, sims, strict=True) if s > 0)
        return _rollup(hits)


def _fuse(lists: dict[str, list[_Hit]], block: Any) -> list[NoteHit]:
    """Notes by fused score (`fusion.fuse`, with the index's `fusion` block); each keeps
    BM25's section when BM25 found it (that chunk holds the words asked for)."""
    fused = fuse({r: [(h.path, h.score) for h in hits] for r, hits in lists.items()},
                 rankers_of(block))
    if fused and not lists.get("semantic"):  # BM25 alone: over its best, 1.0 for the top
        top = fused[0][1]
        fused = [(p, s / top if top > 0 else 0.0) for p, s in fused]
    out = {path: NoteHit(path, score, _Hit(path, (), 1, 1, 0.0)) for path, score in fused}
    for ranker in ("semantic", "bm25"):  # BM25 last: its section wins
        for rank, h in enumerate(lists.get(ranker, []), 1):
            note = out.get(h.path)
            if note is not None:
                note.ranks[ranker] = (rank, h.score)
                note.section = h
    return sorted(out.values(), key=lambda n: (-n.score, n.path))


def ranked(view: QueryView, query: str, lists: dict[str, list[_Hit]], block: Any
           ) -> list[NoteHit]:
    """Notes in answer order: the rankers' lists fused with the fusion settings `block`
    (the index's, or any other: bench/fusion.py tries some), then a note named by the
    query (title or alias) first."""
    fused = _fuse(lists, block)
    named = view.named(query)
    if named:
        first = {p: i for i, p in enumerate(named)}
        fused.sort(key=lambda n: (n.path not in first, first.get(n.path, 0)))
        have = {n.path for n in fused}
        for p in named:
            if p not in have:
                stub = _Hit(p, (), 1, 1, 0.0)
                fused.insert(first[p], NoteHit(p, 0.0, stub, {"name": (1, 1.0)}))
    return fused


_WORD = re.compile(r"\w{2,}")


def snippet(view: QueryView, hit: _Hit, query: str, width: int = 240) -> str:
    lines = split_lines(view.text(hit.path))[hit.start_line - 1:hit.end_line]
    text = " ".join(ln.strip() for ln in lines if ln.strip())
    words = [w.casefold() for w in _WORD.findall(query)]
    low = text.casefold()
    pos = min((p for p in (low.find(w[:max(4, len(w) - 2)]) for w in words) if p >= 0),
              default=0)
    start = max(0, pos - width // 3)
    piece = text[start:start + width]
    return ("\u2026" if start else "") + piece + ("\u2026" if start + width < len(text) else "")


def _focus(view: QueryView, hit: _Hit, query: str) -> tuple[str | None, int]:
    """The heading path and line of the first line in the chunk holding a query word:
    short sections are packed into one chunk, and the agent wants the one that matched."""
    lines = split_lines(view.text(hit.path))
    words = [w.casefold()[:max(4, len(w) - 2)] for w in _WORD.findall(query)]
    line = hit.start_line
    for n in range(hit.start_line, min(hit.end_line, len(lines)) + 1):
        low = lines[n - 1].casefold()
        if any(w in low for w in words):
            line = n
            break
    stack: list[tuple[int, str]] = []
    for level, text, at in view.notes[hit.path].headings:
        if at > line:
            break
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, text))
    return (" > ".join(t for _, t in stack) or None), line


def _matches(view: QueryView, path: str, tags: list[str], domain: str | None) -> bool:
    info = view.notes.get(path)
    if info is None:
        return False
    if domain is not None and info.domain != domain:
        return False
    for want in tags:
        w = want.lstrip("#").casefold()
        if not any(t.casefold() == w or t.casefold().startswith(w + "/") for t in info.tags):
            return False
    return True


def search_answer(view: QueryView, query: str, *, mode: str = "hybrid", limit: int = 5,
                  tags: list[str] | None = None, domain: str | None = None,
                  snippets: bool = False, concise: bool = False, explain: bool = False,
                  model: Path | None = None, embedder: Any = None) -> dict[str, Any]:
    """`embedder`: an already loaded model of this index (a long-lived server keeps one);
    None loads the index's model, when it is here."""
    if mode not in MODES:
        raise UsageError(f"--mode must be one of {', '.join(MODES)}")
    searcher = Searcher(view, model)
    lists: dict[str, list[_Hit]] = {}
    notices: list[str] = []
    if mode in ("hybrid", "bm25"):
        lists["bm25"] = searcher.bm25(query)
    if mode in ("hybrid", "semantic"):
        embedder = embedder if embedder is not None else searcher.embedder()
        if embedder is None:
            if mode == "semantic":
                raise UsageError("semantic search needs the index's embedding model, which "
                                 "is not available here: use --mode bm25, or pass --model")
            notices.append("embedding model not available: ranked by BM25 only")
        else:
            lists["semantic"] = searcher.semantic(query, embedder)
    fused = ranked(view, query, lists, view.manifest.get("fusion"))
    named = set(view.named(query))
    tag_list = tags or []
    chosen = list(islice((n for n in fused if _matches(view, n.path, tag_list, domain)),
                         max(limit, 0)))
    if chosen and (snippets or not concise):
        view.texts(n.path for n in chosen)  # one git process for all, not one per hit
    results: list[dict[str, Any]] = []
    for n in chosen:
        info = view.notes[n.path]
        rec: dict[str, Any] = {"path": n.path, "title": info.title,
                               "score": round(n.score, 6)}
        if not concise:
            section, line = _focus(view, n.section, query)
            rec.update({"section": section, "line": line,
                        "lines": [n.section.start_line, n.section.end_line],
                        "tags": list(info.tags), "domain": info.domain})
        if snippets:
            rec["snippet"] = snippet(view, n.section, query)
        if explain:
            rec["explain"] = {**{r: {"rank": k, "score": round(v, 4)}
                                 for r, (k, v) in n.ranks.items()},
                              "name_match": n.path in named}
        results.append(rec)
    return {"query": query, "mode": mode, "results": results, "notices": notices,
            "index": view.index_info()}
