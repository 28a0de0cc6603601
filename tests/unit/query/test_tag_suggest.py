"""`tags suggest`'s ranking (kbase_ci.query.tagsuggest.rank): the neighbours' votes,
weighed by how well a tag goes with the tags the note has, so that an alternative to one
of them (a tag no note carries beside it) is not what the note lacks."""

from __future__ import annotations

import os
import subprocess
import sys

from kbase_ci.query.tagsuggest import rank


def _vault() -> dict[str, set[str]]:
    """Maturity tags that replace each other (`seedling` or `evergreen`, never both) and
    a topic tag that goes with either."""
    tagsets = {f"s{i}.md": {"seedling"} for i in range(8)}
    tagsets |= {f"e{i}.md": {"evergreen"} for i in range(4)}
    tagsets |= {f"t{i}.md": {"seedling", "spark"} for i in range(3)}
    tagsets |= {"t3.md": {"evergreen", "spark"}, "x.md": {"evergreen"}}
    return tagsets


def test_an_alternative_to_a_tag_the_note_has_is_not_suggested_first() -> None:
    tagsets = _vault()
    # most of x's neighbours are seedlings; two carry spark
    neighbours = {"s0.md": 0.9, "s1.md": 0.8, "s2.md": 0.8, "t0.md": 0.5, "t3.md": 0.5}
    got = rank(neighbours, tagsets["x.md"], tagsets)
    assert [r.tag for r in got] == ["spark", "seedling"]
    assert got[1].score < 3.0 / 2  # its 3.0 of votes, at least halved
    assert sorted(got[0].votes) == [(0.5, "t0.md"), (0.5, "t3.md")]
    # a note with no tags yet: the votes alone
    untagged = {**tagsets, "x.md": set()}
    assert [r.tag for r in rank(neighbours, set(), untagged)][:2] == ["seedling", "spark"]


def test_a_note_listing_every_tag_does_not_make_them_go_together() -> None:
    tagsets = _vault()
    neighbours = {"s0.md": 0.9, "s1.md": 0.8, "s2.md": 0.8, "t0.md": 0.5, "t3.md": 0.5}
    legend = {**tagsets, "legend.md": {"seedling", "evergreen", "spark", "a", "b", "c"}}
    assert rank(neighbours, {"evergreen"}, legend)[0].tag == "spark"


def test_tags_it_has_and_tags_above_them_are_never_suggested() -> None:
    tagsets = {"a.md": {"rust/async"}, "b.md": {"rust", "rust/async", "tokio"},
               "c.md": {"rust"}}
    got = rank({"b.md": 1.0, "c.md": 1.0}, tagsets["a.md"], tagsets)
    assert [r.tag for r in got] == ["tokio"]


_SEEDED = """
import random
from kbase_ci.query.tagsuggest import rank
random.seed(7)
tags = [f"t{i}" for i in range(12)]
tagsets = {f"n{i:03}": set(random.sample(tags, random.randint(1, 5))) for i in range(300)}
have = {"t0", "t1", "t2", "t3", "t4"}
tagsets["me"] = set(have)
print([(r.tag, repr(r.score)) for r in rank({f"n{i:03}": 0.5 for i in range(0, 300, 3)},
                                            have, tagsets)])
"""


def test_scores_do_not_depend_on_the_hash_seed() -> None:
    # The note's tags are a set: multiplied in its iteration order, the scores' last bits
    # followed PYTHONHASHSEED (5 different answers for seeds 1-6).
    got = {subprocess.run([sys.executable, "-c", _SEEDED], check=True, capture_output=True,
                          text=True, env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout
           for seed in range(1, 7)}
    assert len(got) == 1, got
