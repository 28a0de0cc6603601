"""How an index's rankers are weighted when a hybrid search fuses them
(kbase_ci.query.fusion): per kind of embedding model, chosen by measurement, and written
into the manifest (`fusion`) by the build, so that queries fuse as the index was meant
to be read and another model's index carries its own weights.

Measured with bench/fusion.py on kbase's own rankings of every qa set of
../shared/corpora/qa, our paraphrase sets (fixtures/query/) and issue 20's obsidian-tasks-
docs paraphrases (bench/data/), by MRR@10 of hybrid minus the better single ranker on the
worst set: both tiers were best at semantic weight 3.0, depth 5, the list's mean and spread
taken over its top 100 notes (a sure first note stands out): static minilm-static-256
-0.002, transformer minilm-l6-onnx -0.003 (bench/query_quality.py, by question kind: at
worst -0.003 and -0.005). The spread of its top 30 lost 0.025 on the bench/data set
(static); weight 1.5 over the 5 alone lost 0.017 (transformer). A weight is
relative to BM25's 1.0; docs/query.md has the figures.

The transformer's weights were chosen again on issue 27's natural question sets
(`python -m bench.fusion_fit --mean`, nDCG@10, fitted on the transformer tier's vaults
leaving one out): weight 2.0 over the whole vector list. Out of sample it beats 3.0/top 5
on each held-out vault (0.820, 0.921, 0.855 against 0.816, 0.901, 0.840) and it keeps
hybrid within 0.005 of the better single ranker on every older set above, where 3.0/top 5
fell 0.017-0.024 below the vectors on two paraphrase sets. The static tier's choice out
of sample (0.807 on average) was no better than 3.0/top 5 (0.808), so it stayed.

With the note-level BM25 list (`NOTES`, kbase_ci.query.notebm25) the weights were chosen
again the same way, the note list's weight among them (0 to 3): static vectors 3.0 over
their top 50 and notes 1.5 (natural sets 0.808 -> 0.848 in sample, 0.828 leaving each
vault out), transformer vectors 4.0 over their top 50 and notes 2.0 (0.876 -> 0.891,
0.880 out of sample). docs/query.md ("Ranking") has the figures per vault and kind.
"""

from __future__ import annotations

from kbase_ci.index.blocks import Fusion, Ranker

STATS = 100
"""Notes of a list whose scores give its mean and spread."""


NOTES = "notes"
"""The note-level BM25 list (kbase_ci.query.notebm25)."""

WEIGHTS: dict[str, dict[str, Ranker]] = {
    "model2vec": {"bm25": Ranker(1.0, None, "zero"), "semantic": Ranker(3.0, 50, "last", 100),
                  NOTES: Ranker(1.5, None, "zero")},
    "onnx": {"bm25": Ranker(1.0, None, "zero"), "semantic": Ranker(4.0, 50, "last", 100),
             NOTES: Ranker(2.0, None, "zero")},
}
"""Per model kind (`modelfolder.STATIC`, `TRANSFORMER`), chosen by measurement."""


LEXICAL: dict[str, Ranker] = {"bm25": Ranker(1.0, None, "zero"), NOTES: Ranker(1.25, None, "zero")}
"""The model-free tier (`--mode bm25`, and hybrid without the index's model): paragraph
BM25 and note-level BM25 fused as above. It depends on no model, so it is not written
into the manifest: every index, whatever it was built with or before, is read so.
Chosen by `python -m bench.lexical_reference --fit` (mean nDCG@10 on the six shared
vaults, leaving one out); docs/query.md ("The model-free tier") has the figures."""


def lexical() -> Fusion:
    """The fusion of the model-free tier (`LEXICAL`)."""
    return Fusion("z-score", STATS, dict(sorted(LEXICAL.items())))


def settings(kind: str | None) -> Fusion | None:
    """The manifest's `fusion` block for an index whose model is of `kind`."""
    rankers = WEIGHTS.get(kind or "")
    if rankers is None:
        return None
    return Fusion("z-score", STATS, dict(sorted(rankers.items())))


def rankers_of(block: Fusion | None) -> dict[str, Ranker]:
    """The rankers of a manifest's `fusion` block (its values were checked when the
    manifest was read: kbase_ci.index.blocks.Ranker); the static defaults for an index
    without one, and for rankers this kbase does not fuse."""
    out = dict(WEIGHTS["model2vec"])
    if block is not None:
        out.update((name, r) for name, r in block.rankers.items() if name in out)
        if NOTES not in block.rankers:  # built before the note list: fused as it was
            del out[NOTES]
    return out
