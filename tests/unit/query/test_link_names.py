"""`linknames`: which links name an added or deleted attachment, by lookup; the answer
must equal the plain scan (every name tested against every link) it replaced."""

from __future__ import annotations

import random

from kbase_ci.query.linknames import attachment_names, links_naming


def _scan(raws: list[str], names: set[str]) -> list[int]:
    return [i for i, raw in enumerate(raws) if any(n in raw.casefold() for n in names)]


def test_names_are_file_names_a_link_can_reach() -> None:
    got = attachment_names(["img/Photo One.PNG", "Makefile", ".gitignore", "a/Note.md",
                            "Straße.pdf"])
    assert got == {"photo one.png", "photo%20one.png", "strasse.pdf"}


def test_links_naming_finds_what_the_scan_finds() -> None:
    raws = ["![[Photo One.png|200]]", "[x](img/photo%20one.png)", "[[Photo]]",
            "![[ß.png]]", "[[a.png.bak]]", "[[xa.png]]", "![](a.PNG)", "[[doc.pdf#page=2]]"]
    names = attachment_names(["p/Photo One.png", "ss.png", "a.png", "doc.pdf"])
    assert links_naming(raws, names) == _scan(raws, names) == [0, 1, 3, 4, 5, 6, 7]
    assert links_naming(raws, set()) == [] and links_naming([], names) == []


def test_links_naming_matches_the_scan_on_random_links() -> None:
    rng = random.Random(32)
    alphabet = "abcß.[]()|#/%20 "
    raws = ["".join(rng.choices(alphabet, k=rng.randint(0, 30))) for _ in range(3000)]
    for _ in range(20):
        files = ["".join(rng.choices("abcß ", k=rng.randint(1, 4))) + "." +
                 rng.choice(["a", "ab", "b"]) for _ in range(rng.randint(1, 6))]
        names = attachment_names(files)
        assert links_naming(raws, names) == _scan(raws, names)


def test_a_percent_encoded_name_is_found_in_a_case_folded_link() -> None:
    """`quote` writes upper-case hex; the links' text is case-folded, so `%C3%A9` must be
    looked for as `%c3%a9`."""
    raws = ["![](img/caf%C3%A9.png)", "![[café.png]]", "[[other.png]]"]
    assert links_naming(raws, attachment_names(["img/café.png"])) == [0, 1]
