"""The blocks of an index manifest (kbase_ci.index.manifest), each declared once as a
frozen record (`typedjson.Record`): the key names, their types and the values a reader
accepts. The build
writes them (`typedjson.encode`) and readers get them decoded and checked
(`manifest.read_manifest`); docs/index-format.md says what each key means.

A value outside its range is refused when the manifest is read, not where it is used:
a dimension of 10**9, a negative chunk count or a fusion weight of NaN from a forged
index branch never reaches a query.
"""

# No `from __future__ import annotations`: the records' annotations are evaluated once,
# here, instead of compiled and evaluated again by the first decode of every process
# (`typedjson.decoding._hints`: 20-35 ms of the first manifest read, loaded machine).

import itertools
import re
from typing import Annotated, Literal

from kbase_ci.typedjson import Check, Record, at_least, between, matching
from kbase_ci.vault.safefs import unsafe_part

Count = Annotated[int, at_least(0)]
Sha256 = Annotated[str, matching(r"[0-9a-f]{64}", "a sha256 in hex")]
ObjectId = Annotated[str, matching(r"[0-9a-f]{40}(?:[0-9a-f]{24})?", "a git object id")]
_PLAIN_PATH = re.compile(r"[^/\0.][^/\0]*(?:/[^/\0.][^/\0]*)*")
"""No part empty or starting with `.`: none is `..`, `.git` or an index folder, so
`unsafe_part` has nothing to say (a test checks they agree); 3x faster per file."""
IndexPath = Annotated[str, Check(
    lambda p: _PLAIN_PATH.fullmatch(p) is not None or unsafe_part(p) is None,
    "a relative path inside the index")]
ModelKind = Literal["model2vec", "onnx"]
"""`modelfolder.STATIC`, `modelfolder.TRANSFORMER`."""
MAX_DIM = 4096


class Source(Record):
    """What the index was built from (`provenance.source_of`)."""

    commit: ObjectId | None
    """HEAD (None before the first commit or outside git)."""
    tree: ObjectId | None
    dirty: bool
    """True when files in the vault differed from `commit` (staged or not)."""
    dirty_paths: tuple[str, ...]
    """Vault-relative paths whose content differs from `commit`."""
    path: str
    """The vault's folder inside the repository ("" at the root)."""


class Tokenizer(Record):
    """How to tokenize as the index did (`tokens.settings`)."""

    name: str
    version: int
    lower: bool
    min_length: Count
    compound_separators: tuple[str, ...]
    camel_case_parts: bool
    stemmer: str
    stemmer_library: str
    stopwords: tuple[str, ...]


class Bm25Settings(Record):
    """BM25 parameters and how its files are laid out (`bm25.settings`)."""

    method: str
    k1: float
    b: float
    library: str
    title_weight: int
    heading_weight: int
    files: tuple[str, ...]
    scores_dtype: str
    docs_dtype: str
    columns: str
    terms: str
    postings: str


class AnnSettings(Record):
    """The HNSW graph of large shards (`ann.PARAMS`)."""

    library: str
    file: str
    min_rows: Count
    metric: str
    dtype: str
    connectivity: Count
    expansion_add: Count
    expansion_search: Count
    threads: Count
    keys: str
    same: str


class VectorSettings(Record):
    """How chunk vectors are stored and searched (`vectors.settings`), and `inputs`,
    the digest of everything a chunk's vector depends on besides its note."""

    metric: str
    dtype: str
    scale: str
    search: str
    library: str
    file: str
    rows: str
    grain: str
    rollup: str
    ann: AnnSettings
    inputs: Sha256 | None


class Embeddings(Record):
    """The embedding model (`assemble.embeddings`): without vectors `dim`, `kind` and
    `library` are None and `reason` says why."""

    model: str | None
    kind: ModelKind | None
    dim: Annotated[int, between(1, MAX_DIM)] | None
    reason: str | None
    sha256: str | None
    """`modelchoice.digest` of the files that decide the vectors."""
    library: str | None


class Ranker(Record):
    """One ranker's part in hybrid search (kbase_ci.index.ranking, query.fusion)."""

    weight: Annotated[float, at_least(0)]
    depth: Annotated[int, at_least(1)] | None
    """How many of its top notes take part (None: all)."""
    floor: Literal["zero", "last"]
    """What a note missing from the list scores: "zero" or "last" (the lowest taking part)."""
    stats: Annotated[int, between(2, 1000)] | None = None
    """How many of its top notes give the mean and spread (None: those taking part, at
    most `ranking.STATS`). More than `depth` lets a sure first note stand out further."""


class Fusion(Record):
    """How hybrid search fuses the rankers for this index's model (`ranking.settings`)."""

    method: str
    stats: int
    rankers: dict[str, Ranker]


class Counts(Record):
    """In the file's (sorted) key order: `kbase status` prints `encode(counts)`."""

    chunks: Count
    domains: Count
    links: Count
    markdown_bytes: Count
    notes: Count
    shards: Count
    unresolved_links: Count
    vectors: Count


class Mentions(Record):
    """`mentions.jsonl` (kbase_ci.index.unlinked): its format `version` (another one is
    not read: a query scans the notes instead), how many (note, note naming it) `pairs`
    it holds, and how many titles and aliases were `skipped` (never looked for)."""

    version: Count
    pairs: Count
    skipped: Count


class SliceCounts(Record):
    notes: Count
    shards: Count


class Shard(Record):
    """One shard (`shards/<id>/`): `chunks` is also its BM25 document count and number
    of vector rows; `inputs` the digest of everything its files are computed from (the
    same digest means the same files: an incremental build copies the shard)."""

    domain: str
    notes: Count
    chunks: Count
    vectors: Count
    inputs: Sha256


def _sorted(values: tuple[float, ...]) -> bool:
    return all(a <= b for a, b in itertools.pairwise(values))


class Background(Record):
    """The semantic background (`background.combine`): per null question the best
    cosine over the index, sorted."""

    queries: Count
    version: int
    top1: Annotated[tuple[float, ...], Check(_sorted, "sorted ascending")]


class Slice(Record):
    """Which slice of which shard plan (`build.plan_digest`) a slice is."""

    k: Annotated[int, at_least(1)]
    n: Annotated[int, at_least(1)]
    plan: Sha256

    def _problem(self) -> str | None:
        return None if self.k <= self.n else f"should have k at most n, not {self.k} of {self.n}"


class Selectors(Record):
    """A scope's selectors as `.kbase.yml` declared them (`ScopeSpec.to_json`)."""

    include: dict[str, tuple[str, ...]]
    exclude: dict[str, tuple[str, ...]]


class MainIndex(Record):
    digest: Sha256
    """The sha256 of the main index's manifest when the scope was cut from it."""
    source_commit: ObjectId | None


class Scope(Record):
    """A scoped index's own block (kbase_ci/scope, docs/scopes.md)."""

    name: str
    selectors: Selectors
    main_index: MainIndex
